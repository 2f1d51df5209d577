"""What the baselines can learn from the simulated world, and where that stops.

Job-table rows are made straight from a 160-repository world (the columns `gharuntime build`
fills) and LightGBM is fitted through the baselines' own method (`lightgbm`, the feature module
`baselines/features.py`) on the config track, on a cross-repository split: held-out repositories,
as in the `cross_repo` configuration. The world's cost model runs on hidden quantities (the size
of the code that is built, the languages it is written in, a per-repository speed), which the
served `repo_size_kb` (git history and assets included) and `repo_language` (the largest
language) only correlate with. So:
- the model clearly beats the training median, but stays far from explaining everything;
- blanking the served size and language costs it little: they are not the cost parameters;
- serving the hidden cost factor (code size and speed) in place of `repo_size_kb` would help it
  clearly: the hidden quantities carry information the served fields do not.
"""

from __future__ import annotations

import json
import zlib
from datetime import datetime, timezone
from typing import Any

import numpy as np
import polars as pl
import pytest

from gharuntime.baselines.methods import make_method
from gharuntime.contract import job_table_schema
from gharuntime.sim.world import Scale, World
from gharuntime.workflow import Workflow, expand_jobs, parse_workflow, runner_os

pytestmark = pytest.mark.slow

PARAMS = {"n_estimators": 120, "learning_rate": 0.15, "early_stopping_rounds": 15}


def _time(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=timezone.utc)


@pytest.fixture(scope="module")
def rows() -> pl.DataFrame:
    """One job-table row per successful job that ran, plus `split` and the hidden repository cost
    factor (code size to the power the build and test steps scale with, times the speed)."""
    world = World(5, Scale(100))
    parsed: dict[str, tuple[Workflow, dict[str, Any]]] = {}
    out: list[dict[str, Any]] = []
    for rw in world.repos():
        m = rw.meta
        split = ("test", "validation", "train", "train")[zlib.crc32(m.full_name.encode()) % 4]
        for run in rw.runs:
            found = rw.file_at(run.workflow.path, run.commit.sha)
            if found is None:
                continue
            text, blob = found
            if blob not in parsed:
                wf = parse_workflow(text)
                parsed[blob] = (wf, {j.name: j.matrix for j in expand_jobs(wf)})
            wf, matrices = parsed[blob]
            for attempt in run.attempts:
                for job in attempt.jobs:
                    ran = job.steps and job.started >= job.created  # not carried over
                    if job.conclusion != "success" or not ran:
                        continue
                    key = job.key.partition("/")[0]
                    matrix = matrices.get(job.name)
                    out.append(
                        {
                            "id": str(job.id),
                            "repo": m.full_name,
                            "repo_id": m.id,
                            "repo_language": m.language,
                            "repo_stars": m.stars,
                            "repo_size_kb": m.size_kb,
                            "repo_topics": list(m.topics),
                            "repo_fork": m.fork,
                            "repo_created_at": _time(m.created_at),
                            "run_id": run.id,
                            "run_attempt": attempt.number,
                            "event": run.event,
                            "is_default_branch": run.branch == m.default_branch,
                            "workflow_path": run.workflow.path,
                            "workflow_yaml": text,
                            "job_name": job.name,
                            "job_key": key,
                            "matrix": json.dumps(matrix) if matrix is not None else None,
                            "runner_labels": list(job.labels),
                            "runner_os": runner_os(job.labels),
                            "needs": list(wf.jobs[key].needs) if key in wf.jobs else [],
                            "step_names": [s.name for s in job.steps],
                            "created_at": _time(job.created),
                            "duration_s": job.completed - job.started,
                            "history_duration_s": [],
                            "split": split,
                            "hidden_kb": int(
                                1000 * (m.profile.code_kb / 20000) ** 0.45 * m.profile.speed
                            ),
                        }
                    )
    schema = {**job_table_schema(), "split": pl.String(), "hidden_kb": pl.Int64()}
    return pl.DataFrame(out, schema=schema)


def _r2_on_held_out_repositories(rows: pl.DataFrame) -> float:
    """R² on log1p duration of LightGBM (the baseline, config track) on held-out repositories."""
    method = make_method("lightgbm", "config", seed=0, params=PARAMS)
    method.fit(rows.filter(split="train"), rows.filter(split="validation"))
    test = rows.filter(split="test")
    pred = np.log1p(np.asarray(method.predict_rows(test)["duration_s"]))
    truth = np.log1p(test["duration_s"].to_numpy())
    return float(1 - np.sum((pred - truth) ** 2) / np.sum((truth - truth.mean()) ** 2))


@pytest.fixture(scope="module")
def served(rows: pl.DataFrame) -> float:
    return _r2_on_held_out_repositories(rows)


def test_enough_jobs_and_repositories_to_judge(rows: pl.DataFrame) -> None:
    assert rows.height > 4000
    assert rows.filter(split="test")["repo_id"].n_unique() >= 25


def test_the_baseline_clearly_beats_the_median_on_unseen_repositories(
    rows: pl.DataFrame, served: float
) -> None:
    train, test = rows.filter(split="train"), rows.filter(split="test")
    truth = np.log1p(test["duration_s"].to_numpy())
    median = float(np.median(np.log1p(train["duration_s"].to_numpy())))
    median_r2 = 1 - np.sum((median - truth) ** 2) / np.sum((truth - truth.mean()) ** 2)
    assert median_r2 < 0.02
    assert served > 0.3


def test_configuration_and_served_fields_do_not_explain_everything(served: float) -> None:
    # measured 0.65 (seed 5, 100 repositories)
    assert served < 0.75


def test_served_size_and_language_are_not_the_cost_parameters(
    rows: pl.DataFrame, served: float
) -> None:
    blanked = rows.with_columns(
        pl.lit(None, dtype=pl.Int64).alias("repo_size_kb"),
        pl.lit(None, dtype=pl.String).alias("repo_language"),
    )
    # measured 0.09-0.11 (seed 5, 100 repositories): a correlated field, not a cost parameter
    assert served - _r2_on_held_out_repositories(blanked) < 0.15


def test_the_hidden_cost_factor_would_tell_more_than_the_served_size(
    rows: pl.DataFrame, served: float
) -> None:
    oracle = rows.with_columns(pl.col("hidden_kb").alias("repo_size_kb"))
    # measured +0.09-0.11 (seed 5, 100 repositories)
    assert _r2_on_held_out_repositories(oracle) - served > 0.05
