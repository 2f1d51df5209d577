"""The naive reference methods every other method must beat.

- `median`: the training median of each target.
- `group-median`: the training median of the same repository + workflow + job name, falling back
  to the repository's median, then to the global median.
- `last-run` (history track only): the job's most recent earlier duration
  (`history_duration_s[0]`), falling back to `group-median` when the job has no history.

Each writes quantiles (QUANTILE_LEVELS): the training quantiles of its group. Group-median
takes them from the most specific group with at least QUANTILE_MIN_ROWS rows (a job seen
twice has no spread to speak of). last-run, with a validation split, adds to its prediction the
split-conformal offsets of the validation jobs' errors (per stratum: with history, else the
recency of the job group; `gharuntime.baselines.intervals`, the trees' code): a job's change
from its last run, not its group's whole spread, which covered 97% of the real
temporal/history test jobs for a nominal 80% (most of them in groups renamed since training,
whose spread is the repository's). Without one it scales its group's quantiles by the ratio of
the last duration to the group's median.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from gharuntime.baselines.intervals import Calibration, fit_calibration, row_strata
from gharuntime.baselines.method import QUANTILE_LEVELS, Method, MethodError, as_float
from gharuntime.contract import HISTORY_COLUMN, PRIMARY_TARGET
from gharuntime.parquet import read_parquet
from gharuntime.progress import Progress
from gharuntime.recency import GroupClock

__all__ = ["GROUP_LEVELS", "QUANTILE_MIN_ROWS", "GroupMedian", "LastRun", "Median"]

QUANTILE_MIN_ROWS = 10
"""Training rows a group needs before its own quantiles are used (else the next group's)."""

GROUP_LEVELS: tuple[tuple[str, ...], ...] = (("repo_id", "workflow_path", "job_name"), ("repo_id",))
"""Group-median's fallback chain, most specific first; the global median comes last."""
_GROUP_COLUMNS = tuple(dict.fromkeys(c for level in GROUP_LEVELS for c in level))


def _quantiles(values: pl.Series) -> dict[str, float]:
    v = values.drop_nulls().drop_nans() if values.dtype.is_float() else values.drop_nulls()
    if not v.len():
        return {q: float("nan") for q in QUANTILE_LEVELS}
    return {q: float(v.quantile(f, "linear")) for q, f in QUANTILE_LEVELS.items()}  # type: ignore[arg-type]


def _median(values: pl.Series) -> float:
    v = values.drop_nulls().drop_nans() if values.dtype.is_float() else values.drop_nulls()
    return float(v.median()) if v.len() else float("nan")  # type: ignore[arg-type]


class Median(Method):
    """The training median per target: no input at all."""

    name = "median"
    version = "1.0"
    levels: dict[str, dict[str, float]]

    def reads(self, track: str) -> tuple[str, ...]:
        return ()

    def fit(
        self,
        train: pl.DataFrame,
        validation: pl.DataFrame | None = None,
        progress: Progress | None = None,
    ) -> None:
        train, _ = self._fit_frames(train, validation)
        self.medians = {t: _median(train[t].cast(pl.Float64)) for t in self.targets}
        self.levels = {t: _quantiles(train[t].cast(pl.Float64)) for t in self.targets}
        self._last = 0

    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        self._last = inputs.height
        return {t: np.full(inputs.height, self.medians[t], dtype=np.float64) for t in self.targets}

    def quantiles(self) -> dict[str, dict[str, np.ndarray]]:
        if not getattr(self, "levels", None):
            return {}
        return {
            q: {t: np.full(self._last, self.levels[t][q]) for t in self.targets}
            for q in QUANTILE_LEVELS
        }

    def save_state(self, folder: Path) -> dict[str, Any]:
        return {"medians": self.medians, "quantiles": self.levels}

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> Median:
        m = cls(meta["track"], seed=meta.get("seed", 0), targets=meta.get("targets"))
        m.medians = {k: float(v) for k, v in meta["state"]["medians"].items()}
        saved = meta["state"].get("quantiles") or {}  # absent in models saved before 1.1
        m.levels = {t: {q: float(x) for q, x in v.items()} for t, v in saved.items()}
        m._last = 0
        return m


class GroupMedian(Method):
    """Median of the same repo + workflow + job name, then of the repo, then global."""

    name = "group-median"
    version = "1.0"

    def reads(self, track: str) -> tuple[str, ...]:
        return _GROUP_COLUMNS

    def fit(
        self,
        train: pl.DataFrame,
        validation: pl.DataFrame | None = None,
        progress: Progress | None = None,
    ) -> None:
        train, _ = self._fit_frames(train, validation)
        self.global_medians = {t: _median(train[t].cast(pl.Float64)) for t in self.targets}
        self.global_quantiles = {t: _quantiles(train[t].cast(pl.Float64)) for t in self.targets}
        self.tables: list[pl.DataFrame] = []
        self.quantile_tables: list[pl.DataFrame] = []
        for level in GROUP_LEVELS:
            self.tables.append(
                train.group_by(list(level)).agg(
                    [
                        pl.col(t).cast(pl.Float64).drop_nulls().median().alias(t)
                        for t in self.targets
                    ]
                )
            )
            aggs = []
            for t in self.targets:
                col = pl.col(t).cast(pl.Float64).drop_nulls()
                enough = col.len() >= QUANTILE_MIN_ROWS
                aggs += [
                    pl.when(enough).then(col.quantile(f, "linear")).alias(f"{t}:{q}")
                    for q, f in QUANTILE_LEVELS.items()
                ]
            self.quantile_tables.append(train.group_by(list(level)).agg(aggs))
        self._quantiles: dict[str, dict[str, np.ndarray]] = {}

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
        self._quantiles = self._predict_quantiles(inputs) if self.quantile_tables else {}
        return out

    def _predict_quantiles(self, inputs: pl.DataFrame) -> dict[str, dict[str, np.ndarray]]:
        """Every level from the most specific group with enough rows (all levels from one
        group, so they stay ordered), else the global quantiles."""
        frame = inputs.with_row_index("__row")
        for i, (level, table) in enumerate(zip(GROUP_LEVELS, self.quantile_tables, strict=True)):
            renamed = table.rename({c: f"{c}@{i}" for c in table.columns if c not in level})
            frame = frame.join(renamed, on=list(level), how="left", nulls_equal=False)
        frame = frame.sort("__row")
        out: dict[str, dict[str, np.ndarray]] = {q: {} for q in QUANTILE_LEVELS}
        for t in self.targets:
            first = next(iter(QUANTILE_LEVELS))
            use = np.full(frame.height, len(GROUP_LEVELS))  # the global quantiles
            for i in reversed(range(len(GROUP_LEVELS))):
                has = ~np.isnan(as_float(frame[f"{t}:{first}@{i}"]))
                use = np.where(has, i, use)
            for q in QUANTILE_LEVELS:
                values = np.full(frame.height, self.global_quantiles[t][q])
                for i in range(len(GROUP_LEVELS)):
                    values = np.where(use == i, as_float(frame[f"{t}:{q}@{i}"]), values)
                out[q][t] = values
        return out

    def quantiles(self) -> dict[str, dict[str, np.ndarray]]:
        return self._quantiles

    def save_state(self, folder: Path) -> dict[str, Any]:
        for i, table in enumerate(self.tables):
            table.write_parquet(folder / f"groups-{i}.parquet")
        for i, table in enumerate(self.quantile_tables):
            table.write_parquet(folder / f"quantiles-{i}.parquet")
        return {
            "global_medians": self.global_medians,
            "global_quantiles": self.global_quantiles,
            "levels": [list(x) for x in GROUP_LEVELS],
        }

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> GroupMedian:
        m = cls(meta["track"], seed=meta.get("seed", 0), targets=meta.get("targets"))
        state = meta["state"]
        if [tuple(x) for x in state["levels"]] != list(GROUP_LEVELS):
            raise MethodError(f"{folder}: saved with other group levels {state['levels']}")
        m.global_medians = {k: float(v) for k, v in state["global_medians"].items()}
        m.tables = [read_parquet(folder / f"groups-{i}.parquet") for i in range(len(GROUP_LEVELS))]
        saved = state.get("global_quantiles")  # absent in models saved before quantiles
        files = [folder / f"quantiles-{i}.parquet" for i in range(len(GROUP_LEVELS))]
        if saved and all(f.is_file() for f in files):
            m.global_quantiles = {t: {q: float(x) for q, x in v.items()} for t, v in saved.items()}
            m.quantile_tables = [read_parquet(f) for f in files]
        else:
            m.quantile_tables = []
        m._quantiles = {}
        return m


class LastRun(Method):
    """The most recent earlier duration of the same job; group-median where there is none."""

    name = "last-run"
    version = "1.1"  # 1.1: ranges calibrated on the validation split

    def __init__(
        self,
        track: str,
        *,
        seed: int = 0,
        targets: Sequence[str] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(track, seed=seed, targets=targets, **params)
        self.fallback = GroupMedian(track, seed=seed, targets=targets)
        self.calibrations: dict[str, Calibration] = {}
        self.clock: GroupClock | None = None

    def reads(self, track: str) -> tuple[str, ...]:
        return (HISTORY_COLUMN, *_GROUP_COLUMNS, "created_at")

    def fit(
        self,
        train: pl.DataFrame,
        validation: pl.DataFrame | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.fallback.fit(train, validation)
        train, validation = self._fit_frames(train, validation)
        self.clock = GroupClock.from_frame(train)
        self.calibrations = {}
        if validation is None or validation.height == 0:
            return  # no held-out jobs: the ranges stay the group's spread (calibration() says)
        point = self._raw_predict(validation)
        strata = row_strata(validation, self.clock, uses_history=True)
        for t, values in point.items():
            y = as_float(validation[t])
            ok = np.isfinite(y) & (y >= 0)
            if ok.any():
                base = np.log1p(values[ok])
                self.calibrations[t] = fit_calibration(
                    np.log1p(y[ok]),
                    dict.fromkeys(QUANTILE_LEVELS, base),
                    QUANTILE_LEVELS,
                    strata=strata[ok],
                    source="validation",
                )

    def calibration(self) -> dict[str, Any]:
        if self.calibrations:
            return {t: c.to_json() for t, c in self.calibrations.items()}
        why = "no validation split: the ranges are the training spread of the job's group"
        return {t: {"method": "none", "why": why} for t in self.targets}

    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        out = self._raw_predict(inputs)
        if self._quantiles and self.calibrations:
            strata = row_strata(inputs, self.clock, uses_history=True)
            for t, values in out.items():
                if t not in self.calibrations:
                    continue
                base = np.log1p(np.clip(values, 0.0, None))
                logs = self.calibrations[t].adjust(dict.fromkeys(QUANTILE_LEVELS, base), strata)
                ordered = np.sort(np.stack([logs[q] for q in QUANTILE_LEVELS]), axis=0)
                for q, row in zip(QUANTILE_LEVELS, ordered, strict=True):
                    self._quantiles[q][t] = np.clip(np.expm1(row), 0.0, None)
        return out

    def _raw_predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        """The last run (else the group median), with the group's quantiles around it."""
        out = self.fallback.predict(inputs.select(self.fallback.inputs))
        last = as_float(inputs[HISTORY_COLUMN].list.first())
        has = ~np.isnan(last)
        self._quantiles = {q: dict(v) for q, v in self.fallback.quantiles().items()}
        if PRIMARY_TARGET in out:
            out[PRIMARY_TARGET] = np.where(has, last, out[PRIMARY_TARGET])
            if self._quantiles:  # the group's spread, around the last run instead of its P50
                mid = self._quantiles["p50"][PRIMARY_TARGET]
                with np.errstate(divide="ignore", invalid="ignore"):
                    scale = np.where(has & (mid > 0), last / mid, 1.0)
                for values in self._quantiles.values():
                    values[PRIMARY_TARGET] = values[PRIMARY_TARGET] * scale
        return out

    def quantiles(self) -> dict[str, dict[str, np.ndarray]]:
        return getattr(self, "_quantiles", {})

    def save_state(self, folder: Path) -> dict[str, Any]:
        return {
            "fallback": self.fallback.save_state(folder),
            "calibration": {t: c.to_json() for t, c in self.calibrations.items()},
            "group_clock": self.clock.to_json() if self.clock is not None else None,
        }

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> LastRun:
        m = cls(meta["track"], seed=meta.get("seed", 0), targets=meta.get("targets"))
        state = meta["state"]
        m.fallback = GroupMedian.load_state(folder, {**meta, "state": state["fallback"]})
        m.calibrations = {
            t: Calibration.from_json(c, tuple(QUANTILE_LEVELS))
            for t, c in (state.get("calibration") or {}).items()
        }
        clock = state.get("group_clock")
        m.clock = GroupClock.from_json(clock) if clock is not None else None
        return m
