"""One predicted quantity drawn from its levels: a job's duration or its wait, for the joint
draws of a review's Δ (gharuntime.predict.spread) and of a run's wall clock
(gharuntime.predict.wait).

The rule: the quantity's log is piecewise linear in the normal score between the P10
(z = −1.2816), the centre (z = 0: the P50 where the model gives one, else the point
prediction), the P90 (z = 1.2816) and the P99 (z = 2.3263) where given, and goes on along the
end pieces beyond them (a log-normal by parts through every level the model gives). Values
below 1 s are taken as 1 s (a log needs a positive value; a second is below anything shown).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

import numpy as np

__all__ = ["Z", "draw_levels", "knots"]

Z: Final = {"p10": -1.2815515655446004, "p90": 1.2815515655446004, "p99": 2.3263478740408408}
"""The normal score of each level."""


def knots(levels: Mapping[str, float], point: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(normal scores, log values) of a quantity's levels, its centre at z = 0; None without a
    P10 and a P90."""
    if "p10" not in levels or "p90" not in levels:
        return None
    centre = levels.get("p50", point)
    pairs = sorted(
        [(Z["p10"], levels["p10"]), (0.0, centre), (Z["p90"], levels["p90"])]
        + ([(Z["p99"], levels["p99"])] if "p99" in levels else [])
    )
    z = np.array([p[0] for p in pairs])
    values = np.array([max(float(p[1]), 1.0) if math.isfinite(p[1]) else 1.0 for p in pairs])
    logs = np.maximum.accumulate(np.log(values))  # levels never decrease with the score
    return z, logs


def draw_levels(levels: Mapping[str, float], point: float, z: np.ndarray) -> np.ndarray:
    """The quantity's draws for the standard normal draws `z` (the point, in every draw, when
    the model gives no P10 and P90)."""
    found = knots(levels, point)
    if found is None:
        return np.full(z.shape, point)
    zs, logs = found
    out = np.interp(z, zs, logs)
    low, high = z < zs[0], z > zs[-1]
    out[low] = logs[0] + (z[low] - zs[0]) * (logs[1] - logs[0]) / (zs[1] - zs[0])
    out[high] = logs[-1] + (z[high] - zs[-1]) * (logs[-1] - logs[-2]) / (zs[-1] - zs[-2])
    drawn: np.ndarray = np.exp(np.minimum(out, 30.0))  # e^30 s: past any job, no overflow
    return drawn
