"""A method reads only what its track allows: declared inputs are checked against the contract
and the method is handed nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from gharuntime.baselines.method import ForbiddenInputError, Method, MethodError, restrict
from gharuntime.baselines.methods import make_method
from gharuntime.contract import HISTORY_COLUMN, input_columns
from gharuntime.fixture import fixture_jobs
from gharuntime.progress import Progress


class _Spy(Method):
    """Records the columns it was handed."""

    name = "spy"
    version = "0"
    wanted: tuple[str, ...] = ("repo_id",)

    def reads(self, track: str) -> tuple[str, ...]:
        return self.wanted

    def fit(
        self,
        train: pl.DataFrame,
        validation: pl.DataFrame | None = None,
        progress: Progress | None = None,
    ) -> None:
        train, _ = self._fit_frames(train, validation)
        self.seen_fit = train.columns

    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        self.seen_predict = inputs.columns
        return {t: np.zeros(inputs.height) for t in self.targets}

    def save_state(self, folder: Path) -> dict[str, Any]:
        return {}

    @classmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> _Spy:
        return cls(meta["track"])


def test_last_run_on_config_track_is_refused_naming_the_column() -> None:
    with pytest.raises(ForbiddenInputError, match=r"history_duration_s.*track 'config' forbids"):
        make_method("last-run", "config")


def test_last_run_on_history_track_is_allowed() -> None:
    assert HISTORY_COLUMN in make_method("last-run", "history").inputs


@pytest.mark.parametrize("name", ["lightgbm", "xgboost"])
def test_gbdt_on_config_track_reads_no_history(name: str) -> None:
    inputs = make_method(name, "config").inputs
    assert HISTORY_COLUMN not in inputs
    assert set(inputs) <= set(input_columns("config"))


@pytest.mark.parametrize("column", ["duration_s", "started_at", "conclusion", "runner_image"])
def test_method_reading_a_target_or_meta_column_is_refused(column: str) -> None:
    class Leaky(_Spy):
        wanted = ("repo_id", column)

    with pytest.raises(ForbiddenInputError, match=column):
        Leaky("config")


def test_method_is_handed_only_its_declared_columns_and_the_targets() -> None:
    jobs = fixture_jobs(repos=4, runs_per_repo=2)
    spy = _Spy("history")
    spy.fit(jobs)
    spy.predict_rows(jobs)
    assert spy.seen_fit == ["repo_id", "duration_s"]
    assert spy.seen_predict == ["repo_id"]


def test_method_reading_no_column_still_sees_every_row() -> None:
    jobs = fixture_jobs(repos=3, runs_per_repo=1)
    assert restrict(jobs, ()).height == jobs.height


def test_unknown_method_is_refused_with_the_choices() -> None:
    with pytest.raises(MethodError, match="choose one of median, group-median"):
        make_method("mean", "config")


def test_unknown_hyperparameter_is_refused() -> None:
    with pytest.raises(MethodError, match=r"unknown parameter.*n_trees"):
        make_method("lightgbm", "config", params={"n_trees": 3})


def test_naive_method_takes_no_hyperparameters() -> None:
    with pytest.raises(MethodError, match="takes no parameters"):
        make_method("median", "config", params={"n_estimators": 3})


def test_gbdt_reads_the_job_identity_by_default_and_not_when_told() -> None:
    assert {"repo_id", "workflow_path", "job_name"} <= set(make_method("lightgbm", "config").inputs)
    plain = make_method(
        "lightgbm",
        "config",
        params={"identity": False, "target_encoding": False, "calibrate_by": "none"},
    ).inputs
    assert not {"repo_id", "workflow_path", "job_name"} & set(plain)
    # ranges calibrated per recency stratum read the job group, even without identity features
    strata = make_method(
        "lightgbm", "config", params={"identity": False, "target_encoding": False}
    ).inputs
    assert {"repo_id", "workflow_path", "job_name", "created_at"} <= set(strata)


def test_gbdt_with_target_encoding_reads_the_group_columns() -> None:
    inputs = make_method("xgboost", "config", params={"target_encoding": True}).inputs
    assert {"repo_id", "workflow_path", "job_name"} <= set(inputs)
