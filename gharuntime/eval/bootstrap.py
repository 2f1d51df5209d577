"""Seeded cluster bootstrap over repositories, on per-repository sufficient statistics.

A resample draws as many repositories as the split has, with replacement; a repository drawn k
times counts k times. The draws depend only on the seed and on the *set* of repository ids, so
every method scored on the same split gets the same resamples and the differences between two
methods have intervals too.

Per resample every sum-based metric is `weights @ per_repository_sums`; the median APE is an
exact weighted median (the median of the resampled multiset). Spearman ρ in a resample is exact
(the multiset re-ranked, gharuntime.eval.spearman) while rows × resamples stays under
EXACT_SPEARMAN_MAX_WORK; above it, the weighted Pearson correlation of ranks computed once on the
whole split (an approximation). Its point estimate is always exact.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gharuntime.eval.metrics import (
    MEDIAN_METRIC,
    METRICS,
    GroupSums,
    RowTerms,
    SpearmanInputs,
    metrics_from_sums,
)
from gharuntime.eval.spearman import (
    EXACT_SPEARMAN_MAX_WORK,
    SPEARMAN_APPROXIMATE,
    SPEARMAN_EXACT,
    ResampledSpearman,
)
from gharuntime.progress import Progress

__all__ = [
    "CONFIDENCE",
    "SPEARMAN_EXACT",
    "SPEARMAN_NOTE",
    "Bootstrap",
    "Cell",
    "CellResult",
    "MeanCell",
    "interval",
    "run_cells",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CONFIDENCE: Final = 0.95
SPEARMAN_NOTE: Final = SPEARMAN_APPROXIMATE.format(limit=EXACT_SPEARMAN_MAX_WORK)
"""The result's `bootstrap.spearman` when the approximation is used (SPEARMAN_EXACT otherwise)."""
_BLOCKS: Final = 64  # value blocks (and sub-blocks) of the weighted median's full search
_WINDOW_SHARE: Final = 0.02  # half-width of the median's first-try window, as a share of rows
_WINDOW_MIN: Final = 2_000  # ... and at least this many rows
_WINDOW_ENTRIES: Final = 4_000_000  # resample-by-window-row weights held at once
_WINDOW_MARGIN: Final = 256  # rows kept beyond the span the pilot saw, at least
_PILOT: Final = 32  # resamples that place the window
_CHUNK_ENTRIES: Final = 8_000_000  # resample-by-repository weights held at once
_MAX_WORKERS: Final = 4  # threads resampling cells at once
_QUERY_ENTRIES: Final = 500_000  # window entries of the queries compared at once
_DRAW_ENTRIES: Final = (
    100_000  # repository draws counted in one bincount (its counts stay in cache)
)


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

    def weights(self, chunk: int | None = None, *, reuse: bool = False) -> Iterator[FloatArray]:
        """(rows, clusters) multinomial counts, a chunk of resamples at a time.

        One draw call per resample, so the stream (and every result) is the same whatever the
        chunk size. With `reuse`, every chunk is written into the same array (valid until the
        next one is asked for): memory the process touches for the first time is slow to get,
        and a fresh 64 MB chunk each time costs more than drawing its counts.
        """
        c = self.clusters
        if chunk is None:
            chunk = max(1, min(self.resamples, _CHUNK_ENTRIES // max(c, 1)))
        rng = self._rng()
        # resamples drawn (and counted) together, a few at a time: one integers() call of
        # (k, c) gives the stream k calls of c give, so the counts are the same
        group = max(1, _DRAW_ENTRIES // max(c, 1))
        buffer: FloatArray | None = None
        for start in range(0, self.resamples, chunk):
            b = min(chunk, self.resamples - start)
            if reuse:
                if buffer is None:
                    buffer = np.empty((min(chunk, self.resamples), c), dtype=np.float64)
                out = buffer[:b]
            else:
                out = np.empty((b, c), dtype=np.float64)
            for i in range(0, b, group) if c else ():
                k = min(group, b - i)
                draws = rng.integers(0, c, size=(k, c))
                draws += np.arange(0, k * c, c, dtype=np.int64)[:, None]
                out[i : i + k] = np.bincount(draws.reshape(-1), minlength=k * c).reshape(k, c)
            yield out


class Cell:
    """The rows of one (method, target, group): their per-repository sums, ready to resample.

    The median APE of a resample is found exactly. Resample medians sit close to the split's
    median, so first a *window* of sorted values around the middle is tried: the resample's
    weight below the window is one dot product per resample, and a cumulative sum over the
    window's rows finds the position. Resamples whose median falls outside the window (rare;
    the window widens when they are not) go through a full search over value blocks.
    """

    def __init__(
        self,
        terms: RowTerms,
        cluster: IntArray,
        clusters: int,
        *,
        half_window: int | None = None,
        repositories: int | None = None,
    ) -> None:
        n = terms.ape.shape[0]
        sums = np.empty((clusters, terms.stats.shape[0]), dtype=np.float64)
        for j, column in enumerate(terms.stats):
            sums[:, j] = np.bincount(cluster, weights=column, minlength=clusters)
        order = terms.ape_order

        def source() -> SpearmanInputs:
            inputs = terms.spearman_inputs()
            if inputs is None:
                raise ValueError("these row terms carry no values to re-rank")
            p, y, p_order, y_order = inputs
            return p, y, cluster, p_order, y_order

        self._setup(
            GroupSums(n, sums, terms.ape[order], cluster[order], source),
            clusters,
            half_window=half_window,
            repositories=(
                repositories
                if repositories is not None
                else int(np.unique(cluster).shape[0])
                if n
                else 0
            ),
        )

    @classmethod
    def from_group(
        cls,
        group: GroupSums,
        clusters: int,
        *,
        half_window: int | None = None,
        repositories: int | None = None,
    ) -> Cell:
        """A cell from one group's sums (TargetTerms.group_sums): the numbers the row-terms
        constructor gives for the same rows. `repositories` defaults to the clusters with rows
        (right when clusters are repositories)."""
        cell = cls.__new__(cls)
        cell._setup(
            group,
            clusters,
            half_window=half_window,
            repositories=(
                repositories
                if repositories is not None
                else int(np.count_nonzero(group.sums[:, 0]))
            ),
        )
        return cell

    def _setup(
        self,
        group: GroupSums,
        clusters: int,
        *,
        half_window: int | None,
        repositories: int,
    ) -> None:
        n = group.rows
        self.rows = n
        self.clusters = clusters
        self.repositories = repositories
        self.sums = group.sums
        self.values = group.ape_sorted
        self.value_cluster = group.ape_cluster
        half = max(_WINDOW_MIN, int(n * _WINDOW_SHARE)) if half_window is None else half_window
        self.tuned = half_window is not None
        self.version = 0  # bumped whenever columns() changes
        self._set_window(n // 2 - half, n // 2 + half)
        self.point = self._point()
        self._spearman_source = group.spearman_source
        self._spearman: ResampledSpearman | None = None

    def _set_window(self, a: int, z: int) -> None:
        """Try the sorted values [a, z) first; `below` counts each repository's rows under a."""
        a, z = max(0, a), min(self.rows, z)
        self.window = (a, max(a, z))
        self.below = np.bincount(self.value_cluster[:a], minlength=self.clusters).astype(np.float64)
        self.version += 1

    def _point(self) -> dict[str, float]:
        total = self.sums.sum(axis=0)
        out = {k: float(v) for k, v in metrics_from_sums(total).items()}
        out[MEDIAN_METRIC.name] = _sorted_median(self.values)
        return out

    def columns(self) -> FloatArray:
        """Per-repository columns whose resample-weighted sums this cell needs: its sums, then
        its rows below the median window. run_cells multiplies all cells' at once."""
        return np.column_stack([self.sums, self.below])

    def resample(
        self,
        weights: FloatArray,
        weighted: FloatArray | None = None,
        compact: npt.NDArray[np.uint8] | None = None,
        exact_spearman: bool = False,
    ) -> dict[str, FloatArray]:
        """Every metric for each row of `weights` (a chunk of resamples); `weighted` is
        `weights @ self.columns()` and `compact` the weights as uint8, when the caller has
        them; Spearman re-ranked exactly when `exact_spearman`."""
        if weighted is None:
            weighted = weights @ self.columns()
        sums = weighted[:, : self.sums.shape[1]]
        out = metrics_from_sums(sums)
        out[MEDIAN_METRIC.name] = self._weighted_median(
            weights, sums[:, 0], weighted[:, -1], compact
        )
        if exact_spearman:
            for m in METRICS:
                if m.resampled == "ranks":
                    out[m.name] = self.exact_spearman(weights)
        return out

    def exact_spearman(self, weights: FloatArray) -> FloatArray:
        """Spearman ρ of each resample, its multiset re-ranked (gharuntime.eval.spearman)."""
        if self._spearman is None:
            p, y, cluster, p_order, y_order = self._spearman_source()
            self._spearman = ResampledSpearman(p, y, cluster, p_order, y_order)
        return self._spearman(weights)

    def tune(self, weights: FloatArray) -> None:
        """Place the median window where a few resamples (`weights`) put their medians: three
        times the span they cover."""
        if self.tuned or self.rows == 0:
            return
        total = weights @ self.sums[:, 0]
        _, q_res, q_pos = _queries(total)
        at = self._window_pass(weights, weights @ self.below, q_res, q_pos)
        at = at[at >= 0]
        if at.shape[0]:
            margin = max(_WINDOW_MARGIN, int(at.max() - at.min()))
            self._set_window(int(at.min()) - margin, int(at.max()) + 1 + margin)
        self.tuned = True

    def _window_pass(
        self,
        weights: npt.NDArray[Any],
        below: FloatArray,
        q_res: IntArray,
        q_pos: FloatArray,
    ) -> IntArray:
        """Sorted index of the value at each query's position, or -1 when outside the window.

        `weights` may be float64, or the same counts as uint8 (a quarter of the memory traffic
        of float32; running counts in int32): all sums here are whole numbers, exact in each."""
        out = np.full(q_res.shape[0], -1, dtype=np.int64)
        a, z = self.window
        if z <= a:
            return out
        step = max(1, _WINDOW_ENTRIES // (z - a))
        columns = self.value_cluster[a:z]
        small = weights.dtype == np.uint8
        for done in range(0, weights.shape[0], step):  # bounded memory
            stop = min(weights.shape[0], done + step)
            q = np.flatnonzero((q_res >= done) & (q_res < stop))
            if q.shape[0] == 0:
                continue
            taken = np.take(weights[done:stop], columns, axis=1)
            running = np.cumsum(taken, axis=1, dtype=np.int32 if small else None)
            local = q_res[q] - done
            target = q_pos[q] - below[q_res[q]]  # the position counted from the window's start
            inside = np.flatnonzero((target >= 0) & (target < running[local, -1]))
            # each running row is sorted: its entries <= target say where; a few queries at a
            # time, so the gathered rows stay small
            per = max(1, _QUERY_ENTRIES // (z - a))
            for k in range(0, inside.shape[0], per):
                part = inside[k : k + per]
                rows = running[local[part]]
                out[q[part]] = a + np.count_nonzero(rows <= target[part, None], axis=1)
        return out

    def _weighted_median(
        self,
        weights: FloatArray,
        total: FloatArray,
        below: FloatArray,
        compact: npt.NDArray[np.uint8] | None = None,
    ) -> FloatArray:
        """The median of each resampled multiset: the mean of the values at weighted positions
        floor((N-1)/2) and floor(N/2) of the sorted values. `compact` is the same weights as
        uint8, when every count fits (run_cells checks); the window's running counts are whole
        numbers below N, exact in int32 while N < 2**31."""
        result = np.full(weights.shape[0], np.nan)
        if self.rows == 0:
            return result
        ok, q_res, q_pos = _queries(total)
        exact = compact is not None and total.max(initial=0.0) < 2.0**31
        at = self._window_pass(
            compact if exact and compact is not None else weights, below, q_res, q_pos
        )
        found = np.where(at >= 0, self.values[np.maximum(at, 0)], np.nan)
        missed = np.flatnonzero(at < 0)
        if missed.shape[0]:
            found[missed] = self._locate(weights, q_res[missed], q_pos[missed])
            a, z = self.window
            if missed.shape[0] > 0.005 * q_res.shape[0] and z - a < self.rows:
                width = max(z - a, 2 * _WINDOW_MARGIN)  # medians wander further: widen
                self._set_window(a - width, z + width)
        half = ok.shape[0]
        result[ok] = (found[:half] + found[half:]) / 2.0
        return result

    def _locate(self, weights: FloatArray, q_res: IntArray, q_pos: FloatArray) -> FloatArray:
        """The value at weighted position q_pos of resample q_res, per query, searching every
        value: block counts per repository (one matmul) find the block, sub-block counts find
        the sub-block, and a cumulative sum over its few rows finds the row."""
        n = self.rows
        blocks = max(1, min(_BLOCKS, n))
        bounds = (np.arange(blocks + 1) * n) // blocks
        block_of = np.repeat(np.arange(blocks), np.diff(bounds))
        block_counts = (
            np.bincount(self.value_cluster * blocks + block_of, minlength=self.clusters * blocks)
            .reshape(self.clusters, blocks)
            .astype(np.float64)
        )
        res, res_inv = np.unique(q_res, return_inverse=True)
        qc = np.cumsum(weights[res] @ block_counts, axis=1)[res_inv.reshape(-1)]
        out = np.empty(q_res.shape[0])
        block = np.argmax(qc > q_pos[:, None], axis=1)
        before = np.where(block > 0, qc[np.arange(qc.shape[0]), np.maximum(block - 1, 0)], 0.0)
        for k in np.unique(block):
            q = np.flatnonzero(block == k)
            start, stop = int(bounds[k]), int(bounds[k + 1])
            size = stop - start
            subs = max(1, min(_BLOCKS, size))
            sub_bounds = start + (np.arange(subs + 1) * size) // subs
            sub_of = np.repeat(np.arange(subs), np.diff(sub_bounds))
            sub_counts = (
                np.bincount(
                    self.value_cluster[start:stop] * subs + sub_of,
                    minlength=self.clusters * subs,
                )
                .reshape(self.clusters, subs)
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


class MeanCell:
    """Means of named per-row terms (the interval metrics), resampled like every sum-based
    metric: per-repository sums, `weights @ sums` per resample, divided by the resampled
    row count."""

    version = 0
    tuned = True

    def __init__(
        self,
        names: Sequence[str],
        values: FloatArray,
        cluster: IntArray,
        clusters: int,
        repositories: int,
    ) -> None:
        self.names = tuple(names)
        self.rows = int(values.shape[1])
        self.repositories = repositories
        self.sums = np.empty((clusters, len(self.names) + 1), dtype=np.float64)
        self.sums[:, 0] = np.bincount(cluster, minlength=clusters)
        for j, column in enumerate(values):
            self.sums[:, j + 1] = np.bincount(cluster, weights=column, minlength=clusters)
        total = self.sums.sum(axis=0)
        self.point = {
            n: float(total[j + 1] / total[0]) if total[0] > 0 else float("nan")
            for j, n in enumerate(self.names)
        }

    def columns(self) -> FloatArray:
        return self.sums

    def tune(self, weights: FloatArray) -> None:
        """Nothing to place: every term is a mean."""

    def resample(
        self,
        weights: FloatArray,
        weighted: FloatArray | None = None,
        compact: npt.NDArray[np.uint8] | None = None,
        exact_spearman: bool = False,
    ) -> dict[str, FloatArray]:
        if weighted is None:
            weighted = weights @ self.sums
        n = weighted[:, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            return {
                name: np.where(n > 0, weighted[:, j + 1] / n, np.nan)
                for j, name in enumerate(self.names)
            }


def _sorted_median(values: FloatArray) -> float:
    """np.median of ascending `values`, from its middle (the same arithmetic: the mean of the
    two middle values); NaN when empty or when a value is NaN (sorted last)."""
    n = values.shape[0]
    if n == 0 or np.isnan(values[-1]):
        return float("nan")
    if n % 2:
        return float(values[n // 2])
    return float((values[n // 2 - 1] + values[n // 2]) / 2.0)


def _queries(total: FloatArray) -> tuple[IntArray, IntArray, FloatArray]:
    """Resamples with rows, and (resample, position) queries for their two middle values."""
    ok = np.flatnonzero(total > 0)
    q_res = np.concatenate([ok, ok])
    q_pos = np.concatenate([np.floor((total[ok] - 1) / 2), np.floor(total[ok] / 2)])
    return ok, q_res, q_pos


@dataclass(frozen=True)
class CellResult:
    """Point estimates and per-resample values of every metric for one cell."""

    rows: int
    repositories: int
    point: dict[str, float]
    resamples: dict[str, FloatArray]  # metric -> (resamples,)
    spearman_exact: bool = False  # whether resample Spearman values were re-ranked exactly


def run_cells(
    boot: Bootstrap,
    cells: Sequence[Cell | MeanCell],
    progress: Progress | None = None,
    exact_spearman_max: int | None = None,
    stage: str = "bootstrap",
    weights: Iterable[FloatArray] | None = None,
) -> list[CellResult]:
    """Resample every cell with the same weights, one chunk of resamples at a time, counting
    resamples done through `progress` as `stage`. `weights` are `boot.weights()`'s chunks
    when the caller drew them already (drawn here otherwise).

    Spearman is re-ranked exactly per resample when the total rows × resamples is at most
    `exact_spearman_max` (default EXACT_SPEARMAN_MAX_WORK)."""
    limit = EXACT_SPEARMAN_MAX_WORK if exact_spearman_max is None else exact_spearman_max
    # interval terms (MeanCell) are means: they never decide how Spearman is resampled
    exact = sum(c.rows for c in cells if isinstance(c, Cell)) * boot.resamples <= limit
    parts: list[dict[str, list[FloatArray]]] = [
        {m.name: [] for m in METRICS} if isinstance(c, Cell) else {n: [] for n in c.names}
        for c in cells
    ]
    with ThreadPoolExecutor(max_workers=_workers(len(cells))) as pool:
        _resample_all(boot, cells, parts, pool, exact, progress, stage, weights)
    return [
        CellResult(
            rows=cell.rows,
            repositories=cell.repositories,
            point=cell.point,
            resamples={
                k: np.concatenate(v) if v else np.empty(0, dtype=np.float64)
                for k, v in part.items()
            },
            spearman_exact=exact,
        )
        for cell, part in zip(cells, parts, strict=True)
    ]


def _resample_cell(
    cell: Cell | MeanCell,
    weighted: FloatArray,
    weights: FloatArray,
    compact: npt.NDArray[np.uint8] | None,
    exact: bool,
) -> dict[str, FloatArray]:
    return cell.resample(weights, weighted, compact, exact_spearman=exact)


def _workers(cells: int) -> int:
    """Threads for the cells: the cores, at most _MAX_WORKERS (each holds a window's sums)."""
    return max(1, min(cells, os.cpu_count() or 1, _MAX_WORKERS))


def _resample_all(
    boot: Bootstrap,
    cells: Sequence[Cell | MeanCell],
    parts: list[dict[str, list[FloatArray]]],
    pool: ThreadPoolExecutor,
    exact: bool,
    progress: Progress | None,
    stage: str,
    chunks: Iterable[FloatArray] | None = None,
) -> None:
    """Every chunk of resamples through every cell, appending each metric's values to parts."""
    done = 0
    stacked: FloatArray | None = None
    versions: list[int] = []
    for weights in boot.weights(reuse=True) if chunks is None else chunks:
        if done == 0:
            for cell in cells:
                cell.tune(weights[:_PILOT])
        if stacked is None or versions != [c.version for c in cells]:
            blocks = [c.columns() for c in cells]
            stacked = np.hstack(blocks) if cells else None
            versions = [c.version for c in cells]
            widths = np.cumsum([0] + [b.shape[1] for b in blocks])
        # one product for every cell: the weights are read once per chunk
        weighted = weights @ stacked if stacked is not None else weights[:, :0]
        compact = weights.astype(np.uint8) if weights.max(initial=0.0) <= 255 else None

        # cells are independent (each touches only its own state) and numpy releases the GIL
        # in the window's gathers and sums, so threads use every core; results do not depend
        # on which thread ran a cell
        slices = [weighted[:, widths[i] : widths[i + 1]] for i in range(len(cells))]
        for part, values in zip(
            parts,
            pool.map(
                _resample_cell, cells, slices, repeat(weights), repeat(compact), repeat(exact)
            ),
            strict=True,
        ):
            for name, v in values.items():
                part[name].append(v)
        done += weights.shape[0]
        if progress:
            progress(stage, done, boot.resamples)


def interval(values: FloatArray, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Percentile interval of the defined resample values; None when none is defined."""
    finite = values[np.isfinite(values)]
    if finite.shape[0] == 0:
        return None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high)
