"""How long each job waits for a runner, and the run's wall clock with the waits.

**The wait** is a job's predicted `queue_s` (started − created): per job its median (the
model's P50 of queue_s, else its point prediction) and its P10, P90 and P99, from a model that
predicts queue_s — one trained on the multi track (`gharuntime baseline NAME --track multi
--model-out DIR`), or the multi-track model `gharuntime learn` fits beside its two duration
models (`multi/` of a learned folder).

**The queue it meets.** A tree trained on the multi track reads how many of the repository's
and of its organisation's jobs were queued or running when the job was created
(gharuntime.baselines.queue_load). `predict` counts them at `--at` from the dataset of the
repository's jobs it was given (a learned folder's, or --history-from), from the jobs created
strictly before `--at`, as training counted them — only when the dataset covers `--at` (the
repository's jobs in it were created on both sides of it). Otherwise the counts are unknown
(NaN, which the trees route as they learned to) and the output says why. Every job of the run
is given the queue at `--at`: what is known when the run is queued.

**The wall clock** (WALL_RULE) is the wait plus the critical path: along each chain of
`needs`, each job waits and then runs; a job starts waiting when the last job it needs has
finished; the run's wall clock is the longest such chain. Its estimate takes each job's
median wait and point duration; its P10–P90 comes from DRAWS seeded joint draws from their
levels (gharuntime.predict.draws): each job's duration drawn independently (as a review's Δ
draws them), and the waits of one run drawn together, one normal score for all its jobs in a
draw (the jobs of a run meet the same queue: in the real dataset the jobs of one run that need
nothing waited within seconds of each other, so a congested pool delays them all; independent
waits would make the longest of twenty chains take each job's worst wait), independent of the
durations; the chain is computed in every draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

import numpy as np
import polars as pl

from gharuntime.baselines.queue_load import EVENT_COLUMNS, LOAD_FEATURES, JobEvents, load_counts
from gharuntime.predict.draws import draw_levels
from gharuntime.predict.history import dataset_rows
from gharuntime.predict.workflow import WAIT_TARGET, JobPrediction, critical_path_draws

__all__ = [
    "DRAWS",
    "SEED",
    "WAIT_TARGET",
    "WALL_CLOCK",
    "WALL_RULE",
    "QueueLoad",
    "WallClock",
    "clock_estimate",
    "queue_load",
    "wait_draws",
    "wall_clock",
]

WALL_CLOCK: Final = "wall_clock_s"
"""The run-level measure: wait plus critical path."""
DRAWS: Final = 2_000
"""Draws of a plain prediction's wall clock (1,000 past 1,000 jobs, to bound memory)."""
SEED: Final = 48
WALL_RULE: Final = (
    "wait + critical path: along each chain of needs, each job waits for a runner (from when "
    "the last job it needs has finished) and then runs; the run's wall clock is the longest "
    "such chain. Estimate: each job's median wait and point duration; P10–P90: 2,000 seeded "
    "joint draws, each job's duration drawn independently, the run's waits together (one "
    "queue for all its jobs)"
)


@dataclass(frozen=True)
class QueueLoad:
    """The queue the run meets at `at`: the counts the model reads (LOAD_FEATURES), counted
    from `events`, or None with the reason they are unknown (NaN to the model)."""

    at: datetime
    counts: dict[str, float] | None
    words: str  # where they were counted, or why they are unknown
    events: JobEvents | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "counts": self.counts,
            "known": self.counts is not None,
            "words": self.words,
        }


def _stamp(t: Any) -> str:
    return t.strftime("%Y-%m-%d %H:%M UTC") if isinstance(t, datetime) else "never"


