"""eval's one typed request: the options a command gives, the one call, and the --gold check,
all in the library (the command only turns options into an EvalRequest)."""

from __future__ import annotations

import json
from pathlib import Path

from gharuntime.dataset import load
from gharuntime.eval.api import evaluate_file
from gharuntime.eval.meta import MethodMeta
from gharuntime.eval.request import EvalRequest, evaluate, gold_failures, parse_inputs


def test_gold_check_flags_an_imperfect_score() -> None:
    def block(value: float | None) -> dict[str, float | None]:
        return {"value": value}

    perfect = {
        "mae": block(0.0),
        "median_ape": block(0.0),
        "rmsle": block(0.0),
        "within_2x": block(1.0),
        "spearman": block(None),  # undefined (constant truth) is not a failure
        "r2_log": block(1.0),
    }
    assert gold_failures({"metrics": {"duration_s": perfect}}) == []
    broken = {**perfect, "mae": block(0.5), "within_2x": block(None)}
    assert gold_failures({"metrics": {"duration_s": broken}}) == [
        "duration_s mae: 0.5 (a perfect prediction gives 0.0)",
        "duration_s within_2x: None (a perfect prediction gives 1.0)",
    ]


def test_a_gold_request_passes_its_own_check(fixture_dataset_master: Path) -> None:
    result = evaluate(EvalRequest(fixture_dataset_master, resamples=5))
    assert gold_failures(result) == []
    assert set(result["metrics"]) == {"duration_s", "queue_s", "log_bytes"}  # multi by default


def test_parse_inputs() -> None:
    assert parse_inputs(None) is None
    assert parse_inputs(" repo, job_name,,matrix ") == ("repo", "job_name", "matrix")


def test_declared_metadata_is_what_the_options_dict_was(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    rows = load(fixture_dataset_master, "temporal", "test")
    sub = tmp_path / "s.jsonl"
    sub.write_text(
        "".join(
            json.dumps({"id": i, "duration_s": d * 1.2}) + "\n"
            for i, d in zip(rows["id"], rows["duration_s"], strict=True)
        )
    )
    declared = MethodMeta(method="m", track="config", inputs=("repo",), seed=3)
    request = EvalRequest(fixture_dataset_master, sub, declared, resamples=5, command=["x"])
    got = evaluate(request)
    want = evaluate_file(
        sub,
        fixture_dataset_master,
        options={"method": "m", "track": "config", "inputs": ("repo",), "seed": 3},
        resamples=5,
        command=["x"],
    )
    for doc in (got, want):
        doc.pop("provenance")
    assert got == want and got["meta"]["method"] == "m" and got["meta"]["seed"] == 3
    assert tmp_path / "s.meta.json" in request.input_files()
    assert tmp_path / "s.jsonl.meta.json" in request.input_files()  # an old name still read


def test_the_result_may_not_replace_a_file_the_evaluation_reads(tmp_path: Path) -> None:
    submission = tmp_path / "preds.jsonl"
    request = EvalRequest(tmp_path / "ds", submission, vs=tmp_path / "b.jsonl")
    for read in (submission, tmp_path / "b.jsonl", tmp_path / "preds.meta.json"):
        assert request.output_problem(read) is not None, read
    assert request.output_problem(tmp_path / "result.json") is None
