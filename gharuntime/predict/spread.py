"""How sure a review's run-level Δ is, and whether it stands out of the repository's own noise.

**The Δ's P10–P90** (sum of job time, critical path, bill) comes from joint draws of every
job's duration, by one stated rule:

- each job's duration is drawn from the distribution its predicted quantiles give: its log is
  piecewise linear in the normal score between the P10 (z = −1.2816), the point prediction
  (z = 0), the P90 (z = 1.2816) and the P99 (z = 2.3263) where the model gives one, and goes on
  along the end pieces beyond them (a log-normal by parts through every level the model gives);
- different jobs are drawn independently;
- a job on both sides of the change (the same job, changed or not, or moved: one row, its old
  and new name) takes the same draw on both sides: the model's error on a job does not vanish because its YAML changed, and a job that
  did not change adds exactly 0 to every drawn Δ;
- DRAWS draws with a fixed seed, so the output is the same on every run; the run's critical
  path and bill are computed in each draw (per-job minute rounding included), and the Δ's P10
  and P90 are the 10th and 90th percentiles of the drawn Δ.

Independence leaves out what moves all of a run's jobs together (a slow runner pool, a cold
cache), so this range is the model's uncertainty, narrower than the run-to-run swing. That swing
is the **noise**: the spread of the repository's own recent runs of the workflow (`RunSpread`
from its history). A Δ is *beyond the noise* when its size is over `threshold` × half the
P10–P90 width of those runs (sum of job time; wall time for the critical path; the bill scaled
from the job time); with no history to measure it, when the Δ's own P10–P90 leaves out 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from gharuntime.billing import JobCost, WorkflowCost
from gharuntime.predict.draws import draw_levels, knots
from gharuntime.predict.history import RunSpread
from gharuntime.predict.wait import WALL_CLOCK, wait_draws
from gharuntime.predict.workflow import JobPrediction, critical_path_draws

__all__ = [
    "DRAWS",
    "DeltaSpread",
    "Measure",
    "delta_spread",
    "judge",
]

DRAWS: Final = 2_000
"""Draws per review (1,000 for a workflow of more than 1,000 jobs, to bound memory)."""
SEED: Final = 51
MEASURES: Final = ("total_job_s", "critical_path_s", "cost_usd")
"""The run-level Δs of every review; WALL_CLOCK (wait + critical path) joins them where the
model gives each job's wait."""


@dataclass(frozen=True)
class DeltaSpread:
    """The P10 and P90 of each run-level Δ, by measure (MEASURES)."""

    p10: dict[str, float]
    p90: dict[str, float]


def _knots(job: JobPrediction) -> tuple[np.ndarray, np.ndarray] | None:
    """(normal scores, log seconds) of the job's duration levels; None without a P10 and a P90."""
    return knots(job.quantiles, job.predicted.get("duration_s", 0.0))


def _durations(job: JobPrediction, z: np.ndarray) -> np.ndarray:
    """The job's drawn durations for the standard normal draws `z`."""
    return draw_levels(job.quantiles, job.predicted.get("duration_s", 0.0), z)


def _rate(cost: JobCost, whole: WorkflowCost) -> float:
    """USD per billed minute of a job (0 when it is not priced or free here)."""
    if cost.point is None or cost.kind is None:
        return 0.0
    if whole.public and cost.kind in whole.prices.free_in_public:
        return 0.0
    return float(whole.prices.rates.get(cost.kind, 0.0))


