"""docs/hooks/source_tree.py: the documentation builds from any kind of install. Every module a
docs page renders (`::: gharuntime.x.y`) is found in the link tree the hook lays out from
setup.py's mapping, as griffe reads files: the README's plain `pip install -e ".[docs]"` maps
baselines/ & co. with an import hook that griffe cannot see (mkdocs build --strict stopped at
"gharuntime.baselines.method could not be found")."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("source_tree", ROOT / "docs/hooks/source_tree.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documented_modules() -> list[str]:
    names = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        names += re.findall(r"^::: (gharuntime[\w.]*)", page.read_text(encoding="utf-8"), re.M)
    return sorted(set(names))


def _module_file(tree: Path, dotted: str) -> Path | None:
    """The file griffe would read for a dotted name (a module, a package, or a member of one)."""
    parts = dotted.split(".")
    while parts:
        base = tree.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        parts = parts[:-1]
    return None


def test_every_documented_module_is_in_the_laid_out_tree(tmp_path: Path) -> None:
    names = _documented_modules()
    assert "gharuntime.baselines.method" in names and len(names) > 20
    _hook().lay_out(ROOT, tmp_path / "tree")
    missing = [name for name in names if _module_file(tmp_path / "tree", name) is None]
    assert not missing
    # the mapped folders are where a wheel puts them, and the checkout alone lacks them
    assert (tmp_path / "tree/gharuntime/baselines/method.py").resolve() == (
        ROOT / "baselines/method.py"
    )
    assert not (ROOT / "gharuntime/baselines").exists()


def test_laying_out_again_replaces_the_old_tree(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    _hook().lay_out(ROOT, tree)
    (tree / "gharuntime" / "stale.py").write_text("", encoding="utf-8")
    _hook().lay_out(ROOT, tree)
    assert not (tree / "gharuntime" / "stale.py").exists()
    assert (tree / "gharuntime" / "crawler" / "client.py").is_file()


def test_mkdocs_runs_the_hook_and_reads_its_tree() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    assert "docs/hooks/source_tree.py" in config["hooks"]
    handlers = [p for p in config["plugins"] if isinstance(p, dict) and "mkdocstrings" in p]
    paths = handlers[0]["mkdocstrings"]["handlers"]["python"]["paths"]
    assert ROOT / paths[0] == _hook().TREE


def test_the_parameter_tables_are_written_from_the_methods_declarations() -> None:
    """docs/hooks/method_params.py: one row per parameter of every method that takes any (a
    tuned tree names its library's table and adds its own), from `Method.param_specs`."""
    from gharuntime.baselines.methods import REGISTERED

    spec = importlib.util.spec_from_file_location(
        "method_params", ROOT / "docs/hooks/method_params.py"
    )
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = (ROOT / "docs" / hook.PAGE).read_text(encoding="utf-8")
    text = hook.render(page)
    assert hook.MARKER not in text
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    assert "docs/hooks/method_params.py" in config["hooks"]
    for entry in REGISTERED:
        for name, param in entry.method.param_specs.items():
            row = f"| `{name}` | `{param.shown_default()}` |"
            assert row in text, (entry.name, name)
    assert "**`lightgbm-tuned`**: the parameters of `lightgbm`, and" in text
    assert "| `learning_rate` | `0.08` | a number > 0 and ≤ 1 |" in text  # catboost's own
