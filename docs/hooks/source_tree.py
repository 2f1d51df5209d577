"""MkDocs hook: give mkdocstrings the package as it installs, from any kind of install.

`crawler/`, `baselines/`, `leaderboard/` and `data_cards/` sit at the repository root but install
as `gharuntime.crawler`, ... (setup.py's MAPPED). A strict editable install or a wheel lays them
under `gharuntime/`; a plain editable install (`pip install -e ".[docs]"`, as the README says)
maps them with an import hook that griffe, which reads files and not imports, cannot follow. So
the site is built from a link tree of the package as a wheel lays it out, made here from
setup.py's own mapping, under /build/docs-src (git-ignored), which mkdocs.yml names first.
"""

from __future__ import annotations

import ast
import os
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / "build" / "docs-src"


def package_mapping(setup_py: Path) -> dict[str, str]:
    """The `MAPPED = {package: folder}` literal of setup.py, read without running setup()."""
    for node in ast.parse(setup_py.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MAPPED" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            if isinstance(value, dict):
                return {str(k): str(v) for k, v in value.items()}
    raise RuntimeError(f"{setup_py}: no MAPPED = {{...}} literal; the docs hook reads it")


def lay_out(root: Path, tree: Path) -> None:
    """Symlink each mapped folder where the wheel puts it: tree/gharuntime/baselines -> baselines/."""
    mapping = package_mapping(root / "setup.py")
    if tree.exists():
        shutil.rmtree(tree)
    top = mapping["gharuntime"]
    package = tree / "gharuntime"
    package.mkdir(parents=True)
    for entry in sorted((root / top).iterdir()):
        if entry.name != "__pycache__":
            os.symlink(entry, package / entry.name)
    for name, folder in mapping.items():
        if name == "gharuntime":
            continue
        link = tree.joinpath(*name.split("."))
        if not link.exists():
            os.symlink(root / folder, link)


def on_startup(**_: Any) -> None:
    lay_out(ROOT, TREE)
