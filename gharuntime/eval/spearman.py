"""Exact Spearman ρ of bootstrap resamples: each resample's multiset of rows re-ranked.

A resample repeats every row of a repository drawn k times k times. Sorting never changes
between resamples (the values do not), only the weights, so the exact average ranks of the
multiset are one weighted cumulative sum over tie groups fixed once: a value group holding
weight W after weight S of smaller values has average rank S + (W + 1) / 2. Spearman ρ is then
the weighted Pearson correlation of the two rank vectors. O(rows) per resample, no sort.

It costs a few passes over the rows per resample, so eval uses it while rows × resamples stays
under EXACT_SPEARMAN_MAX_WORK (measured by benchmarks/spearman_cost.py: about 0.2 s per million rows × resamples with the 2-core machine at load average 20) and the older
approximation (ranks computed once on the whole split) above it; the result says which.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "EXACT_SPEARMAN_MAX_WORK",
    "SPEARMAN_APPROXIMATE",
    "SPEARMAN_EXACT",
    "RankGroups",
    "ResampledSpearman",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

EXACT_SPEARMAN_MAX_WORK: Final = 50_000_000
"""Rows × resamples (summed over every scored cell) up to which Spearman intervals re-rank each
resample exactly."""

SPEARMAN_EXACT: Final = (
    "exact: each resample's multiset of rows is re-ranked (average ranks for ties); the point "
    "estimate is exact"
)
SPEARMAN_APPROXIMATE: Final = (
    "approximate: Spearman intervals use ranks computed once on the whole split, weighted by the "
    "resample (not re-ranked per resample; used above {limit:,} rows × resamples, where exact "
    "re-ranking costs too much); the point estimate is exact"
)


_BATCH_ENTRIES: Final = 4_000_000  # resample-by-row weights held at once


class RankGroups:
    """The tie groups of one value vector: its sort order, where each group of equal values
    starts in it, and each row's group."""

    def __init__(self, values: FloatArray, order: IntArray | None = None) -> None:
        if order is None:
            order = np.argsort(values, kind="stable")
        self.order = order
        ordered = values[order]
        new = np.ones(ordered.shape[0], dtype=bool)
        if ordered.shape[0] > 1:
            new[1:] = ordered[1:] != ordered[:-1]
        self.starts = np.flatnonzero(new)
        self.group = np.empty(values.shape[0], dtype=np.int64)
        self.group[order] = np.cumsum(new) - 1

    def ranks(self, w: FloatArray) -> FloatArray:
        """Average ranks of each row's value in the multisets where row j appears w[i, j] times
        (one multiset per row i of `w`)."""
        weight = np.add.reduceat(w[:, self.order], self.starts, axis=1)
        rank = np.cumsum(weight, axis=1) - weight + (weight + 1.0) / 2.0
        return np.asarray(rank[:, self.group], dtype=np.float64)


class ResampledSpearman:
    """Exact Spearman ρ of the resamples of one set of rows (p, y, each row's cluster)."""

    def __init__(
        self,
        p: FloatArray,
        y: FloatArray,
        cluster: IntArray,
        order_p: IntArray | None = None,
        order_y: IntArray | None = None,
    ) -> None:
        self.p = RankGroups(p, order_p)
        self.y = RankGroups(y, order_y)
        self.cluster = cluster
        self.rows = int(p.shape[0])

    def __call__(self, weights: FloatArray) -> FloatArray:
        """ρ for each row of `weights` (resamples × clusters); NaN where undefined."""
        out = np.full(weights.shape[0], np.nan)
        if self.rows == 0:
            return out
        batch = max(1, _BATCH_ENTRIES // self.rows)
        for a in range(0, weights.shape[0], batch):
            out[a : a + batch] = self._batch(weights[a : a + batch])
        return out

    def _batch(self, weights: FloatArray) -> FloatArray:
        w = weights[:, self.cluster]  # (resamples, rows): each row's count in each resample
        n = w.sum(axis=1)
        centre = ((n + 1.0) / 2.0)[:, None]  # keeps the sums small
        rp = self.p.ranks(w) - centre
        ry = self.y.ranks(w) - centre
        wp = w * rp
        wy = w * ry
        sp, sy = wp.sum(axis=1), wy.sum(axis=1)
        cov = n * np.einsum("ij,ij->i", wp, ry) - sp * sy
        var_p = n * np.einsum("ij,ij->i", wp, rp) - sp * sp
        var_y = n * np.einsum("ij,ij->i", wy, ry) - sy * sy
        tiny = 1e-9 * np.maximum(n * n * n, 1.0)
        defined = (var_p > tiny) & (var_y > tiny) & (n > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = cov / np.sqrt(np.where(defined, var_p * var_y, 1.0))
        return np.where(defined, np.clip(rho, -1.0, 1.0), np.nan)
