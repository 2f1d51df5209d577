"""The distribution installs nothing but gharuntime*, and the core runs without LASER's extras."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_holds_only_gharuntime_at_top_level(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    [wheel] = tmp_path.glob("gharuntime-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.startswith("gharuntime")} == set(), tops
    for pkg in ("crawler", "baselines", "leaderboard", "data_cards"):
        assert f"gharuntime/{pkg}/__init__.py" in names
    assert "gharuntime/py.typed" in names
    assert "gharuntime/leaderboard/template.html" in names  # the page's template and the
    assert "gharuntime/leaderboard/result.schema.json" in names  # result schema: package data
    assert "gharuntime/billing/prices.yml" in names  # predict's price table


def test_core_imports_and_runs_without_laser_dependencies(tmp_path: Path) -> None:
    code = f"""
import sys
for name in ("torch", "transformers", "tokenizers", "peft", "accelerate"):
    sys.modules[name] = None  # any import of these now fails
import pkgutil, importlib, gharuntime
for mod in pkgutil.walk_packages(gharuntime.__path__, "gharuntime."):
    if ".laser" in mod.name:
        continue
    importlib.import_module(mod.name)
from gharuntime.cli.main import cli
from gharuntime.fixture import main
assert main([{str(tmp_path / "ds")!r}]) == 0
print("ok")
"""
    # cwd: away from the checkout, whose gharuntime/ lacks the mapped packages (crawler/, ...).
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")


def _module_level_imports(package_dir: Path) -> dict[str, set[str]]:
    """Top-level names each module of the installed tree imports, at module level or lazily."""
    import ast

    found: dict[str, set[str]] = {}
    for path in sorted(package_dir.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(package_dir)))
    return found


def test_every_runtime_dependency_is_imported_by_the_package() -> None:
    """A runtime dependency that nothing imports is weight every user installs for nothing."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")

    import gharuntime

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    providers: dict[str, set[str]] = {}
    for top, dists in md.packages_distributions().items():
        for dist in dists:
            providers.setdefault(dist.lower().replace("_", "-"), set()).add(top)
    imported = _module_level_imports(Path(next(iter(gharuntime.__path__))))
    unused = []
    for line in declared:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate():
            continue
        tops = providers.get(req.name.lower().replace("_", "-"), set())
        assert tops, f"{req.name} is declared but not installed"
        if not tops & imported.keys():
            unused.append(req.name)
    assert unused == [], f"runtime dependencies nothing in gharuntime imports: {unused}"


def test_pygithub_is_a_test_dependency_only() -> None:
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.lower().startswith("pygithub") for d in project["dependencies"])
    assert any(d.lower().startswith("pygithub") for d in project["optional-dependencies"]["test"])
