"""benchmarks/laser_curve.py: the plan the issue asks for, one real point run end to end (train,
predict, pack, score, plot), and a deadline that kills a run but keeps its log."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from types import ModuleType

import pytest
from script_support import load_script, write_yaml_dataset


def _script() -> ModuleType:
    return load_script("laser_curve")


@pytest.fixture(scope="module")
def yaml_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_yaml_dataset(tmp_path_factory.mktemp("curve") / "dataset")


def test_the_plan_holds_every_point_of_the_curve() -> None:
    names = {p.name for p in _script().PLAN}
    for config in ("temporal", "cross_repo"):
        for epochs in ("0.25", "0.5", "1", "2", "4"):
            assert f"{config}-config-tiny-e{epochs}" in names
        for epochs in ("0.5", "1"):
            assert f"{config}-config-tiny-256-e{epochs}" in names
    assert any(n.startswith("temporal-history-tiny-") for n in names)


def test_one_point_trains_predicts_packs_and_scores(yaml_dataset: Path, tmp_path: Path) -> None:
    script = _script()
    out = tmp_path / "device"
    point = "temporal-config-tiny-e0.25"
    common = ["--dataset", str(yaml_dataset), "--only", point]
    run = ["run", *common, "--out", str(out), "--max-steps", "2", "--samples", "1"]
    assert script.main([*run, "--batch", "4", "--decode-batch", "8", "--deadline", "900"]) == 0
    summary = json.loads((out / "curve.json").read_text(encoding="utf-8"))
    assert summary["runs"][point]["exit"] == 0, summary
    with tarfile.open(out / "curve-temporal-config.tar.gz") as tar:
        packed = set(tar.getnames())
    assert {f"{point}/laser.jsonl", f"{point}/run.json", f"{point}/log.txt"} <= packed
    assert not any("/ckpt" in name for name in packed)  # checkpoints stay behind

    figures = tmp_path / "curve.json"
    score = ["score", *common, "--runs", str(out), "--json", str(figures), "--resamples", "20"]
    assert script.main(score) == 0
    row = json.loads(figures.read_text(encoding="utf-8"))["points"][point]
    assert row["steps"] == 2 and row["tokens"] > 0
    assert row["rmsle"]["ci_low"] <= row["rmsle"]["value"] <= row["rmsle"]["ci_high"]
    assert figures.with_suffix(".png").stat().st_size > 1000


def test_the_deadline_kills_a_run_and_keeps_its_log(
    yaml_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "device"
    point = "cross_repo-config-tiny-e4"
    args = ["run", "--dataset", str(yaml_dataset), "--only", point, "--out", str(out)]
    assert _script().main([*args, "--deadline", "0"]) == 0
    summary = json.loads((out / "curve.json").read_text(encoding="utf-8"))
    assert summary["runs"][point]["exit"] == "killed at the deadline"
    with tarfile.open(out / "curve-cross_repo-config.tar.gz") as tar:
        assert f"{point}/log.txt" in tar.getnames()
        assert f"{point}/laser.jsonl" not in tar.getnames()
    capsys.readouterr()
    score = ["score", "--dataset", str(yaml_dataset), "--runs", str(out), "--only", point]
    assert _script().main(score) == 2  # the killed point is named, not scored: none left
    err = capsys.readouterr().err
    assert f"{point}: unfinished" in err and "no finished point" in err


def test_a_missing_dataset_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["score", "--dataset", str(tmp_path / "nowhere"), "--runs", str(tmp_path)]
    assert _script().main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err


def test_an_only_that_matches_nothing_and_an_empty_runs_folder_are_refused(
    yaml_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    run = ["run", "--dataset", str(yaml_dataset), "--out", str(tmp_path / "o"), "--only", "e9"]
    with pytest.raises(SystemExit) as exc:
        script.main(run)
    assert exc.value.code == 2
    assert "matches no point" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()  # nothing started, nothing written
    score = ["score", "--dataset", str(yaml_dataset), "--runs", str(tmp_path / "empty")]
    assert script.main(score) == 2
    err = capsys.readouterr().err
    assert "no finished point" in err and "Traceback" not in err
