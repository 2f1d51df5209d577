"""`gharuntime baseline`: a submission eval can read, its sidecar, and the saved model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gharuntime.baselines.method import MethodError
from gharuntime.baselines.methods import make_method
from gharuntime.baselines.model_io import MODEL_FILE, load_model, save_model
from gharuntime.baselines.run import run_baseline
from gharuntime.cli.main import cli
from gharuntime.dataset import load


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_submission_has_one_record_per_test_row(fixture_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "median.jsonl"
    run_baseline("median", fixture_dataset, config="temporal", track="config", out=out)
    test_ids = load(fixture_dataset, "temporal", "test")["id"].to_list()
    records = _lines(out)
    assert [r["id"] for r in records] == test_ids
    assert all(set(r) == {"id", "duration_s"} for r in records)


def test_multi_track_submission_carries_all_three_targets(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "gm.jsonl"
    run_baseline("group-median", fixture_dataset, config="cross_repo", track="multi", out=out)
    assert set(_lines(out)[0]) == {"id", "duration_s", "queue_s", "log_bytes"}


@pytest.mark.parametrize("name", ["median", "group-median", "lightgbm", "lightgbm-tuned"])
def test_multi_track_predicts_the_targets_the_dataset_holds_and_names_the_others(
    no_logs_dataset: Path, tmp_path: Path, name: str
) -> None:
    # no row has log_bytes (a build without logs, as the real Apache dataset): the method
    # predicts duration_s and queue_s, and the metadata and the model say log_bytes is left out
    out = tmp_path / f"{name}.jsonl"
    params = {"n_estimators": 30, "trials": 2} if name.endswith("tuned") else None
    params = params or ({"n_estimators": 30} if name == "lightgbm" else None)
    run_baseline(
        name,
        no_logs_dataset,
        config="temporal",
        track="multi",
        out=out,
        model_dir=tmp_path / "model",
        params=params,
    )
    records = _lines(out)
    assert len(records) == load(no_logs_dataset, "temporal", "test").height
    assert all(set(r) == {"id", "duration_s", "queue_s"} for r in records)
    meta = json.loads(out.with_name(f"{name}.meta.json").read_text())
    assert meta["targets"] == ["duration_s", "queue_s"]
    train = load(no_logs_dataset, "temporal", "train").height
    left = meta["targets_left_out"]["log_bytes"]
    assert f"none of the {train} rows of its temporal train split has one" in left
    quantiles = _lines(out.with_name(f"{name}.quantiles.jsonl"))
    assert {k.rsplit("_", 1)[0] for k in quantiles[0] if k != "id"} == {"duration_s", "queue_s"}
    method, saved = load_model(tmp_path / "model")
    assert method.targets == ("duration_s", "queue_s") and saved["targets"] == list(method.targets)
    if name.endswith("tuned"):  # tuned per target: each has its own search
        assert set(meta["method_config"]["tuning"]) == {"duration_s", "queue_s"}


def test_sidecar_names_method_track_inputs_and_dataset_revision(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "lr.jsonl"
    run_baseline("last-run", fixture_dataset, config="temporal", track="history", out=out, seed=7)
    meta = json.loads((tmp_path / "lr.meta.json").read_text())
    assert meta["method"] == "last-run"
    assert meta["track"] == "history"
    assert meta["inputs"] == [
        "history_duration_s",
        "repo_id",
        "workflow_path",
        "job_name",
        "created_at",  # its ranges' recency strata
    ]
    # how its ranges were calibrated, on the validation split
    assert meta["calibration"]["duration_s"]["source"] == "validation"
    manifest = json.loads((fixture_dataset / "manifest.json").read_text())
    assert meta["dataset_revision"] == manifest["revision"]
    assert (meta["config"], meta["split"], meta["seed"]) == ("temporal", "test", 7)


def test_cli_writes_submission_and_model(fixture_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs" / "xgb.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "baseline",
            "xgboost",
            "--dataset",
            str(fixture_dataset),
            "--track",
            "config",
            "--out",
            str(out),
            "--param",
            "n_estimators=20",
        ],
    )
    assert result.exit_code == 0, result.output
    assert out.is_file()
    _, meta = load_model(tmp_path / "runs" / "xgb.model")
    assert meta["config"]["n_estimators"] == 20
    assert json.loads((tmp_path / "runs" / "xgb.model" / "importances.json").read_text())[
        "duration_s"
    ]


def test_cli_refuses_last_run_on_config_track_with_exit_2(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "lr.jsonl"
    result = CliRunner().invoke(
        cli,
        [
            "baseline",
            "last-run",
            "--dataset",
            str(fixture_dataset),
            "--track",
            "config",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 2
    assert "history_duration_s" in result.output and "forbids" in result.output
    assert not out.exists()


def test_cli_reports_a_folder_that_is_not_a_dataset(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["baseline", "median", "--dataset", str(tmp_path), "--out", str(tmp_path / "x.jsonl")]
    )
    assert result.exit_code == 2
    assert "not a dataset folder" in result.output


def test_a_dataset_of_another_contract_major_is_refused_by_every_reader(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    """A manifest whose schema_version was edited to 9.0.0 is refused (exit 2) by baseline and
    eval, as validate reports it; before, both read it as this contract's."""
    out = tmp_path / "m.jsonl"
    args = ["baseline", "median", "--dataset", str(fixture_dataset), "--track", "history"]
    assert CliRunner().invoke(cli, [*args, "--out", str(out)]).exit_code == 0
    manifest = fixture_dataset / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "schema_version": "9.0.0"}))
    refused = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "again.jsonl")])
    assert refused.exit_code == 2, refused.output
    said = " ".join(refused.output.split())
    assert "schema_version 9.0.0 is not compatible with this gharuntime's 1." in said
    assert "gharuntime validate" in said and not (tmp_path / "again.jsonl").exists()
    scored = CliRunner().invoke(cli, ["eval", str(out), "--dataset", str(fixture_dataset)])
    assert scored.exit_code == 2 and "schema_version 9.0.0" in scored.output, scored.output


