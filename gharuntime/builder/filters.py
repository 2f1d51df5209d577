"""The filters between candidate rows and the dataset, applied in a fixed order, each counted so
the data card can say exactly what was removed and why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

__all__ = [
    "DEFAULT_CONCLUSIONS",
    "FILTERS",
    "MAX_DURATION_S",
    "FilterRule",
    "apply_filters",
]

DEFAULT_CONCLUSIONS: tuple[str, ...] = ("success",)
"""The main task is the runtime of successful jobs; other conclusions are dropped by default."""

MAX_DURATION_S = 35 * 24 * 3600.0
"""GitHub stops any workflow run after 35 days; a longer job is a clock error."""


@dataclass(frozen=True)
class FilterRule:
    """One filter: its manifest name, what it removes (for the card) and the rows it removes."""

    name: str
    meaning: str
    removes: pl.Expr


FILTERS: tuple[FilterRule, ...] = (
    FilterRule(
        "not_completed",
        "jobs whose status is not `completed`, or that lack a start or end time",
        (pl.col("status") != "completed")
        | pl.col("status").is_null()
        | pl.col("started_at").is_null()
        | pl.col("completed_at").is_null()
        | pl.col("created_at").is_null(),
    ),
    FilterRule(
        "skipped",
        "jobs GitHub skipped (conclusion `skipped`): they never ran",
        pl.col("conclusion") == "skipped",
    ),
    FilterRule(
        "non_positive_duration",
        "jobs whose completed_at is not after started_at (zero or negative duration)",
        pl.col("duration_s") <= 0,
    ),
    FilterRule(
        "carried_over",
        "jobs of a re-run attempt (run_attempt > 1) that started before the attempt was created: "
        '"re-run failed jobs" copies the jobs that succeeded into the new attempt with the new '
        "attempt's created_at but their original started_at/completed_at; the same job's row in "
        "its earlier attempt holds its duration",
        (pl.col("run_attempt") > 1) & (pl.col("queue_s") < 0),
    ),
    FilterRule(
        "clock_skew",
        "jobs that started before they were created (negative queue time) or ran longer than "
        "GitHub's 35-day limit: the timestamps disagree",
        (pl.col("queue_s") < 0) | (pl.col("duration_s") > MAX_DURATION_S),
    ),
)


def apply_filters(
    rows: pl.DataFrame, conclusions: Sequence[str] | None = DEFAULT_CONCLUSIONS
) -> tuple[pl.DataFrame, dict[str, int]]:
    """The rows that pass, and how many each filter removed (in the order applied).

    After the rules above: duplicate ids (the same job seen twice, e.g. in two raw stores) keep
    one row, preferring the latest completion; then the conclusion policy keeps only
    `conclusions` (None keeps all), counting the rest per conclusion as `conclusion_<name>`.
    """
    counts: dict[str, int] = {}
    for rule in FILTERS:
        mask = rule.removes.fill_null(False)
        before = rows.height
        rows = rows.filter(~mask)
        counts[rule.name] = before - rows.height
    dup = rows["id"].is_duplicated()
    counts["duplicate_job_id"] = 0
    if dup.any():
        # Only the repeated ids are sorted, so a store without repeats costs one hash pass.
        repeated = rows.filter(dup)
        kept = repeated.sort(
            ["id", "completed_at", "started_at", "run_attempt"],
            descending=[False, True, True, True],
        ).unique("id", keep="first", maintain_order=True)
        counts["duplicate_job_id"] = repeated.height - kept.height
        rows = pl.concat([rows.filter(~dup), kept])
    if conclusions is not None:
        keep = list(conclusions)
        dropped = rows.filter(~pl.col("conclusion").is_in(keep))
        for conclusion, n in dropped.group_by("conclusion").len().sort("conclusion").iter_rows():
            counts[f"conclusion_{conclusion or 'none'}"] = int(n)
        rows = rows.filter(pl.col("conclusion").is_in(keep))
    return rows, counts
