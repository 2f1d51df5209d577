"""The queue a job met when it was created: how many jobs of its repository, and of its
organisation (the owner in `owner/name`), were queued or running at that moment, counted from
the jobs created strictly before it.

For a job created at t, a job j counts only when created_j < t, and of j only what was
observable at t enters: whether it had started and whether it had finished by then.

    queued(t)  = #{j : created_j < t <= started_j}
    running(t) = #{j : started_j < t <= completed_j}

(started is taken as at least created, completed as at least started, so a malformed row is
never counted twice). A job's own started_at and completed_at, which are its targets
(queue_s = started - created, duration_s = completed - started), never reach its own counts,
nor does anything of a job created at or after t: `tests/baselines/test_queue_load.py` moves
them all and sees the counts unchanged.

The events are the rows of the dataset's config that a run reads (train, validation and the
split it predicts: `gharuntime baseline` hands them over with `Method.observe`). They are the
dataset's picture of the queue: only jobs that passed the build's filters (by default the
successful ones) are in it, so a count is a lower bound of the real load. A training row may
thus count a job of another split created before it (in cross_repo, another repository of its
organisation), by what was observable at the row's creation, never by that job's target.
Without events (a model loaded by `gharuntime predict`) the counts are unknown: NaN, which the
trees route as they learned to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = ["EVENT_COLUMNS", "LOAD_FEATURES", "LOAD_INPUTS", "JobEvents", "load_counts"]

EVENT_COLUMNS: Final = ("id", "repo", "repo_id", "created_at", "started_at", "completed_at")
"""The columns of the event rows (every other column is dropped on the way in)."""
LOAD_INPUTS: Final = ("repo", "repo_id", "created_at")
"""The input columns a job's counts are looked up by."""
LOAD_FEATURES: Final = ("repo_queued", "repo_running", "org_queued", "org_running")
"""The counts, in column order."""

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
_Times = tuple[IntArray, IntArray, IntArray]  # sorted created, started, completed (µs)


def _micros(column: str) -> pl.Expr:
    return pl.col(column).dt.epoch("us")


def _org(repo: pl.Expr) -> pl.Expr:
    return repo.str.split("/").list.first().str.to_lowercase()


def _runs(keys: np.ndarray) -> list[tuple[Any, IntArray]]:
    """(key, the rows holding it) for each distinct key, in one sort."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    starts = [0, *cuts.tolist()]
    ends = [*cuts.tolist(), int(keys.shape[0])]
    return [(ordered[a], order[a:b]) for a, b in zip(starts, ends, strict=True) if b > a]


def _grouped(keys: np.ndarray, times: tuple[IntArray, IntArray, IntArray]) -> dict[Any, _Times]:
    return {
        key: (np.sort(times[0][rows]), np.sort(times[1][rows]), np.sort(times[2][rows]))
        for key, rows in _runs(keys)
    }


@dataclass(frozen=True)
class JobEvents:
    """Every event row's creation, start and end, sorted per repository and per organisation."""

    by_repo: dict[Any, _Times]
    by_org: dict[Any, _Times]
    rows: int

    @classmethod
    def from_frames(cls, frames: Sequence[pl.DataFrame]) -> JobEvents:
        """From job-table rows (the splits a run reads; a row read twice counts once)."""
        parts = [f.select(EVENT_COLUMNS) for f in frames if f.height]
        if not parts:
            return cls({}, {}, 0)
        table = (
            pl.concat(parts)
            .unique(subset="id", keep="first", maintain_order=True)
            .select(
                pl.col("repo_id").cast(pl.Int64),
                _org(pl.col("repo")).alias("org"),
                _micros("created_at").alias("created"),
                _micros("started_at").alias("started"),
                _micros("completed_at").alias("done"),
            )
            .with_columns(pl.max_horizontal("created", "started").alias("started"))
            .with_columns(pl.max_horizontal("started", "done").alias("done"))
        )
        times = (
            table["created"].to_numpy().astype(np.int64),
            table["started"].to_numpy().astype(np.int64),
            table["done"].to_numpy().astype(np.int64),
        )
        return cls(
            by_repo=_grouped(table["repo_id"].to_numpy(), times),
            by_org=_grouped(table["org"].to_numpy().astype(object), times),
            rows=table.height,
        )


def _counts(
    groups: dict[Any, _Times], keys: np.ndarray, at: IntArray
) -> tuple[FloatArray, FloatArray]:
    """Queued and running at each `at`, within each row's group (0 for a group without events)."""
    queued = np.zeros(at.shape[0])
    running = np.zeros(at.shape[0])
    for key, rows in _runs(keys):
        times = groups.get(key)
        if times is None:
            continue
        t = at[rows]
        created, started, done = (np.searchsorted(a, t, side="left") for a in times)
        queued[rows] = created - started
        running[rows] = started - done
    return queued, running


def load_counts(frame: pl.DataFrame, events: JobEvents | None) -> FloatArray:
    """Per row of `frame` (LOAD_INPUTS), its LOAD_FEATURES at its created_at; NaN throughout
    without events."""
    if events is None:
        return np.full((frame.height, len(LOAD_FEATURES)), np.nan)
    keys = frame.select(
        pl.col("repo_id").cast(pl.Int64),
        _org(pl.col("repo")).alias("org"),
        _micros("created_at").alias("at"),
    )
    at = keys["at"].to_numpy().astype(np.int64)
    repo = _counts(events.by_repo, keys["repo_id"].to_numpy(), at)
    org = _counts(events.by_org, keys["org"].to_numpy().astype(object), at)
    return np.column_stack([*repo, *org]).astype(np.float64)
