"""benchmarks/_common.py: the one module the benchmark scripts share. A real dataset comes from
--dataset or $GHARUNTIME_REAL_DATASET, and without either a script exits 2 saying so; no script
reaches into tests/ or into another script."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from script_support import BENCHMARKS, load_script

TESTS = Path(__file__).resolve().parents[1]
ENV = "GHARUNTIME_REAL_DATASET"


def test_the_real_dataset_comes_from_the_option_else_the_environment(
    fixture_dataset_master: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    common = load_script("_common")
    monkeypatch.setenv(ENV, str(fixture_dataset_master))
    assert common.real_dataset(None) == fixture_dataset_master
    other = tmp_path / "other"
    (other).mkdir()
    (other / "manifest.json").write_text("{}")
    assert common.real_dataset(other) == other  # --dataset wins
    monkeypatch.setenv(ENV, str(tmp_path / "gone"))
    with pytest.raises(common.MissingDataset, match=rf"no dataset folder at .*gone \({ENV}="):
        common.real_dataset(None)
    monkeypatch.delenv(ENV)
    with pytest.raises(common.MissingDataset) as exc:
        common.real_dataset(None)
    assert "no real dataset" in str(exc.value)
    assert "--dataset DIR" in str(exc.value) and f"{ENV}=DIR" in str(exc.value)


@pytest.mark.parametrize("script", ["laser_real", "laser_fit_split", "laser_serialize"])
def test_a_script_without_a_real_dataset_exits_2_saying_why(
    script: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if script == "laser_serialize":
        pytest.importorskip("tokenizers")
    if script == "laser_fit_split":
        pytest.importorskip("torch")
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    args = ["--work", str(tmp_path / "work")] if script != "laser_serialize" else []
    assert load_script(script).main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no real dataset") and ENV in err, err
    assert not (tmp_path / "work").exists()


def test_run_script_returns_the_last_json_another_script_prints(tmp_path: Path) -> None:
    """real_apache.py runs baselines.py so: a process of its own, its figures returned."""
    common = load_script("_common")
    args = ["--methods", "median", "--tracks", "config", "--resamples", "5"]
    figures = common.run_script("baselines.py", [*args, "--work", str(tmp_path / "w")])
    assert figures["benchmark"] == "baselines" and figures["dataset"] == "fixture"
    assert [r["method"] for r in figures["results"]] == ["median"]
    with pytest.raises(SystemExit, match=r"baselines\.py exited 2"):
        common.run_script("baselines.py", ["--resamples", "nan"])


def _local_imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")} | {p.stem for p in TESTS.rglob("*.py")}
    return names & scripts


def test_no_script_reaches_into_tests_or_another_script() -> None:
    found = []
    for path in sorted(BENCHMARKS.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for name in sorted(_local_imports(tree) - {"_common"}):
            found.append(f"{path.name} imports {name}")
        for needle in ("sys.path.insert", "sys.path.append", "spec_from_file_location"):
            if needle in text:
                found.append(f"{path.name} uses {needle}")
        if '"tests"' in text or "'tests'" in text:
            found.append(f"{path.name} names the tests folder")
    assert not found, "\n".join(found)


def test_figures_name_files_relative_to_where_the_script_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    common = load_script("_common")
    monkeypatch.chdir(tmp_path / "..")
    assert common.shown(tmp_path / "work" / "a.json") == f"{tmp_path.name}/work/a.json"
