"""median, group-median and last-run on hand-made rows whose answers are known."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from gharuntime.baselines.naive import GroupMedian, LastRun, Median
from gharuntime.fixture import fixture_jobs


def _rows(spec: list[tuple[int, str, str, float, list[float]]]) -> pl.DataFrame:
    """(repo_id, workflow_path, job_name, duration_s, history) rows on a real job-table frame."""
    base = fixture_jobs(repos=1, runs_per_repo=len(spec)).head(len(spec))
    return base.with_columns(
        pl.Series("repo_id", [s[0] for s in spec], dtype=pl.Int64),
        pl.Series("workflow_path", [s[1] for s in spec]),
        pl.Series("job_name", [s[2] for s in spec]),
        pl.Series("duration_s", [s[3] for s in spec], dtype=pl.Float64),
        pl.Series("history_duration_s", [s[4] for s in spec], dtype=pl.List(pl.Float64)),
    )


@pytest.fixture()
def train_rows() -> pl.DataFrame:
    return _rows(
        [
            (1, "ci.yml", "test", 10.0, []),
            (1, "ci.yml", "test", 30.0, []),
            (1, "ci.yml", "lint", 100.0, []),
            (2, "ci.yml", "test", 1000.0, []),
        ]
    )


def test_median_predicts_the_training_median(train_rows: pl.DataFrame) -> None:
    m = Median("config")
    m.fit(train_rows)
    assert m.predict_rows(train_rows.head(3))["duration_s"].tolist() == [65.0, 65.0, 65.0]


def test_group_median_falls_back_from_job_to_repo_to_global(train_rows: pl.DataFrame) -> None:
    m = GroupMedian("config")
    m.fit(train_rows)
    query = _rows(
        [
            (1, "ci.yml", "test", 0.0, []),  # its own group: median(10, 30)
            (1, "ci.yml", "build", 0.0, []),  # unseen job, seen repo: median(10, 30, 100)
            (3, "ci.yml", "test", 0.0, []),  # unseen repo: global median(10, 30, 100, 1000)
        ]
    )
    assert m.predict_rows(query)["duration_s"].tolist() == [20.0, 30.0, 65.0]


def test_last_run_takes_the_most_recent_earlier_duration(train_rows: pl.DataFrame) -> None:
    m = LastRun("history")
    m.fit(train_rows)
    query = _rows([(1, "ci.yml", "test", 0.0, [7.0, 99.0]), (1, "ci.yml", "test", 0.0, [])])
    assert m.predict_rows(query)["duration_s"].tolist() == [7.0, 20.0]


def test_multi_track_median_predicts_every_target_and_skips_missing_logs() -> None:
    jobs = fixture_jobs(repos=2, runs_per_repo=2)
    logs = [None, *jobs["log_bytes"].to_list()[1:]]
    jobs = jobs.with_columns(pl.Series("log_bytes", logs, dtype=pl.Int64))
    m = Median("multi")
    m.fit(jobs)
    out = m.predict_rows(jobs)
    assert set(out) == {"duration_s", "queue_s", "log_bytes"}
    assert out["log_bytes"][0] == pytest.approx(
        float(np.median(jobs["log_bytes"].drop_nulls().to_numpy()))
    )


def test_a_target_without_any_training_value_is_a_clear_error() -> None:
    from gharuntime.baselines.method import MethodError

    jobs = fixture_jobs(repos=2, runs_per_repo=1).with_columns(
        pl.lit(None, dtype=pl.Int64).alias("log_bytes")
    )
    with pytest.raises(MethodError, match="no training row has a value for log_bytes"):
        Median("multi").fit(jobs)


def _spread_rows() -> pl.DataFrame:
    """Job (1, ci.yml, test) run 11 times (1..11 s), (1, ci.yml, lint) twice (100, 200 s)."""
    return _rows(
        [(1, "ci.yml", "test", float(s), []) for s in range(1, 12)]
        + [(1, "ci.yml", "lint", 100.0, []), (1, "ci.yml", "lint", 200.0, [])]
    )


def test_median_writes_the_training_quantiles() -> None:
    train = _spread_rows()
    m = Median("config")
    m.fit(train)
    m.predict_rows(train.head(2))
    q = m.quantiles()
    y = train["duration_s"].to_numpy()
    for level, tau in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        assert q[level]["duration_s"].tolist() == [pytest.approx(np.quantile(y, tau))] * 2


def test_group_median_quantiles_come_from_a_group_with_enough_rows() -> None:
    train = _spread_rows()
    m = GroupMedian("config")
    m.fit(train)
    query = _rows([(1, "ci.yml", "test", 0.0, []), (1, "ci.yml", "lint", 0.0, [])])
    point = m.predict_rows(query)["duration_s"].tolist()
    q = m.quantiles()
    job = np.arange(1.0, 12.0)  # 11 rows: its own quantiles
    repo = train["duration_s"].to_numpy()  # lint has 2 rows (< 10): the repository's
    assert point == [6.0, 150.0]  # the point prediction is still the group's median
    for level, tau in (("p10", 0.1), ("p90", 0.9)):
        got = q[level]["duration_s"].tolist()
        assert got == [pytest.approx(np.quantile(job, tau)), pytest.approx(np.quantile(repo, tau))]


def test_group_median_quantiles_survive_save_and_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    train = _spread_rows()
    m = GroupMedian("config")
    m.fit(train)
    m.predict_rows(train)
    state = m.save_state(tmp_path)
    again = GroupMedian.load_state(tmp_path, {"track": "config", "state": state})
    again.predict_rows(train)
    for level in ("p10", "p50", "p90", "p99"):
        np.testing.assert_array_equal(
            again.quantiles()[level]["duration_s"], m.quantiles()[level]["duration_s"]
        )


def test_last_run_centres_its_groups_spread_on_the_last_run() -> None:
    train = _spread_rows()
    m = LastRun("history")
    m.fit(train)
    m.predict_rows(_rows([(1, "ci.yml", "test", 0.0, [12.0])]))
    q = m.quantiles()
    job = np.arange(1.0, 12.0)
    scale = 12.0 / np.quantile(job, 0.5)
    assert q["p50"]["duration_s"].tolist() == [pytest.approx(12.0)]
    assert q["p90"]["duration_s"].tolist() == [pytest.approx(np.quantile(job, 0.9) * scale)]


def test_last_run_calibrates_its_range_on_validation_and_keeps_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The group's spread moved to the last run is far wider than the run-to-run change of
    these validation jobs (each within ±1 s of its last run): with a validation split the range
    is the prediction plus split-conformal offsets of the validation errors (the shared code),
    and a saved model keeps them."""
    from gharuntime.baselines.intervals import conformal_quantile
    from gharuntime.baselines.model_io import load_model, save_model

    train = _spread_rows()
    last = np.linspace(5.0, 11.0, 40)
    truth = last + np.tile([-1.0, -0.5, 0.0, 0.5, 1.0], 8)
    validation = _rows(
        [(1, "ci.yml", "test", float(y), [float(x)]) for y, x in zip(truth, last, strict=True)]
    )
    m = LastRun("history")
    m.fit(train, validation)
    record = m.calibration()["duration_s"]
    assert record["source"] == "validation" and record["rows"] == 40
    assert record["strata"]["with history"]["rows"] == 40

    m.predict_rows(validation)
    q = m.quantiles()
    errors = np.log1p(truth) - np.log1p(last)
    for level, tau in (("p10", 0.1), ("p90", 0.9)):
        want = np.expm1(np.log1p(last) + conformal_quantile(errors, tau))
        np.testing.assert_allclose(q[level]["duration_s"], want)
    inside = (q["p10"]["duration_s"] <= truth) & (truth <= q["p90"]["duration_s"])
    assert 0.75 <= inside.mean() <= 0.9
    # without validation: the group's spread around the last run, and the record says why
    raw = LastRun("history")
    raw.fit(train)
    raw.predict_rows(validation)
    raw_width = np.log1p(raw.quantiles()["p90"]["duration_s"]) - np.log1p(
        raw.quantiles()["p10"]["duration_s"]
    )
    width = np.log1p(q["p90"]["duration_s"]) - np.log1p(q["p10"]["duration_s"])
    assert width.max() < raw_width.min()
    assert raw.calibration()["duration_s"]["method"] == "none"

    save_model(m, tmp_path / "m", {})
    loaded, _ = load_model(tmp_path / "m")
    loaded.predict_rows(validation)
    np.testing.assert_allclose(loaded.quantiles()["p90"]["duration_s"], q["p90"]["duration_s"])
