"""How recently a job's group last ran in training: for each row, the days from the latest
train-split row of its job group (repository, workflow path, job name; `splits.GROUP`) to the
row's own creation.

Ranges miss where the regime changed: a group renamed, added or long idle since training is
predicted from other groups' patterns, and its errors are larger than the validation split's
(on gharuntime-real-apache's temporal test split, 90% of the rows belong to a group the train
split never saw, against 1% of the validation rows). So eval breaks its scores down by this
recency (`BUCKETS`), and the reference methods calibrate their ranges per bucket
(`gharuntime.baselines.intervals`). Both compute it here, from the same train split.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import polars as pl

from gharuntime.splits import GROUP

__all__ = ["BUCKETS", "EDGES_DAYS", "NEVER", "GroupClock", "bucket_of"]

EDGES_DAYS: Final = (7.0, 30.0, 90.0)
"""Upper edges (days, inclusive) of the buckets before `over 90 days`."""
BUCKETS: Final = ("0-7 days", "7-30 days", "30-90 days", "over 90 days", "never")
"""The recency buckets, most recent first; `never`: the train split has no row of the group."""
NEVER: Final = len(BUCKETS) - 1

_DAY: Final = 86_400.0
_LAST: Final = "__last_s"
_AT: Final = "__at_s"


def bucket_of(days: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Index into BUCKETS of each day count: NaN is never; a negative count (a later attempt's
    job created before another row of its group) is 0-7 days; +inf (the group is in training
    but a time is unknown) is over 90 days."""
    out = np.full(days.shape[0], NEVER, dtype=np.int64)
    known = ~np.isnan(days)
    out[known] = np.searchsorted(np.asarray(EDGES_DAYS), days[known], side="left")
    return out


def _epoch_seconds(frame: pl.DataFrame) -> pl.Expr:
    """created_at as float seconds since the epoch (null when unknown or not a time)."""
    if "created_at" not in frame.columns or not isinstance(frame.schema["created_at"], pl.Datetime):
        return pl.lit(None, dtype=pl.Float64)
    return pl.col("created_at").dt.epoch("us").cast(pl.Float64) / 1e6


def _keys(frame: pl.DataFrame) -> pl.DataFrame:
    """The group columns, typed as the clock stores them (null where the frame lacks one), and
    created_at as `_AT` seconds."""
    types = {"repo_id": pl.Int64, "workflow_path": pl.String, "job_name": pl.String}
    # with_columns, not select: a frame with none of them keeps its height
    return frame.with_columns(
        *(
            pl.col(c).cast(t) if c in frame.columns else pl.lit(None, dtype=t).alias(c)
            for c, t in types.items()
        ),
        _epoch_seconds(frame).alias(_AT),
    ).select(*types, _AT)


@dataclass(frozen=True)
class GroupClock:
    """The latest creation time of each job group in a training split (epoch seconds; null
    when none of its rows has one): what a model keeps to say how recently a row's group
    last ran in its training data."""

    table: pl.DataFrame  # GROUP columns + _LAST

    @classmethod
    def from_frame(cls, train: pl.DataFrame) -> GroupClock:
        """From the train split's rows (GROUP columns and created_at)."""
        table = (
            _keys(train)
            .group_by(list(GROUP))
            .agg(pl.col(_AT).max().alias(_LAST))
            .sort(list(GROUP), nulls_last=True)
        )
        return cls(table)

    @property
    def groups(self) -> int:
        return self.table.height

    def days_since(self, frame: pl.DataFrame) -> npt.NDArray[np.float64]:
        """Per row of `frame`: days from its group's latest training row to the row's
        created_at; NaN when the group is not in training; +inf when it is but either time is
        unknown."""
        joined = _keys(frame).join(
            self.table.with_columns(pl.lit(True).alias("__seen")),
            on=list(GROUP),
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
        seen = joined["__seen"].fill_null(False).to_numpy().astype(bool)
        at = joined[_AT].fill_null(math.nan).to_numpy().astype(np.float64)
        last = joined[_LAST].fill_null(math.nan).to_numpy().astype(np.float64)
        days = (at - last) / _DAY
        days = np.where(np.isnan(days), math.inf, days)
        return np.where(seen, days, math.nan)

    def buckets(self, frame: pl.DataFrame) -> npt.NDArray[np.int64]:
        """Index into BUCKETS of each row of `frame`."""
        return bucket_of(self.days_since(frame))

    def to_json(self) -> list[list[Any]]:
        """[[repo_id, workflow_path, job_name, latest epoch seconds], ...]."""
        return [list(r) for r in self.table.iter_rows()]

    @classmethod
    def from_json(cls, data: Any) -> GroupClock:
        """Rebuild a saved clock; ValueError for anything but what to_json wrote."""
        if not isinstance(data, list):
            raise ValueError("the group clock must be a list of [repo_id, path, job, time] rows")
        columns: list[list[Any]] = [[], [], [], []]
        for row in data:
            if not isinstance(row, list) or len(row) != 4:
                raise ValueError(f"bad group clock row {ascii(row)[:80]}")
            repo, path, job, last = row
            ok = (
                (repo is None or (isinstance(repo, int) and not isinstance(repo, bool)))
                and (path is None or isinstance(path, str))
                and (job is None or isinstance(job, str))
                and (last is None or (isinstance(last, int | float) and not isinstance(last, bool)))
            )
            if not ok:
                raise ValueError(f"bad group clock row {ascii(row)[:80]}")
            for column, value in zip(columns, row, strict=True):
                column.append(value)
        table = pl.DataFrame(
            dict(zip([*GROUP, _LAST], columns, strict=True)),
            schema={
                "repo_id": pl.Int64,
                "workflow_path": pl.String,
                "job_name": pl.String,
                _LAST: pl.Float64,
            },
        )
        return cls(table)
