"""LightGBM and XGBoost on the fixture dataset: they learn, they are reproducible, and a saved
model predicts what the fitted one did; OMP_NUM_THREADS sets their threads and only their speed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gharuntime.baselines.gbdt import THREADS, tree_threads
from gharuntime.baselines.methods import make_method
from gharuntime.baselines.model_io import load_model, save_model
from gharuntime.dataset import load, write_dataset
from gharuntime.fixture import fixture_jobs

SMALL = {"n_estimators": 60, "early_stopping_rounds": 10, "learning_rate": 0.2}


def _rmsle(pred: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.log1p(pred) - np.log1p(truth)) ** 2)))


@pytest.fixture(scope="module")
def splits(fixture_dataset_master: Path) -> dict[str, object]:
    return {s: load(fixture_dataset_master, "temporal", s) for s in ("train", "validation", "test")}


@pytest.mark.parametrize("name", ["lightgbm", "xgboost"])
def test_gbdt_beats_the_global_median_on_the_fixture(name: str, splits: dict) -> None:
    test = splits["test"]
    median = make_method("median", "config")
    median.fit(splits["train"])
    model = make_method(name, "config", params=SMALL)
    model.fit(splits["train"], splits["validation"])
    truth = test["duration_s"].to_numpy()
    gbdt_err = _rmsle(model.predict_rows(test)["duration_s"], truth)
    median_err = _rmsle(median.predict_rows(test)["duration_s"], truth)
    # The fixture's durations follow repository size and OS, which the features carry.
    assert gbdt_err < 0.6 * median_err, (gbdt_err, median_err)


@pytest.mark.parametrize("name", ["lightgbm", "xgboost"])
def test_same_seed_gives_identical_predictions(name: str, splits: dict) -> None:
    runs = []
    for _ in range(2):
        m = make_method(name, "history", seed=3, params=SMALL)
        m.fit(splits["train"], splits["validation"])
        runs.append(m.predict_rows(splits["test"])["duration_s"])
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.parametrize("name", ["lightgbm", "xgboost"])
def test_saved_model_predicts_what_the_fitted_one_did(
    name: str, splits: dict, tmp_path: Path
) -> None:
    m = make_method(name, "multi", params={**SMALL, "target_encoding": True})
    m.fit(splits["train"], splits["validation"])
    save_model(m, tmp_path / "model", {"dataset": {"id": "fixture"}})
    loaded, meta = load_model(tmp_path / "model")
    assert meta["targets"] == ["duration_s", "queue_s", "log_bytes"]
    before, after = m.predict_rows(splits["test"]), loaded.predict_rows(splits["test"])
    for target in before:
        np.testing.assert_allclose(before[target], after[target], rtol=1e-6)


def test_early_stopping_on_validation_keeps_fewer_trees(splits: dict) -> None:
    m = make_method(
        "lightgbm",
        "config",
        params={"n_estimators": 400, "early_stopping_rounds": 5, "learning_rate": 0.3},
    )
    m.fit(splits["train"], splits["validation"])
    assert 0 < m.best_iterations["duration_s"] < 400  # type: ignore[attr-defined]


def test_importances_rank_the_features_that_drive_the_fixture(splits: dict, tmp_path: Path) -> None:
    m = make_method("lightgbm", "config", params=SMALL)
    m.fit(splits["train"], splits["validation"])
    top = [f for f, _ in m.importances()["duration_s"][:4]]
    assert any(f.startswith(("os=", "label#", "matrix#")) for f in top), top
    assert "repo_size_log" in top, top


@pytest.mark.parametrize("name", ["lightgbm", "xgboost"])
def test_conformal_quantiles_cover_the_validation_split_as_nominal(
    name: str, splits: dict, tmp_path: Path
) -> None:
    """Split-conformal: the validation residuals' quantiles, added on the log1p scale, put
    the share of validation jobs at or below each level at that level (up to ties)."""
    model = make_method(name, "config", params=SMALL)
    model.fit(splits["train"], splits["validation"])
    val = splits["validation"]
    model.predict_rows(val)
    q = model.quantiles()
    assert list(q) == ["p10", "p50", "p90", "p99"]
    y = val["duration_s"].to_numpy()
    n = y.shape[0]
    for level, tau in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9)):
        share = float(np.mean(y <= q[level]["duration_s"] * (1 + 1e-6) + 1e-6))
        assert abs(share - tau) <= 2.0 / n + 0.02, (level, share)
    assert np.all(np.diff(np.stack([q[k]["duration_s"] for k in q]), axis=0) >= 0)
    save_model(model, tmp_path / "m", {})
    loaded, _ = load_model(tmp_path / "m")
    loaded.predict_rows(val)
    for level in q:
        np.testing.assert_allclose(
            loaded.quantiles()[level]["duration_s"], q[level]["duration_s"], rtol=1e-5
        )


def test_quantile_objective_models_are_ordered_and_saved(splits: dict, tmp_path: Path) -> None:
    model = make_method("lightgbm", "config", params={**SMALL, "intervals": "objective"})
    model.fit(splits["train"], splits["validation"])
    test = splits["test"]
    model.predict_rows(test)
    q = model.quantiles()
    stacked = np.stack([q[k]["duration_s"] for k in ("p10", "p50", "p90", "p99")])
    assert np.all(np.diff(stacked, axis=0) >= 0) and np.ptp(stacked[2] - stacked[0]) > 0
    save_model(model, tmp_path / "m", {})
    loaded, _ = load_model(tmp_path / "m")
    loaded.predict_rows(test)
    np.testing.assert_allclose(
        loaded.quantiles()["p90"]["duration_s"], q["p90"]["duration_s"], rtol=1e-5
    )


def test_an_unknown_interval_method_is_refused() -> None:
    from gharuntime.baselines.method import MethodError

    with pytest.raises(MethodError, match="intervals must be one of conformal, objective"):
        make_method("lightgbm", "config", params={"intervals": "bootstrap"})


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", THREADS),
        ("1", 1),
        (" 1 ", 1),
        ("1,4", 1),
        ("0", THREADS),
        ("-3", THREADS),
        ("two", THREADS),
    ],
)
def test_omp_num_threads_sets_the_trees_threads(
    value: str, expected: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert tree_threads() == expected


def test_more_threads_than_cpus_are_not_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "100000")
    assert tree_threads() == len(os.sched_getaffinity(0))


def _threads_used(name: str, booster: object) -> int:
    if name == "lightgbm":
        return int(booster.params["num_threads"])  # type: ignore[attr-defined]
    if name == "xgboost":
        config = json.loads(booster.save_config())  # type: ignore[attr-defined]
        return int(config["learner"]["generic_param"]["nthread"])
    return int(booster.get_params()["thread_count"])  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def larger_splits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """~20k jobs: enough rows that two threads split the histogram work between them."""
    out = tmp_path_factory.mktemp("larger") / "fixture"
    write_dataset(fixture_jobs(repos=400, runs_per_repo=12), out, provenance={"kind": "fixture"})
    return {s: load(out, "temporal", s) for s in ("train", "validation", "test")}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lightgbm", "xgboost", "catboost"])
def test_the_trees_are_the_same_for_any_thread_count(
    name: str, larger_splits: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OMP_NUM_THREADS is speed only (tree_threads): 1 and 2 threads fit the same trees."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: two threads cannot be asked for")
    runs = []
    for threads in (1, 2):
        monkeypatch.setenv("OMP_NUM_THREADS", str(threads))
        m = make_method(name, "history", seed=3, params=SMALL)
        m.fit(larger_splits["train"], larger_splits["validation"])
        assert _threads_used(name, m.boosters["duration_s"]) == threads  # type: ignore[attr-defined]
        runs.append(m.predict_rows(larger_splits["test"])["duration_s"])
    np.testing.assert_array_equal(runs[0], runs[1])


def test_queue_features_only_where_the_model_predicts_queue_s(splits: dict) -> None:
    from gharuntime.baselines.features import QUEUE_DENSE
    from gharuntime.baselines.queue_load import JobEvents

    config = make_method("lightgbm", "config", params=SMALL)
    config.fit(splits["train"], splits["validation"])
    assert not set(QUEUE_DENSE) & set(config.feature_names())  # type: ignore[attr-defined]
    assert not config.spec.queue  # type: ignore[attr-defined]
    multi = make_method("lightgbm", "multi", params=SMALL, targets=("duration_s", "queue_s"))
    assert multi.targets == ("duration_s", "queue_s")
    multi.observe(JobEvents.from_frames([splits["train"], splits["validation"], splits["test"]]))
    multi.fit(splits["train"], splits["validation"])
    names = multi.feature_names()  # type: ignore[attr-defined]
    assert set(QUEUE_DENSE) <= set(names)
    x = multi._features(splits["test"])  # type: ignore[attr-defined]
    counts = x[:, [names.index(n) for n in ("repo_queued", "org_running")]]
    assert np.isfinite(counts).all()  # counted from the events (the fixture's runs rarely overlap)
    multi.observe(None)  # as a model loaded by `predict`: the counts are unknown
    blind = multi._features(splits["test"])  # type: ignore[attr-defined]
    assert np.isnan(blind[:, [names.index(n) for n in ("repo_queued", "org_running")]]).all()
    assert set(multi.predict_rows(splits["test"])) == {"duration_s", "queue_s"}


def test_a_target_outside_the_track_is_refused() -> None:
    from gharuntime.baselines.method import MethodError

    with pytest.raises(MethodError, match="'queue_s' is not a target of track 'config'"):
        make_method("lightgbm", "config", targets=("duration_s", "queue_s"))


def test_conformal_ranges_are_calibrated_per_recency_stratum(splits: dict, tmp_path: Path) -> None:
    """Validation rows of job groups training never saw, with large errors, widen the ranges
    of such groups only (Mondrian split-conformal by recency); the calibration is recorded,
    saved with the model and used again after a reload."""
    import polars as pl

    train = splits["train"]
    rng = np.random.default_rng(0)
    seen = train.sample(150, seed=1)  # groups in training, their own earlier rows
    renamed = train.sample(150, seed=2).with_columns(
        pl.col("job_name") + " (renamed)",
        pl.col("duration_s") * pl.Series(np.exp(rng.normal(0.0, 1.5, 150))),
    )
    model = make_method("lightgbm", "config", params=SMALL)
    model.fit(train, pl.concat([seen, renamed]))
    record = model.calibration()["duration_s"]
    assert record["by"] == "recency" and record["source"] == "validation"
    assert record["rows"] == 300 and record["strata"]["never"]["rows"] == 150
    assert record["strata"]["never"]["from"] == ["never"]

    test = train.sample(50, seed=3)  # 0-7 days after their group's latest training row
    both = pl.concat([test, test.with_columns(pl.col("job_name") + " (renamed)")])
    model.predict_rows(both)
    q = model.quantiles()
    width = np.log1p(q["p90"]["duration_s"]) - np.log1p(q["p10"]["duration_s"])
    known, new = width[: test.height], width[test.height :]
    assert new.min() > 2 * known.max(), (known.max(), new.min())

    save_model(model, tmp_path / "m", {})
    saved = json.loads((tmp_path / "m" / "model.json").read_text())
    assert saved["state"]["calibration"]["duration_s"] == record
    assert saved["state"]["group_clock"]
    loaded, _ = load_model(tmp_path / "m")
    loaded.predict_rows(both)
    for level in q:
        np.testing.assert_allclose(
            loaded.quantiles()[level]["duration_s"], q[level]["duration_s"], rtol=1e-6
        )


def test_pooled_calibration_is_one_offset_for_every_row(splits: dict) -> None:
    model = make_method("lightgbm", "config", params={**SMALL, "calibrate_by": "none"})
    model.fit(splits["train"], splits["validation"])
    record = model.calibration()["duration_s"]
    assert record["by"] == "none" and list(record["strata"]) == ["all"]
    assert record["rows"] == splits["validation"].height


def test_without_validation_the_training_residuals_calibrate_and_say_so(splits: dict) -> None:
    model = make_method("lightgbm", "config", params=SMALL)
    model.fit(splits["train"], None)
    record = model.calibration()["duration_s"]
    assert record["source"] == "training" and record["by"] == "none"
    assert record["rows"] == splits["train"].height


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s["calibration"]["duration_s"]["strata"]["never"]["offsets"].update(p90="wide"),
        lambda s: s["calibration"]["duration_s"]["strata"].pop("never"),
        lambda s: s.update(group_clock=[[1, "ci.yml"]]),
        lambda s: s.update(group_clock=None),
    ],
    ids=["offset-not-a-number", "stratum-missing", "clock-row-short", "clock-missing"],
)
def test_a_damaged_saved_calibration_is_refused_on_load(
    damage: Any, splits: dict, tmp_path: Path
) -> None:
    from gharuntime.baselines.method import MethodError

    model = make_method("lightgbm", "config", params=SMALL)
    model.fit(splits["train"], splits["validation"])
    save_model(model, tmp_path / "m", {})
    path = tmp_path / "m" / "model.json"
    meta = json.loads(path.read_text())
    damage(meta["state"])
    path.write_text(json.dumps(meta))
    with pytest.raises(MethodError, match=r"damaged model folder|no group_clock"):
        load_model(tmp_path / "m")
