"""The `timeout-minutes` that `gharuntime predict` recommends for a job, from its predicted
quantiles: a margin over a high quantile, never below the P99, never above the runner's job
limit (GitHub-hosted runners cancel a job after 360 minutes)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = ["JOB_LIMIT_MINUTES", "MARGIN", "Timeout", "recommend_timeout"]

JOB_LIMIT_MINUTES: Final = 360
"""GitHub-hosted runners' limit on one job (and GitHub's default `timeout-minutes`)."""
MARGIN: Final = 1.5
"""The recommendation is MARGIN × the P99, rounded up to whole minutes: a job that needs more
than half again its 99th percentile is more likely stuck than slow."""
BASIS: Final = "p99"


@dataclass(frozen=True)
class Timeout:
    """A recommended `timeout-minutes` and what it rests on."""

    minutes: int
    basis: str  # the level it was computed from (p99; the highest level the model gives)
    basis_s: float
    capped: bool  # the basis × MARGIN was over JOB_LIMIT_MINUTES


def recommend_timeout(quantiles: Mapping[str, float]) -> Timeout | None:
    """The recommendation from a job's duration quantiles ({"p10": s, ..., "p99": s}); None
    when there are none. A model without a P99 (LASER's 16 draws give P10–P90) is based on its
    highest level, which the result names."""
    levels = {k: v for k, v in quantiles.items() if math.isfinite(v)}
    if not levels:
        return None
    basis = BASIS if BASIS in levels else max(levels, key=lambda k: float(k[1:]))
    seconds = max(0.0, levels[basis])
    wanted = max(1, math.ceil(MARGIN * seconds / 60.0), math.ceil(seconds / 60.0))
    return Timeout(
        minutes=min(wanted, JOB_LIMIT_MINUTES),
        basis=basis,
        basis_s=seconds,
        capped=wanted > JOB_LIMIT_MINUTES,
    )