def queue_load(dataset: Path | None, repo: str, repo_id: int, at: datetime | None) -> QueueLoad:
    """The queue `repo` (id `repo_id`) meets at `at` (None: now) by the module's rule, counted
    in `dataset` (None: unknown)."""
    when = at or datetime.now(timezone.utc)
    if dataset is None:
        return QueueLoad(
            when,
            None,
            "unknown (the model sees NaN): no dataset of the repository's jobs to count them "
            "from; a folder `gharuntime learn` wrote, or --history-from DATASET, gives them",
        )
    rows = dataset_rows(dataset, list(EVENT_COLUMNS))
    mine = rows.filter(pl.col("repo_id") == repo_id)
    first, last = mine["created_at"].min(), mine["created_at"].max()
    if not isinstance(first, datetime) or not isinstance(last, datetime):
        return QueueLoad(when, None, f"unknown (NaN): {dataset} holds no job of {repo}")
    if not first <= when <= last:
        return QueueLoad(
            when,
            None,
            f"unknown (the model sees NaN): {repo}'s jobs in {dataset} were created "
            f"{_stamp(first)} .. {_stamp(last)}, and {_stamp(when)} is outside, so who was "
            "queued then is not in it; give --at inside that window, or a dataset crawled "
            "after it (learn again, or --history-from a fresher build)",
        )
    events = JobEvents.from_frames([rows])
    query = pl.DataFrame(
        {"repo": [repo], "repo_id": [repo_id], "created_at": [when]},
        schema={"repo": pl.String, "repo_id": pl.Int64, "created_at": pl.Datetime("us", "UTC")},
    )
    values = load_counts(query, events)[0]
    counts = {name: float(v) for name, v in zip(LOAD_FEATURES, values, strict=True)}
    return QueueLoad(
        when,
        counts,
        f"{int(counts['repo_queued'])} queued and {int(counts['repo_running'])} running of "
        f"{repo}, {int(counts['org_queued'])} and {int(counts['org_running'])} of its "
        f"organisation, counted in {dataset} from the jobs created before {_stamp(when)} "
        "(successful jobs only: a lower bound)",
        events,
    )


def wait_draws(jobs: Sequence[JobPrediction], z: np.ndarray) -> np.ndarray:
    """Each job's drawn waits (one row per job) for the run's standard normal draws `z` (one
    score per draw, shared by every job: the module's rule); 0 for a job without a wait."""
    rows = [
        draw_levels(j.wait, j.wait.get("p50", 0.0), z) if j.wait else np.zeros(z.shape[0])
        for j in jobs
    ]
    return np.stack(rows) if rows else np.zeros((0, z.shape[0]))


@dataclass(frozen=True)
class WallClock:
    """The run's wall clock by WALL_RULE: the estimate and the draws' P10, P50, P90 (s)."""

    estimate: float
    p10: float
    p50: float
    p90: float

    def to_json(self) -> dict[str, Any]:
        return {
            "estimate": round(self.estimate, 1),
            "p10": round(self.p10, 1),
            "p50": round(self.p50, 1),
            "p90": round(self.p90, 1),
            "rule": WALL_RULE,
        }


def clock_estimate(jobs: Sequence[JobPrediction]) -> float:
    """The wall clock's estimate (WALL_RULE): each job's median wait and point duration."""
    listed = list(jobs)
    point = np.array(
        [[j.wait.get("p50", 0.0) + j.predicted.get("duration_s", 0.0)] for j in listed]
    ).reshape(len(listed), 1)
    return float(critical_path_draws(listed, point)[0])


def wall_clock(jobs: Sequence[JobPrediction]) -> WallClock | None:
    """The run's wall clock (WALL_RULE); None when no job has a wait."""
    if not jobs or not any(j.wait for j in jobs):
        return None
    listed = list(jobs)
    estimate = clock_estimate(listed)
    draws = DRAWS if len(listed) <= 1_000 else DRAWS // 2  # bounds memory, as a review's
    rng = np.random.default_rng(SEED)
    z = rng.standard_normal((len(listed), draws))
    z_wait = rng.standard_normal(draws)
    seconds = np.stack(
        [
            draw_levels(j.quantiles, j.predicted.get("duration_s", 0.0), z[i])
            for i, j in enumerate(listed)
        ]
    )
    clock = critical_path_draws(listed, seconds + wait_draws(listed, z_wait))
    p10, p50, p90 = (float(v) for v in np.percentile(clock, [10, 50, 90]))
    return WallClock(estimate, p10, p50, p90)
