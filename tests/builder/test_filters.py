"""Each filter removes what it says and is counted; the conclusion policy is explicit."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest
from raw_world import CI_YAML, T0, RawWorld

from gharuntime.builder.build import BuildOptions, build
from gharuntime.dataset import read_manifest
from gharuntime.source_kinds.raw import RawSource


@pytest.fixture(scope="module")
def filtered_build(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """One clean job plus one job for each filter; returns the manifest's filter counts."""
    w = RawWorld(shared_dir)
    w.workflow_file(CI_YAML, "blob-ci-1")
    run = w.run(1, T0)
    w.job(run, "lint")  # kept
    w.job(run, "build (x64)", status="in_progress", conclusion=None)
    w.job(run, "build (arm64)", conclusion="skipped", duration=0.0)
    w.job(run, "Test 3.10 on ubuntu-latest", duration=0.0)
    w.job(run, "Test 3.11 on ubuntu-latest", duration=-3.0)
    w.job(run, "Test 3.11 on windows-latest", queued=-30.0)  # started before it was created
    w.job(run, "Test 3.12 on macos-latest", conclusion="failure")
    w.job(run, "call / deploy", conclusion="cancelled")
    dup = w.job(run, "dyn (a, b)")
    w.job(run, "dyn (a, b)", job_id=dup)  # the same job recorded twice
    # "re-run failed jobs": attempt 2 lists the job that succeeded in attempt 1, created with the
    # new attempt but with its original start and end (here: an hour before)
    rerun = w.run(1, T0 + timedelta(hours=1), attempt=2)
    w.job(rerun, "lint", queued=-3600.0)
    w.job(rerun, "Test 3.12 on macos-latest")  # the re-run job itself: kept
    root = tmp_path_factory.mktemp("filters")
    out = root / "ds"
    build(RawSource([w.write(root / "store")]), out)
    return dict(read_manifest(out)["filters"])


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("not_completed", 1),
        ("skipped", 1),
        ("non_positive_duration", 2),
        ("carried_over", 1),
        ("clock_skew", 1),
        ("duplicate_job_id", 1),
        ("conclusion_failure", 1),
        ("conclusion_cancelled", 1),
    ],
)
def test_filter_removes_and_counts(filtered_build: dict[str, int], name: str, count: int) -> None:
    assert filtered_build[name] == count


def test_filters_are_listed_in_the_order_applied(filtered_build: dict[str, int]) -> None:
    assert list(filtered_build)[:6] == [
        "not_completed",
        "skipped",
        "non_positive_duration",
        "carried_over",
        "clock_skew",
        "duplicate_job_id",
    ]


def test_all_conclusions_keeps_failures(shared_dir: Path, tmp_path: Path) -> None:
    w = RawWorld(shared_dir)
    run = w.run(1, T0)
    w.job(run, "lint")
    w.job(run, "other", conclusion="failure")
    result = build(
        RawSource([w.write(tmp_path / "store")]), tmp_path / "ds", BuildOptions(conclusions=None)
    )
    assert result.rows == 2
    assert not any(k.startswith("conclusion_") for k in result.filters)


def test_history_draws_only_on_rows_that_passed_the_filters(
    shared_dir: Path, tmp_path: Path
) -> None:
    """The contract's choice: history_duration_s comes from the dataset's own rows, so a failed
    job (dropped by the default conclusion policy) never appears in a later job's history."""
    w = RawWorld(shared_dir)
    first = w.run(1, T0)
    w.job(first, "lint", duration=50.0, conclusion="failure")
    second = w.run(2, T0 + timedelta(hours=1))
    w.job(second, "lint", duration=70.0)
    third = w.run(3, T0 + timedelta(hours=2))
    w.job(third, "lint", duration=90.0)
    build(RawSource([w.write(tmp_path / "store")]), tmp_path / "ds")
    rows = pl.read_parquet(tmp_path / "ds" / "data" / "temporal").sort("created_at")
    assert rows["history_duration_s"].to_list() == [[], [70.0]]
