"""The tuned tree baselines: a fixed number of seeded Optuna trials on the validation split, the
defaults first, the best trial's model kept and its validation score what it says."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gharuntime.baselines.method import MethodError
from gharuntime.baselines.methods import make_method
from gharuntime.baselines.model_io import load_model, save_model
from gharuntime.dataset import load

FAST = {"n_estimators": 40, "early_stopping_rounds": 5, "learning_rate": 0.2, "trials": 3}


@pytest.fixture(scope="module")
def splits(fixture_dataset_master: Path) -> dict[str, object]:
    return {s: load(fixture_dataset_master, "temporal", s) for s in ("train", "validation", "test")}


@pytest.mark.parametrize("name", ["lightgbm-tuned", "xgboost-tuned"])
def test_tuning_keeps_the_best_of_a_fixed_budget(name: str, splits: dict, tmp_path: Path) -> None:
    m = make_method(name, "config", seed=2, params=FAST)
    m.fit(splits["train"], splits["validation"])
    report = m.tuning["duration_s"]  # type: ignore[attr-defined]
    per_trial = report["validation_rmsle_per_trial"]
    assert report["trials"] == len(per_trial) == 3
    # trial 0 is the library's defaults, so tuning never ends worse than them on validation
    assert report["validation_rmsle_default"] == per_trial[0]
    assert report["validation_rmsle_best"] == min(per_trial)
    assert per_trial[report["best_trial"]] == min(per_trial)
    # the kept model is the best trial's: its validation RMSLE, computed here, is the reported one
    val = splits["validation"]
    pred = m.predict_rows(val)["duration_s"]
    rmsle = float(np.sqrt(np.mean((np.log1p(pred) - np.log1p(val["duration_s"].to_numpy())) ** 2)))
    assert rmsle == pytest.approx(report["validation_rmsle_best"], abs=2e-3)
    assert "tuning" in m.config()
    # a saved tuned model predicts what the fitted one did, and remembers its search
    save_model(m, tmp_path / "model", {"dataset": {"id": "fixture"}})
    loaded, _ = load_model(tmp_path / "model")
    np.testing.assert_allclose(
        loaded.predict_rows(splits["test"])["duration_s"],
        m.predict_rows(splits["test"])["duration_s"],
        rtol=1e-6,
    )
    assert loaded.tuning == m.tuning  # type: ignore[attr-defined]


def test_the_same_seed_searches_the_same_trials(splits: dict) -> None:
    runs = []
    for _ in range(2):
        m = make_method("lightgbm-tuned", "config", seed=5, params=FAST)
        m.fit(splits["train"], splits["validation"])
        runs.append(m.tuning["duration_s"])  # type: ignore[attr-defined]
    assert runs[0] == runs[1]


def test_tuning_without_validation_is_refused(splits: dict) -> None:
    m = make_method("lightgbm-tuned", "config", params=FAST)
    with pytest.raises(MethodError, match="validation"):
        m.fit(splits["train"], None)


def test_a_budget_that_is_not_a_positive_integer_is_refused() -> None:
    with pytest.raises(MethodError, match="trials"):
        make_method("xgboost-tuned", "config", params={"trials": 0})
