"""The distribution installs nothing but gharuntime*, the release workflow's sdist and wheel pass
`twine check`, and the core runs without LASER's extras."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, and the wheel built from it, as .github/workflows/release.yml builds them
    (`python -m build`), from a copy of the checkout's files (the build writes egg-info and
    build/ beside them). --no-isolation: offline, with the setuptools the `test` extra installs."""
    src = tmp_path_factory.mktemp("src")
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, src / name)
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


@pytest.mark.slow
def test_wheel_holds_only_gharuntime_at_top_level(dist: Path) -> None:
    [wheel] = dist.glob("gharuntime-*.whl")  # built from the sdist: nothing the sdist lacks
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.startswith("gharuntime")} == set(), tops
    for pkg in ("crawler", "baselines", "leaderboard", "data_cards"):
        assert f"gharuntime/{pkg}/__init__.py" in names
    assert "gharuntime/py.typed" in names
    assert "gharuntime/leaderboard/template.html" in names  # the page's template and the
    assert "gharuntime/leaderboard/result.schema.json" in names  # result schema: package data
    assert "gharuntime/billing/prices.yml" in names  # predict's price table


def _release_build_steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text(encoding="utf-8"))
    steps: list[dict[str, Any]] = workflow["jobs"]["build"]["steps"]
    return steps


@pytest.mark.slow
def test_the_release_builds_what_twine_check_passes(dist: Path) -> None:
    """The release workflow's own commands: `python -m build` (sdist, then the wheel from it) and
    `twine check --strict` on both, which PyPI's upload would otherwise refuse after the tag."""
    runs = [str(s.get("run", "")) for s in _release_build_steps()]
    assert "python -m build --outdir dist" in runs
    assert "python -m twine check --strict dist/*" in runs
    files = sorted(p.name for p in dist.iterdir())
    assert [f for f in files if f.endswith(".tar.gz")] and [f for f in files if f.endswith(".whl")]
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout


@pytest.mark.slow
def test_the_release_refuses_a_tag_that_is_not_the_built_version(
    dist: Path, tmp_path: Path
) -> None:
    """The workflow's tag check, run as written against the built files: a tag `v9.9.9` over a
    0.1.0 build stops the release before anything is uploaded."""
    from gharuntime.version import __version__

    [step] = [s for s in _release_build_steps() if "TAG" in s.get("env", {})]
    shutil.copytree(dist, tmp_path / "dist")
    for tag, rc in ((f"v{__version__}", 0), ("v9.9.9", 1), (__version__, 1)):
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=tmp_path,
            env={**os.environ, "TAG": tag},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == rc, (tag, done.stderr)
        if rc:
            assert f"does not name the version built ({__version__}" in done.stderr


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
