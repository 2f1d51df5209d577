"""LightGBM and XGBoost on the shared configuration features (`gharuntime.baselines.features`)
and the job's identity (`gharuntime.baselines.identity`).

One model per target, trained on log1p of the target (squared error there is RMSLE), with
fixed seeds, 2 threads (`tree_threads`), and early stopping on the validation split. Both
libraries see the very same dense float32 matrix (NaN = unknown) with the same columns marked
categorical, so their difference is the learner alone. Version 2.0 reads the job's identity
(repository, workflow, job, matrix values, runner labels, name words) and out-of-fold group
target encodings, both hidden on the share of training rows that the validation split says the
test will not know.

Quantiles (`intervals`): "conformal" (the default) adds to the point prediction, on the log1p
scale, the split-conformal quantiles of the validation split's residuals
(`gharuntime.baselines.intervals`), per recency stratum of the row's job group
(`calibrate_by=recency`, the default; `none` pools every row); the training residuals, pooled,
when there is no validation split, which gives narrower ranges that are not calibrated on
held-out jobs. "objective" trains one more model per level with the library's quantile loss.
Measured on gharuntime-sim-small (`python benchmarks/intervals.py`): conformal is better
calibrated and costs no extra training; on gharuntime-real-apache temporal/config the recency
strata take LightGBM's P10-P90 coverage from 36% to 80% (see docs/researcher/baselines.md).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import polars as pl

from gharuntime.baselines.features import (
    ENCODING_INPUTS,
    FeatureSpec,
    TargetEncoder,
    extract,
    feature_inputs,
    fit_spec,
)
from gharuntime.baselines.identity import (
    IDENTITY_INPUTS,
    QUALIFIED,
    IdentitySpec,
    fit_identity,
    identity_masks,
    identity_matrix,
    unseen_shares,
)
from gharuntime.baselines.intervals import BY, Calibration, fit_calibration, row_strata
from gharuntime.baselines.method import QUANTILE_LEVELS, Method, MethodError, as_float
from gharuntime.baselines.params import ParamSpec, ParamTable
from gharuntime.baselines.queue_load import JobEvents
from gharuntime.contract import TRACKS
from gharuntime.paths import contained
from gharuntime.progress import Progress, say
from gharuntime.recency import GroupClock
from gharuntime.splits import GROUP

__all__ = ["GBDT", "THREADS", "LightGBM", "XGBoost", "tree_params", "tree_threads"]

THREADS = 2
QUEUE_TARGET = "queue_s"
INTERVALS = ("conformal", "objective")


def tree_threads() -> int:
    """The trees' threads: OMP_NUM_THREADS where it names a positive count (its first level, the
    convention every OpenMP library reads; at most the CPUs this process may use), else THREADS.
    Speed only: the three libraries fit the same trees for any count (a test checks; so did 1
    against 2 threads on the medium world's 100k training rows). A busy machine wants 1:
    OpenMP's threads spin while they wait for each other, and a 2-thread LightGBM fit beside one
    busy core ran 2-3x slower than a 1-thread one here (CI runs the suite so, beside command (a))."""
    raw = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if not raw.isdigit() or int(raw) < 1:
        return THREADS
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(int(raw), cpus or 1)


def _log_target(values: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    y = as_float(values)
    ok = np.isfinite(y) & (y >= 0)
    return np.log1p(np.where(ok, y, 0.0)), ok


def tree_params(learning_rate: float, *own: ParamSpec) -> ParamTable:
    """A tree method's parameters: those every tree method shares (LightGBM, XGBoost,
    CatBoost), with its learning rate, and its library's own (`own`) after the learning rate,
    in the order `config()` records them."""
    return ParamTable(
        ParamSpec(
            "n_estimators",
            "int",
            2000,
            low=1,
            high=100_000,
            help="boosting rounds at most (early stopping on the validation split may stop sooner)",
        ),
        ParamSpec(
            "early_stopping_rounds",
            "int",
            100,
            low=1,
            high=100_000,
            help="stop after this many rounds without a better validation score",
        ),
        ParamSpec(
            "learning_rate", "float", learning_rate, low=0, high=1, low_open=True, help="shrinkage"
        ),
        *own,
        ParamSpec(
            "identity",
            "bool",
            True,
            help="read the job's identity (repository, workflow, job, matrix values, runner "
            "labels, name words); false: the configuration features alone",
        ),
        ParamSpec(
            "target_encoding",
            "bool",
            True,
            help="add out-of-fold (repo), (repo, workflow), (repo, workflow, job) target encodings",
        ),
        ParamSpec(
            "masking",
            "bool",
            True,
            help="hide the identity on the share of training rows the validation split says "
            "the test will not know",
        ),
        ParamSpec(
            "new_job_share",
            "float",
            0.0,
            low=0,
            high=0.5,
            help="with masking: at least this share of training rows learn as a job training has "
            "not seen (0: the validation split's own share); `learn` uses "
            "0.05, so a renamed or new job is predicted from its history and configuration",
            recorded_at_default=False,
        ),
        ParamSpec(
            "intervals",
            "choice",
            "conformal",
            choices=INTERVALS,
            help="P10-P90: conformal (validation residual quantiles) or objective (one "
            "quantile-loss model per level)",
        ),
        ParamSpec(
            "calibrate_by",
            "choice",
            "recency",
            choices=BY,
            help="conformal ranges: offsets per recency stratum of the row's job group "
            "(recency) or one pooled offset (none)",
        ),
    )


class GBDT(Method):
    """Gradient-boosted trees on the shared features; subclasses pick the library."""

    model_suffix: ClassVar[str] = ""

    def __init__(
        self,
        track: str,
        *,
        seed: int = 0,
        targets: Sequence[str] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(track, seed=seed, targets=targets, **params)
        self.spec: FeatureSpec | None = None
        self.events: JobEvents | None = None
        self.identity: IdentitySpec | None = None
        self.categorical: list[int] = []
        self.shares: dict[str, float] = {}
        self.boosters: dict[str, Any] = {}
        self.calibrations: dict[str, Calibration] = {}  # conformal: target -> its offsets
        self.clock: GroupClock | None = None  # each job group's latest training row (strata)
        self.level_boosters: dict[str, dict[str, Any]] = {}  # objective: target -> level -> model
        self._quantiles: dict[str, dict[str, np.ndarray]] = {}
        self.encoders: dict[str, TargetEncoder] = {}
        self.best_iterations: dict[str, int] = {}

    @property
    def queue_features(self) -> bool:
        """Whether the model reads the queue-time features: where it predicts queue_s."""
        return QUEUE_TARGET in self.targets

    @property
    def reads_queue_load(self) -> bool:
        return self.spec.queue if self.spec is not None else self.queue_features

    def observe(self, events: JobEvents | None) -> None:
        self.events = events

    def reads(self, track: str) -> tuple[str, ...]:
        base = feature_inputs(TRACKS[track].uses_history, self.queue_features)
        extra = [*(IDENTITY_INPUTS if self.params["identity"] else ())]
        if self.params["target_encoding"]:
            extra.extend(ENCODING_INPUTS)
        if self._by_recency():
            extra.extend([*GROUP, "created_at"])
        return (*base, *dict.fromkeys(c for c in extra if c not in base))

    def _by_recency(self) -> bool:
        """Whether conformal ranges are calibrated per recency stratum (which reads the job
        group and its creation time)."""
        return bool(
            self.params["intervals"] == "conformal" and self.params["calibrate_by"] == "recency"
        )

    def feature_names(self) -> list[str]:
        assert self.spec is not None
        names = [self.spec.readable(n) for n in self.spec.names()]
        if self.identity is not None:
            names += [self.identity.readable(n) for n in self.identity.names()]
        extra = TargetEncoder.names() if self.params["target_encoding"] else []
        return names + extra

    def _with_encoding(self, target: str, x: np.ndarray, frame: pl.DataFrame) -> np.ndarray:
        enc = self.encoders.get(target)
        if enc is None:
            return x
        return np.hstack([x, enc.transform(frame.select(ENCODING_INPUTS))])

    def _features(self, frame: pl.DataFrame, progress: Progress | None = None) -> np.ndarray:
        assert self.spec is not None
        columns = feature_inputs(self.spec.uses_history, self.spec.queue)
        feats = extract(frame.select(columns), self.spec, progress=progress, events=self.events)
        x = np.asarray(feats.matrix.toarray(), dtype=np.float32)
        if self.identity is None:
            return x
        return np.hstack([x, identity_matrix(frame.select(IDENTITY_INPUTS), self.identity)])

    def _mask_identity(self, x: np.ndarray, masks: dict[str, np.ndarray]) -> None:
        """Hide the repository-qualified identity columns of the rows that play new ones."""
        assert self.spec is not None and self.identity is not None
        start = len(self.spec.names())
        for j, name in enumerate(self.identity.categorical_names()):
            level = QUALIFIED.get(name)
            if level is not None:
                x[masks[level], start + j] = np.nan

    @staticmethod
    def _mask_encoding(enc: np.ndarray, masks: dict[str, np.ndarray]) -> None:
        """Encodings of the rows that play a new job (job level) or repository (the others)."""
        for i, level in enumerate(("job", "repo", "repo")):  # ENCODING_LEVELS' order
            enc[masks[level], 2 * i] = np.nan
            enc[masks[level], 2 * i + 1] = 0.0

    def fit(
        self,
        train: pl.DataFrame,
        validation: pl.DataFrame | None = None,
        progress: Progress | None = None,
    ) -> None:
        train, validation = self._fit_frames(train, validation)
        uses_history = TRACKS[self.track].uses_history
        queue = self.queue_features
        self.spec = fit_spec(train.select(feature_inputs(uses_history, queue)), uses_history, queue)
        if self.params["identity"]:
            self.identity = fit_identity(train.select(IDENTITY_INPUTS))
            n_base = len(self.spec.names())
            self.categorical = [n_base + j for j in range(len(self.identity.categorical_names()))]
        x_train = self._features(train, progress)
        has_val = validation is not None and validation.height > 0
        x_val = self._features(validation, progress) if has_val and validation is not None else None
        uses_identity = self.params["identity"] or self.params["target_encoding"]
        if self.params["masking"] and uses_identity:
            self.shares = unseen_shares(train, validation)
            floor = float(self.params["new_job_share"])
            self.shares["job"] = max(self.shares["job"], floor)
        masks = identity_masks(train.height, self.shares or {"repo": 0.0, "job": 0.0}, self.seed)
        strata = None
        if self._by_recency():
            self.clock = GroupClock.from_frame(train)
            if has_val and validation is not None:
                strata = row_strata(validation, self.clock, uses_history)
        if self.identity is not None:
            self._mask_identity(x_train, masks)
        for target in self.targets:
            y, ok = _log_target(train[target])
            if not ok.any():
                raise MethodError(f"{self.name}: no training row has a value for {target}")
            x = x_train[ok]
            if self.params["target_encoding"]:
                enc = TargetEncoder(seed=self.seed)
                encoded = enc.fit_transform(train.filter(pl.Series(ok)), y[ok])
                self._mask_encoding(encoded, {k: v[ok] for k, v in masks.items()})
                x = np.hstack([x, encoded])
                self.encoders[target] = enc
            val = None
            val_strata = None
            if x_val is not None and validation is not None:
                yv, okv = _log_target(validation[target])
                if okv.any():
                    xv = self._with_encoding(target, x_val, validation)
                    val = (xv[okv], yv[okv])
                    val_strata = strata[okv] if strata is not None else None
            say(progress, f"training {self.name} for {target} on {int(ok.sum())} rows")
            booster, best = self._train(x, y[ok], val)
            self.boosters[target] = booster
            self.best_iterations[target] = best
            self._fit_intervals(target, booster, x, y[ok], val, val_strata, progress)

    def _fit_intervals(
        self,
        target: str,
        booster: Any,
        x: np.ndarray,
        y: np.ndarray,
        val: tuple[np.ndarray, np.ndarray] | None,
        strata: np.ndarray | None,
        progress: Progress | None,
    ) -> None:
        """The target's quantiles: split-conformal offsets of the residuals (per recency
        stratum of the validation rows, or pooled over the training rows without a validation
        split) or one model per level."""
        if self.params["intervals"] == "objective":
            say(progress, f"training {len(QUANTILE_LEVELS)} quantile models for {target}")
            self.level_boosters[target] = {
                q: self._train(x, y, val, quantile=f)[0] for q, f in QUANTILE_LEVELS.items()
            }
            return
        xs, ys = val if val is not None else (x, y)
        base = np.asarray(self._predict(booster, xs), dtype=np.float64)
        self.calibrations[target] = fit_calibration(
            ys,
            dict.fromkeys(QUANTILE_LEVELS, base),
            QUANTILE_LEVELS,
            strata=strata if val is not None else None,
            source="validation" if val is not None else "training",
        )

    def calibration(self) -> dict[str, Any]:
        return {t: c.to_json() for t, c in self.calibrations.items()}

    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        if self.spec is None:
            raise MethodError(f"{self.name}: predict before fit")
        x = self._features(inputs)
        out = {}
        levels: dict[str, dict[str, np.ndarray]] = {q: {} for q in QUANTILE_LEVELS}
        strata = (
            row_strata(inputs, self.clock, TRACKS[self.track].uses_history)
            if any(c.by == "recency" for c in self.calibrations.values())
            else None
        )
        for target in self.targets:
            xt = self._with_encoding(target, x, inputs)
            raw = np.asarray(self._predict(self.boosters[target], xt), dtype=np.float64)
            out[target] = np.clip(np.expm1(raw), 0.0, None)
            if target in self.level_boosters:
                logs = [self._predict(self.level_boosters[target][q], xt) for q in QUANTILE_LEVELS]
            elif target in self.calibrations:
                bases = dict.fromkeys(QUANTILE_LEVELS, raw)
                adjusted = self.calibrations[target].adjust(bases, strata)
                logs = [adjusted[q] for q in QUANTILE_LEVELS]
            else:  # a model saved before quantiles
                levels = {}
                continue
            ordered = np.sort(np.asarray(logs, dtype=np.float64), axis=0)  # never crossing
            for q, row in zip(QUANTILE_LEVELS, ordered, strict=True):
                if levels:
                    levels[q][target] = np.clip(np.expm1(row), 0.0, None)
        self._quantiles = levels
        return out

    def quantiles(self) -> dict[str, dict[str, np.ndarray]]:
        return self._quantiles

    def importances(self) -> dict[str, list[tuple[str, float]]]:
        names = self.feature_names()
        out = {}
        for target, booster in self.boosters.items():
            gains = self._gains(booster, len(names))
            pairs = [(n, float(g)) for n, g in zip(names, gains, strict=True)]
            out[target] = sorted(pairs, key=lambda p: (-p[1], p[0]))
        return out

    def save_state(self, folder: Path) -> dict[str, Any]:
        assert self.spec is not None
        files = {}
        for target, booster in self.boosters.items():
            name = f"{target}{self.model_suffix}"
            self._save(booster, folder / name)
            files[target] = name
        level_files: dict[str, dict[str, str]] = {}
        for target, by_level in self.level_boosters.items():
            level_files[target] = {}
            for q, booster in by_level.items():
                name = f"{target}.{q}{self.model_suffix}"
                self._save(booster, folder / name)
                level_files[target][q] = name
        return {
            "calibration": self.calibration(),
            "group_clock": self.clock.to_json() if self.clock is not None else None,
            "quantile_model_files": level_files,
            "features": self.spec.to_json(),
            "identity": self.identity.to_json() if self.identity is not None else None,
            "categorical": self.categorical,
            "unseen_shares": self.shares,
            "feature_names": self.feature_names(),
            "encodings": {t: enc.save(folder, t) for t, enc in self.encoders.items()},
            "model_files": files,
            "best_iterations": self.best_iterations,
        }

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> GBDT:
        # a model saved before identity features (1.0) names neither option
        config = {"identity": False, "masking": False, **meta.get("config", {})}
        m = cls(meta["track"], seed=meta.get("seed", 0), targets=meta.get("targets"), **config)
        state = meta["state"]
        m.spec = FeatureSpec.from_json(state["features"])
        ident = state.get("identity")
        m.identity = IdentitySpec.from_json(ident) if ident else None
        m.categorical = [int(i) for i in state.get("categorical", [])]
        m.shares = dict(state.get("unseen_shares", {}))
        m.encoders = {t: TargetEncoder.load(folder, f) for t, f in state["encodings"].items()}
        if m.feature_names() != state["feature_names"]:
            raise MethodError(f"{folder}: feature names do not match this version's extractor")
        for target, name in state["model_files"].items():
            m.boosters[target] = m._load(_model_file(folder, name, target))
        m.calibrations = {
            t: Calibration.from_json(c, tuple(QUANTILE_LEVELS))
            for t, c in (state.get("calibration") or {}).items()
        }
        clock = state.get("group_clock")
        m.clock = GroupClock.from_json(clock) if clock is not None else None
        if m.clock is None and any(c.by == "recency" for c in m.calibrations.values()):
            raise MethodError(f"{folder}: calibrated by recency but no group_clock saved")
        m.level_boosters = {
            t: {q: m._load(_model_file(folder, name, f"{t} {q}")) for q, name in by.items()}
            for t, by in (state.get("quantile_model_files") or {}).items()
        }
        m.best_iterations = {k: int(v) for k, v in state["best_iterations"].items()}
        return m

    # library specifics
    def _train(
        self,
        x: np.ndarray,
        y: np.ndarray,
        val: tuple[np.ndarray, np.ndarray] | None,
        quantile: float | None = None,
    ) -> tuple[Any, int]:
        """A booster on (x, y) with early stopping on `val`; the quantile loss of level
        `quantile` when given, else squared error."""
        raise NotImplementedError

    def _predict(self, booster: Any, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _gains(self, booster: Any, n: int) -> np.ndarray:
        raise NotImplementedError

    def _save(self, booster: Any, path: Path) -> None:
        raise NotImplementedError

    def _load(self, path: Path) -> Any:
        raise NotImplementedError


def _model_file(folder: Path, name: Any, what: str) -> Path:
    path = contained(folder, name) if isinstance(name, str) else None
    if path is None or not path.is_file():
        raise MethodError(
            f"{folder}: model file {ascii(str(name))[:100]} of {what!r} is not a file "
            "inside the model folder"
        )
    return path


class LightGBM(GBDT):
    """LightGBM (native API, L2 on log1p, deterministic, row-wise histograms)."""

    name = "lightgbm"
    version = "2.1"
    model_suffix = ".lgb.txt"
    param_specs: ClassVar[ParamTable] = tree_params(
        0.05,
        # LightGBM's own range
        ParamSpec("num_leaves", "int", 63, low=2, high=131_072, help="leaves per tree at most"),
        ParamSpec(
            "min_data_in_leaf", "int", 20, low=0, high=1_000_000, help="rows per leaf at least"
        ),
        ParamSpec(
            "feature_fraction",
            "float",
            0.8,
            low=0,
            high=1,
            low_open=True,
            help="share of the columns each tree sees",
        ),
        ParamSpec(
            "bagging_fraction",
            "float",
            0.8,
            low=0,
            high=1,
            low_open=True,
            help="share of the rows each tree sees",
        ),
        ParamSpec("lambda_l2", "float", 1.0, low=0, high=1e6, help="L2 regularisation"),
    )

    def _train(
        self,
        x: np.ndarray,
        y: np.ndarray,
        val: tuple[np.ndarray, np.ndarray] | None,
        quantile: float | None = None,
    ) -> tuple[Any, int]:
        p = self.params
        objective = {"objective": "quantile", "alpha": quantile} if quantile else {}
        params = {
            "objective": "regression",
            "learning_rate": p["learning_rate"],
            "num_leaves": p["num_leaves"],
            "min_data_in_leaf": p["min_data_in_leaf"],
            "feature_fraction": p["feature_fraction"],
            "bagging_fraction": p["bagging_fraction"],
            "bagging_freq": 1,
            "lambda_l2": p["lambda_l2"],
            "num_threads": tree_threads(),
            "seed": self.seed,
            "deterministic": True,
            "force_row_wise": True,
            "verbose": -1,
            **objective,
        }
        import lightgbm as lgb  # on first use: importing it costs half a second

        names = [f"f{i}" for i in range(x.shape[1])]
        dtrain = lgb.Dataset(
            x,
            label=y,
            feature_name=names,
            categorical_feature=self.categorical or "auto",
            free_raw_data=True,
        )
        callbacks: list[Callable[..., Any]] = []
        valid_sets: list[Any] = []
        if val is not None:
            valid_sets = [lgb.Dataset(val[0], label=val[1], reference=dtrain)]
            callbacks.append(lgb.early_stopping(p["early_stopping_rounds"], verbose=False))
        booster = lgb.train(
            params,
            dtrain,
            num_boost_round=p["n_estimators"],
            valid_sets=valid_sets,
            callbacks=callbacks,
        )
        best = booster.best_iteration if val is not None and booster.best_iteration > 0 else None
        best = best or booster.current_iteration()
        return booster, int(best)

    def _predict(self, booster: Any, x: np.ndarray) -> np.ndarray:
        best = getattr(booster, "best_iteration", 0) or None
        return np.asarray(booster.predict(x, num_iteration=best, num_threads=tree_threads()))

    def _gains(self, booster: Any, n: int) -> np.ndarray:
        return np.asarray(booster.feature_importance(importance_type="gain"), dtype=np.float64)

    def _save(self, booster: Any, path: Path) -> None:
        best = getattr(booster, "best_iteration", 0) or -1
        booster.save_model(str(path), num_iteration=best)

    def _load(self, path: Path) -> Any:
        import lightgbm as lgb

        return lgb.Booster(model_file=str(path))


class XGBoost(GBDT):
    """XGBoost (hist trees, squared error on log1p)."""

    name = "xgboost"
    version = "2.1"
    model_suffix = ".xgb.json"
    param_specs: ClassVar[ParamTable] = tree_params(
        0.05,
        # 2^32 leaves is past any machine here
        ParamSpec("max_depth", "int", 8, low=1, high=32, help="depth of a tree at most"),
        ParamSpec(
            "min_child_weight",
            "float",
            5.0,
            low=0,
            high=1e6,
            help="hessian weight a leaf needs at least",
        ),
        ParamSpec(
            "subsample",
            "float",
            0.8,
            low=0,
            high=1,
            low_open=True,
            help="share of the rows each tree sees",
        ),
        ParamSpec(
            "colsample_bytree",
            "float",
            0.8,
            low=0,
            high=1,
            low_open=True,
            help="share of the columns each tree sees",
        ),
        ParamSpec("reg_lambda", "float", 1.0, low=0, high=1e6, help="L2 regularisation"),
    )

    def _train(
        self,
        x: np.ndarray,
        y: np.ndarray,
        val: tuple[np.ndarray, np.ndarray] | None,
        quantile: float | None = None,
    ) -> tuple[Any, int]:
        p = self.params
        objective = (
            {"objective": "reg:quantileerror", "quantile_alpha": quantile} if quantile else {}
        )
        params = {
            "objective": "reg:squarederror",
            "eta": p["learning_rate"],
            "max_depth": p["max_depth"],
            "min_child_weight": p["min_child_weight"],
            "subsample": p["subsample"],
            "colsample_bytree": p["colsample_bytree"],
            "lambda": p["reg_lambda"],
            "tree_method": "hist",
            "nthread": tree_threads(),
            "seed": self.seed,
            **objective,
        }
        import xgboost as xgb  # on first use, like lightgbm

        dtrain = self._dmatrix(x, y)
        kwargs: dict[str, Any] = {}
        if val is not None:
            dval = self._dmatrix(val[0], val[1])
            kwargs = {
                "evals": [(dval, "validation")],
                "early_stopping_rounds": p["early_stopping_rounds"],
            }
        booster = xgb.train(
            params, dtrain, num_boost_round=p["n_estimators"], verbose_eval=False, **kwargs
        )
        if val is not None:
            best = int(booster.best_iteration) + 1
            booster = booster[:best]  # keep only the trees early stopping chose
        else:
            best = int(booster.num_boosted_rounds())
        return booster, best

    def _dmatrix(self, x: np.ndarray, y: np.ndarray | None = None) -> Any:
        """A DMatrix with the identity categoricals marked `c` (XGBoost's native categoricals)."""
        import xgboost as xgb

        if not self.categorical:
            return xgb.DMatrix(x, label=y, missing=math.nan, nthread=tree_threads())
        types = ["q"] * x.shape[1]
        for i in self.categorical:
            types[i] = "c"
        return xgb.DMatrix(
            x,
            label=y,
            missing=math.nan,
            nthread=tree_threads(),
            feature_types=types,
            enable_categorical=True,
        )

    def _predict(self, booster: Any, x: np.ndarray) -> np.ndarray:
        return np.asarray(booster.predict(self._dmatrix(x)))

    def _gains(self, booster: Any, n: int) -> np.ndarray:
        scores = booster.get_score(importance_type="total_gain")
        return np.array([float(scores.get(f"f{i}", 0.0)) for i in range(n)])

    def _save(self, booster: Any, path: Path) -> None:
        booster.save_model(str(path))

    def _load(self, path: Path) -> Any:
        import xgboost as xgb

        booster = xgb.Booster(model_file=str(path))
        booster.set_param({"nthread": tree_threads()})
        return booster
