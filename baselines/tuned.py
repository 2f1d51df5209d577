"""`lightgbm-tuned` and `xgboost-tuned`: the same models with hyperparameters searched on the
validation split, reported beside the defaults as TabArena reports tuned and default
configurations.

The budget is fixed and stated: `trials` (20 by default) Optuna trials per target, TPE seeded with
the method's seed, the first trial being the library's defaults (so the tuned model is never
worse than the default one on validation). Each trial trains on the training split with early
stopping on the validation split, and is scored by its validation RMSLE (RMSE on log1p); the best
trial's booster is the model, so nothing is refitted. Features are extracted once; only the
learner's hyperparameters are searched. The test split is never read.

Resumable (`gharuntime baseline` keeps a journal, gharuntime.baselines.journal): a rerun after a
kill replays the finished trials (the seeded sampler asked for each again and told its recorded
score, so it asks what an uninterrupted search asks next) and fits only the rest; when a kept
trial is the best, its booster, lost with the killed process, is fitted again with its
parameters and seed, giving the same trees.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gharuntime.baselines.gbdt import GBDT, LightGBM, XGBoost
from gharuntime.baselines.journal import TuningJournal
from gharuntime.baselines.method import MethodError
from gharuntime.baselines.params import ParamSpec, ParamTable
from gharuntime.errors import GharuntimeError
from gharuntime.progress import Progress, say

__all__ = ["SEARCH_SPACES", "TRIALS", "LightGBMTuned", "XGBoostTuned"]

Space = Callable[[Any], dict[str, Any]]


def _lightgbm_space(trial: Any) -> dict[str, Any]:
    return {
        "learning_rate": trial.suggest_float("learning_rate", 0.01, 0.2, log=True),
        "num_leaves": trial.suggest_int("num_leaves", 7, 255, log=True),
        "min_data_in_leaf": trial.suggest_int("min_data_in_leaf", 2, 200, log=True),
        "feature_fraction": trial.suggest_float("feature_fraction", 0.3, 1.0),
        "bagging_fraction": trial.suggest_float("bagging_fraction", 0.5, 1.0),
        "lambda_l2": trial.suggest_float("lambda_l2", 1e-3, 30.0, log=True),
    }


def _xgboost_space(trial: Any) -> dict[str, Any]:
    return {
        "learning_rate": trial.suggest_float("learning_rate", 0.01, 0.2, log=True),
        "max_depth": trial.suggest_int("max_depth", 3, 12),
        "min_child_weight": trial.suggest_float("min_child_weight", 0.5, 50.0, log=True),
        "subsample": trial.suggest_float("subsample", 0.5, 1.0),
        "colsample_bytree": trial.suggest_float("colsample_bytree", 0.3, 1.0),
        "reg_lambda": trial.suggest_float("reg_lambda", 1e-3, 30.0, log=True),
    }


SEARCH_SPACES: dict[str, Space] = {"lightgbm": _lightgbm_space, "xgboost": _xgboost_space}
"""Each library's search space (ranges in the functions above)."""


TRIALS = ParamSpec(
    "trials",
    "int",
    20,
    low=1,
    high=1000,  # each a fit
    help="seeded Optuna trials per target, the first one the defaults",
)
"""The search budget, the one parameter a tuned tree adds to its library's."""


