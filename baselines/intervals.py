"""Ranges calibrated on held-out rows, shared by every reference method that gives one (the
trees' residual quantiles, LASER's sampled P10/P90).

Split-conformal, one level at a time, on the log1p scale: a method gives each row a base value
per level (the trees: their point prediction for every level; LASER: the quantile of its draws),
and the level's offset is the conformal quantile (`conformal_quantile`) of `log1p(y) - base`
over the calibration rows, so that a share τ of held-out jobs lies at or below level τ. This is
conformalized quantile regression (CQR, Romano et al. 2019) with each side calibrated on its own.

Shift-aware (`by="recency"`, the default): the offsets are fitted per stratum of the row's
novelty to the model, a Mondrian split (Vovk et al. 2003). A row whose track gives the job's
own earlier durations is `with history`; any other row takes the recency bucket of its job
group's last training run (`gharuntime.recency`: 0-7 days ... never). Where the regime changed,
test rows are mostly of groups training never saw, and their errors are those of the
validation split's few such rows, not of the bulk: on gharuntime-real-apache temporal/config,
LightGBM's P10-P90 coverage goes from 36% (one pooled offset) to 80% (`benchmarks/
intervals.py`). A stratum with fewer than `MIN_STRATUM_ROWS` calibration rows borrows the rows
of its neighbours, the more novel first (the wider, safer side), until it has enough.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import polars as pl

from gharuntime.contract import HISTORY_COLUMN
from gharuntime.recency import BUCKETS, GroupClock

__all__ = [
    "BY",
    "HISTORY",
    "MIN_STRATUM_ROWS",
    "STRATA",
    "Calibration",
    "balanced_sample",
    "conformal_quantile",
    "fit_calibration",
    "row_strata",
]

HISTORY: Final = "with history"
STRATA: Final = (HISTORY, *BUCKETS)
"""The strata of `by="recency"`, from the least novel row to the most."""
ALL: Final = "all"
BY: Final = ("recency", "none")
"""How the calibration rows are split: per STRATA stratum, or not at all (one pooled offset)."""
MIN_STRATUM_ROWS: Final = 100
"""The fewest calibration rows a stratum's offsets come from (p99 needs 99 to be finite)."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def conformal_quantile(scores: FloatArray, tau: float) -> float:
    """The split-conformal quantile of level `tau` of `scores` (n finite values): for τ ≥ 0.5
    the ⌈(n+1)τ⌉-th smallest, below it the ⌊(n+1)τ⌋-th, so a new exchangeable score is at or
    below it with probability at least τ (at or above it: at least 1 − τ). Past either end the
    extreme score is taken, not an infinite one (a range stays finite)."""
    s = np.sort(np.asarray(scores, dtype=np.float64))
    n = s.shape[0]
    if n == 0:
        raise ValueError("no scores to take a quantile of")
    k = math.ceil((n + 1) * tau - 1e-9) if tau >= 0.5 else math.floor((n + 1) * tau + 1e-9)
    return float(s[min(max(k, 1), n) - 1])


def row_strata(frame: pl.DataFrame, clock: GroupClock | None, uses_history: bool) -> IntArray:
    """Index into STRATA of each row: `with history` when the track reads earlier durations
    and the row has one, else its recency bucket (every row `never` without a clock)."""
    if clock is None:
        out = np.full(frame.height, STRATA.index("never"), dtype=np.int64)
    else:
        out = clock.buckets(frame) + 1
    if uses_history and HISTORY_COLUMN in frame.columns:
        has = frame[HISTORY_COLUMN].list.len().fill_null(0).to_numpy() > 0
        out[has] = 0
    return out


def balanced_sample(strata: IntArray, limit: int, seed: int) -> IntArray:
    """Sorted row indices of at most `limit` rows, spread over the strata as evenly as they
    allow (each stratum keeps all its rows when it has fewer than its share; what it leaves goes
    to the others), drawn with `seed`: the rare strata, where ranges fail, keep their rows."""
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    groups.sort(key=len)
    left, chosen = limit, []
    for i, rows in enumerate(groups):
        share = left // (len(groups) - i)
        take = min(len(rows), share)
        chosen.append(rng.permutation(rows)[:take] if take < len(rows) else rows)
        left -= take
    return np.sort(np.concatenate(chosen)) if chosen else np.empty(0, dtype=np.int64)


@dataclass(frozen=True)
class Stratum:
    """One stratum's calibration: its own rows, the strata whose rows gave its offsets, and the
    offset of each level (log1p scale)."""

    rows: int
    pooled: tuple[str, ...]
    offsets: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "from": list(self.pooled), "offsets": dict(self.offsets)}


