"""benchmarks/queue_waits.py: the waits per repository, split and month, apart for jobs with
`needs`, and the share of jobs created with their run, on a dataset made here where half the
repositories create a dependent job with its run and half when it can start."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import polars as pl
from script_support import load_script

from gharuntime.dataset import write_dataset
from gharuntime.fixture import fixture_jobs

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "queue_waits.py"


def _dataset(out: Path) -> Path:
    """The fixture jobs; in every run the second job needs the first. In repo-0 to repo-4 it is
    created 300 s after the run's start (when it can start), elsewhere with the run, its wait
    then 300 s longer (counted from the run's start)."""
    jobs = fixture_jobs().with_columns(pl.int_range(pl.len()).over("run_id").alias("i"))
    late = pl.col("repo").str.extract(r"repo-(\d+)$").cast(pl.Int64) < 5
    second = pl.col("i") == 1
    jobs = jobs.with_columns(
        pl.when(second).then(pl.lit(["first"])).otherwise(pl.col("needs")).alias("needs"),
        pl.when(second & late)
        .then(pl.col("created_at") + timedelta(seconds=300))
        .otherwise(pl.col("created_at"))
        .alias("created_at"),
        pl.when(second & ~late)
        .then(pl.col("queue_s") + 300)
        .otherwise(pl.col("queue_s"))
        .alias("queue_s"),
    ).drop("i")
    write_dataset(jobs, out, provenance={"kind": "fixture", "seed": 0})
    return out


def test_dependent_jobs_created_with_their_run_are_told_apart(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "d")
    rows = load_script("queue_waits").months(dataset, "temporal")
    with_run = [r for r in rows if r["needs"]]
    assert with_run and {r["repo"][-6:] for r in with_run} >= {"repo-0", "repo-9"}
    for r in with_run:
        late = int(r["repo"].rsplit("-", 1)[1]) < 5
        assert r["created_at_run_start"] == (0.0 if late else 1.0), r
        assert (r["p50_s"] < 100) if late else (r["p50_s"] > 300), r
    assert all(r["created_at_run_start"] == 1.0 for r in rows if not r["needs"])
    assert sum(r["jobs"] for r in rows) == 600


def test_the_script_ends_with_one_json_line_and_refuses_without_a_dataset(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "d")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--dataset", str(dataset)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["benchmark"] == "queue_waits" and figures["months"]
    assert set(figures["shift"]) == {"queue_s", "wait_s"}
    missing = subprocess.run(
        [sys.executable, str(SCRIPT), "--dataset", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "no manifest.json" in missing.stderr


def test_the_wait_for_a_runner_counts_from_the_needed_jobs_completion(tmp_path: Path) -> None:
    """Every run's second job needs its first and is created with the run; it starts 5 s after
    the first completes, so its wait for a runner is 5 s while queue_s also holds the first's
    run time. A job whose needed key is not in the dataset keeps its creation as the start."""
    jobs = fixture_jobs().with_columns(pl.int_range(pl.len()).over("run_id").alias("i"))
    first_done = pl.col("completed_at").filter(pl.col("i") == 0).first().over("run_id")
    run_start = pl.col("created_at").min().over("run_id")
    second, third = pl.col("i") == 1, pl.col("i") == 2
    jobs = jobs.with_columns(
        pl.when(pl.col("i") == 0)
        .then(pl.lit("first"))
        .otherwise(pl.col("job_key"))
        .alias("job_key"),
        pl.when(second)
        .then(pl.lit(["first"]))
        .when(third)
        .then(pl.lit(["gone"]))
        .otherwise(pl.lit([], dtype=pl.List(pl.String)))
        .alias("needs"),
        pl.when(second).then(run_start).otherwise(pl.col("created_at")).alias("created_at"),
        pl.when(second)
        .then(first_done + timedelta(seconds=5))
        .otherwise(pl.col("started_at"))
        .alias("started_at"),
    )
    jobs = jobs.with_columns(
        ((pl.col("started_at") - pl.col("created_at")).dt.total_milliseconds() / 1000).alias(
            "queue_s"
        ),
        (pl.col("completed_at") - pl.col("started_at")).dt.total_milliseconds().alias("_ms"),
    )
    jobs = jobs.with_columns(
        pl.when(second)
        .then(pl.col("started_at") + pl.duration(milliseconds=60_000))
        .otherwise(pl.col("completed_at"))
        .alias("completed_at")
    ).with_columns(
        ((pl.col("completed_at") - pl.col("started_at")).dt.total_milliseconds() / 1000).alias(
            "duration_s"
        )
    )
    write_dataset(jobs.drop("i", "_ms"), tmp_path / "d", provenance={"kind": "fixture", "seed": 0})
    got = load_script("queue_waits")._jobs(tmp_path / "d", "temporal")
    assert got.height == 600
    by_id = dict(zip(jobs["id"], jobs["i"], strict=True))
    got = got.with_columns(pl.col("id").replace_strict(by_id).alias("i"))
    dependent = got.filter(pl.col("i") == 1)
    assert dependent.height == 200
    assert dependent["wait_s"].to_list() == [5.0] * 200
    assert (dependent["queue_s"] > 5.0).all()  # the first job's run time is in it
    others = got.filter(pl.col("i") != 1)
    assert others["wait_s"].to_list() == others["queue_s"].to_list()


def test_shift_shares_are_those_of_the_validation_band() -> None:
    """Validation waits 1..10 s (P10 1.9, P90 9.1); of the test's 10 jobs 2 are below the band,
    5 inside and 3 above, for both measures."""
    val = [float(v) for v in range(1, 11)]
    test = [0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 9.0, 9.5, 20.0, 30.0]
    jobs = pl.DataFrame(
        {
            "split": ["validation"] * 10 + ["test"] * 10,
            "queue_s": val + test,
            "wait_s": val + test,
        }
    )
    moved = load_script("queue_waits").shift(jobs)
    for measure in ("queue_s", "wait_s"):
        m = moved[measure]
        assert m["validation_p10_p50_p90_s"] == [1.9, 5.5, 9.1]
        assert (m["test_below"], m["test_inside"], m["test_above"]) == (0.2, 0.5, 0.3)
