"""The naive reference methods every other method must beat.

- `median`: the training median of each target.
- `group-median`: the training median of the same repository + workflow + job name, falling back
  to the repository's median, then to the global median.
- `last-run` (history track only): the job's most recent earlier duration
  (`history_duration_s[0]`), falling back to `group-median` when the job has no history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from gharuntime.baselines.method import Method, MethodError, as_float
from gharuntime.contract import HISTORY_COLUMN, PRIMARY_TARGET
from gharuntime.parquet import read_parquet

__all__ = ["GROUP_LEVELS", "GroupMedian", "LastRun", "Median"]

GROUP_LEVELS: tuple[tuple[str, ...], ...] = (("repo_id", "workflow_path", "job_name"), ("repo_id",))
"""Group-median's fallback chain, most specific first; the global median comes last."""
_GROUP_COLUMNS = tuple(dict.fromkeys(c for level in GROUP_LEVELS for c in level))


def _median(values: pl.Series) -> float:
    v = values.drop_nulls().drop_nans() if values.dtype.is_float() else values.drop_nulls()
    return float(v.median()) if v.len() else float("nan")  # type: ignore[arg-type]


class Median(Method):
    """The training median per target: no input at all."""

    name = "median"
    version = "1.0"

    def reads(self, track: str) -> tuple[str, ...]:
        return ()

    def fit(
        self, train: pl.DataFrame, validation: pl.DataFrame | None = None, progress: Any = None
    ) -> None:
        train, _ = self._fit_frames(train, validation)
        self.medians = {t: _median(train[t].cast(pl.Float64)) for t in self.targets}

    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        return {t: np.full(inputs.height, self.medians[t], dtype=np.float64) for t in self.targets}

    def save_state(self, folder: Path) -> dict[str, Any]:
        return {"medians": self.medians}

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> Median:
        m = cls(meta["track"], seed=meta.get("seed", 0))
        m.medians = {k: float(v) for k, v in meta["state"]["medians"].items()}
        return m


class GroupMedian(Method):
    """Median of the same repo + workflow + job name, then of the repo, then global."""

    name = "group-median"
    version = "1.0"

    def reads(self, track: str) -> tuple[str, ...]:
        return _GROUP_COLUMNS

    def fit(
        self, train: pl.DataFrame, validation: pl.DataFrame | None = None, progress: Any = None
    ) -> None:
        train, _ = self._fit_frames(train, validation)
        self.global_medians = {t: _median(train[t].cast(pl.Float64)) for t in self.targets}
        self.tables: list[pl.DataFrame] = []
        for level in GROUP_LEVELS:
            self.tables.append(
                train.group_by(list(level)).agg(
                    [
                        pl.col(t).cast(pl.Float64).drop_nulls().median().alias(t)
                        for t in self.targets
                    ]
                )
            )

    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        frame = inputs.with_row_index("__row")
        for level_i, (level, table) in enumerate(zip(GROUP_LEVELS, self.tables, strict=True)):
            renamed = table.rename({t: f"__{t}_{level_i}" for t in self.targets})
            frame = frame.join(renamed, on=list(level), how="left", nulls_equal=False)
        frame = frame.sort("__row")
        for t in self.targets:
            chain = [pl.col(f"__{t}_{i}") for i in range(len(GROUP_LEVELS))]
            chain.append(pl.lit(self.global_medians[t]))
            out[t] = as_float(frame.select(pl.coalesce(chain).alias(t))[t])
        return out

    def save_state(self, folder: Path) -> dict[str, Any]:
        for i, table in enumerate(self.tables):
            table.write_parquet(folder / f"groups-{i}.parquet")
        return {"global_medians": self.global_medians, "levels": [list(x) for x in GROUP_LEVELS]}

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> GroupMedian:
        m = cls(meta["track"], seed=meta.get("seed", 0))
        state = meta["state"]
        if [tuple(x) for x in state["levels"]] != list(GROUP_LEVELS):
            raise MethodError(f"{folder}: saved with other group levels {state['levels']}")
        m.global_medians = {k: float(v) for k, v in state["global_medians"].items()}
        m.tables = [read_parquet(folder / f"groups-{i}.parquet") for i in range(len(GROUP_LEVELS))]
        return m


class LastRun(Method):
    """The most recent earlier duration of the same job; group-median where there is none."""

    name = "last-run"
    version = "1.0"

    def __init__(self, track: str, *, seed: int = 0) -> None:
        super().__init__(track, seed=seed)
        self.fallback = GroupMedian(track, seed=seed)

    def reads(self, track: str) -> tuple[str, ...]:
        return (HISTORY_COLUMN, *_GROUP_COLUMNS)

    def fit(
        self, train: pl.DataFrame, validation: pl.DataFrame | None = None, progress: Any = None
    ) -> None:
        self.fallback.fit(train, validation)

    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        out = self.fallback.predict(inputs.select(self.fallback.inputs))
        last = as_float(inputs[HISTORY_COLUMN].list.first())
        has = ~np.isnan(last)
        if PRIMARY_TARGET in out:
            out[PRIMARY_TARGET] = np.where(has, last, out[PRIMARY_TARGET])
        return out

    def save_state(self, folder: Path) -> dict[str, Any]:
        return {"fallback": self.fallback.save_state(folder)}

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> LastRun:
        m = cls(meta["track"], seed=meta.get("seed", 0))
        m.fallback = GroupMedian.load_state(folder, {**meta, "state": meta["state"]["fallback"]})
        return m
