"""The result document: strict JSON, written atomically, rendered as tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from rich.console import Console

from gharuntime.dataset import load, write_dataset
from gharuntime.eval import evaluate_file, evaluate_gold, render_tables, write_result
from gharuntime.fixture import fixture_jobs


@pytest.fixture(scope="module")
def gold_result(fixture_dataset_master: Path) -> dict[str, Any]:
    return evaluate_gold(fixture_dataset_master, resamples=30)


def test_result_is_strict_json(gold_result: dict[str, Any]) -> None:
    text = json.dumps(gold_result, allow_nan=False)  # undefined values are null, never NaN
    assert json.loads(text) == gold_result


def test_every_metric_carries_interval_and_direction(gold_result: dict[str, Any]) -> None:
    for target in gold_result["metrics"].values():
        for block in target.values():
            assert set(block) == {"value", "ci_low", "ci_high", "higher_is_better"}
    groups = gold_result["breakdowns"]["duration_s"]["runner_os"]
    assert all("ci_low" in g["metrics"]["mae"] for g in groups.values())


def test_write_result_replaces_atomically(gold_result: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "sub" / "result.json"
    write_result({"old": True}, out)
    write_result(gold_result, out)
    assert json.loads(out.read_text())["result_version"] == 2
    assert [p.name for p in out.parent.iterdir()] == ["result.json"]


def test_write_result_failure_keeps_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    write_result({"old": True}, out)
    with pytest.raises(ValueError):
        write_result({"bad": float("nan")}, out)
    assert json.loads(out.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_tables_show_values_and_intervals(gold_result: dict[str, Any]) -> None:
    console = Console(width=160, record=True)
    for table in render_tables(gold_result):
        console.print(table)
    text = console.export_text()
    assert "0.0 s [0.0, 0.0]" in text  # the ground truth's MAE and its interval
    assert "A − B" in text and "OS: Linux" in text and "repo in train: seen" in text


def test_records_without_truth_are_not_scored_on_that_target(tmp_path: Path) -> None:
    jobs = fixture_jobs().with_columns(
        pl.when(pl.col("id").str.ends_with("1"))
        .then(None)
        .otherwise(pl.col("log_bytes"))
        .alias("log_bytes")
    )
    ds = tmp_path / "ds"
    write_dataset(jobs, ds, provenance={"kind": "fixture"})
    rows = load(ds, "temporal", "test")
    sub = tmp_path / "m.jsonl"
    sub.write_text(
        "".join(
            json.dumps({"id": r, "duration_s": 1, "queue_s": 1, "log_bytes": 1}) + "\n"
            for r in rows["id"]
        )
    )
    result = evaluate_file(sub, ds, options={"track": "multi"}, resamples=10)
    nulls = rows["log_bytes"].null_count()
    assert nulls > 0
    assert result["counts"]["without_truth"]["log_bytes"] == nulls
    assert result["counts"]["scored"]["log_bytes"] == rows.height - nulls
    assert result["counts"]["scored"]["duration_s"] == rows.height
