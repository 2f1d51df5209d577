"""The recipes of docs/maintainer/development.md, followed in a copy of the package.

Each recipe's code is in the guide as ```python blocks whose first line names where it goes:

- `# PATH` a new file, the block;
- `# PATH, in NAME` entries added at the end of the literal assigned to NAME in PATH;
- `# PATH, with the imports` an import line put among PATH's top-level imports, in order.

PATH is where a contributor edits, in the repository (`baselines/methods.py`); `lay_out` makes
the package as a wheel lays it out (setup.py's mapping applied: gharuntime/baselines/...) under
a temporary folder, every file a link to the checkout's but those a recipe changes, which are
copies. A command then runs that package in a fresh interpreter (`run`), as a person who
followed the guide would run theirs; the checkout itself is never written."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "maintainer" / "development.md"

_BLOCK = re.compile(
    r"^(?P<indent> *)```python\n(?P=indent)# (?P<path>[^\s,]+)(?:, (?P<where>[^\n]+))?\n"
    r"(?P<code>.*?)^(?P=indent)```",
    re.M | re.S,
)


@dataclass(frozen=True)
class Edit:
    """One block of a recipe: where it goes (`path`, `where`) and its code."""

    path: str
    where: str | None
    code: str


def _mapping() -> dict[str, str]:
    """setup.py's MAPPED literal: package → folder."""
    for node in ast.parse((ROOT / "setup.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MAPPED" for t in node.targets
        ):
            return {str(k): str(v) for k, v in ast.literal_eval(node.value).items()}
    raise AssertionError("setup.py has no MAPPED literal")


def recipe(heading: str) -> list[Edit]:
    """The edits of the guide's section `## heading`, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end > 0 else len(text)]
    return [
        Edit(m["path"], m["where"], _dedent(m["code"], m["indent"]))
        for m in _BLOCK.finditer(section)
    ]


def _dedent(code: str, indent: str) -> str:
    """A block's code as written in a list item, less the item's indent."""
    return "".join(line.removeprefix(indent) for line in code.splitlines(keepends=True))


def installed_path(repo_path: str) -> Path:
    """Where a file of the checkout sits in the installed package: baselines/x.py →
    gharuntime/baselines/x.py."""
    parts = Path(repo_path).parts
    for package, folder in _mapping().items():
        if parts[0] == folder:
            return Path(*package.split("."), *parts[1:])
    raise AssertionError(f"{repo_path} is in no folder setup.py installs")


def lay_out(tree: Path) -> None:
    """The package under `tree` as a wheel lays it out, each file a link to the checkout's."""
    for package, folder in _mapping().items():
        source = ROOT / folder
        for path in sorted(source.rglob("*")):
            if "__pycache__" in path.parts or path.is_dir():
                continue
            target = tree.joinpath(*package.split("."), path.relative_to(source))
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(path, target)


def _insert(lines: list[str], at: int, code: str) -> list[str]:
    return [*lines[:at], *code.splitlines(), *lines[at:]]


def apply(tree: Path, edit: Edit) -> None:
    """Make one edit in the laid-out package (a changed file becomes a copy of its own)."""
    path = tree / installed_path(edit.path)
    if edit.where is None:
        assert not path.exists(), f"{edit.path} exists: the guide says it is a new file"
        path.write_text(edit.code, encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    module = ast.parse(text)
    if edit.where == "with the imports":
        lines = _insert(lines, _import_line(module, edit.code), edit.code)
    else:
        name = edit.where.removeprefix("in ")
        (value,) = (
            n.value
            for n in module.body
            if isinstance(n, ast.Assign | ast.AnnAssign)
            and any(isinstance(t, ast.Name) and t.id == name for t in _targets(n))
        )
        assert value is not None and value.end_lineno is not None
        closing = value.end_lineno - 1  # the line of the literal's closing bracket
        assert lines[closing].strip() in {")", "]", "}"}, f"{name} does not end on its own line"
        lines = _insert(lines, closing, edit.code)
    path.unlink()  # a link to the checkout's file: replaced by the changed copy
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _import_line(module: ast.Module, code: str) -> int:
    """Where `from X import Y` goes among the module's `from gharuntime...` imports: before
    the first whose module sorts after X (as ruff's isort orders them), else after the last."""
    (new,) = ast.parse(code).body
    assert isinstance(new, ast.ImportFrom) and new.module, code
    ours = [
        n
        for n in module.body
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("gharuntime")
    ]
    after = [n for n in ours if (n.module or "") > new.module]
    return after[0].lineno - 1 if after else max(n.end_lineno or 0 for n in ours)


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.expr]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def follow(heading: str, tree: Path) -> list[Edit]:
    """The package laid out under `tree` with the recipe `heading` followed (the files it
    changes as ruff passes them, as the project's own); its edits."""
    lay_out(tree)
    edits = recipe(heading)
    assert edits, f"the guide's section {heading!r} has no code"
    for edit in edits:
        apply(tree, edit)
    files = sorted({str(tree / installed_path(e.path)) for e in edits})
    config = ["--config", str(ROOT / "pyproject.toml")]
    for check in (["check", *config], ["format", "--check", *config]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *check, *files],
            cwd=tree,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"the guide's code: ruff {check[0]}: {done.stdout}"
    return edits


def run(tree: Path, script: str, cwd: Path, timeout: float = 600) -> Any:
    """Run `script` with the package under `tree` in a fresh interpreter; what it prints on
    its last line, read as JSON."""
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


INVOKE = """
import json
from click.testing import CliRunner
import gharuntime
from gharuntime.cli.main import cli
assert gharuntime.__file__.startswith({tree!r}), gharuntime.__file__  # the copy's package
out = []
for args in {calls!r}:
    done = CliRunner().invoke(cli, args, terminal_width=200)
    out.append({{"code": done.exit_code, "output": done.output}})
print(json.dumps(out))
"""


def invoke(tree: Path, calls: list[list[str]], cwd: Path) -> list[dict[str, Any]]:
    """Each `gharuntime ARGS` of `calls` run with the package under `tree` (one interpreter,
    click's runner): its exit code and output."""
    result: list[dict[str, Any]] = run(tree, INVOKE.format(tree=str(tree), calls=calls), cwd)
    return result
