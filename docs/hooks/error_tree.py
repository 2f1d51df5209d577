"""MkDocs hook: the error table of docs/api/public.md, written from the error tree itself.

The exceptions `import gharuntime` exports are listed once, in code: the lazy `ERRORS` map of
gharuntime/__init__.py (and the few errors it imports eagerly). This hook reads that file, finds
each class where its module defines it (setup.py's mapping applied, as griffe reads files: no
import, so the docs build does not load the crawler or LASER) and writes one row per class, in
tree order: its name, its bases and the first paragraph of its docstring. The page holds only
`MARKER`, so it cannot disagree with the code; tests/test_public_api.py checks the rows against
the imported classes.
"""

from __future__ import annotations

import ast
import builtins
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PAGE = "api/public.md"
MARKER = "<!-- the error tree: written here by docs/hooks/error_tree.py -->"


def _mapping(root: Path) -> dict[str, str]:
    """setup.py's MAPPED literal: package → folder."""
    for node in ast.parse((root / "setup.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MAPPED" for t in node.targets
        ):
            value = ast.literal_eval(node.value)
            return {str(k): str(v) for k, v in value.items()}
    raise RuntimeError(f"{root / 'setup.py'}: no MAPPED = {{...}} literal")


def module_file(root: Path, module: str) -> Path:
    """The source file of a gharuntime module, wherever setup.py's mapping keeps it."""
    mapping = _mapping(root)
    package = max((p for p in mapping if module == p or module.startswith(p + ".")), key=len)
    rest = module[len(package) :].lstrip(".").split(".") if module != package else []
    base = root / mapping[package] / Path(*rest) if rest else root / mapping[package]
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise RuntimeError(f"{module}: no source file under {root}")


def exported(root: Path) -> dict[str, str]:
    """Every name gharuntime/__init__.py exports from another module, by the module it comes
    from: the ERRORS map and the imports at its top (TYPE_CHECKING ones aside)."""
    tree = ast.parse(module_file(root, "gharuntime").read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gharuntime."):
            names.update({a.asname or a.name: str(node.module) for a in node.names})
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "ERRORS"
            and node.value is not None
        ):
            names.update(ast.literal_eval(node.value))
    if not names:
        raise RuntimeError("gharuntime/__init__.py: no ERRORS: dict[str, str] = {...} literal")
    return names


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def error_tree(root: Path) -> dict[str, tuple[list[str], str]]:
    """Each exception gharuntime exports → (its bases, the first paragraph of its docstring),
    read from the source."""
    classes: dict[str, tuple[list[str], str]] = {}
    for name, module in exported(root).items():
        source = ast.parse(module_file(root, module).read_text(encoding="utf-8"))
        for node in source.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                doc = (ast.get_docstring(node) or "").split("\n\n")[0]
                classes[name] = ([_base_name(b) for b in node.bases], " ".join(doc.split()))
    errors: dict[str, tuple[list[str], str]] = {}
    grew = True
    while grew:  # a class is an error when one of its bases is a builtin exception or an error
        grew = False
        for name, (bases, doc) in classes.items():
            if name not in errors and any(b in errors or _builtin_exception(b) for b in bases):
                errors[name] = (bases, doc)
                grew = True
    return errors


def _cell(text: str) -> str:
    """A docstring's text as a table cell: pipes escaped, and asterisks outside `code` (as in
    `github.*, secrets.*`) kept from reading as emphasis."""
    parts = text.replace("|", "\\|").split("`")
    return "`".join(p if i % 2 else p.replace("*", "\\*") for i, p in enumerate(parts))


def table(root: Path) -> str:
    """The Markdown table of the error tree: depth first from the root, siblings by name."""
    errors = error_tree(root)
    children: dict[str, list[str]] = {}
    for name, (bases, _) in errors.items():
        parent = next((b for b in bases if b in errors), "")
        children.setdefault(parent, []).append(name)
    lines = ["| name | base | raised when |", "| --- | --- | --- |"]

    def visit(name: str) -> None:
        bases, doc = errors[name]
        cells = (f"`{name}`", ", ".join(f"`{b}`" for b in bases), _cell(doc))
        lines.append("| " + " | ".join(cells) + " |")
        for child in sorted(children.get(name, [])):
            visit(child)

    for top in sorted(children.get("", [])):
        visit(top)
    return "\n".join(lines)


def render(markdown: str, root: Path = ROOT) -> str:
    """The page with the error table where MARKER stands."""
    if MARKER not in markdown:
        raise RuntimeError(f"docs/{PAGE} lost its line {MARKER}")
    return markdown.replace(MARKER, table(root))


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return render(markdown) if page.file.src_uri == PAGE else markdown
