"""Each filter removes what it says and is counted; the conclusion policy is explicit."""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_world import CI_YAML, T0, RawWorld

from gharuntime.builder import build_from_raw
from gharuntime.dataset import read_manifest


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
    root = tmp_path_factory.mktemp("filters")
    out = root / "ds"
    build_from_raw([w.write(root / "store")], out)
    return dict(read_manifest(out)["filters"])


@pytest.mark.parametrize(
    ("name", "count"),
    [
        ("not_completed", 1),
        ("skipped", 1),
        ("non_positive_duration", 2),
        ("clock_skew", 1),
        ("duplicate_job_id", 1),
        ("conclusion_failure", 1),
        ("conclusion_cancelled", 1),
    ],
)
def test_filter_removes_and_counts(filtered_build: dict[str, int], name: str, count: int) -> None:
    assert filtered_build[name] == count


def test_filters_are_listed_in_the_order_applied(filtered_build: dict[str, int]) -> None:
    assert list(filtered_build)[:5] == [
        "not_completed",
        "skipped",
        "non_positive_duration",
        "clock_skew",
        "duplicate_job_id",
    ]


def test_all_conclusions_keeps_failures(shared_dir: Path, tmp_path: Path) -> None:
    w = RawWorld(shared_dir)
    run = w.run(1, T0)
    w.job(run, "lint")
    w.job(run, "other", conclusion="failure")
    result = build_from_raw([w.write(tmp_path / "store")], tmp_path / "ds", conclusions=None)
    assert result.rows == 2
    assert not any(k.startswith("conclusion_") for k in result.filters)