def _side(
    jobs: Sequence[JobPrediction],
    cost: WorkflowCost,
    rows: Sequence[int],
    z: np.ndarray,
    z_wait: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Each measure in every draw, for one side (jobs[i] drawn with z[rows[i]]; with `z_wait`,
    the run's one score per draw, every job's wait: the wall clock too)."""
    draws = z.shape[1]
    measures = (*MEASURES, WALL_CLOCK) if z_wait is not None else MEASURES
    if not jobs:
        return {m: np.zeros(draws) for m in measures}
    seconds = np.stack([_durations(j, z[r]) for j, r in zip(jobs, rows, strict=True)])
    rates = np.array([_rate(c, cost) for c in cost.jobs])
    minutes = np.where(seconds > 0, np.ceil(seconds / 60.0), 0.0)
    out = {
        "total_job_s": seconds.sum(axis=0),
        "critical_path_s": critical_path_draws(list(jobs), seconds),
        "cost_usd": (minutes * rates[:, None]).sum(axis=0),
    }
    if z_wait is not None:
        waits = wait_draws(jobs, z_wait)
        out[WALL_CLOCK] = critical_path_draws(list(jobs), waits + seconds)
    return out


def delta_spread(
    pairs: Sequence[tuple[JobPrediction | None, JobPrediction | None]],
    base: Sequence[JobPrediction],
    base_cost: WorkflowCost,
    new: Sequence[JobPrediction],
    new_cost: WorkflowCost,
) -> DeltaSpread | None:
    """The P10–P90 of each run-level Δ by the module's rule. `pairs` are the review's rows
    (a job before, after): the jobs of one row share their draws. None when no job on either
    side has a range."""
    if not any(_knots(j) is not None for j in (*base, *new)):
        return None
    row: dict[int, int] = {}
    for i, (before, after) in enumerate(pairs):
        for job in (before, after):
            if job is not None:
                row.setdefault(id(job), i)
    extra = len(pairs)
    rows_of: list[list[int]] = []
    for side in (base, new):
        rows = []
        for job in side:
            if id(job) in row:
                rows.append(row[id(job)])
            else:  # a job no row names: a draw of its own
                rows.append(extra)
                extra += 1
        rows_of.append(rows)
    draws = DRAWS if max(len(base), len(new)) <= 1_000 else DRAWS // 2
    rng = np.random.default_rng(SEED)
    z = rng.standard_normal((max(extra, 1), draws))
    # the waits' own draws, after the durations' (which stay as they were without waits)
    waited = any(j.wait for j in (*base, *new))
    z_wait = rng.standard_normal(draws) if waited else None
    drawn_base = _side(base, base_cost, rows_of[0], z, z_wait)
    drawn_new = _side(new, new_cost, rows_of[1], z, z_wait)
    p10: dict[str, float] = {}
    p90: dict[str, float] = {}
    for m in (*MEASURES, WALL_CLOCK) if waited else MEASURES:
        delta = drawn_new[m] - drawn_base[m]
        low, high = np.percentile(delta, [10, 90])
        p10[m], p90[m] = float(low), float(high)
    return DeltaSpread(p10, p90)


@dataclass(frozen=True)
class Measure:
    """One run-level Δ judged against its noise: `band` is the noise's half-width (None when
    no history measures it), `beyond` whether the Δ stands out of it."""

    delta: float
    p10: float | None
    p90: float | None
    band: float | None
    beyond: bool

    def to_json(self, digits: int) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, digits) + 0.0  # never -0.0

        return {
            "delta": r(self.delta),
            "delta_p10": r(self.p10),
            "delta_p90": r(self.p90),
            "noise": r(self.band),
            "beyond_noise": self.beyond,
        }


def judge(
    deltas: Mapping[str, float],
    spread: DeltaSpread | None,
    noise: RunSpread | None,
    base_total_s: float,
    base_cost_usd: float,
    threshold: float,
) -> dict[str, Measure]:
    """Each run-level Δ with its range, its noise band and whether it is beyond it (the
    module's rule). `deltas` are rounded as the output shows them (0.1 s, 0.0001 USD), so a
    Δ that prints as 0 is never beyond."""
    bands: dict[str, float | None] = {m: None for m in deltas}
    if noise is not None:
        bands["total_job_s"] = noise.band("total_job_s")
        bands["critical_path_s"] = noise.band("wall_s")
        if base_total_s > 0:
            bands["cost_usd"] = noise.band("total_job_s") * base_cost_usd / base_total_s
        if noise.clock_s is not None:
            bands[WALL_CLOCK] = noise.band("clock_s")
    out: dict[str, Measure] = {}
    for m in deltas:
        delta = round(deltas[m], 4 if m == "cost_usd" else 1)
        low = spread.p10.get(m) if spread else None
        high = spread.p90.get(m) if spread else None
        band = bands[m]
        if noise is not None:
            beyond = band is not None and abs(delta) > threshold * band
        elif low is not None and high is not None:
            beyond = delta != 0 and (low > 0 or high < 0)
        else:
            beyond = delta != 0
        out[m] = Measure(delta, low, high, band, beyond)
    return out
