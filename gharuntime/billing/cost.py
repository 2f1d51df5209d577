"""Seconds → billed minutes → price, per job and for a workflow run.

GitHub rounds the minutes each job uses up to the whole minute, per job, and bills the sum over
jobs (not the critical path). One function turns seconds into a Bill; it is applied to a job's
point prediction and, where the prediction has an interval, to its low and high ends (rounding
up and multiplying by a rate keep the order, so the bills of P10 and P90 bound the bill). A job
whose runner maps to no priced kind gets no bill and says why; totals are over the priced jobs
and count the others.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gharuntime.billing.prices import PriceTable
from gharuntime.billing.runners import runner_kind

__all__ = ["Bill", "JobCost", "JobTime", "WorkflowCost", "bill", "billed_minutes", "price_jobs"]


def billed_minutes(seconds: float) -> int:
    """Whole minutes GitHub bills for one job that ran `seconds` (partial minutes round up)."""
    if not math.isfinite(seconds) or seconds <= 0:
        return 0
    return math.ceil(seconds / 60)


@dataclass(frozen=True)
class Bill:
    """What one job (or a sum of jobs) is billed: minutes and USD."""

    billed_minutes: int
    cost_usd: float

    def __add__(self, other: Bill) -> Bill:
        return Bill(self.billed_minutes + other.billed_minutes, self.cost_usd + other.cost_usd)


ZERO = Bill(0, 0.0)


def bill(seconds: float, kind: str, prices: PriceTable, *, public: bool) -> Bill:
    """The bill for one job of `seconds` on a runner of `kind` (which `prices` must price).
    A kind free in public repositories bills nothing there, as GitHub shows "Billable 0s"."""
    if public and kind in prices.free_in_public:
        return ZERO
    minutes = billed_minutes(seconds)
    return Bill(minutes, minutes * prices.rates[kind])


@dataclass(frozen=True)
class JobTime:
    """One job's runner labels and predicted seconds, with its interval when there is one."""

    labels: tuple[str, ...]
    seconds: float
    low_s: float | None = None
    high_s: float | None = None


@dataclass(frozen=True)
class JobCost:
    """One job's bill: `point` from the prediction, `low`/`high` from its interval (None when
    the prediction has none); all None with `unpriced` saying why when no rate applies."""

    kind: str | None
    point: Bill | None
    low: Bill | None = None
    high: Bill | None = None
    unpriced: str | None = None

    def to_json(self) -> dict[str, Any]:
        def pair(attr: str) -> list[Any] | None:
            if self.low is None or self.high is None:
                return None
            return [_field(self.low, attr), _field(self.high, attr)]

        return {
            "runner_kind": self.kind,
            "billed_minutes": _field(self.point, "billed_minutes"),
            "billed_minutes_range": pair("billed_minutes"),
            "cost_usd": _field(self.point, "cost_usd"),
            "cost_usd_range": pair("cost_usd"),
            "unpriced": self.unpriced,
        }


def _field(b: Bill | None, attr: str) -> Any:
    if b is None:
        return None
    return b.billed_minutes if attr == "billed_minutes" else round(b.cost_usd, 6)


@dataclass(frozen=True)
class WorkflowCost:
    """Bills of every job and their sums over the priced jobs."""

    jobs: list[JobCost]
    prices: PriceTable
    public: bool

    @property
    def priced(self) -> list[JobCost]:
        return [j for j in self.jobs if j.point is not None]

    @property
    def total(self) -> Bill:
        return sum((j.point for j in self.priced if j.point), ZERO)

    @property
    def total_range(self) -> tuple[Bill, Bill] | None:
        """Sums of the per-job low and high bills; None unless every priced job has both. (The
        sum of per-job P10s is below the P10 of the sum: a deliberately wide band.)"""
        priced = self.priced
        if not priced or any(j.low is None or j.high is None for j in priced):
            return None
        low = sum((j.low for j in priced if j.low), ZERO)
        high = sum((j.high for j in priced if j.high), ZERO)
        return low, high

    def to_json(self) -> dict[str, Any]:
        """The run's totals for `predict --json` (per-job fields come from JobCost.to_json)."""
        total, span = self.total, self.total_range
        return {
            "billed_minutes": total.billed_minutes,
            "billed_minutes_range": [span[0].billed_minutes, span[1].billed_minutes]
            if span
            else None,
            "cost_usd": round(total.cost_usd, 6),
            "cost_usd_range": [round(span[0].cost_usd, 6), round(span[1].cost_usd, 6)]
            if span
            else None,
            "billing": {
                "repository": "public" if self.public else "private",
                "unpriced_jobs": len(self.jobs) - len(self.priced),
                "prices": self.prices.provenance(),
            },
        }


def price_jobs(jobs: Sequence[JobTime], prices: PriceTable, *, public: bool) -> WorkflowCost:
    """Bill every job of a workflow run with `prices`, for a public or a private repository."""
    out = []
    for job in jobs:
        mapped = runner_kind(job.labels, prices.labels)
        kind = mapped.kind
        if kind is None:
            out.append(JobCost(None, None, unpriced=mapped.reason))
            continue
        if kind not in prices.rates:
            out.append(
                JobCost(
                    kind,
                    None,
                    unpriced=f"the price table {prices.path} has no rate for `{kind}`; add it "
                    "under `rates:`",
                )
            )
            continue
        low = high = None
        if job.low_s is not None and job.high_s is not None:
            low = bill(min(job.low_s, job.high_s), kind, prices, public=public)
            high = bill(max(job.low_s, job.high_s), kind, prices, public=public)
        out.append(JobCost(kind, bill(job.seconds, kind, prices, public=public), low, high))
    return WorkflowCost(out, prices, public)