class _Tuned(GBDT):
    """Optuna over the learner's hyperparameters, scored on the validation split."""

    base: ClassVar[str] = ""

    def __init__(
        self,
        track: str,
        *,
        seed: int = 0,
        targets: Sequence[str] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(track, seed=seed, targets=targets, **params)
        self.tuning: dict[str, dict[str, Any]] = {}
        self._progress: Progress | None = None
        self._journal: TuningJournal | None = None

    def config(self) -> dict[str, Any]:
        out = super().config()
        if self.tuning:
            out["tuning"] = self.tuning
        return out

    def resume_in(self, journal: Path, inputs: dict[str, Any], *, fresh: bool = False) -> None:
        """Keep the trials in `journal` (gharuntime.baselines.journal) under `inputs`. The
        budget is left out of them: a larger `trials` continues a search, a smaller one takes
        its first trials, both as an uninterrupted search of that budget would."""
        params = {k: v for k, v in dict(inputs.get("params", {})).items() if k != "trials"}
        self._journal = TuningJournal(journal, {**inputs, "params": params}, fresh=fresh)

    def resumed(self) -> list[str]:
        """What the journal kept, dropped or started, one line each."""
        return list(self._journal.notes) if self._journal is not None else []

    def fit(self, train: Any, validation: Any = None, progress: Progress | None = None) -> None:
        if validation is None or validation.height == 0:
            raise MethodError(f"{self.name}: tuning needs a non-empty validation split")
        self._progress = progress
        if self._journal is not None:
            self._journal.progress = progress
        self.tuning = {}
        super().fit(train, validation, progress)

    def _train(
        self,
        x: np.ndarray,
        y: np.ndarray,
        val: tuple[np.ndarray, np.ndarray] | None,
        quantile: float | None = None,
    ) -> tuple[Any, int]:
        if quantile is not None:  # intervals=objective: a level's model, at the given params
            return super()._train(x, y, val, quantile)
        if val is None:
            raise MethodError(f"{self.name}: tuning needs validation rows with this target")
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)  # library code never prints
        target = self._next_target()
        budget = int(self.params["trials"])
        journal = self._journal
        study = journal.study(target) if journal is not None else None
        kept = journal.kept(study, budget) if journal is not None else []
        if journal is not None and kept:
            journal.say(
                f"{target}: kept {len(kept)} of {budget} trials from {journal.path}; "
                f"{budget - len(kept)} to run"
            )
        try:
            return self._search(x, (y, val), target, kept, study)
        except _Replayed as exc:
            assert journal is not None
            journal.say(f"{target}: {exc}; not kept, a new study starts")
            return self._search(x, (y, val), target, [], journal.restart(target))

    def _search(
        self,
        x: np.ndarray,
        data: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]],
        target: str,
        kept: list[Any],
        study: Any,
    ) -> tuple[Any, int]:
        """`trials` seeded TPE trials, the defaults first; the `kept` ones (earlier trials from
        the journal) are replayed, not fitted: the sampler is asked for each again and told its
        recorded score, so it asks the trials after them as in an uninterrupted search."""
        import optuna

        y, val = data
        space = SEARCH_SPACES[self.base]
        defaults = dict(self.params)
        budget = int(defaults["trials"])
        search = optuna.create_study(
            direction="minimize", sampler=optuna.samplers.TPESampler(seed=self.seed)
        )
        search.enqueue_trial({k: defaults[k] for k in space(_Defaults(defaults))})
        asked: list[dict[str, Any]] = []
        best: tuple[int, float, tuple[Any, int] | None] | None = None  # index, score, model
        for i in range(budget):
            trial = search.ask()
            params = space(trial)
            asked.append(params)
            model: tuple[Any, int] | None = None
            if i < len(kept):
                if params != kept[i].params:
                    raise _Replayed(f"the journal's trial {i + 1} is not the one asked again")
                score = float(kept[i].value)
                how = "kept, "
            else:
                journal = self._journal if study is not None else None
                record = journal.begin(study, params, trial.distributions) if journal else None
                try:
                    model, score = self._fit_trial(x, y, val, params)
                except BaseException:
                    if journal is not None:
                        journal.fail(study, record)
                    raise
                if journal is not None:
                    journal.finish(study, record, score)
                how = ""
            search.tell(trial, score)
            if best is None or score < best[1]:  # the first of equal scores, as before
                best = (i, score, model)
            say(
                self._progress,
                f"trial {i + 1}/{budget}: {how}validation RMSLE {score:.4f} (best {best[1]:.4f})",
            )
        assert best is not None
        index, score, model = best
        if model is None:  # a kept trial is best: its booster, fitted again to the same trees
            say(self._progress, f"refitting trial {index + 1}, the best, kept from the journal")
            model, again = self._fit_trial(x, y, val, asked[index])
            if again != score:  # not the same trees: never a model the journal does not describe
                raise MethodError(
                    f"{self.name}: trial {index + 1} fitted again scores validation RMSLE "
                    f"{again!r}, not the journal's {score!r}; run again with --fresh"
                )
        best_trial = search.trials[index]
        values = [float(t.value) for t in search.trials if t.value is not None]
        self.tuning[target] = {
            "trials": len(values),
            "sampler": f"TPESampler(seed={self.seed})",
            "validation_rmsle_default": round(values[0], 5),
            "validation_rmsle_best": round(score, 5),
            "best_trial": best_trial.number,
            "best_params": {**best_trial.params, "best_iteration": model[1]},
            "validation_rmsle_per_trial": [round(v, 5) for v in values],
        }
        return model

    def _fit_trial(
        self, x: np.ndarray, y: np.ndarray, val: tuple[np.ndarray, np.ndarray], params: Any
    ) -> tuple[tuple[Any, int], float]:
        """One trial's model (booster, best iteration) and its validation RMSLE."""
        defaults = self.params
        self.params = {**defaults, **params}
        try:
            booster, best = super()._train(x, y, val)
        finally:
            self.params = defaults
        pred = np.asarray(self._predict(booster, val[0]), dtype=np.float64)
        return (booster, best), float(np.sqrt(np.mean((pred - val[1]) ** 2)))

    def _next_target(self) -> str:
        """GBDT.fit trains the targets in order, one `_train` call each."""
        done = set(self.tuning)
        return next(t for t in self.targets if t not in done)

    def save_state(self, folder: Path) -> dict[str, Any]:
        return {**super().save_state(folder), "tuning": self.tuning}

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> GBDT:
        config = {k: v for k, v in meta.get("config", {}).items() if k != "tuning"}
        m = super().load_state(folder, {**meta, "config": config})
        assert isinstance(m, _Tuned)
        m.tuning = dict(meta["state"].get("tuning", {}))
        return m


class _Replayed(GharuntimeError):
    """The journal's trials are not those the seeded sampler asks again (never seen: the same
    inputs give the same trials); the study is started over rather than mixed. Caught in this
    module; a GharuntimeError like every library exception, should it ever escape."""


class _Defaults:
    """A stand-in trial that answers each suggestion with the library's default value, so the
    search space function also names the parameters to enqueue."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def suggest_float(self, name: str, *args: Any, **kwargs: Any) -> float:
        return float(self.values[name])

    def suggest_int(self, name: str, *args: Any, **kwargs: Any) -> int:
        return int(self.values[name])


class LightGBMTuned(_Tuned, LightGBM):
    """LightGBM with its hyperparameters searched on validation (`trials` Optuna trials)."""

    name = "lightgbm-tuned"
    version = "2.1"
    base = "lightgbm"
    param_specs: ClassVar[ParamTable] = LightGBM.param_specs.extended(TRIALS)


class XGBoostTuned(_Tuned, XGBoost):
    """XGBoost with its hyperparameters searched on validation (`trials` Optuna trials)."""

    name = "xgboost-tuned"
    version = "2.1"
    base = "xgboost"
    param_specs: ClassVar[ParamTable] = XGBoost.param_specs.extended(TRIALS)
