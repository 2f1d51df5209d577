"""Rank groups from paired bootstrap intervals.

Methods of one table are scored on the same bootstrap resamples (of repositories, or of workflow
runs where a split has too few repositories), so the difference between two methods can be
computed resample by resample; its 95% percentile interval says whether the data separate them. The method with the lowest RMSLE leads group 1, and every method whose paired
difference interval against it includes zero shares group 1. Among the methods left, the best
leads group 2, and so on down the table. A group is therefore "not distinguishable from its
leader at 95%", not a strict order: methods of one group may be listed in any order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from gharuntime.eval.bootstrap import CONFIDENCE, interval
from gharuntime.leaderboard.registry import Entry, Table

__all__ = ["GROUP_MEANING", "RANK_METRIC", "Ranked", "rank_table"]

RANK_METRIC: Final = "rmsle"
RANK_TARGET: Final = "duration_s"
GROUP_MEANING: Final = (
    "Rank group: methods are ordered by RMSLE on duration_s; the best method leads group 1 and "
    "every method whose paired bootstrap difference with the leader (same bootstrap "
    "resamples, 95% percentile interval) includes zero shares its group; among the rest the "
    "best leads the next group, and so on. Methods in one group are not distinguishable at 95%. "
    "A multi table is ranked the same way by its summary: the mean RMSLE over the targets the "
    "dataset holds, resample by resample."
)

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Ranked:
    """One method's place in its table."""

    entry: Entry
    group: int | None  # None when the rank metric is undefined
    group_leader: str | None
    vs_leader: tuple[float, float, float] | None  # point, ci_low, ci_high of (this − leader)


def _resamples(entry: Entry, metric: str = RANK_METRIC) -> FloatArray:
    summary = entry.result.get("summary")
    values = (
        summary["per_resample"][metric]
        if summary
        else entry.result["bootstrap"]["per_resample"][RANK_TARGET][metric]
    )
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _point(entry: Entry, metric: str = RANK_METRIC) -> float | None:
    """The rank metric of `entry`: on duration_s, or a multi result's summary over its
    targets (gharuntime.eval.report.SUMMARY_MEANING)."""
    summary = entry.result.get("summary")
    block = summary["metrics"] if summary else entry.result["metrics"][RANK_TARGET]
    value = block[metric]["value"]
    return None if value is None else float(value)


def _difference(a: Entry, b: Entry) -> tuple[float, float, float] | None:
    pa, pb = _point(a), _point(b)
    ci = interval(_resamples(a) - _resamples(b), CONFIDENCE)
    if pa is None or pb is None or ci is None:
        return None
    return pa - pb, ci[0], ci[1]


def _includes_zero(diff: tuple[float, float, float] | None) -> bool:
    return diff is not None and diff[1] <= 0.0 <= diff[2]


def rank_table(table: Table) -> list[Ranked]:
    """The table's methods in display order (group, then RMSLE, then name), with their group
    and their difference from the table's leader."""
    defined = [e for e in table.entries if _point(e) is not None]
    undefined = sorted((e for e in table.entries if _point(e) is None), key=lambda e: e.method)
    order: Sequence[Entry] = sorted(defined, key=lambda e: (_point(e), e.method))
    leader = order[0] if order else None
    group_of: dict[str, tuple[int, str]] = {}
    remaining = list(order)
    group = 0
    while remaining:
        group += 1
        head = remaining[0]
        members = [head] + [e for e in remaining[1:] if _includes_zero(_difference(e, head))]
        for e in members:
            group_of[e.method] = (group, head.method)
        remaining = [e for e in remaining if e.method not in group_of]
    ranked = [
        Ranked(
            entry=e,
            group=group_of[e.method][0],
            group_leader=group_of[e.method][1],
            vs_leader=_difference(e, leader) if leader is not None else None,
        )
        for e in order
    ]
    ranked.sort(key=lambda r: (r.group or 0, _point(r.entry), r.entry.method))
    return ranked + [Ranked(e, None, None, None) for e in undefined]
