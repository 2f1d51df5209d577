"""How far a target moved between the validation split and the scored one, as eval records it
(`dataset.split_shift`): worked by hand on small arrays, and end to end on a dataset whose
latest jobs waited a hundredth of what the earlier ones did."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from rich.console import Console

from gharuntime.dataset import load
from gharuntime.eval import evaluate_file, render_tables
from gharuntime.eval.shift import MIN_REFERENCE_ROWS, split_shift


def test_shares_inside_below_and_above_the_reference_range() -> None:
    # 0..1000: P10 = 100, P90 = 900 (linear interpolation of 1,001 evenly spaced values)
    reference = {"duration_s": np.arange(1001, dtype=float)}
    scored = {"duration_s": np.array([5.0, 100.0, 500.0, 900.0, 901.0, np.nan, 2000.0, 50.0])}
    got = split_shift(reference, scored, "validation")["duration_s"]
    assert (got["p10"], got["p90"]) == (100.0, 900.0)
    # 7 finite values: 100, 500, 900 inside (ends count); 5, 50 below; 901, 2000 above
    assert got["inside"] == pytest.approx(3 / 7)
    assert got["below"] == pytest.approx(2 / 7) and got["above"] == pytest.approx(2 / 7)
    assert got["reference_rows"] == 1001 and got["nominal"] == 0.8
    assert got["reference_split"] == "validation"


def test_too_few_reference_values_give_no_figure() -> None:
    few = {"queue_s": np.arange(MIN_REFERENCE_ROWS - 1, dtype=float)}
    enough = {"queue_s": np.append(np.arange(MIN_REFERENCE_ROWS - 1, dtype=float), [np.nan, 7.0])}
    scored = {"queue_s": np.array([1.0, 2.0])}
    assert split_shift(few, scored, "validation") == {}
    assert set(split_shift(enough, scored, "validation")) == {"queue_s"}
    assert split_shift(enough, {"queue_s": np.array([np.nan])}, "validation") == {}


def _submit(tmp: Path, dataset: Path, split: str) -> dict[str, object]:
    rows = load(dataset, "temporal", split)
    sub = tmp / f"{split}.jsonl"
    sub.write_text(
        "".join(
            json.dumps({"id": i, "duration_s": float(d), "queue_s": float(q)}) + "\n"
            for i, d, q in zip(rows["id"], rows["duration_s"], rows["queue_s"], strict=True)
        )
    )
    meta = {"method": "m", "track": "multi", "config": "temporal", "split": split}
    sub.with_name(f"{split}.meta.json").write_text(json.dumps(meta))
    return evaluate_file(sub, dataset, resamples=20)


def test_eval_records_the_move_from_validation(shifted_waits_dataset: Path, tmp_path: Path) -> None:
    result = _submit(tmp_path, shifted_waits_dataset, "test")
    shift = result["dataset"]["split_shift"]  # type: ignore[index]
    validation = load(shifted_waits_dataset, "temporal", "validation")
    test = load(shifted_waits_dataset, "temporal", "test")
    for target in ("duration_s", "queue_s"):
        ref = validation[target].drop_nulls().cast(pl.Float64)
        low, high = ref.quantile(0.1, "linear"), ref.quantile(0.9, "linear")
        y = test[target].drop_nulls().cast(pl.Float64)
        inside = ((y >= low) & (y <= high)).mean()
        assert shift[target]["reference_rows"] == ref.len()
        assert shift[target]["p10"] == pytest.approx(low) and shift[target]["p90"] == pytest.approx(
            high
        )
        assert shift[target]["inside"] == pytest.approx(inside)
    assert shift["queue_s"]["inside"] < 0.5 < shift["queue_s"]["below"]  # the waits moved
    assert 0.6 < shift["duration_s"]["inside"] < 0.95  # the durations did not


def test_the_printed_interval_table_says_how_far_its_target_moved(
    shifted_waits_dataset: Path, tmp_path: Path
) -> None:
    rows = load(shifted_waits_dataset, "temporal", "test")
    lines = []
    for i, d, q in zip(rows["id"], rows["duration_s"], rows["queue_s"], strict=True):
        levels = {"p10": 0.5, "p50": 1.0, "p90": 2.0}
        row = {
            f"{t}_{k}": float(v) * f
            for t, v in (("duration_s", d), ("queue_s", q))
            for k, f in levels.items()
        }
        lines.append(json.dumps({"id": i, **row}) + "\n")
    (tmp_path / "test.quantiles.jsonl").write_text("".join(lines))
    result = _submit(tmp_path, shifted_waits_dataset, "test")
    console = Console(width=200, record=True)
    for table in render_tables(result):
        console.print(table)
    text = " ".join(console.export_text().split())  # the caption wraps at the table's width
    q = result["dataset"]["split_shift"]["queue_s"]  # type: ignore[index]
    assert (
        f"the validation split's own p10-p90 of queue_s holds {100 * q['inside']:.1f}% of these "
        f"jobs ({100 * q['below']:.1f}% below, {100 * q['above']:.1f}% above; 80% when the "
        "target did not move)"
    ) in text


def test_validation_scored_has_no_move_to_record(
    shifted_waits_dataset: Path, tmp_path: Path
) -> None:
    result = _submit(tmp_path, shifted_waits_dataset, "validation")
    assert "split_shift" not in result["dataset"]  # type: ignore[operator]