def test_cli_help_teaches_with_an_example() -> None:
    result = CliRunner().invoke(cli, ["baseline", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "group-median" in result.output


def test_save_model_refuses_to_replace_a_folder_that_is_not_a_model(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    m = make_method("median", "config")
    m.fit(load(fixture_dataset, "temporal", "train"))
    with pytest.raises(MethodError, match="not a model folder"):
        save_model(m, folder, {})
    assert (folder / "notes.txt").read_text() == "keep me"


def test_load_model_reports_a_folder_without_a_model(tmp_path: Path) -> None:
    with pytest.raises(MethodError, match=f"no {MODEL_FILE}"):
        load_model(tmp_path)


def test_sidecar_timing_reaches_the_eval_result(fixture_dataset: Path, tmp_path: Path) -> None:
    from gharuntime.eval import evaluate_file

    out = tmp_path / "gm.jsonl"
    run = run_baseline("group-median", fixture_dataset, config="temporal", track="config", out=out)
    timing = json.loads((tmp_path / "gm.meta.json").read_text())["timing"]
    train_rows = load(fixture_dataset, "temporal", "train").height
    assert timing["fit_rows"] == train_rows and timing["predict_rows"] == run.rows
    assert timing["fit_seconds_per_1000_jobs"] == pytest.approx(
        1000 * run.fit_seconds / train_rows, abs=1e-4
    )
    assert timing["predict_seconds_per_1000_jobs"] == pytest.approx(
        1000 * run.predict_seconds / run.rows, abs=1e-4
    )
    result = evaluate_file(out, fixture_dataset, resamples=5)
    assert result["meta"]["extra"]["timing"] == timing


@pytest.mark.parametrize(("rank", "written"), [("0", True), ("1", False)])
def test_of_several_launched_processes_only_the_primary_writes(
    fixture_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rank: str, written: bool
) -> None:
    # what `accelerate launch --num_processes 2` puts in each process's environment
    monkeypatch.setenv("LOCAL_RANK", rank)
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", "2")
    runs = tmp_path / "runs"
    runs.mkdir()
    out, model = runs / "median.jsonl", runs / "median.model"
    result = CliRunner().invoke(
        cli,
        ["baseline", "median", "--dataset", str(fixture_dataset), "--out", str(out),
         "--model-out", str(model)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.is_file() is written and model.is_dir() is written
    assert ("wrote" in result.output) is written
    assert sorted(p.name for p in runs.iterdir()) == (
        ["median.jsonl", "median.meta.json", "median.model", "median.quantiles.jsonl"]
        if written
        else []
    )
    if written:
        assert json.loads((runs / "median.meta.json").read_text())["timing"]["processes"] == 2
