"""Seeded cluster bootstrap over repositories, on per-repository sufficient statistics.

A resample draws as many repositories as the split has, with replacement; a repository drawn k
times counts k times. The draws depend only on the seed and on the *set* of repository ids, so
every method scored on the same split gets the same resamples and the differences between two
methods have intervals too.

Per resample every sum-based metric is `weights @ per_repository_sums`; the median APE is an
exact weighted median (the median of the resampled multiset). Spearman ρ in a resample is the
weighted Pearson correlation of ranks computed once on the whole split (an approximation: exact
re-ranking per resample would cost a sort per resample); its point estimate is exact.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from gharuntime.eval.metrics import METRICS, RowTerms, metrics_from_sums

__all__ = [
    "CONFIDENCE",
    "SPEARMAN_NOTE",
    "Bootstrap",
    "Cell",
    "CellResult",
    "interval",
    "run_cells",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CONFIDENCE: Final = 0.95
SPEARMAN_NOTE: Final = (
    "Spearman intervals use ranks computed once on the whole split, weighted by the resample "
    "(not re-ranked per resample); the point estimate is exact."
)
_BLOCKS: Final = 64  # value blocks for the weighted median's coarse pass
_CHUNK_ENTRIES: Final = 8_000_000  # resample-by-repository weights held at once


@dataclass(frozen=True)
class Bootstrap:
    """Resamples of repositories: `seed`, `resamples`, and the sorted repository ids."""

    seed: int
    resamples: int
    repo_ids: IntArray  # sorted, unique

    @classmethod
    def for_repositories(cls, seed: int, resamples: int, repo_ids: IntArray) -> Bootstrap:
        return cls(seed, resamples, np.unique(np.asarray(repo_ids, dtype=np.int64)))

    @property
    def clusters(self) -> int:
        return int(self.repo_ids.shape[0])

    def _rng(self) -> np.random.Generator:
        digest = hashlib.sha256(self.repo_ids.astype("<i8").tobytes()).digest()
        words = np.frombuffer(digest, dtype="<u4").tolist()
        return np.random.default_rng(np.random.SeedSequence([self.seed, *words]))

    def weights(self, chunk: int | None = None) -> Iterator[FloatArray]:
        """(rows, clusters) multinomial counts, a chunk of resamples at a time.

        One draw call per resample, so the stream (and every result) is the same whatever the
        chunk size.
        """
        c = self.clusters
        if chunk is None:
            chunk = max(1, min(self.resamples, _CHUNK_ENTRIES // max(c, 1)))
        rng = self._rng()
        for start in range(0, self.resamples, chunk):
            b = min(chunk, self.resamples - start)
            out = np.empty((b, c), dtype=np.float64)
            for i in range(b):
                draws = rng.integers(0, c, size=c) if c else np.empty(0, dtype=np.int64)
                out[i] = np.bincount(draws, minlength=c)
            yield out


class Cell:
    """The rows of one (method, target, group): their per-repository sums, ready to resample."""

    def __init__(self, terms: RowTerms, cluster: IntArray, clusters: int) -> None:
        n = terms.ape.shape[0]
        self.rows = n
        self.repositories = int(np.unique(cluster).shape[0]) if n else 0
        self.sums = np.stack(
            [
                np.bincount(cluster, weights=terms.stats[:, j], minlength=clusters)
                for j in range(terms.stats.shape[1])
            ],
            axis=1,
        ).reshape(clusters, terms.stats.shape[1])
        order = terms.ape_order
        self.values = terms.ape[order]
        self.value_cluster = cluster[order]
        blocks = max(1, min(_BLOCKS, n))
        self.bounds = (np.arange(blocks + 1) * n) // blocks
        block_of = np.repeat(np.arange(blocks), np.diff(self.bounds))
        self.block_counts = (
            np.bincount(self.value_cluster * blocks + block_of, minlength=clusters * blocks)
            .reshape(clusters, blocks)
            .astype(np.float64)
        )
        self.point = self._point(terms)

    def _point(self, terms: RowTerms) -> dict[str, float]:
        total = terms.stats.sum(axis=0)
        out = {k: float(v) for k, v in metrics_from_sums(total).items()}
        out["median_ape"] = float(np.median(terms.ape)) if self.rows else float("nan")
        return out

    def resample(self, weights: FloatArray) -> dict[str, FloatArray]:
        """Every metric for each row of `weights` (a chunk of resamples)."""
        out = metrics_from_sums(weights @ self.sums)
        out["median_ape"] = self._weighted_median(weights)
        return out

    def _weighted_median(self, weights: FloatArray) -> FloatArray:
        """The median of each resampled multiset: the mean of the values at positions
        floor((N-1)/2) and floor(N/2) of the weighted sorted values.

        Exact, in three passes: resample counts per value block (one matmul) find each
        position's block; counts per sub-block of the blocks hit find its sub-block; a
        cumulative sum over that sub-block's few rows finds the row.
        """
        b = weights.shape[0]
        result = np.full(b, np.nan)
        if self.rows == 0:
            return result
        cum = np.cumsum(weights @ self.block_counts, axis=1)
        total = cum[:, -1]
        ok = np.flatnonzero(total > 0)
        # queries: (resample, position) for the lower and the upper middle
        q_res = np.concatenate([ok, ok])
        q_pos = np.concatenate([np.floor((total[ok] - 1) / 2), np.floor(total[ok] / 2)])
        found = self._locate(weights, cum, q_res, q_pos)
        half = ok.shape[0]
        result[ok] = (found[:half] + found[half:]) / 2.0
        return result

    def _locate(
        self, weights: FloatArray, cum: FloatArray, q_res: IntArray, q_pos: FloatArray
    ) -> FloatArray:
        """The value at weighted position q_pos of resample q_res, per query."""
        out = np.empty(q_res.shape[0])
        qc = cum[q_res]
        block = np.argmax(qc > q_pos[:, None], axis=1)
        before = np.where(block > 0, qc[np.arange(qc.shape[0]), block - 1], 0.0)
        for k in np.unique(block):
            q = np.flatnonzero(block == k)
            start, stop = int(self.bounds[k]), int(self.bounds[k + 1])
            size = stop - start
            subs = max(1, min(_BLOCKS, size))
            sub_bounds = start + (np.arange(subs + 1) * size) // subs
            sub_of = np.repeat(np.arange(subs), np.diff(sub_bounds))
            clusters = self.block_counts.shape[0]
            sub_counts = (
                np.bincount(
                    self.value_cluster[start:stop] * subs + sub_of, minlength=clusters * subs
                )
                .reshape(clusters, subs)
                .astype(np.float64)
            )
            res, inv = np.unique(q_res[q], return_inverse=True)
            sub_cum = np.cumsum(weights[res] @ sub_counts, axis=1)[inv.reshape(-1)]
            sub_cum += before[q, None]
            sub = np.argmax(sub_cum > q_pos[q, None], axis=1)
            before_sub = np.where(
                sub > 0, sub_cum[np.arange(q.shape[0]), np.maximum(sub - 1, 0)], before[q]
            )
            first = sub_bounds[sub]
            width = int(np.max(np.diff(sub_bounds)))
            index = first[:, None] + np.arange(width)[None, :]
            inside = index < sub_bounds[sub + 1][:, None]
            index = np.minimum(index, stop - 1)
            w = weights[q_res[q][:, None], self.value_cluster[index]] * inside
            running = np.cumsum(w, axis=1) + before_sub[:, None]
            at = np.argmax(running > q_pos[q, None], axis=1)
            out[q] = self.values[index[np.arange(q.shape[0]), at]]
        return out


@dataclass(frozen=True)
class CellResult:
    """Point estimates and per-resample values of every metric for one cell."""

    rows: int
    repositories: int
    point: dict[str, float]
    resamples: dict[str, FloatArray]  # metric -> (resamples,)


def run_cells(
    boot: Bootstrap,
    cells: Sequence[Cell],
    progress: Callable[[int, int], None] | None = None,
) -> list[CellResult]:
    """Resample every cell with the same weights, one chunk of resamples at a time."""
    parts: list[dict[str, list[FloatArray]]] = [{m.name: [] for m in METRICS} for _ in cells]
    done = 0
    for weights in boot.weights():
        for cell, part in zip(cells, parts, strict=True):
            for name, values in cell.resample(weights).items():
                part[name].append(values)
        done += weights.shape[0]
        if progress:
            progress(done, boot.resamples)
    return [
        CellResult(
            rows=cell.rows,
            repositories=cell.repositories,
            point=cell.point,
            resamples={
                k: np.concatenate(v) if v else np.empty(0, dtype=np.float64)
                for k, v in part.items()
            },
        )
        for cell, part in zip(cells, parts, strict=True)
    ]


def interval(values: FloatArray, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Percentile interval of the defined resample values; None when none is defined."""
    finite = values[np.isfinite(values)]
    if finite.shape[0] == 0:
        return None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high)
