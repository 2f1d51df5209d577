"""The queue a job met at its creation: counted from earlier-created jobs only, by what was
observable then, and never from the job's own targets or from any later job."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import polars as pl
import pytest

from gharuntime.baselines.queue_load import LOAD_FEATURES, LOAD_INPUTS, JobEvents, load_counts

T0 = datetime(2026, 3, 2, tzinfo=timezone.utc)


def _table(rows: list[tuple[str, str, int, float, float, float]]) -> pl.DataFrame:
    """(id, repo, repo_id, created, started, completed), times in seconds after T0."""
    return pl.DataFrame(
        [
            {
                "id": i,
                "repo": repo,
                "repo_id": rid,
                "created_at": T0 + timedelta(seconds=c),
                "started_at": T0 + timedelta(seconds=s),
                "completed_at": T0 + timedelta(seconds=e),
            }
            for i, repo, rid, c, s, e in rows
        ],
        schema={
            "id": pl.String,
            "repo": pl.String,
            "repo_id": pl.Int64,
            "created_at": pl.Datetime("us", "UTC"),
            "started_at": pl.Datetime("us", "UTC"),
            "completed_at": pl.Datetime("us", "UTC"),
        },
    )


def _counts(table: pl.DataFrame) -> dict[str, dict[str, float]]:
    values = load_counts(table.select(LOAD_INPUTS), JobEvents.from_frames([table]))
    return {
        i: dict(zip(LOAD_FEATURES, map(float, row), strict=True))
        for i, row in zip(table["id"].to_list(), values, strict=True)
    }


HAND = _table(
    [
        ("j1", "org/a", 1, 0, 10, 100),
        ("j2", "org/a", 1, 5, 50, 60),
        ("j3", "org/b", 2, 20, 30, 40),
        ("j4", "org/a", 1, 55, 56, 57),
        ("j5", "org/b", 2, 25, 26, 27),
        ("j6", "org/a", 1, 55, 70, 80),  # created with j4: neither counts the other
        ("j7", "other/c", 3, 35, 35, 90),  # another organisation
        ("j8", "Org/d", 4, 90, 95, 99),  # the owner's case does not matter
    ]
)


def test_counts_of_a_hand_built_queue() -> None:
    counts = _counts(HAND)
    zero = dict.fromkeys(LOAD_FEATURES, 0.0)

    def c(rq: int, rr: int, oq: int, orr: int) -> dict[str, float]:
        return dict(zip(LOAD_FEATURES, map(float, (rq, rr, oq, orr)), strict=True))

    assert counts["j1"] == zero  # nothing before it
    assert counts["j2"] == c(1, 0, 1, 0)  # j1 created at 0, starts at 10: queued at 5
    assert counts["j3"] == c(0, 0, 1, 1)  # of org/a: j2 queued, j1 running
    assert counts["j4"] == c(0, 2, 0, 2)  # j1 and j2 running at 55; j3 finished at 40
    assert counts["j5"] == c(1, 0, 2, 1)  # j3 queued (repo b); j2 and j3 queued, j1 running
    assert counts["j6"] == counts["j4"]  # j4, created at the same moment, is not earlier
    assert counts["j7"] == zero  # org/* is another organisation
    # j8 (Org/d, organisation org) at 90: of org's earlier jobs only j1 (ends at 100) runs
    assert counts["j8"] == c(0, 0, 0, 1)


def test_a_split_read_twice_counts_each_job_once() -> None:
    once = load_counts(HAND.select(LOAD_INPUTS), JobEvents.from_frames([HAND]))
    twice = load_counts(HAND.select(LOAD_INPUTS), JobEvents.from_frames([HAND, HAND.head(3)]))
    assert np.array_equal(once, twice)


def test_without_events_the_counts_are_unknown() -> None:
    assert np.isnan(load_counts(HAND.select(LOAD_INPUTS), None)).all()


def _world(seed: int, n: int = 120) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    created = np.sort(rng.uniform(0, 3000, n)).round(0)  # whole seconds: some ties
    started = created + rng.exponential(60, n)
    done = started + rng.exponential(300, n)
    repos = rng.integers(0, 4, n)
    return _table(
        [
            (f"j{k}", f"org{r % 2}/r{r}", int(r), float(c), float(s), float(e))
            for k, (r, c, s, e) in enumerate(zip(repos, created, started, done, strict=True))
        ]
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_jobs_counts_do_not_move_with_its_own_targets_or_any_later_job(seed: int) -> None:
    world = _world(seed)
    base = _counts(world)
    rng = np.random.default_rng(100 + seed)
    created = world["created_at"].to_list()
    for k in rng.choice(world.height, 15, replace=False).tolist():
        t = created[k]
        later = pl.col("created_at") > t
        own = pl.col("id") == f"j{k}"
        shift = pl.duration(seconds=pl.lit(rng.uniform(1, 5000)).cast(pl.Int64))
        moved = world.with_columns(
            # its own targets: queue_s (started - created) and duration_s (completed - started)
            pl.when(own).then(pl.col("started_at") + shift).otherwise(pl.col("started_at")),
            pl.when(own).then(pl.col("completed_at") + shift * 3).otherwise(pl.col("completed_at")),
        ).with_columns(  # every later job: created, started and completed elsewhere, still later
            pl.when(later).then(pl.col(c) + shift * 2).otherwise(pl.col(c))
            for c in ("created_at", "started_at", "completed_at")
        )
        assert _counts(moved)[f"j{k}"] == base[f"j{k}"]


def test_the_leakage_check_sees_a_change_in_what_was_observable() -> None:
    # the control: an earlier job that finishes after j4's creation instead of before it moves
    # j4's count, so the test above can fail
    moved = HAND.with_columns(
        pl.when(pl.col("id") == "j3")
        .then(T0 + timedelta(seconds=60))
        .otherwise(pl.col("completed_at"))
        .alias("completed_at")
    )
    assert _counts(moved)["j4"]["org_running"] == _counts(HAND)["j4"]["org_running"] + 1
