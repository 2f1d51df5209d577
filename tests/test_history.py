from datetime import datetime, timedelta, timezone

import polars as pl

from gharuntime.history import history_durations

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _jobs(rows: list[tuple[str, int, int, float]]) -> pl.DataFrame:
    """rows: (job_name, created minute, completed minute, duration)."""
    return pl.DataFrame(
        {
            "repo_id": [1] * len(rows),
            "workflow_path": [".github/workflows/ci.yml"] * len(rows),
            "job_name": [r[0] for r in rows],
            "created_at": [T0 + timedelta(minutes=r[1]) for r in rows],
            "completed_at": [T0 + timedelta(minutes=r[2]) for r in rows],
            "duration_s": [r[3] for r in rows],
        }
    )


def test_history_holds_only_jobs_completed_strictly_before_creation() -> None:
    jobs = _jobs([("a", 0, 10, 1.0), ("a", 5, 20, 2.0), ("a", 20, 30, 3.0), ("a", 21, 40, 4.0)])
    got = history_durations(jobs).to_list()
    # job 3 is created at minute 20, when job 2 completes: not strictly before, so excluded.
    assert got == [[], [], [1.0], [2.0, 1.0]]


def test_history_is_per_job_name_most_recent_first_and_capped_at_five() -> None:
    rows = [("a", i * 10, i * 10 + 5, float(i)) for i in range(8)] + [("b", 100, 101, 99.0)]
    got = history_durations(_jobs(rows)).to_list()
    assert got[7] == [6.0, 5.0, 4.0, 3.0, 2.0]
    assert got[8] == []


def test_history_keeps_input_order() -> None:
    jobs = _jobs([("a", 50, 60, 5.0), ("a", 0, 10, 1.0), ("b", 70, 80, 7.0), ("a", 100, 110, 9.0)])
    assert history_durations(jobs).to_list() == [[1.0], [], [], [5.0, 1.0]]
