"""CatBoost on the shared features: it learns, a seed fixes it, and a saved model predicts what
the fitted one did."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gharuntime.baselines.methods import make_method
from gharuntime.baselines.model_io import load_model, save_model
from gharuntime.dataset import load

SMALL = {"n_estimators": 80, "early_stopping_rounds": 10, "learning_rate": 0.2}


@pytest.fixture(scope="module")
def splits(fixture_dataset_master: Path) -> dict[str, object]:
    return {s: load(fixture_dataset_master, "temporal", s) for s in ("train", "validation", "test")}


def _rmsle(pred: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.log1p(pred) - np.log1p(truth)) ** 2)))


def test_catboost_learns_is_seeded_and_saves(splits: dict, tmp_path: Path) -> None:
    test = splits["test"]
    median = make_method("median", "config")
    median.fit(splits["train"])
    runs = []
    for _ in range(2):
        m = make_method("catboost", "config", seed=1, params=SMALL)
        m.fit(splits["train"], splits["validation"])
        runs.append(m.predict_rows(test)["duration_s"])
    np.testing.assert_array_equal(runs[0], runs[1])
    truth = test["duration_s"].to_numpy()
    assert _rmsle(runs[0], truth) < 0.6 * _rmsle(median.predict_rows(test)["duration_s"], truth)
    save_model(m, tmp_path / "model", {"dataset": {"id": "fixture"}})
    loaded, _ = load_model(tmp_path / "model")
    np.testing.assert_allclose(loaded.predict_rows(test)["duration_s"], runs[0], rtol=1e-6)
    gains = m.importances()["duration_s"]
    assert len(gains) == len(m.feature_names()) and gains[0][1] > 0  # type: ignore[attr-defined]
