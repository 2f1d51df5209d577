"""How recently a job's group last ran in training, on hand-built tables: days and buckets,
groups never seen, unknown times, and the clock's saved form."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from gharuntime.recency import BUCKETS, GroupClock, bucket_of

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _rows(rows: list[tuple[int, str | None, str, datetime | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "repo_id": [r[0] for r in rows],
            "workflow_path": [r[1] for r in rows],
            "job_name": [r[2] for r in rows],
            "created_at": [r[3] for r in rows],
        },
        schema={
            "repo_id": pl.Int64,
            "workflow_path": pl.String,
            "job_name": pl.String,
            "created_at": pl.Datetime("us", "UTC"),
        },
    )


TRAIN = _rows(
    [
        (1, "ci.yml", "test", T0),
        (1, "ci.yml", "test", T0 + timedelta(days=10)),  # the group's latest
        (1, "ci.yml", "lint", T0),
        (2, None, "build", T0 + timedelta(days=1)),  # a null path is a key like any other
        (3, "ci.yml", "docs", None),  # in training, at no known time
    ]
)


def test_days_since_the_groups_latest_training_row() -> None:
    clock = GroupClock.from_frame(TRAIN)
    rows = _rows(
        [
            (1, "ci.yml", "test", T0 + timedelta(days=13)),  # 3 days after day 10, not day 0
            (1, "ci.yml", "lint", T0 + timedelta(days=40)),
            (2, None, "build", T0 + timedelta(days=101)),
            (1, "ci.yml", "deploy", T0),  # never trained on
            (2, "ci.yml", "build", T0),  # same job name, other path: another group
            (3, "ci.yml", "docs", T0),  # training time unknown
            (1, "ci.yml", "test", None),  # own time unknown
            (1, "ci.yml", "test", T0 + timedelta(days=9)),  # before the latest: negative
        ]
    )
    days = clock.days_since(rows)
    np.testing.assert_allclose(days[:3], [3.0, 40.0, 100.0])
    assert math.isnan(days[3]) and math.isnan(days[4])
    assert days[5] == math.inf and days[6] == math.inf
    assert days[7] == -1.0
    assert [BUCKETS[b] for b in clock.buckets(rows)] == [
        "0-7 days",
        "30-90 days",
        "over 90 days",
        "never",
        "never",
        "over 90 days",
        "over 90 days",
        "0-7 days",
    ]


def test_bucket_edges_are_inclusive_at_the_top() -> None:
    days = np.array([0.0, 7.0, 7.5, 30.0, 30.01, 90.0, 90.5, math.inf, math.nan])
    assert [BUCKETS[b] for b in bucket_of(days)] == [
        "0-7 days",
        "0-7 days",
        "7-30 days",
        "7-30 days",
        "30-90 days",
        "30-90 days",
        "over 90 days",
        "over 90 days",
        "never",
    ]


def test_a_frame_without_group_columns_is_never_seen() -> None:
    clock = GroupClock.from_frame(TRAIN)
    assert [BUCKETS[b] for b in clock.buckets(pl.DataFrame({"x": [1, 2]}))] == ["never"] * 2


def test_the_clock_saves_and_loads_as_json() -> None:
    clock = GroupClock.from_frame(TRAIN)
    again = GroupClock.from_json(clock.to_json())
    assert again.groups == clock.groups == 4
    rows = _rows([(1, "ci.yml", "test", T0 + timedelta(days=13)), (3, "ci.yml", "docs", T0)])
    np.testing.assert_array_equal(again.days_since(rows), clock.days_since(rows))


@pytest.mark.parametrize(
    "bad",
    [
        {"a": 1},
        [[1, "p", "j"]],
        [["1", "p", "j", 0.0]],
        [[1, "p", "j", "yesterday"]],
        [[True, "p", "j", 0]],
    ],
)
def test_a_damaged_clock_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="group clock"):
        GroupClock.from_json(bad)
