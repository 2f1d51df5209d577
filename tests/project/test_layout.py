"""The package's layering, checked on the source: commands do not import each other (each is a
thin layer over one library call), the builder never imports the simulator (only the
simulated source kind, gharuntime.source_kinds.simulated, does), and no build_from_* shorthand
is defined or called: one `build(source, out, options)` builds."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gharuntime

PACKAGE = Path(gharuntime.__file__).resolve().parent
ROOT = PACKAGE.parent
# Folders of the project's own code.
CALLERS = ("gharuntime", "baselines", "crawler", "leaderboard", "data_cards", "benchmarks")

# Modules every command may share: refusals, output, progress. (Option types are
# gharuntime.paramtypes, below the commands, and the crawl selection options both `crawl` and
# `build --source github` take are gharuntime.crawler.assembly's.)
SHARED = {"errors", "output", "progress"}
COMMANDS = sorted(
    p for p in (PACKAGE / "cli").glob("*.py") if p.stem not in {*SHARED, "main", "__init__"}
)
THIN = {
    "build": "build_command",
    "crawl": "crawl_command",
    "diff": "diff_command",
    "eval": "eval_command",
    "predict": "predict_command",
}
MAX_LOGIC_LINES = 60


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.stem)
def test_a_command_imports_no_other_command(path: Path) -> None:
    others = {
        name.split(".")[2]
        for name in _imports(path)
        if name.startswith("gharuntime.cli.") and name.count(".") >= 2
    }
    assert others <= SHARED, f"cli/{path.name} imports the command module(s) {others - SHARED}"


def test_the_builder_never_imports_the_simulator() -> None:
    for path in sorted((PACKAGE / "builder").glob("*.py")):
        sim = {
            m for m in _imports(path) if m == "gharuntime.sim" or m.startswith("gharuntime.sim.")
        }
        assert not sim, f"builder/{path.name} imports {sim}"


@pytest.mark.parametrize(("module", "function"), sorted(THIN.items()))
def test_a_thin_command_has_at_most_60_lines_of_logic(module: str, function: str) -> None:
    tree = ast.parse((PACKAGE / "cli" / f"{module}.py").read_text())
    (found,) = (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    body = found.body[1:] if isinstance(found.body[0], ast.Expr) else found.body  # no docstring
    lines = body[-1].end_lineno - body[0].lineno + 1  # type: ignore[operator]
    assert lines <= MAX_LOGIC_LINES, f"{function} has {lines} lines of logic"


def test_no_build_shorthand_is_defined_or_called() -> None:
    found = []
    for folder in CALLERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                name = ""
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
                elif isinstance(node, ast.FunctionDef):
                    name = node.name
                if name.startswith("build_from_"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert found == []


def test_the_builder_names_no_source_kind() -> None:
    """Kinds sit above the builder: what a kind says (its card text, its options) is in its own
    module, so no builder module branches on a kind's name."""
    from gharuntime.source_kinds import SOURCES

    named = []
    for path in sorted((PACKAGE / "builder").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in SOURCES:
                named.append(f"builder/{path.name}:{node.lineno} {node.value!r}")
    assert named == []