@dataclass(frozen=True)
class Calibration:
    """A target's fitted calibration: how (`by`), on which rows (`source`: validation, or
    training when there is no validation split), and the offsets of each stratum."""

    by: str
    source: str
    rows: int
    strata: dict[str, Stratum] = field(default_factory=dict)
    method: str = "split-conformal"

    def adjust(self, bases: Mapping[str, FloatArray], strata: IntArray | None) -> dict[str, Any]:
        """Each level's base values plus its offset, per row's stratum (index into STRATA;
        needed when `by` is recency), on the log1p scale."""
        if self.by == "recency" and strata is None:
            raise ValueError("a calibration by recency needs each row's stratum")
        out: dict[str, Any] = {}
        for level, base in bases.items():
            if strata is not None and self.by == "recency":
                table = np.array([self.strata[s].offsets[level] for s in STRATA])
                out[level] = base + table[strata]
            else:
                out[level] = base + self.strata[ALL].offsets[level]
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "by": self.by,
            "source": self.source,
            "rows": self.rows,
            "strata": {name: s.to_json() for name, s in self.strata.items()},
        }

    @classmethod
    def from_json(cls, data: Any, levels: tuple[str, ...]) -> Calibration:
        """A saved calibration; ValueError for anything to_json would not write (every
        stratum of its `by` with a finite offset for each of `levels`)."""
        if not isinstance(data, dict) or data.get("by") not in BY:
            raise ValueError("a calibration needs `by` (recency or none)")
        rows, source, strata = data.get("rows"), data.get("source"), data.get("strata")
        if not isinstance(rows, int) or isinstance(rows, bool) or not isinstance(source, str):
            raise ValueError("a calibration needs `rows` (an integer) and `source`")
        names = STRATA if data["by"] == "recency" else (ALL,)
        if not isinstance(strata, dict) or set(strata) != set(names):
            raise ValueError(f"a calibration by {data['by']} has the strata {', '.join(names)}")
        out: dict[str, Stratum] = {}
        for name in names:
            s = strata[name]
            offsets = s.get("offsets") if isinstance(s, dict) else None
            if not isinstance(offsets, dict) or set(offsets) != set(levels):
                raise ValueError(f"stratum {name!r} needs an offset for {', '.join(levels)}")
            values = {k: offsets[k] for k in levels}
            if not all(
                isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
                for v in values.values()
            ):
                raise ValueError(f"stratum {name!r}: offsets must be finite numbers")
            pooled = s.get("from", [name])
            count = s.get("rows", 0)
            if not isinstance(pooled, list) or not all(p in names for p in pooled):
                raise ValueError(f"stratum {name!r}: `from` names unknown strata")
            if not isinstance(count, int) or isinstance(count, bool):
                raise ValueError(f"stratum {name!r}: `rows` must be an integer")
            out[name] = Stratum(count, tuple(pooled), {k: float(v) for k, v in values.items()})
        return cls(by=data["by"], source=source, rows=rows, strata=out)


def _borrow_order(i: int, n: int) -> list[int]:
    """Stratum i, then the more novel ones in turn, then the less novel ones."""
    return [i, *range(i + 1, n), *range(i - 1, -1, -1)]


def fit_calibration(
    y_log: FloatArray,
    bases: Mapping[str, FloatArray],
    levels: Mapping[str, float],
    *,
    strata: IntArray | None,
    source: str,
    min_rows: int = MIN_STRATUM_ROWS,
) -> Calibration:
    """Offsets of every level in `levels` ({name: τ}) from the rows' truth (log1p) and each
    level's base values (log1p), per STRATA stratum when `strata` is given, else pooled.
    ValueError without rows."""
    y = np.asarray(y_log, dtype=np.float64)
    if y.shape[0] == 0:
        raise ValueError("no calibration rows")
    scores = {q: y - np.asarray(bases[q], dtype=np.float64) for q in levels}

    def offsets(mask: npt.NDArray[np.bool_] | None) -> dict[str, float]:
        return {
            q: conformal_quantile(scores[q] if mask is None else scores[q][mask], tau)
            for q, tau in levels.items()
        }

    if strata is None:
        return Calibration(
            "none", source, int(y.shape[0]), {ALL: Stratum(y.shape[0], (ALL,), offsets(None))}
        )
    counts = np.bincount(strata, minlength=len(STRATA))
    out: dict[str, Stratum] = {}
    for i, name in enumerate(STRATA):
        mask = np.zeros(y.shape[0], dtype=bool)
        taken: list[str] = []
        for j in _borrow_order(i, len(STRATA)):
            if counts[j] == 0:
                continue
            mask |= strata == j
            taken.append(STRATA[j])
            if mask.sum() >= min_rows:
                break
        out[name] = Stratum(int(counts[i]), tuple(taken), offsets(mask))
    return Calibration("recency", source, int(y.shape[0]), out)
