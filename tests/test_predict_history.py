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
