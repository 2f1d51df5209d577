"""The code base's shape, checked on the source with one walker over the project's Python
files (setup.py's mapping of crawler/, baselines/, leaderboard/ and data_cards/ under
gharuntime applied, benchmarks/ beside them):

- no import circle between gharuntime's modules, nor between its top-level folders (source
  kinds above the builder above the readers, the leaderboard above the baselines);
- commands do not import each other (each a thin layer over one library call), the builder
  never imports the simulator nor names a source kind, and no build_from_* shorthand is
  defined or called: one `build(source, out, options)` builds;
- tests/ mirrors the package folders (docs/maintainer/development.md, "Where a test goes");
- ruff checks every Python file git tracks (no folder silently excluded, as ruff's default
  `build` exclusion once excluded the build package)."""

from __future__ import annotations

import ast
import functools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def _mapped() -> dict[str, str]:
    """setup.py's MAPPED (package name -> folder), read from its source: the one list."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MAPPED":
            value = ast.literal_eval(node.value)
            assert isinstance(value, dict)
            return {str(k): str(v) for k, v in value.items()}
    raise AssertionError("setup.py has no MAPPED")


PACKAGES = _mapped()
# Scripts outside the package, walked for the build shorthand (nothing imports them).
SCRIPTS = {"benchmarks": "benchmarks"}
# Modules every command may share: refusals, output, progress. (Option types are
# gharuntime.paramtypes, below the commands, and the crawl selection options both `crawl` and
# `build --source github` take are gharuntime.crawler.assembly's.)
SHARED = {"errors", "output", "progress"}
THIN = {
    "build": "build_command",
    "crawl": "crawl_command",
    "diff": "diff_command",
    "eval": "eval_command",
    "predict": "predict_command",
}
MAX_LOGIC_LINES = 60
# tests/ folders that are not a package's: the sweeps across every command, the project as a
# whole, test data.
CROSS_CUTTING = {"hostile", "project", "data"}


@functools.cache
def _walk() -> dict[str, Path]:
    """The one walker: module name -> file, for the package (as installed) and the scripts."""
    mods: dict[str, Path] = {}
    for name, folder in {**PACKAGES, **SCRIPTS}.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder)
            if name == "gharuntime" and rel.parts[0] in PACKAGES.values():
                continue
            parts = [name, *rel.with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _modules() -> dict[str, Path]:
    """gharuntime's modules (the scripts left out)."""
    return {m: p for m, p in _walk().items() if m.split(".")[0] == "gharuntime"}


