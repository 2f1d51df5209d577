"""A matrix given by an expression, which only the run knows, predicted as the jobs the
repository's own recent runs of it show: one per name seen in its latest runs, each from its own
durations, flagged `from-history matrix`; without any run it stays one job, as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import MATRIX_REPO, matrix_durations

from gharuntime.cli.main import cli

HEAD = """name: CI
on: [push]
jobs:
  info:
    runs-on: ubuntu-latest
    outputs:
      checks: ${{ steps.pick.outputs.checks }}
    steps:
      - id: pick
        run: echo 'checks=["unit","lint"]' >> "$GITHUB_OUTPUT"
"""
# the matrix's values from an expression, or the whole matrix one
VALUES = """  basic:
    needs: info
    runs-on: ubuntu-latest
    strategy:
      matrix:
        check: ${{ fromJSON(needs.info.outputs.checks) }}
    steps:
      - run: ./check.sh ${{ matrix.check }}
"""
WHOLE = VALUES.replace(
    "      matrix:\n        check: ${{ fromJSON(needs.info.outputs.checks) }}",
    "      matrix: ${{ fromJSON(needs.info.outputs.matrix) }}",
)
NEVER_RAN = VALUES.replace("  basic:", "  fresh:")


def _predict(learned: Path, workflow: Path, at: str, *more: str) -> Any:
    """The file (outside any repository) predicted as the history's `.github/workflows/ci.yml`."""
    args = ["predict", str(workflow), "--model", str(learned), "--repo", MATRIX_REPO]
    args += ["--path", ".github/workflows/ci.yml"]
    return CliRunner().invoke(cli, [*args, "--at", at, *more])


def _jobs(learned: Path, workflow: Path, at: str) -> dict[str, dict[str, Any]]:
    done = _predict(learned, workflow, at, "--json")
    assert done.exit_code == 0, done.output
    return {j["name"]: j for j in json.loads(done.output)["jobs"]}


def _truth(name: str, before: str) -> list[float]:
    """The job's durations completed before `before`, most recent first, at most five."""
    from datetime import datetime, timedelta, timezone

    limit = datetime.fromisoformat(before).replace(tzinfo=timezone.utc)
    done = [
        (datetime.fromisoformat(at) + timedelta(seconds=d), d) for at, d in matrix_durations(name)
    ]
    return [d for end, d in sorted(done, reverse=True) if end < limit][:5]


@pytest.mark.parametrize("matrix", [VALUES, WHOLE], ids=["values", "whole-matrix"])
def test_an_expression_matrix_is_the_jobs_its_latest_runs_show(
    learned_from_dataset: Path, tmp_path: Path, matrix: str
) -> None:
    workflow = tmp_path / "ci.yml"
    workflow.write_text(HEAD + matrix)
    jobs = _jobs(learned_from_dataset, workflow, "2026-02-01")
    # seven runs: `basic (old)` ran only in the first two, outside the latest five
    assert sorted(jobs) == ["basic (lint)", "basic (unit)", "info"]
    for name in ("basic (lint)", "basic (unit)"):
        job = jobs[name]
        assert job["basis"] == "from-history matrix"
        assert "history_matrix" in job["flags"] and "expression_matrix" not in job["flags"]
        assert job["history_s"] == _truth(name, "2026-02-01")
    assert jobs["basic (unit)"]["duration_s"] > jobs["basic (lint)"]["duration_s"]
    assert jobs["info"]["basis"] == "config fallback"


def test_only_runs_completed_before_the_prediction_time_count(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    workflow = tmp_path / "ci.yml"
    workflow.write_text(HEAD + VALUES)
    # 2026-01-02 00:00 + 20 s (lint) and + 500 s (old) have completed; + 1000 s (unit) has not
    at = "2026-01-02T00:10:00"
    jobs = _jobs(learned_from_dataset, workflow, at)
    assert sorted(jobs) == ["basic (lint)", "basic (old)", "info"]
    assert jobs["basic (old)"]["history_s"] == _truth("basic (old)", at) == [500.0]


def test_without_any_run_it_is_counted_as_one_job(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    workflow = tmp_path / "ci.yml"
    workflow.write_text(HEAD + NEVER_RAN)
    jobs = _jobs(learned_from_dataset, workflow, "2026-02-01")
    assert sorted(jobs) == ["fresh", "info"]
    assert jobs["fresh"]["basis"] == "config fallback"
    assert "expression_matrix" in jobs["fresh"]["flags"]


def test_every_format_says_the_matrix_is_from_history(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    workflow = tmp_path / "ci.yml"
    workflow.write_text(HEAD + VALUES)
    doc = json.loads(_predict(learned_from_dataset, workflow, "2026-02-01", "--json").output)
    assert doc["flags"]["history_matrix"]["jobs"] == 2
    assert doc["history"]["jobs"]["from-history matrix"] == 2
    markdown = _predict(learned_from_dataset, workflow, "2026-02-01", "--format", "markdown")
    line = next(x for x in markdown.output.splitlines() if "basic (unit)" in x)
    assert "from-history matrix (5 runs)" in line and "matrix from history" in line
    table = _predict(learned_from_dataset, workflow, "2026-02-01")
    assert table.exit_code == 0, table.output
    assert "2 of matrices given by an expression" in " ".join(table.output.split())


def test_a_history_of_more_names_than_a_matrix_holds_gives_the_latest_256(
    tmp_path: Path,
) -> None:
    """A hostile or odd dataset: 300 names under one expression matrix's job key. GitHub runs
    at most 256 jobs of a matrix: the 256 seen last are predicted."""
    from datetime import datetime, timedelta, timezone

    import polars as pl

    from gharuntime.dataset import write_dataset
    from gharuntime.fixture import fixture_jobs
    from gharuntime.history import history_durations
    from gharuntime.predict.history import job_identity, load_repo_history
    from gharuntime.workflow import expand_jobs, parse_workflow

    jobs = fixture_jobs(repos=2)
    template = jobs.row(0, named=True)
    start = datetime(2026, 6, 1, tzinfo=timezone.utc)
    rows = [
        {
            **template,
            "id": f"many-{i}",
            "job_id": 5_000_000 + i,
            "run_id": 777,
            "job_name": f"basic ({i:03d})",
            "job_key": "basic",
            "matrix": None,
            "created_at": start,
            "started_at": start,
            "completed_at": start + timedelta(seconds=10 + i),
            "duration_s": 10.0 + i,
        }
        for i in range(300)
    ]
    table = pl.concat([jobs, pl.DataFrame(rows, schema=jobs.schema)]).drop("history_duration_s")
    write_dataset(
        table.with_columns(history_durations(table)),
        tmp_path / "many",
        provenance={"kind": "fixture", "seed": 0},
    )
    history = load_repo_history(tmp_path / "many", template["repo"])
    (job,) = expand_jobs(parse_workflow(VALUES.join(["on: push\njobs:\n", ""]), "ci.yml"))
    identity = job_identity(job)
    found = history.matrix_jobs(".github/workflows/ci.yml", identity, start + timedelta(days=1))
    assert [name for name, _ in found] == [f"basic ({i:03d})" for i in range(44, 300)]
    assert found[0][1] == [54.0]
