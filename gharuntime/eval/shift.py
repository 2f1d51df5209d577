"""How far each target moved between the split ranges are calibrated on and the split scored.

A method's P10–P90 calibrated on the validation split holds 80% of the test jobs only if the
test jobs look like the validation ones. This measures whether they do, for the target alone
and no method: the share of the scored split's values inside the validation split's own
P10–P90. When nothing moved it is about 80%; on gharuntime-real-apache temporal, `duration_s`
gives 78% and `queue_s` 55% (43% of the test jobs waited less than the validation split's
P10), which is why no range calibrated on validation reaches 80% there. The leaderboard shows
it next to a coverage figure (`gharuntime.leaderboard.view.moved`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["MIN_REFERENCE_ROWS", "REFERENCE_LEVELS", "split_shift"]

REFERENCE_LEVELS: Final = (0.1, 0.9)
"""The reference split's range: its own P10 and P90 (nominal share inside: 80%)."""
MIN_REFERENCE_ROWS: Final = 100
"""Fewer reference values give no figure: their P10 and P90 would be too noisy to mean much."""

FloatArray = npt.NDArray[np.float64]


def split_shift(
    reference: Mapping[str, FloatArray], scored: Mapping[str, FloatArray], reference_split: str
) -> dict[str, Any]:
    """Per target with at least MIN_REFERENCE_ROWS finite reference values and one scored
    value: the reference split's P10 and P90, and the shares of the scored values inside that
    range (ends included), below it and above it."""
    low_level, high_level = REFERENCE_LEVELS
    out: dict[str, Any] = {}
    for target, values in reference.items():
        ref = np.asarray(values, dtype=np.float64)
        ref = ref[np.isfinite(ref)]
        y = np.asarray(scored.get(target, np.empty(0)), dtype=np.float64)
        y = y[np.isfinite(y)]
        if ref.shape[0] < MIN_REFERENCE_ROWS or y.shape[0] == 0:
            continue
        low, high = (float(v) for v in np.quantile(ref, REFERENCE_LEVELS))
        out[target] = {
            "reference_split": reference_split,
            "reference_rows": int(ref.shape[0]),
            "p10": low,
            "p90": high,
            "nominal": round(high_level - low_level, 6),
            "inside": float(np.mean((y >= low) & (y <= high))),
            "below": float(np.mean(y < low)),
            "above": float(np.mean(y > high)),
        }
    return out
