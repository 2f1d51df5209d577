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
