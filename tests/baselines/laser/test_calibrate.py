"""`gharuntime laser calibrate`: a LASER model saved before calibration gets its ranges
calibrated on its validation split without training again, is saved in place, and writes a
submission eval scores; bad input exits 2 and leaves the model as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("torch")
pytest.importorskip("transformers")

from laser_support import write_laser_dataset

from gharuntime.baselines.model_io import load_model
from gharuntime.cli.main import cli
from gharuntime.dataset import load
from gharuntime.eval.submission_files import SubmissionFiles

FAST = ["model=tiny", "max_steps=3", "batch_size=4", "budget=200", "vocab_size=400",
        "warmup_steps=1", "decode_batch_size=32", "samples=4"]  # fmt: skip
JOB_YAML = "runs-on: ubuntu-latest\nsteps:\n  - run: pytest -q\n"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_laser_dataset(tmp_path_factory.mktemp("laser-cal") / "dataset", JOB_YAML)


@pytest.fixture(scope="module")
def old_model(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trained model folder as LASER saved it before it calibrated: no calibration and no
    group clock in its state, so its ranges are the draws' own."""
    runs = tmp_path_factory.mktemp("runs")
    args = ["baseline", "laser", "--dataset", str(dataset), "--out", str(runs / "laser.jsonl")]
    result = CliRunner().invoke(cli, [*args, *(x for p in FAST for x in ("--param", p))])
    assert result.exit_code == 0, result.output
    model_json = runs / "laser.model" / "model.json"
    meta = json.loads(model_json.read_text())
    del meta["state"]["calibration"], meta["state"]["group_clock"]
    model_json.write_text(json.dumps(meta))
    return runs / "laser.model"


def _copy(model: Path, tmp_path: Path) -> Path:
    shutil.copytree(model, tmp_path / "m.model")
    return tmp_path / "m.model"


def test_a_model_saved_before_calibration_is_calibrated_in_place(
    old_model: Path, dataset: Path, tmp_path: Path
) -> None:
    model = _copy(old_model, tmp_path)
    before, _ = load_model(model)
    assert not before.calibrations and "saved before calibration" in before.uncalibrated  # type: ignore[attr-defined]
    out = tmp_path / "cal.jsonl"
    args = ["laser", "calibrate", str(model), "--dataset", str(dataset), "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    validation = load(dataset, "temporal", "validation")
    assert summary["calibration"]["duration_s"] == {
        "rows": validation.height, "by": "recency", "source": "validation"
    }  # fmt: skip
    # saved: a reload has the calibration, and its ranges are the submission's
    after, meta = load_model(model)
    assert set(after.calibrations) == {"duration_s"}  # type: ignore[attr-defined]
    assert meta["dataset_config"] == "temporal" and meta["fit"]["train_rows"] > 0
    test = load(dataset, "temporal", "test")
    after.predict_rows(test)
    calibrated = after.quantiles()
    sidecar = [json.loads(x) for x in SubmissionFiles(out).quantiles.read_text().split()]
    assert [r["id"] for r in sidecar] == test["id"].to_list()
    for level in ("p10", "p90", "p99"):
        np.testing.assert_allclose(
            calibrated[level]["duration_s"], [r[f"duration_s_{level}"] for r in sidecar], atol=0.051
        )
    before.predict_rows(test)
    assert not np.allclose(before.quantiles()["p90"]["duration_s"], calibrated["p90"]["duration_s"])
    sub_meta = json.loads(SubmissionFiles(out).meta.read_text())
    assert sub_meta["calibration"]["duration_s"]["source"] == "validation"
    assert sub_meta["split"] == "test" and sub_meta["timing"]["calibrate_seconds"] >= 0
    scored = CliRunner().invoke(cli, ["eval", str(out), "--dataset", str(dataset)])
    assert scored.exit_code == 0, scored.output


def test_rows_decodes_that_many_validation_jobs(
    old_model: Path, dataset: Path, tmp_path: Path
) -> None:
    model = _copy(old_model, tmp_path)
    args = ["laser", "calibrate", str(model), "--dataset", str(dataset), "--rows", "7", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["calibration"]["duration_s"]["rows"] == 7
    assert json.loads(result.output)["submission"] is None


def _refused(args: list[str], model: Path, *words: str) -> None:
    before = (model / "model.json").read_bytes()
    result = CliRunner().invoke(cli, ["laser", "calibrate", *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.output, result.output
    assert (model / "model.json").read_bytes() == before  # nothing replaced


def test_another_dataset_is_refused(old_model: Path, tmp_path: Path) -> None:
    model = _copy(old_model, tmp_path)
    other = write_laser_dataset(tmp_path / "other", JOB_YAML, runs_per_repo=4)
    _refused([str(model), "--dataset", str(other)], model, "calibrate it on the dataset it")


def test_a_model_that_is_not_laser_is_refused(lightgbm_model: Path, dataset: Path) -> None:
    _refused([str(lightgbm_model), "--dataset", str(dataset)], lightgbm_model, "only LASER")


def test_a_model_trained_with_calibration_none_is_refused(
    old_model: Path, dataset: Path, tmp_path: Path
) -> None:
    model = _copy(old_model, tmp_path)
    meta = json.loads((model / "model.json").read_text())
    meta["config"]["calibration"] = "none"
    (model / "model.json").write_text(json.dumps(meta))
    _refused([str(model), "--dataset", str(dataset)], model, "calibration=none", "retrain")


def test_a_folder_that_is_no_model_and_a_bad_out_are_refused(
    old_model: Path, dataset: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "model.json").write_text("{}")
    _refused([str(empty), "--dataset", str(dataset)], empty, "not a gharuntime-model/1 model")
    model = _copy(old_model, tmp_path)
    _refused(
        [str(model), "--dataset", str(dataset), "--out", str(tmp_path / "x.csv")],
        model,
        "a submission ends in .jsonl",
    )
    long_name = tmp_path / ("x" * 250 + ".jsonl")  # its .meta.json would be too long a name
    _refused([str(model), "--dataset", str(dataset), "--out", str(long_name)], model, "too long")
    inside = dataset / "sub.jsonl"
    _refused(
        [str(model), "--dataset", str(dataset), "--out", str(inside)], model, "inside the dataset"
    )
