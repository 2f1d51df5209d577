"""The recommended timeout-minutes: a margin over the P99, never below it, never above 360."""

from __future__ import annotations

import math

import pytest

from gharuntime.predict.timeout import JOB_LIMIT_MINUTES, MARGIN, recommend_timeout


@pytest.mark.parametrize("p99_s", [0.0, 5.0, 59.0, 61.0, 600.0, 3 * 3600.0, 14_000.0])
def test_never_below_the_p99_nor_above_the_job_limit(p99_s: float) -> None:
    t = recommend_timeout({"p10": 0.0, "p50": p99_s / 3, "p90": p99_s / 2, "p99": p99_s})
    assert t is not None and t.basis == "p99"
    assert t.minutes <= JOB_LIMIT_MINUTES
    assert t.minutes * 60 >= min(p99_s, JOB_LIMIT_MINUTES * 60)
    assert t.minutes == min(JOB_LIMIT_MINUTES, max(1, math.ceil(MARGIN * p99_s / 60)))
    assert t.capped == (MARGIN * p99_s / 60 > JOB_LIMIT_MINUTES)


def test_a_job_over_the_limit_is_capped_and_says_so() -> None:
    t = recommend_timeout({"p10": 1.0, "p50": 2.0, "p90": 3.0, "p99": 400 * 60.0})
    assert t is not None and t.minutes == 360 and t.capped


def test_without_a_p99_the_highest_level_is_named() -> None:
    t = recommend_timeout({"p10": 60.0, "p50": 120.0, "p90": 600.0})
    assert t is not None and t.basis == "p90" and t.minutes == 15


def test_no_quantiles_no_recommendation() -> None:
    assert recommend_timeout({}) is None
