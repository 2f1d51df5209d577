"""`catboost`: CatBoost on the same features as LightGBM and XGBoost, the identity columns as
CatBoost's own categoricals (ordered target statistics, which it computes without leaking a
row's own target), so the three libraries differ in the learner alone.

Oblivious trees of depth 6 by default, RMSE on log1p (RMSLE), early stopping on the validation
split, 2 threads (`tree_threads`), a fixed seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gharuntime.baselines.gbdt import GBDT, tree_params, tree_threads
from gharuntime.baselines.params import ParamSpec, ParamTable

__all__ = ["CatBoost"]


class CatBoost(GBDT):
    """CatBoost (native categoricals, RMSE on log1p)."""

    name = "catboost"
    version = "2.1"
    model_suffix = ".cbm"
    param_specs: ClassVar[ParamTable] = tree_params(
        0.08,
        ParamSpec("depth", "int", 6, low=1, high=16, help="depth of the oblivious trees"),
        ParamSpec("l2_leaf_reg", "float", 3.0, low=0, high=1e6, help="L2 regularisation"),
    )

    def _pool(self, x: np.ndarray, y: np.ndarray | None = None) -> Any:
        """Numeric columns as float32, categorical codes as text (`-` where unseen): CatBoost
        takes categoricals only as integers or strings, never NaN."""
        from catboost import FeaturesData, Pool

        cats = set(self.categorical)
        numeric = [i for i in range(x.shape[1]) if i not in cats]
        data: dict[str, Any] = {"num_feature_data": np.ascontiguousarray(x[:, numeric])}
        if self.categorical:
            codes = x[:, self.categorical]
            text = np.where(np.isnan(codes), "-", np.nan_to_num(codes).astype(np.int64).astype(str))
            data["cat_feature_data"] = text.astype(object)
        return Pool(FeaturesData(**data), label=y)

    def _train(
        self,
        x: np.ndarray,
        y: np.ndarray,
        val: tuple[np.ndarray, np.ndarray] | None,
        quantile: float | None = None,
    ) -> tuple[Any, int]:
        from catboost import CatBoostRegressor

        p = self.params
        loss = f"Quantile:alpha={quantile}" if quantile else "RMSE"
        model = CatBoostRegressor(
            iterations=p["n_estimators"],
            learning_rate=p["learning_rate"],
            depth=p["depth"],
            l2_leaf_reg=p["l2_leaf_reg"],
            loss_function=loss,
            thread_count=tree_threads(),
            random_seed=self.seed,
            verbose=False,
            allow_writing_files=False,  # no catboost_info/ folder in the working directory
        )
        if val is not None:
            model.fit(
                self._pool(x, y),
                eval_set=self._pool(val[0], val[1]),
                early_stopping_rounds=p["early_stopping_rounds"],
                use_best_model=True,
            )
        else:
            model.fit(self._pool(x, y))
        return model, int(model.tree_count_)

    def _predict(self, booster: Any, x: np.ndarray) -> np.ndarray:
        return np.asarray(booster.predict(self._pool(x), thread_count=tree_threads()))

    def _gains(self, booster: Any, n: int) -> np.ndarray:
        # CatBoost lists importances numeric columns first, then the categoricals, as _pool
        # lays them out; map them back to the extractor's column order.
        raw = np.asarray(booster.get_feature_importance(), dtype=np.float64)
        cats = set(self.categorical)
        order = [i for i in range(n) if i not in cats] + list(self.categorical)
        out = np.zeros(n, dtype=np.float64)
        out[order] = raw
        return out

    def _save(self, booster: Any, path: Path) -> None:
        booster.save_model(str(path))

    def _load(self, path: Path) -> Any:
        from catboost import CatBoostRegressor

        model = CatBoostRegressor()
        model.load_model(str(path))
        return model
