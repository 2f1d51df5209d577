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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from gharuntime.billing import JobCost, WorkflowCost
from gharuntime.predict.history import RunSpread
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
_Z: Final = {"p10": -1.2815515655446004, "p90": 1.2815515655446004, "p99": 2.3263478740408408}
MEASURES: Final = ("total_job_s", "critical_path_s", "cost_usd")


@dataclass(frozen=True)
class DeltaSpread:
    """The P10 and P90 of each run-level Δ, by measure (MEASURES)."""

    p10: dict[str, float]
    p90: dict[str, float]


def _knots(job: JobPrediction) -> tuple[np.ndarray, np.ndarray] | None:
    """(normal scores, log seconds) of the job's levels; None without a P10 and a P90."""
    q = job.quantiles
    if "p10" not in q or "p90" not in q:
        return None
    point = q.get("p50", job.predicted.get("duration_s", 0.0))
    pairs = sorted(
        [(_Z["p10"], q["p10"]), (0.0, point), (_Z["p90"], q["p90"])]
        + ([(_Z["p99"], q["p99"])] if "p99" in q else [])
    )
    z = np.array([p[0] for p in pairs])
    values = np.array([max(float(p[1]), 1.0) if math.isfinite(p[1]) else 1.0 for p in pairs])
    logs = np.maximum.accumulate(np.log(values))  # levels never decrease with the score
    return z, logs


def _durations(job: JobPrediction, z: np.ndarray) -> np.ndarray:
    """The job's drawn durations for the standard normal draws `z`."""
    knots = _knots(job)
    if knots is None:
        return np.full(z.shape, job.predicted.get("duration_s", 0.0))
    zs, logs = knots
    out = np.interp(z, zs, logs)
    low, high = z < zs[0], z > zs[-1]
    out[low] = logs[0] + (z[low] - zs[0]) * (logs[1] - logs[0]) / (zs[1] - zs[0])
    out[high] = logs[-1] + (z[high] - zs[-1]) * (logs[-1] - logs[-2]) / (zs[-1] - zs[-2])
    return np.exp(np.minimum(out, 30.0))  # e^30 s: far past any job, never an overflow


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
) -> dict[str, np.ndarray]:
    """Each measure in every draw, for one side (jobs[i] drawn with z[rows[i]])."""
    draws = z.shape[1]
    if not jobs:
        return {m: np.zeros(draws) for m in MEASURES}
    seconds = np.stack([_durations(j, z[r]) for j, r in zip(jobs, rows, strict=True)])
    rates = np.array([_rate(c, cost) for c in cost.jobs])
    minutes = np.where(seconds > 0, np.ceil(seconds / 60.0), 0.0)
    return {
        "total_job_s": seconds.sum(axis=0),
        "critical_path_s": critical_path_draws(list(jobs), seconds),
        "cost_usd": (minutes * rates[:, None]).sum(axis=0),
    }


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
    z = np.random.default_rng(SEED).standard_normal((max(extra, 1), draws))
    before = _side(base, base_cost, rows_of[0], z)
    after = _side(new, new_cost, rows_of[1], z)
    p10: dict[str, float] = {}
    p90: dict[str, float] = {}
    for m in MEASURES:
        delta = after[m] - before[m]
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
    bands: dict[str, float | None] = {m: None for m in MEASURES}
    if noise is not None:
        bands["total_job_s"] = noise.band("total_job_s")
        bands["critical_path_s"] = noise.band("wall_s")
        if base_total_s > 0:
            bands["cost_usd"] = noise.band("total_job_s") * base_cost_usd / base_total_s
    out: dict[str, Measure] = {}
    for m in MEASURES:
        delta = round(deltas[m], 4 if m == "cost_usd" else 1)
        low = spread.p10[m] if spread else None
        high = spread.p90[m] if spread else None
        band = bands[m]
        if noise is not None:
            beyond = band is not None and abs(delta) > threshold * band
        elif low is not None and high is not None:
            beyond = delta != 0 and (low > 0 or high < 0)
        else:
            beyond = delta != 0
        out[m] = Measure(delta, low, high, band, beyond)
    return out
