"""The shared split-conformal calibration on hand-built numbers: the finite-sample quantile,
per-level offsets, per-stratum (Mondrian) offsets with borrowing, the balanced sample, and the
saved form."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from gharuntime.baselines.intervals import (
    MIN_STRATUM_ROWS,
    STRATA,
    Calibration,
    balanced_sample,
    conformal_quantile,
    fit_calibration,
    row_strata,
)
from gharuntime.recency import GroupClock

LEVELS = {"p10": 0.1, "p50": 0.5, "p90": 0.9}


def test_conformal_quantile_takes_the_finite_sample_order_statistic() -> None:
    scores = np.arange(10.0)[::-1].copy()  # 0..9, unsorted
    # n = 10: upper levels take the ceil((n+1)τ)-th smallest, lower ones the floor((n+1)τ)-th
    assert conformal_quantile(scores, 0.9) == 9.0  # ceil(9.9) = 10th
    assert conformal_quantile(scores, 0.8) == 8.0  # ceil(8.8) = 9th
    assert conformal_quantile(scores, 0.5) == 5.0  # ceil(5.5) = 6th
    assert conformal_quantile(scores, 0.1) == 0.0  # floor(1.1) = 1st
    assert conformal_quantile(scores, 0.2) == 1.0  # floor(2.2) = 2nd
    # past either end: the extreme score, never an infinite one
    assert conformal_quantile(scores, 0.99) == 9.0
    assert conformal_quantile(scores, 0.05) == 0.0
    with pytest.raises(ValueError):
        conformal_quantile(np.empty(0), 0.5)


def test_offsets_are_per_level_quantiles_of_truth_minus_each_levels_base() -> None:
    y = np.arange(10.0)
    bases = {"p10": np.full(10, 2.0), "p50": np.zeros(10), "p90": np.full(10, -1.0)}
    cal = fit_calibration(y, bases, LEVELS, strata=None, source="validation")
    assert cal.by == "none" and cal.rows == 10 and cal.source == "validation"
    assert cal.strata["all"].offsets == {"p10": -2.0, "p50": 5.0, "p90": 10.0}
    adjusted = cal.adjust({q: np.array([1.0, 2.0]) for q in LEVELS}, None)
    np.testing.assert_allclose(adjusted["p10"], [-1.0, 0.0])
    np.testing.assert_allclose(adjusted["p90"], [11.0, 12.0])


def test_each_stratum_gets_its_own_offsets_and_a_sparse_one_borrows_the_more_novel_first() -> None:
    recent, never = STRATA.index("0-7 days"), STRATA.index("never")
    older = STRATA.index("over 90 days")
    # 200 recent rows with small errors, 150 never-seen rows with large ones, 5 older rows
    y = np.concatenate([np.linspace(-1, 1, 200), np.linspace(-5, 5, 150), np.zeros(5)])
    strata = np.array([recent] * 200 + [never] * 150 + [older] * 5)
    cal = fit_calibration(
        y, {"p90": np.zeros_like(y)}, {"p90": 0.9}, strata=strata, source="validation"
    )
    assert cal.by == "recency"
    assert cal.strata["0-7 days"].pooled == ("0-7 days",)
    assert cal.strata["never"].pooled == ("never",)
    want_recent = conformal_quantile(y[:200], 0.9)
    want_never = conformal_quantile(y[200:350], 0.9)
    assert cal.strata["0-7 days"].offsets["p90"] == want_recent
    assert cal.strata["never"].offsets["p90"] == want_never > want_recent
    # 5 rows are too few: "over 90 days" pools with "never" (more novel) before anything else
    assert cal.strata["over 90 days"].rows == 5
    assert cal.strata["over 90 days"].pooled == ("over 90 days", "never")
    assert cal.strata["over 90 days"].offsets["p90"] == conformal_quantile(y[200:], 0.9)
    # a stratum with no rows of its own: the next more novel ones that have rows
    assert cal.strata["7-30 days"].pooled == ("over 90 days", "never")
    assert cal.strata["with history"].pooled == ("0-7 days",)
    adjusted = cal.adjust({"p90": np.zeros(3)}, np.array([recent, never, older]))
    np.testing.assert_allclose(
        adjusted["p90"], [want_recent, want_never, conformal_quantile(y[200:], 0.9)]
    )
    with pytest.raises(ValueError, match="stratum"):
        cal.adjust({"p90": np.zeros(3)}, None)


def test_too_few_rows_in_all_pool_every_stratum() -> None:
    y = np.arange(20.0)
    strata = np.array([1] * 10 + [5] * 10)
    assert MIN_STRATUM_ROWS > 20
    cal = fit_calibration(
        y, {"p50": np.zeros(20)}, {"p50": 0.5}, strata=strata, source="validation"
    )
    assert {s.offsets["p50"] for s in cal.strata.values()} == {conformal_quantile(y, 0.5)}


def test_row_strata_reads_history_first_then_recency() -> None:
    from datetime import UTC, datetime

    t = datetime(2024, 1, 1, tzinfo=UTC)
    train = pl.DataFrame(
        {"repo_id": [1], "workflow_path": ["ci.yml"], "job_name": ["test"], "created_at": [t]}
    )
    rows = pl.DataFrame(
        {
            "repo_id": [1, 1, 2],
            "workflow_path": ["ci.yml", "ci.yml", "ci.yml"],
            "job_name": ["test", "test", "test"],
            "created_at": [t, t, t],
            "history_duration_s": [[5.0], [], None],
        }
    )
    clock = GroupClock.from_frame(train)
    names = [STRATA[i] for i in row_strata(rows, clock, uses_history=True)]
    assert names == ["with history", "0-7 days", "never"]
    names = [STRATA[i] for i in row_strata(rows, clock, uses_history=False)]
    assert names == ["0-7 days", "0-7 days", "never"]
    assert [STRATA[i] for i in row_strata(rows, None, uses_history=False)] == ["never"] * 3


def test_balanced_sample_keeps_the_rare_strata_whole() -> None:
    strata = np.array([0] * 1000 + [1] * 30 + [2] * 5)
    pick = balanced_sample(strata, 100, seed=0)
    assert len(pick) == 100 and np.all(np.diff(pick) > 0)
    assert np.bincount(strata[pick]).tolist() == [65, 30, 5]
    np.testing.assert_array_equal(pick, balanced_sample(strata, 100, seed=0))
    assert len(balanced_sample(strata, 10_000, seed=0)) == len(strata)


def test_a_calibration_saves_and_loads_and_a_damaged_one_is_refused() -> None:
    y = np.linspace(-1, 1, 300)
    strata = np.array([1, 5] * 150)
    cal = fit_calibration(
        y, {q: np.zeros(300) for q in LEVELS}, LEVELS, strata=strata, source="validation"
    )
    again = Calibration.from_json(cal.to_json(), tuple(LEVELS))
    assert again == cal
    bad = cal.to_json()
    bad["strata"]["never"]["offsets"]["p10"] = float("nan")
    with pytest.raises(ValueError, match="finite"):
        Calibration.from_json(bad, tuple(LEVELS))
    bad = cal.to_json()
    del bad["strata"]["never"]
    with pytest.raises(ValueError, match="strata"):
        Calibration.from_json(bad, tuple(LEVELS))
    with pytest.raises(ValueError, match="offset for p10, p50, p90, p99"):
        Calibration.from_json(cal.to_json(), (*LEVELS, "p99"))
