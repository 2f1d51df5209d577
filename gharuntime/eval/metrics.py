"""The metrics `gharuntime eval` reports, defined once.

Every metric except the median APE is a function of per-repository sums (sufficient
statistics), so a cluster bootstrap only needs `weights @ sums` per resample; the median APE
needs a weighted quantile (see `gharuntime.eval.bootstrap`).

Conventions, so that zeros never divide:
- APE = |p - y| / max(y, 1): the denominator is clipped at 1 unit (1 s, 1 byte).
- within-2x: max(p', y') / min(p', y') <= 2 with p' = max(p, 1), y' = max(y, 1): a 0.4 s
  prediction for a 0 s job is within 2x.
- RMSLE and R² use log1p, so zeros are fine.
- A *failure* (a record with no prediction, scored only under --allow-partial) is scored as the
  prediction 0 for MAE, APE, RMSLE, R² and Spearman (it ranks lowest), and is always counted
  outside 2x, whatever the truth.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "HEADLINE_METRICS",
    "INTERVAL_METRICS",
    "INTERVAL_METRIC_BY_NAME",
    "MEDIAN_METRIC",
    "METRICS",
    "METRIC_BY_NAME",
    "ROW_TERMS",
    "STAT_COLUMNS",
    "GroupSums",
    "Metric",
    "RowTerm",
    "RowTerms",
    "SpearmanInputs",
    "TargetTerms",
    "average_ranks",
    "metrics_from_sums",
    "row_terms",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.intp]


@dataclass(frozen=True)
class Metric:
    """One reported metric, defined once: what eval computes and resamples, how a result,
    the report, the leaderboard and the --gold self-check read it.

    `resampled` says how a bootstrap resample gets its value: "sums" from the per-repository
    sums of the per-row terms it names in `terms` (ROW_TERMS; `from_sums` is given those and
    no others), "median" as the exact median of the resampled multiset
    of per-row values, "ranks" from the sums or, where affordable, the multiset re-ranked.
    `kind` decides the format: "target" (the target's unit), "fraction" (shown as a percent)
    or "number".
    """

    name: str
    label: str
    unit: str  # "target" = the target's own unit (s or bytes)
    higher_is_better: bool | None  # None: the closer to its nominal level, the better
    meaning: str
    perfect: float  # what a perfect prediction scores (the --gold self-check); NaN: none
    resampled: str = "sums"
    from_sums: Callable[[dict[str, FloatArray]], FloatArray] | None = None
    terms: tuple[str, ...] = ()  # the ROW_TERMS `from_sums` reads, by name
    kind: str = "number"
    undefined_when_constant: bool = False  # null (not `perfect`) when the truth is constant
    headline: int = 0
    """Its place among the leaderboard's columns (1 the first); a headline metric is also stored
    per resample in every result, so two results compare pairwise. 0: not a headline metric."""
    per: str = "record"  # interval metrics: one value per "interval", per "level" or per "set"
    bounds: tuple[float, float] = (-math.inf, math.inf)
    """The values the metric can take at all (a value, a bound or a resample outside them is
    not a result of this metric: `leaderboard add` refuses it)."""

    def format(self, value: float | None, unit: str = "") -> str:
        """The value as the terminal and the leaderboard show it ("—" when undefined)."""
        if value is None:
            return "—"
        if self.kind == "target":
            text = f"{value:,.1f}" if abs(value) < 1e6 else f"{value:.3g}"
            return f"{text} {unit}" if unit else text
        if self.kind == "fraction":
            return f"{100 * value:.1f}%"
        return f"{value:.3f}"

    def heading(self, unit: str = "") -> str:
        """The column heading: label, the unit of a target-unit metric, and the direction."""
        shown = f"{self.label} ({unit})" if unit and self.kind == "target" else self.label
        arrow = {True: "↑", False: "↓", None: "≈ nominal"}[self.higher_is_better]
        return f"{shown} {arrow}"


@dataclass(frozen=True)
class RowTerm:
    """One per-row term, by name: its per-repository sums are what a sum-based metric is
    computed from (`Metric.terms` names the ones it reads).

    `kind`: "count" (1 per row), "row" (from the row's truth and prediction alone, computed once
    over every row: TargetTerms.base), "rank" (from ranks within the scored group)."""

    name: str
    kind: str
    meaning: str


ROW_TERMS: Final[tuple[RowTerm, ...]] = (
    RowTerm("n", "count", "1: the rows"),
    RowTerm("abs_err", "row", "|p - y|"),
    RowTerm("sq_log_err", "row", "(log1p(p) - log1p(y))²"),
    RowTerm("within", "row", "1 when max(p', y') <= 2 min(p', y') (never for a failure), else 0"),
    RowTerm("rank_p", "rank", "rank of p in the group, centred on the group's middle rank"),
    RowTerm("rank_y", "rank", "rank of y in the group, centred likewise"),
    RowTerm("rank_p2", "rank", "rank_p²"),
    RowTerm("rank_y2", "rank", "rank_y²"),
    RowTerm("rank_py", "rank", "rank_p · rank_y"),
    RowTerm("log_y", "row", "log1p(y), centred on its mean over every row"),
    RowTerm("log_y2", "row", "log_y²"),
)
STAT_COLUMNS: Final = tuple(t.name for t in ROW_TERMS)
"""Per-row terms whose (weighted) sums give every metric but the median APE, in the order of
the sums' last axis."""
_STAT: Final = {name: i for i, name in enumerate(STAT_COLUMNS)}
_ROW_BASE: Final = tuple(t.name for t in ROW_TERMS if t.kind == "row")


def _spearman(s: dict[str, FloatArray]) -> FloatArray:
    n = s["n"]
    cov = n * s["rank_py"] - s["rank_p"] * s["rank_y"]
    var_p = n * s["rank_p2"] - s["rank_p"] ** 2
    var_y = n * s["rank_y2"] - s["rank_y"] ** 2
    tiny = 1e-9 * np.maximum(n * n * n, 1.0)  # ranks are whole or half numbers
    defined = (var_p > tiny) & (var_y > tiny)
    rho = np.where(defined, cov / np.sqrt(np.where(defined, var_p * var_y, 1.0)), np.nan)
    return np.asarray(np.clip(rho, -1.0, 1.0), dtype=np.float64)


def _r2_log(s: dict[str, FloatArray]) -> FloatArray:
    n = s["n"]
    ss_tot = s["log_y2"] - s["log_y"] ** 2 / n
    return np.where(ss_tot > 1e-12 * np.maximum(n, 1.0), 1.0 - s["sq_log_err"] / ss_tot, np.nan)


METRICS: Final[tuple[Metric, ...]] = (
    Metric(
        "mae",
        "MAE",
        "target",
        False,
        "Mean absolute error, in the target's unit.",
        perfect=0.0,
        bounds=(0.0, math.inf),
        from_sums=lambda s: s["abs_err"] / s["n"],
        terms=("n", "abs_err"),
        kind="target",
        headline=2,
    ),
    Metric(
        "median_ape",
        "median APE",
        "fraction",
        False,
        "Median absolute percentage error |p - y| / max(y, 1), as a fraction (0.25 = 25%).",
        perfect=0.0,
        bounds=(0.0, math.inf),
        resampled="median",
        kind="fraction",
        headline=3,
    ),
    Metric(
        "rmsle",
        "RMSLE",
        "log",
        False,
        "Root mean squared error of log1p(p) - log1p(y).",
        perfect=0.0,
        bounds=(0.0, math.inf),
        from_sums=lambda s: np.sqrt(s["sq_log_err"] / s["n"]),
        terms=("n", "sq_log_err"),
        headline=1,
    ),
    Metric(
        "spearman",
        "Spearman ρ",
        "correlation",
        True,
        "Rank correlation of predictions and truth (average ranks for ties); undefined (null) "
        "when either side is constant.",
        perfect=1.0,
        bounds=(-1.0, 1.0),
        resampled="ranks",
        from_sums=_spearman,
        terms=("n", "rank_p", "rank_y", "rank_p2", "rank_y2", "rank_py"),
        undefined_when_constant=True,
        headline=5,
    ),
    Metric(
        "r2_log",
        "R² (log1p)",
        "fraction",
        True,
        "1 - SS_res / SS_tot on the log1p scale; undefined (null) when the truth is constant.",
        perfect=1.0,
        bounds=(-math.inf, 1.0),
        from_sums=_r2_log,
        terms=("n", "log_y", "log_y2", "sq_log_err"),
        undefined_when_constant=True,
    ),
    Metric(
        "within_2x",
        "within 2×",
        "fraction",
        True,
        "Share of records with max(p', y') / min(p', y') <= 2, p' = max(p, 1), y' = max(y, 1); "
        "failures never count.",
        perfect=1.0,
        bounds=(0.0, 1.0),
        from_sums=lambda s: s["within"] / s["n"],
        terms=("n", "within"),
        kind="fraction",
        headline=4,
    ),
)
METRIC_BY_NAME: Final = {m.name: m for m in METRICS}
HEADLINE_METRICS: Final[tuple[Metric, ...]] = tuple(
    sorted((m for m in METRICS if m.headline), key=lambda m: m.headline)
)
"""The leaderboard's columns in their order (`Metric.headline`), and the metrics every result
stores per resample (so two results on the same resamples compare pairwise)."""
assert [m.headline for m in HEADLINE_METRICS] == list(range(1, len(HEADLINE_METRICS) + 1))
MEDIAN_METRIC: Final = next(m for m in METRICS if m.resampled == "median")
"""The one metric resampled as a weighted median (of the per-row APE)."""
for _m in METRICS:  # every sum-based metric names the terms it reads, and they exist
    assert (_m.from_sums is None) == (not _m.terms), _m.name
    assert set(_m.terms) <= set(STAT_COLUMNS), _m.name

INTERVAL_METRICS: Final[tuple[Metric, ...]] = (
    Metric(
        "coverage",
        "coverage",
        "fraction",
        None,
        "Share of records whose truth lies in the central interval [q_a, q_(1-a)] (p10-p90: "
        "nominal 80%); a failure's interval is [0, 0].",
        perfect=float("nan"),
        bounds=(0.0, 1.0),
        kind="fraction",
        per="interval",
    ),
    Metric(
        "coverage_error",
        "|coverage − nominal|",
        "fraction",
        False,
        "How far the coverage of a central interval is from its nominal level.",
        perfect=0.0,
        bounds=(0.0, 1.0),
        kind="fraction",
        per="interval",
    ),
    Metric(
        "log_width",
        "mean log width",
        "log",
        False,
        "Mean of log1p(q_(1-a)) - log1p(q_a): the interval's width as a log ratio (0.69 = "
        "the high end twice the low end, for jobs well over 1 s).",
        perfect=0.0,
        bounds=(0.0, math.inf),
        per="interval",
    ),
    Metric(
        "calibration",
        "share at or below",
        "fraction",
        None,
        "Share of records with y <= q_tau: nominal tau for a calibrated quantile.",
        perfect=float("nan"),
        bounds=(0.0, 1.0),
        kind="fraction",
        per="level",
    ),
    Metric(
        "pinball",
        "pinball loss",
        "log",
        False,
        "Mean quantile (pinball) loss of level tau on the log1p scale: max(tau d, (tau - 1) d), "
        "d = log1p(y) - log1p(q_tau); a proper score for a quantile.",
        perfect=0.0,
        bounds=(0.0, math.inf),
        per="level",
    ),
    Metric(
        "mean_pinball",
        "mean pinball loss",
        "log",
        False,
        "The pinball loss averaged over the sidecar's levels.",
        perfect=0.0,
        bounds=(0.0, math.inf),
        per="set",
    ),
)
"""The metrics of a quantile sidecar (gharuntime.eval.quantiles), each the mean of a per-row
term (coverage_error: |coverage - nominal| of each resample), resampled from per-repository
sums like the sum-based metrics."""
INTERVAL_METRIC_BY_NAME: Final = {m.name: m for m in INTERVAL_METRICS}


def average_ranks(x: FloatArray, order: IntArray | None = None) -> FloatArray:
    """1-based ranks with ties sharing their average rank (as scipy's rankdata 'average').

    `order`, when given, is an argsort of `x` (saves the sort)."""
    n = x.shape[0]
    if order is None:
        order = np.argsort(x)  # any order of ties gives the same average ranks
    xs = x[order]
    new = np.empty(n, dtype=bool)
    if n:
        new[0] = True
        np.not_equal(xs[1:], xs[:-1], out=new[1:])
    group = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    average = (starts + ends - 1) / 2.0 + 1.0
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = average[group]
    return ranks


@dataclass(frozen=True)
class RowTerms:
    """Per-row terms of one target over a set of rows."""

    stats: FloatArray  # (len(STAT_COLUMNS), rows): one contiguous row per term
    ape: FloatArray  # (rows,)
    ape_order: IntArray  # argsort of ape
    # for exact per-resample Spearman (gharuntime.eval.spearman): values and their argsorts
    p: FloatArray | None = None
    y: FloatArray | None = None
    p_order: IntArray | None = None
    y_order: IntArray | None = None
    # or a function that makes them (p, y, p_order, y_order) when first asked: most evals
    # never re-rank exactly, and these are four more passes over the rows
    spearman_source: Callable[[], tuple[FloatArray, FloatArray, IntArray, IntArray]] | None = field(
        default=None, compare=False, repr=False
    )

    def spearman_inputs(
        self,
    ) -> tuple[FloatArray, FloatArray, IntArray | None, IntArray | None] | None:
        """(p, y, p_order, y_order), or None when these terms carry no values to re-rank."""
        if self.p is not None and self.y is not None:
            return self.p, self.y, self.p_order, self.y_order
        return self.spearman_source() if self.spearman_source is not None else None


SpearmanInputs = tuple[FloatArray, FloatArray, IntArray, IntArray | None, IntArray | None]
"""(p, y, cluster, p_order, y_order) of a group's rows, ascending row order; an order may be
None (then it is sorted when needed)."""


@dataclass(frozen=True)
class GroupSums:
    """One group's terms as a bootstrap cell needs them, without its rows laid out: the
    per-cluster sums of every STAT_COLUMNS term, the group's APE values ascending (and their
    clusters) for the median, and, made when first asked, the values exact Spearman re-ranks."""

    rows: int
    sums: FloatArray  # (clusters, len(STAT_COLUMNS))
    ape_sorted: FloatArray  # (rows,)
    ape_cluster: IntArray  # (rows,): the cluster of each sorted value
    spearman_source: Callable[[], SpearmanInputs] = field(compare=False, repr=False)


class TargetTerms:
    """One target's per-row terms over every row, computed once (and its three sorts done
    once), so that each breakdown group's terms are a cheap `subset`.

    Ranks are taken within the subset; log1p values are centred on the mean over all rows,
    which keeps the sums the bootstrap subtracts from one another small (the R² formula does
    not depend on the centre).
    """

    def __init__(self, y: FloatArray, p: FloatArray, failed: BoolArray) -> None:
        p = np.where(failed, 0.0, p)
        self.total = y.shape[0]
        self.y = y
        self.p = p
        # the two value sorts run beside the arithmetic (numpy sorts without the GIL); the
        # arithmetic writes into few arrays: fresh memory is slow to get at a million rows
        with ThreadPoolExecutor(max_workers=2) as pool:
            sort_p = pool.submit(np.argsort, p)
            sort_y = pool.submit(np.argsort, y)
            # the "row" ROW_TERMS, each named, in one block of memory
            block = np.empty((len(_ROW_BASE), self.total), dtype=np.float64)
            base = dict(zip(_ROW_BASE, block, strict=True))
            ly = np.log1p(y)
            lp = np.log1p(p)
            np.subtract(p, y, out=base["abs_err"])
            np.abs(base["abs_err"], out=base["abs_err"])
            np.subtract(lp, ly, out=base["sq_log_err"])
            np.square(base["sq_log_err"], out=base["sq_log_err"])
            pc = np.maximum(p, 1.0, out=lp)  # lp is spent
            yc = np.maximum(y, 1.0)
            hi = np.maximum(pc, yc)
            np.minimum(pc, yc, out=pc)  # lo
            np.multiply(pc, 2.0, out=pc)
            np.less_equal(hi, pc, out=base["within"])
            base["within"][failed] = 0.0
            del hi, pc
            finite = np.isfinite(ly)
            centre = ly.mean() if finite.all() else ly[finite].mean() if finite.any() else 0.0
            np.subtract(ly, centre, out=base["log_y"])
            np.multiply(base["log_y"], base["log_y"], out=base["log_y2"])
            del ly, finite
            self.base: dict[str, FloatArray] = base
            self.ape = np.divide(base["abs_err"], yc, out=yc)
            # the order among equal values never matters: ties share ranks and values
            self.order_ape = np.argsort(self.ape)
            self.order_p = sort_p.result()
            self.order_y = sort_y.result()

    def subset(self, rows: IntArray) -> RowTerms:
        """The terms of `rows` (ascending row indices)."""
        labels = np.full(self.total, -1, dtype=np.int64)
        labels[rows] = 0
        return self.partition(labels, 1)[0]

    def group_sums(
        self,
        labels: npt.NDArray[np.int64],
        groups: int,
        cluster: npt.NDArray[np.int64],
        clusters: int,
    ) -> list[GroupSums]:
        """Per-cluster sums of every term for each group 0..groups-1 of `labels` (-1: in
        none), every group at once, straight from the rows in their order.

        What `partition` followed by one bincount per term and group gives, bit for bit (each
        (group, cluster) bin adds its rows in ascending row order either way), without laying
        out a (terms × rows) copy per breakdown: at a million rows those copies were most of
        eval's memory, and memory a process touches for the first time is slow to get.
        """
        n = self.total
        key = _group_key(labels, groups)
        member = key >= 0
        counts = np.bincount(key[member], minlength=groups)[:groups]
        off = np.zeros(groups + 1, dtype=np.intp)
        np.cumsum(counts, out=off[1:])
        skip = n - int(off[-1])
        # rows in no group go to one extra bin past the last, dropped
        width = groups * clusters
        bins = np.multiply(labels, clusters, dtype=np.int64)  # one array, filled in place
        bins += cluster
        bins[~member] = width
        sums = np.empty((groups, clusters, len(STAT_COLUMNS)), dtype=np.float64)

        def add(column: int, weights: FloatArray | None) -> None:
            got = np.bincount(bins, weights=weights, minlength=width + 1)[:width]
            sums[:, :, column] = got.reshape(groups, clusters)

        add(_STAT["n"], None)
        for name, values in self.base.items():
            add(_STAT[name], values)
        group_of = np.repeat(np.arange(groups, dtype=np.intp), counts)  # per grouped position

        centre = (counts + 1) / 2.0  # ranks are centred on their group's middle rank
        ranks: list[FloatArray] = []
        for values, order in ((self.p, self.order_p), (self.y, self.order_y)):
            go = _regroup(order, key, skip)
            by_row = np.zeros(n, dtype=np.float64)  # rows in no group: 0, in the dropped bin
            by_row[go] = _grouped_ranks(values[go], off, group_of, centre)
            del go
            ranks.append(by_row)
        rank_p, rank_y = ranks
        add(_STAT["rank_p"], rank_p)
        add(_STAT["rank_y"], rank_y)
        product = np.multiply(rank_p, rank_p)  # one scratch array for the three products
        add(_STAT["rank_p2"], product)
        add(_STAT["rank_y2"], np.multiply(rank_y, rank_y, out=product))
        add(_STAT["rank_py"], np.multiply(rank_p, rank_y, out=product))
        del ranks, rank_p, rank_y, product
        go_ape = _regroup(self.order_ape, key, skip)
        ape = self.ape[go_ape]
        ape_cluster = cluster[go_ape]
        del go_ape

        def source(g: int) -> SpearmanInputs:
            rows = np.flatnonzero(key == g)
            local = np.full(n, -1, dtype=np.intp)
            local[rows] = np.arange(rows.shape[0], dtype=np.intp)
            p_order = local[self.order_p][key[self.order_p] == g]
            y_order = local[self.order_y][key[self.order_y] == g]
            return self.p[rows], self.y[rows], cluster[rows], p_order, y_order

        out = []
        for g in range(groups):
            a, z = int(off[g]), int(off[g + 1])
            out.append(
                GroupSums(
                    rows=z - a,
                    sums=sums[g],
                    ape_sorted=ape[a:z],
                    ape_cluster=ape_cluster[a:z],
                    spearman_source=lambda g=g: source(g),  # type: ignore[misc]
                )
            )
        return out

    def partition(self, labels: npt.NDArray[np.int64], groups: int) -> list[RowTerms]:
        """The terms of each group 0..groups-1 of `labels` (-1: in none), every group at once.

        One stable sort by label (a radix sort of small integers) lays the rows out group by
        group, ascending within each; a stable sort of each value order by label gives every
        group's order of values. Ranks and stats are whole-array operations over that layout,
        and each group's terms are views into it: the numbers a group-by-group computation
        gives, bit for bit (tests/eval/test_equivalence.py), in far fewer passes over the rows.
        """
        key = _group_key(labels, groups)
        member = int(np.count_nonzero(key >= 0))
        skip = self.total - member  # the -1 rows sort first
        everything = skip == 0 and groups == 1  # one group of every row: nothing to regroup
        by_label = (
            np.arange(self.total, dtype=np.intp)
            if everything
            else np.argsort(key, kind="stable")[skip:]
        )  # rows, group by group, ascending within each
        group_of = key[by_label].astype(np.intp)  # per laid-out position
        counts = np.bincount(group_of, minlength=groups)[:groups]
        off = np.zeros(groups + 1, dtype=np.intp)
        np.cumsum(counts, out=off[1:])

        def regroup(order: IntArray) -> IntArray:
            return order if everything else _regroup(order, key, skip)

        stats = np.empty((len(STAT_COLUMNS), member), dtype=np.float64)
        stats[_STAT["n"]] = 1.0
        for name, values in self.base.items():
            np.take(values, by_label, out=stats[_STAT[name]])
        centre = ((counts + 1) / 2.0)[group_of]
        by_row = np.empty(self.total, dtype=np.float64)
        grouped: list[IntArray] = []
        rank_p, rank_y = _STAT["rank_p"], _STAT["rank_y"]
        for row, values, order in ((rank_p, self.p, self.order_p), (rank_y, self.y, self.order_y)):
            go = regroup(order)
            grouped.append(go)
            by_row[go] = _grouped_ranks(values[go], off, group_of)
            np.take(by_row, by_label, out=stats[row])
            stats[row] -= centre
        np.multiply(stats[rank_p], stats[rank_p], out=stats[_STAT["rank_p2"]])
        np.multiply(stats[rank_y], stats[rank_y], out=stats[_STAT["rank_y2"]])
        np.multiply(stats[rank_p], stats[rank_y], out=stats[_STAT["rank_py"]])
        local = np.empty(self.total, dtype=np.intp)  # each row's index within its group
        local[by_label] = np.arange(member, dtype=np.intp) - off[group_of]
        ape = self.ape[by_label]
        ape_order = local[regroup(self.order_ape)]
        go_p, go_y = grouped
        out = []
        for g in range(groups):
            a, z = int(off[g]), int(off[g + 1])

            def source(a: int = a, z: int = z) -> tuple[FloatArray, FloatArray, IntArray, IntArray]:
                rows = by_label[a:z]
                return self.p[rows], self.y[rows], local[go_p[a:z]], local[go_y[a:z]]

            out.append(
                RowTerms(
                    stats=stats[:, a:z],
                    ape=ape[a:z],
                    ape_order=ape_order[a:z],
                    spearman_source=source,
                )
            )
        return out


def _group_key(labels: npt.NDArray[np.int64], groups: int) -> npt.NDArray[np.signedinteger[Any]]:
    """`labels` in the smallest integer type that holds them: a stable argsort of int16 is a
    radix sort."""
    return labels.astype(np.int16 if groups < 2**15 else np.int64)


def _regroup(order: IntArray, key: npt.NDArray[np.signedinteger[Any]], skip: int) -> IntArray:
    """The members of `order` (rows, in some order) laid out group by group, keeping their
    order within each group; `skip` rows are in no group (key -1, sorted first, dropped)."""
    by = key[order]
    if by.shape[0] < 2 or bool((by[1:] >= by[:-1]).all()):  # grouped already
        return order[skip:]
    return order[np.argsort(by, kind="stable")[skip:]]


def _grouped_ranks(
    ordered: FloatArray,
    off: npt.NDArray[np.intp],
    group_of: npt.NDArray[np.intp],
    centre: FloatArray | None = None,
) -> FloatArray:
    """Average ranks (1-based, ties sharing) within each group of `ordered`: values laid out
    group by group (`off`: where each starts), ascending within each. The same arithmetic as
    average_ranks on each group alone, so the same numbers; minus `centre[group]` when given
    (subtracted once per tie group: the same numbers as subtracting per row)."""
    n = ordered.shape[0]
    new = np.empty(n, dtype=bool)
    if n:
        new[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        new[off[:-1][off[:-1] < n]] = True  # every group starts a tie group
    tie = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)
    base = off[group_of[starts]]  # the start of each tie group's group
    average = ((starts - base) + (ends - base) - 1) / 2.0 + 1.0
    if centre is not None:
        average -= centre[group_of[starts]]
    ranks: FloatArray = average[tie]
    return ranks


def row_terms(y: FloatArray, p: FloatArray, failed: BoolArray) -> RowTerms:
    """The per-row terms for truth `y`, prediction `p` (0 where failed) and failure mask."""
    return TargetTerms(y, p, failed).subset(np.arange(y.shape[0]))


def metrics_from_sums(sums: FloatArray) -> dict[str, FloatArray]:
    """Every sum-based metric from (..., len(STAT_COLUMNS)) sums; NaN where undefined."""
    s = {name: sums[..., i] for i, name in enumerate(STAT_COLUMNS)}
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {
            m.name: m.from_sums({t: s[t] for t in m.terms})
            for m in METRICS
            if m.from_sums is not None
        }
    empty = s["n"] <= 0
    return {k: np.where(empty, np.nan, v) for k, v in out.items()}
