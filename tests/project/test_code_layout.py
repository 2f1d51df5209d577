"""The code base's shape: no import circles between gharuntime's modules, nor between its
top-level folders (subpackages and root modules, with setup.py's mapping of crawler/,
baselines/, leaderboard/ and data_cards/ applied: source kinds above the builder above the
readers, the leaderboard above the baselines), and ruff checks every Python file git tracks (no
folder silently excluded, as ruff's default `build` exclusion once excluded the build
package)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Folders setup.py installs as gharuntime.* (see setup.py's MAPPED).
PACKAGES = {
    "gharuntime": "gharuntime",
    "gharuntime.crawler": "crawler",
    "gharuntime.baselines": "baselines",
    "gharuntime.leaderboard": "leaderboard",
    "gharuntime.data_cards": "data_cards",
}


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for name, folder in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = [name, *path.relative_to(ROOT / folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


def _import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the gharuntime modules it imports anywhere (top level, in functions, or under
    TYPE_CHECKING: a circle hidden in any of them is still a circle)."""
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
