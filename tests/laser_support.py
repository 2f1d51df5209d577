"""Shared by the LASER tests: a small dataset folder of the fixture jobs, each with a job YAML
block (LASER refuses a dataset without one)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from gharuntime.dataset import write_dataset
from gharuntime.fixture import fixture_jobs

__all__ = ["write_laser_dataset"]


def write_laser_dataset(
    out: Path, job_yaml: str, *, repos: int = 10, runs_per_repo: int = 3
) -> Path:
    """The fixture jobs of `repos` repositories × `runs_per_repo` runs, every one with
    `job_yaml`, written as a dataset folder at `out`."""
    jobs = fixture_jobs(repos=repos, runs_per_repo=runs_per_repo)
    write_dataset(
        jobs.with_columns(pl.lit(job_yaml).alias("job_yaml")),
        out,
        provenance={"kind": "fixture", "seed": 0},
    )
    return out
