"""A repository's own recent durations for the jobs `predict` expands: matched by workflow path,
job key and matrix values (not by the name a `name:` template gives), strictly before the
prediction time, most recent first; a repository the dataset does not hold is refused."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from gharuntime.dataset import load
from gharuntime.predict.history import HistoryError, dataset_repos, load_repo_history
from gharuntime.workflow import expand_jobs, parse_workflow

REPO = "fixture-org/repo-1"  # ubuntu and windows × python 3.10 and 3.11
PATH = ".github/workflows/ci.yml"

# The fixture's job, renamed by a `name:` template and with its matrix keys in another order:
# GitHub would show other names, the build the same key and matrix values.
RENAMED = """on: push
jobs:
  test:
    name: unit on ${{ matrix.os }}
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        python: ["3.10", "3.11"]
        os: [ubuntu-latest, windows-latest]
    steps:
      - run: pytest
  brand-new:
    runs-on: ubuntu-latest
    steps:
      - run: make
"""


def _truth(dataset: Path, name: str, before: datetime) -> list[float]:
    """The fixture's jobs of that GitHub name completed before `before`, latest first, five."""
    rows = pl.concat([load(dataset, "temporal", s) for s in ("train", "validation", "test")])
    mine = rows.filter(
        (pl.col("repo") == REPO) & (pl.col("job_name") == name) & (pl.col("completed_at") < before)
    )
    return mine.sort("completed_at", descending=True)["duration_s"].head(5).to_list()


def _jobs(text: str):  # type: ignore[no-untyped-def]
    return expand_jobs(parse_workflow(text, PATH))


def test_each_matrix_combination_gets_its_own_runs_whatever_its_name(
    fixture_dataset_master: Path,
) -> None:
    history = load_repo_history(fixture_dataset_master, REPO)
    at = datetime(2027, 1, 1, tzinfo=timezone.utc)
    jobs = _jobs(RENAMED)
    got = dict(zip([(j.name, j.matrix["python"] if j.matrix else None) for j in jobs],
                   history.durations(PATH, jobs, at), strict=True))  # fmt: skip
    for os_label in ("ubuntu-latest", "windows-latest"):
        for py in ("3.10", "3.11"):
            want = _truth(fixture_dataset_master, f"test ({os_label}, {py})", at)
            assert want, "the fixture has runs of every combination"
            assert got[(f"unit on {os_label}", py)] == want
    assert got[("brand-new", None)] == []


def test_only_runs_completed_strictly_before_the_prediction_time(
    fixture_dataset_master: Path,
) -> None:
    history = load_repo_history(fixture_dataset_master, REPO)
    rows = load(fixture_dataset_master, "temporal", "train").filter(pl.col("repo") == REPO)
    name = "test (ubuntu-latest, 3.10)"
    times = rows.filter(pl.col("job_name") == name).sort("completed_at")["completed_at"]
    at = times[1]  # the second completion: only the first is strictly before it
    jobs = [j for j in _jobs(RENAMED) if j.matrix == {"python": "3.10", "os": "ubuntu-latest"}]
    assert history.durations(PATH, jobs, at) == [_truth(fixture_dataset_master, name, at)]
    assert len(history.durations(PATH, jobs, at)[0]) == 1
    assert history.durations(".github/workflows/other.yml", jobs, at) == [[]]


def test_a_repository_the_dataset_does_not_hold_is_refused(fixture_dataset_master: Path) -> None:
    assert REPO in dataset_repos(fixture_dataset_master)
    assert load_repo_history(fixture_dataset_master, REPO.upper()).repo == REPO
    with pytest.raises(HistoryError) as caught:
        load_repo_history(fixture_dataset_master, "someone/else")
    text = str(caught.value)
    assert "someone/else was never crawled" in text and "fixture-org/repo-0" in text
    assert "gharuntime learn someone/else" in text


def test_the_run_to_run_spread_is_measured_on_complete_recent_runs(
    fixture_dataset_master: Path,
) -> None:
    """The noise a review's Δ is judged by: per run (run id and attempt) of the workflow, the
    sum of its jobs' durations and its wall time, over the latest complete runs before `at`."""
    import numpy as np

    from gharuntime.predict.history import MIN_NOISE_RUNS

    history = load_repo_history(fixture_dataset_master, REPO)
    rows = pl.concat(
        [load(fixture_dataset_master, "temporal", s) for s in ("train", "validation", "test")]
    )
    mine = rows.filter((pl.col("repo") == REPO) & (pl.col("workflow_path") == PATH))
    runs = mine.group_by("run_id", "run_attempt").agg(
        pl.col("duration_s").sum(), pl.len(), pl.col("started_at").min(),
        pl.col("completed_at").max(),
    )  # fmt: skip
    assert runs.height >= MIN_NOISE_RUNS and runs["len"].n_unique() == 1  # all complete
    at = datetime(2027, 1, 1, tzinfo=timezone.utc)
    spread = history.run_spread(PATH, at, "push")
    assert spread is not None and spread.runs == runs.height
    want = np.percentile(runs["duration_s"].to_numpy(), [10, 50, 90])
    assert spread.total_job_s == pytest.approx(tuple(want))
    wall = [(c - s).total_seconds() for s, c in zip(runs["started_at"], runs["completed_at"],
                                                    strict=True)]  # fmt: skip
    assert spread.wall_s == pytest.approx(tuple(np.percentile(wall, [10, 50, 90])))
    assert spread.band("total_job_s") == pytest.approx((want[2] - want[0]) / 2)
    # too few runs before `at`, or another workflow: nothing measured
    first = runs.sort("completed_at")["completed_at"][MIN_NOISE_RUNS - 2]
    assert history.run_spread(PATH, first, "push") is None
    assert history.run_spread(".github/workflows/other.yml", at, "push") is None


def test_runs_with_jobs_missing_do_not_count_as_noise() -> None:
    """A run whose jobs were skipped or failed sums less for that alone: runs with fewer jobs
    than the median are left out; runs of the event asked for are used when there are enough."""
    from gharuntime.predict.history import RepoHistory

    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    sums = [1000.0, 1100.0, 1200.0, 900.0, 950.0, 1050.0, 300.0, 250.0]
    jobs = [4, 4, 4, 4, 4, 4, 1, 2]
    runs = pl.DataFrame(
        {
            "workflow_path": [PATH] * 8,
            "run_id": list(range(8)),
            "run_attempt": [1] * 8,
            "event": ["push"] * 8,
            "jobs": jobs,
            "total_s": sums,
            "started": [t0.replace(day=i + 1) for i in range(8)],
            "completed": [t0.replace(day=i + 1, hour=1) for i in range(8)],
        }
    )
    history = RepoHistory("o/r", 1, Path("."), pl.DataFrame(), {}, None, runs=runs)
    spread = history.run_spread(PATH, t0.replace(month=2), "push")
    assert spread is not None and spread.runs == 6 and spread.event == "push"
    import numpy as np

    assert spread.total_job_s[0] == pytest.approx(np.percentile(sums[:6], 10))
    other = history.run_spread(PATH, t0.replace(month=2), "schedule")
    assert other is not None and other.event is None  # too few schedule runs: every event
