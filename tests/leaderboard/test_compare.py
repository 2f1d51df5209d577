"""gharuntime.leaderboard.compare: every scored number of a result beside its re-run's, for
whatever targets, breakdowns and levels the result holds (the multi-target track's included)."""

from __future__ import annotations

import copy
from typing import Any

from gharuntime.leaderboard.compare import (
    compare,
    identity_mismatches,
    scored_numbers,
    sections,
    status_of,
)


def _estimate(value: float) -> dict[str, float]:
    return {"value": value, "ci_low": value - 0.1, "ci_high": value + 0.1}


def _result() -> dict[str, Any]:
    """A result of two targets, each with metrics, per-resample values and a sidecar."""
    targets = ("duration_s", "queue_s")
    return {
        "dataset": {"rows": 120, "record_ids_sha256": "a" * 64, "id": "/somewhere/else"},
        "bootstrap": {
            "seed": 0,
            "resamples": 3,
            "repo_ids_sha256": "b" * 64,
            "per_resample": {t: {"rmsle": [0.4, 0.5, 0.6]} for t in targets},
        },
        "metrics": {t: {"rmsle": _estimate(0.5), "mae": _estimate(40.0)} for t in targets},
        "intervals": {
            "metrics": {t: {"levels": {"p10": {"calibration": _estimate(0.1)}}} for t in targets},
            "per_resample": {t: {"mean_pinball": [0.1, 0.2, 0.3]} for t in targets},
        },
        "breakdowns": {t: {"runner_os": {"Linux": {"rows": 80}}} for t in targets},
        "counts": {"scored": {t: 120 for t in targets}},
        "meta": {"extra": {"timing": {"fit_seconds": 1.5}}},
        "provenance": {"git_commit": "c" * 40},
    }


def test_every_target_of_every_section_is_compared() -> None:
    numbers = scored_numbers(_result())
    for target in ("duration_s", "queue_s"):
        assert f"{target}.rmsle.value" in numbers  # the metrics block, named as always
        assert f"bootstrap.per_resample.{target}.rmsle[2]" in numbers
        assert f"intervals.metrics.{target}.levels.p10.calibration.ci_high" in numbers
        assert f"intervals.per_resample.{target}.mean_pinball[0]" in numbers
        assert f"breakdowns.{target}.runner_os.Linux.rows" in numbers
        assert f"counts.scored.{target}" in numbers
    # timings vary by machine and texts are not numbers: neither is compared
    assert not any(k.startswith(("meta", "provenance")) for k in numbers)
    assert "dataset.id" not in numbers and "dataset.rows" in numbers


def test_a_forged_number_of_the_second_target_differs() -> None:
    committed, again = _result(), _result()
    committed["bootstrap"]["per_resample"]["queue_s"]["rmsle"][1] = 0.05
    rows = compare(committed, again)
    assert status_of(rows, 0.02) == "differs"
    (summary,) = [s for s in sections(rows, 0.02) if s.name == "bootstrap"]
    assert summary.beyond == 1 and abs(summary.largest - 0.45) < 1e-12


def test_counts_must_be_equal_and_other_numbers_within_the_tolerance() -> None:
    committed = _result()
    moved = copy.deepcopy(committed)
    moved["metrics"]["duration_s"]["mae"]["value"] = 40.5  # 1.25% of 40: within 0.02
    assert status_of(compare(committed, moved), 0.02) == "within"
    moved["counts"]["scored"]["queue_s"] = 121  # a count moved by one: another result
    assert status_of(compare(committed, moved), 0.02) == "differs"
    assert status_of(compare(committed, _result()), 1e-9) == "exact"


def test_a_number_on_one_side_only_differs() -> None:
    committed, again = _result(), _result()
    del again["intervals"]
    assert status_of(compare(committed, again), 0.02) == "differs"


def test_other_records_or_resamples_are_named() -> None:
    committed, again = _result(), _result()
    again["dataset"]["record_ids_sha256"] = "d" * 64
    assert identity_mismatches(committed, again) == ["dataset.record_ids_sha256"]
    assert identity_mismatches(committed, _result()) == []


def test_a_block_eval_added_later_is_compared_only_where_the_result_holds_it() -> None:
    """A result made before eval recorded `dataset.split_shift` reproduces on the numbers it
    holds; one that holds the block has it compared, so a changed or dropped one differs."""
    from gharuntime.leaderboard.compare import ADDED_LATER, compare, status_of

    assert ADDED_LATER == ("dataset.split_shift",)
    shift = {"queue_s": {"p10": 9.0, "p90": 3066.5, "inside": 0.55, "below": 0.44, "above": 0.01}}
    old = {"dataset": {"rows": 10}, "metrics": {"duration_s": {"rmsle": {"value": 0.5}}}}
    new = {"dataset": {"rows": 10, "split_shift": shift}, "metrics": old["metrics"]}
    assert status_of(compare(old, new), 0.0) == "exact"
    assert status_of(compare(new, new), 0.0) == "exact"
    forged = {
        "dataset": {"rows": 10, "split_shift": {"queue_s": {**shift["queue_s"], "inside": 0.8}}}
    }
    forged["metrics"] = old["metrics"]
    assert status_of(compare(forged, new), 0.0) == "differs"
    assert status_of(compare(new, old), 0.0) == "differs"  # recorded, then gone in the re-run
    other = {"dataset": {"rows": 10, "extra": 1.0}, "metrics": old["metrics"]}
    assert status_of(compare(old, other), 0.0) == "differs"  # any other new number differs
