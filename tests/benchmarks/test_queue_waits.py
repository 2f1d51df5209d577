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
    missing = subprocess.run(
        [sys.executable, str(SCRIPT), "--dataset", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "no manifest.json" in missing.stderr