def _package(name: str) -> dict[str, Path]:
    """The modules of one subpackage (`gharuntime.cli`), itself left out."""
    return {m: p for m, p in _modules().items() if m.rsplit(".", 1)[0] == name}


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function (absolute imports, with
    `module.name` for each name imported from a module)."""
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the gharuntime modules it imports anywhere (top level, in functions, or under
    TYPE_CHECKING: a circle hidden in any of them is still a circle)."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(_tree(path)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    of = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    of = node.module or ""
                targets = [f"{of}.{a.name}" if f"{of}.{a.name}" in mods else of for a in node.names]
            edges[mod] |= {t for t in targets if t in mods and t != mod}
    return edges


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles() -> None:
    mods = _modules()
    assert "gharuntime.dataset" in mods and "gharuntime.sim.server" in mods
    edges = _import_graph(mods)
    # The graph is the real one: the edges the two former circles kept are still seen.
    assert "gharuntime.validation" in edges["gharuntime.dataset"]
    assert "gharuntime.sim.api" in edges["gharuntime.sim.server"]
    assert _circles(edges) == []


def _folder(module: str) -> str:
    """The top-level part of gharuntime a module belongs to: its subpackage (gharuntime.builder,
    gharuntime.crawler for crawler/, ...) or, for a module at the root, the module itself."""
    return ".".join(module.split(".")[:2])


def _folder_graph(edges: dict[str, set[str]]) -> dict[str, dict[str, list[str]]]:
    """Folder → the folders its modules import, each with the module imports that make it."""
    folders: dict[str, dict[str, list[str]]] = {}
    for mod, deps in sorted(edges.items()):
        here = folders.setdefault(_folder(mod), {})
        for dep in sorted(deps):
            if _folder(dep) != _folder(mod):
                here.setdefault(_folder(dep), []).append(f"{mod} -> {dep}")
    return folders


def test_the_folder_graph_finds_a_circle_of_folders() -> None:
    edges = {
        "gharuntime.builder.request": {"gharuntime.source_kinds.base"},
        "gharuntime.source_kinds.raw": {"gharuntime.builder.build"},
        "gharuntime.builder.build": {"gharuntime.paths"},
        "gharuntime.source_kinds.base": set(),
        "gharuntime.paths": set(),
    }
    folders = _folder_graph(edges)
    assert folders["gharuntime.builder"] == {
        "gharuntime.source_kinds": ["gharuntime.builder.request -> gharuntime.source_kinds.base"],
        "gharuntime.paths": ["gharuntime.builder.build -> gharuntime.paths"],
    }
    circles = _circles({f: set(to) for f, to in folders.items()})
    assert circles == [["gharuntime.builder", "gharuntime.source_kinds"]]


def test_no_import_circles_between_folders() -> None:
    """A module-level circle is one thing; two folders that import each other (builder and
    source_kinds, baselines and leaderboard through a root module) are a layering lost."""
    mods = _modules()
    assert "gharuntime.crawler.assembly" in mods and "gharuntime.leaderboard.registry" in mods
    folders = _folder_graph(_import_graph(mods))
    # The graph is the real one: the layers it is about are seen, mapped folders included.
    assert "gharuntime.builder" in folders["gharuntime.source_kinds"]
    assert "gharuntime.sources" in folders["gharuntime.builder"]
    assert "gharuntime.baselines" in folders["gharuntime.leaderboard"]
    assert "gharuntime.crawler" in folders["gharuntime.cli"]
    circles = _circles({f: set(to) for f, to in folders.items()})
    why = [
        edge
        for circle in circles
        for a in circle
        for b in circle
        for edge in folders.get(a, {}).get(b, [])
    ]
    assert circles == [], why


def test_sources_sit_below_the_builder() -> None:
    """The readers (gharuntime.sources) never import the builder that uses them."""
    edges = _import_graph(_modules())
    up = {
        (mod, dep)
        for mod, deps in edges.items()
        if mod.startswith("gharuntime.sources")
        for dep in deps
        if dep.startswith("gharuntime.builder")
    }
    assert up == set()


COMMANDS = sorted(
    p for m, p in _package("gharuntime.cli").items() if m.rsplit(".", 1)[1] not in {*SHARED, "main"}
)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.stem)
def test_a_command_imports_no_other_command(path: Path) -> None:
    others = {
        name.split(".")[2]
        for name in _imports(path)
        if name.startswith("gharuntime.cli.") and name.count(".") >= 2
    }
    assert others <= SHARED, f"cli/{path.name} imports the command module(s) {others - SHARED}"


def test_the_builder_never_imports_the_simulator() -> None:
    for path in _package("gharuntime.builder").values():
        sim = {
            m for m in _imports(path) if m == "gharuntime.sim" or m.startswith("gharuntime.sim.")
        }
        assert not sim, f"builder/{path.name} imports {sim}"


@pytest.mark.parametrize(("module", "function"), sorted(THIN.items()))
def test_a_thin_command_has_at_most_60_lines_of_logic(module: str, function: str) -> None:
    tree = _tree(_walk()[f"gharuntime.cli.{module}"])
    (found,) = (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    body = found.body[1:] if isinstance(found.body[0], ast.Expr) else found.body  # no docstring
    lines = body[-1].end_lineno - body[0].lineno + 1  # type: ignore[operator]
    assert lines <= MAX_LOGIC_LINES, f"{function} has {lines} lines of logic"


def test_no_build_shorthand_is_defined_or_called() -> None:
    found = []
    for path in _walk().values():
        if True:
            for node in ast.walk(_tree(path)):
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
    for path in _package("gharuntime.builder").values():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Constant) and node.value in SOURCES:
                named.append(f"builder/{path.name}:{node.lineno} {node.value!r}")
    assert named == []


def _test_folder_problem(folder: Path) -> str | None:
    """Why a folder under tests/ mirrors no package folder (None when it does)."""
    parts = folder.relative_to(TESTS).parts
    if parts[0] in CROSS_CUTTING or parts[0] in SCRIPTS:
        return None
    # setup.py's mapping puts every folder under gharuntime: tests/baselines/laser/ is
    # gharuntime.baselines.laser's whichever checkout folder holds it
    module = ".".join(["gharuntime", *parts])
    if module in _modules() and _modules()[module].name == "__init__.py":
        return None
    return f"tests/{'/'.join(parts)}/ mirrors no package ({module} is not one)"


def test_tests_mirror_the_package_folders() -> None:
    """Every folder of tests/ is a package's (or a cross-cutting one), and no test at tests/'s
    root is named for a module of a subpackage (tests/test_eval_metrics.py belongs in
    tests/eval/test_metrics.py)."""
    folders = sorted(
        p
        for p in TESTS.rglob("*")
        if p.is_dir() and "__pycache__" not in p.parts and p.relative_to(TESTS).parts[0] != "data"
    )
    assert any(f.name == "eval" for f in folders) and any(f.name == "laser" for f in folders)
    problems = [why for f in folders if (why := _test_folder_problem(f))]
    subpackages = sorted(
        {
            m.split(".")[1]
            for m, p in _modules().items()
            if p.name == "__init__.py" and m.count(".") == 1
        }
    )
    assert "eval" in subpackages and "crawler" in subpackages
    misplaced = [
        f"tests/{p.name} (its package's tests go in tests/{pkg}/)"
        for p in sorted(TESTS.glob("test_*.py"))
        for pkg in subpackages
        if p.stem.startswith(f"test_{pkg}_")
    ]
    assert problems + misplaced == []


def test_the_mirror_check_finds_a_folder_of_no_package(tmp_path: Path) -> None:
    assert _test_folder_problem(TESTS / "eval") is None
    assert _test_folder_problem(TESTS / "baselines" / "laser") is None
    assert _test_folder_problem(TESTS / "hostile") is None
    assert _test_folder_problem(TESTS / "evaluation") == (
        "tests/evaluation/ mirrors no package (gharuntime.evaluation is not one)"
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_ruff_checks_every_tracked_python_file() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "*.py", "*.pyi"], cwd=ROOT, capture_output=True, text=True
    )
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    want = {line for line in tracked.stdout.splitlines() if (ROOT / line).is_file()}
    shown = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--show-files", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    seen = {
        Path(line).resolve().relative_to(ROOT).as_posix()
        for line in shown.stdout.splitlines()
        if line.endswith((".py", ".pyi"))
    }
    assert want - seen == set(), "tracked Python files ruff does not check"
