"""The public API, as httpx keeps its own: every name in `gharuntime.__all__` imports from
`gharuntime`, is documented on docs/api/public.md (and nothing else is listed there), and the
error tree exported there is the package's whole: every public exception a library caller can
meet, with the bases the page says. The error tree is listed once, the lazy `ERRORS` map: the
`TYPE_CHECKING` block must say the same, and the page's table is written from the classes by a
docs hook (docs/hooks/error_tree.py)."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from test_errors import _library_exceptions

import gharuntime

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "api" / "public.md"
# The command line's own signals and the simulated servers' are not the library's API.
PRIVATE_PACKAGES = ("gharuntime.cli.", "gharuntime.sim.")


def _error_tree_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("error_tree", ROOT / "docs/hooks/error_tree.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(text: str) -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        match = re.match(r"^\| `([A-Za-z_][A-Za-z0-9_]*)` \|(.*)\|$", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split("|")]
    return rows


def _page_rows() -> dict[str, list[str]]:
    """Each table row of the page as the site shows it (the error table written in by its
    hook): its first cell (a `name`) -> the other cells."""
    return _rows(_error_tree_hook().render(PAGE.read_text(encoding="utf-8"), ROOT))


def test_every_name_in_all_imports_from_gharuntime() -> None:
    assert len(gharuntime.__all__) == len(set(gharuntime.__all__))
    for name in gharuntime.__all__:
        namespace: dict[str, object] = {}
        exec(f"from gharuntime import {name}", namespace)
        assert namespace[name] is getattr(gharuntime, name)
    assert set(gharuntime.__all__) <= set(dir(gharuntime))


def test_the_page_lists_exactly_all_and_every_class_and_function_has_a_docstring() -> None:
    rows = _page_rows()
    assert sorted(rows) == sorted(gharuntime.__all__)
    for name in gharuntime.__all__:
        value = getattr(gharuntime, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert (inspect.getdoc(value) or "").strip(), f"{name} has no docstring"
        assert rows[name][-1], f"{name}: the page says nothing of it"


def test_the_error_tree_is_every_public_exception_of_the_package() -> None:
    public = {
        qualified.rsplit(".", 1)[1]: cls
        for qualified, cls in _library_exceptions().items()
        if not qualified.rsplit(".", 1)[1].startswith("_")
        and not qualified.startswith(PRIVATE_PACKAGES)
    }
    missing = sorted(set(public) - set(gharuntime.__all__))
    assert not missing, f"add to gharuntime.ERRORS and docs/api/public.md: {missing}"
    for name, module in gharuntime.ERRORS.items():
        assert getattr(gharuntime, name).__module__ == module
    rows = _page_rows()
    for name, cls in public.items():
        assert getattr(gharuntime, name) is cls
        bases = [part.strip(" `") for part in rows[name][0].split(",")]
        assert bases == [base.__name__ for base in cls.__bases__], name
    assert issubclass(gharuntime.GharuntimeError, Exception)


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        gharuntime.NoSuchError  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchError" in str(exc)
    else:
        raise AssertionError("gharuntime.NoSuchError resolved")


def test_import_gharuntime_imports_no_error_module_until_asked(tmp_path: Path) -> None:
    """The error tree is lazy: the crawler and LASER load on first use only (the installed
    package, run away from a checkout, whose own __init__ registers crawler/ & co. eagerly)."""
    code = (
        "import json, sys, gharuntime\n"
        "heavy = [m for m in set(gharuntime.ERRORS.values()) if m in sys.modules]\n"
        "print(json.dumps(sorted(heavy)))\n"
        "gharuntime.CrawlError\n"
        "print('gharuntime.crawler.client' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    ).stdout.splitlines()
    already = set(json.loads(out[0]))
    assert "gharuntime.crawler.client" not in already
    assert "gharuntime.baselines.laser.decoding" not in already
    assert out[1] == "True"


def test_the_page_lists_no_error_by_hand() -> None:
    """The page holds the hook's marker where the error table goes, and no error row of its
    own: a renamed or new error needs no edit of the page."""
    hook = _error_tree_hook()
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(hook.MARKER) == 1
    by_hand = _rows(text)
    assert "SCHEMA_VERSION" in by_hand
    assert not [
        n
        for n in by_hand
        if inspect.isclass(getattr(gharuntime, n, None))
        and issubclass(getattr(gharuntime, n), BaseException)
    ]


def test_the_type_checking_block_names_what_errors_names() -> None:
    """Type checkers read the TYPE_CHECKING imports, the run time reads ERRORS: one list, two
    spellings, and they must agree name for name, module for module."""
    tree = ast.parse((ROOT / "gharuntime" / "__init__.py").read_text(encoding="utf-8"))
    (block,) = [
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    imported: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name}: re-export it as itself"
            imported[alias.name] = node.module
    assert imported == gharuntime.ERRORS
