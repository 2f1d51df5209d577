"""A known repository's own recent job durations, read from a built dataset, as the
history_duration_s of the jobs `predict` expands from a workflow file.

A predicted job is matched to the dataset's jobs by repository, workflow path, job key and
matrix values: the identity the build gives each crawled job when it resolves GitHub's job name
against the workflow YAML (gharuntime.builder.jobkeys: `job_key_of` and the matrix combination
of the same expanded job), so a job renamed by its `name:` keeps its history and two matrix
combinations GitHub shows under one name do not share theirs. The durations are then taken the
way the build takes them (gharuntime.history.history_durations): up to HISTORY_MAX jobs that
completed strictly before the prediction time, most recent first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import numpy as np
import polars as pl

from gharuntime.contract import CONFIGS, HISTORY_MAX, SPLITS
from gharuntime.dataset import DatasetError, load, read_manifest
from gharuntime.errors import GharuntimeError
from gharuntime.history import history_durations
from gharuntime.matrix import MAX_MATRIX_JOBS
from gharuntime.workflow import ExpandedJob, job_key_of

__all__ = [
    "MATRIX_RUNS",
    "MIN_NOISE_RUNS",
    "NOISE_RUNS",
    "HistoryError",
    "RepoHistory",
    "RunSpread",
    "dataset_repos",
    "job_identity",
    "load_repo_history",
]

MATRIX_RUNS = 5
"""A matrix given by an expression is expanded into the job names seen in this many of the
job's latest runs (a union: the dataset keeps successful jobs only, so one run may lack one)."""

_COLUMNS = [
    "repo",
    "repo_id",
    "repo_language",
    "repo_stars",
    "repo_size_kb",
    "repo_topics",
    "repo_fork",
    "repo_created_at",
    "run_id",
    "workflow_path",
    "job_name",
    "job_key",
    "matrix",
    "created_at",
    "completed_at",
    "duration_s",
    "run_attempt",
    "event",
    "started_at",
]
NOISE_RUNS: Final = 30
"""The recent runs of a workflow its run-to-run noise is measured on."""
MIN_NOISE_RUNS: Final = 5
"""Fewer complete runs than this measure no noise."""
_CONFIG = next(iter(CONFIGS))  # every config holds every row; one is read
_SEP = "\x1f"


class HistoryError(GharuntimeError):
    """A dataset that cannot give a repository's history: not a dataset, or the repository is
    not in it."""


def _canonical_matrix(matrix: Any) -> str:
    """Matrix values as one comparable text: keys sorted, None and {} alike (the build writes
    no matrix for either)."""
    if not matrix:
        return ""
    return json.dumps(matrix, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def job_identity(job: ExpandedJob) -> str:
    """The build's identity of an expanded job: its job key (the caller's own key when a call
    was not followed, as the build records it) and its matrix values (as the build serialises
    them: anything JSON cannot hold as text)."""
    key = job_key_of(job) if job.call_problem is None else job.key
    matrix = json.loads(json.dumps(job.matrix, default=str)) if job.matrix else None
    return key + _SEP + _canonical_matrix(matrix)


def _row_identity(key: str | None, matrix: str | None) -> str | None:
    if key is None:
        return None  # a job the build could not resolve has no identity to match
    try:
        values = json.loads(matrix) if matrix else None
    except ValueError:
        return None
    return key + _SEP + _canonical_matrix(values)


@dataclass(frozen=True)
class RunSpread:
    """How much a workflow's runs vary with no change: over its `runs` most recent complete
    runs before a time (of `event` when it had enough of them, else of any event; a run is
    complete when it has at least the median number of jobs of those runs, since a run whose
    jobs were skipped, cancelled or failed sums less for that alone), the P10, median and P90
    of the sum of job time (`total_job_s`) and of the wall time from the first job's start to
    the last job's end (`wall_s`)."""

    runs: int
    event: str | None
    total_job_s: tuple[float, float, float]
    wall_s: tuple[float, float, float]

    def band(self, measure: str) -> float:
        """Half the P10–P90 width of `measure`: the ± a run swings by."""
        low, _, high = getattr(self, measure)
        return float(high - low) / 2.0

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "event": self.event,
            **{
                m: {
                    k: round(v, 1)
                    for k, v in zip(("p10", "median", "p90"), getattr(self, m), strict=True)
                }
                for m in ("total_job_s", "wall_s")
            },
        }


@dataclass(frozen=True)
class RepoHistory:
    """One repository's completed jobs in a dataset, ready to answer each job's history."""

    repo: str
    repo_id: int
    dataset: Path
    jobs: pl.DataFrame  # workflow_path, identity, job_name, run_id, completed_at, duration_s
    meta: dict[str, Any]  # the repository's job-table columns, from its latest job
    last_completed: datetime | None
    # per run: workflow_path, event, jobs, total_s, started, completed (empty: not loaded)
    runs: pl.DataFrame = field(default_factory=pl.DataFrame)

    def run_spread(self, workflow_path: str, at: datetime, event: str) -> RunSpread | None:
        """The run-to-run spread of `workflow_path`'s runs completed before `at` (RunSpread);
        None when fewer than MIN_NOISE_RUNS complete runs measure it."""
        if self.runs.is_empty():
            return None
        mine = self.runs.filter(
            (pl.col("workflow_path") == workflow_path) & (pl.col("completed") < at)
        )
        same = mine.filter(pl.col("event") == event)
        chosen, said = (same, event) if same.height >= MIN_NOISE_RUNS else (mine, None)
        recent = chosen.sort("completed").tail(NOISE_RUNS)
        if recent.height < MIN_NOISE_RUNS:
            return None
        median_jobs = float(np.median(recent["jobs"].to_numpy()))
        full = recent.filter(pl.col("jobs") >= median_jobs)
        if full.height < MIN_NOISE_RUNS:
            return None

        def levels(values: np.ndarray) -> tuple[float, float, float]:
            low, mid, high = np.percentile(values, [10, 50, 90])
            return float(low), float(mid), float(high)

        wall = (full["completed"] - full["started"]).dt.total_microseconds().to_numpy() / 1e6
        return RunSpread(
            runs=full.height,
            event=said,
            total_job_s=levels(full["total_s"].to_numpy()),
            wall_s=levels(wall.astype(np.float64)),
        )

    def durations(
        self, workflow_path: str, jobs: Sequence[ExpandedJob], at: datetime
    ) -> list[list[float]]:
        """Each job's history_duration_s at time `at` (same order as `jobs`; [] for none)."""
        return self.lookup([(workflow_path, job_identity(j)) for j in jobs], at)

    def lookup(self, keys: Sequence[tuple[str, str]], at: datetime) -> list[list[float]]:
        """history_duration_s at time `at` of each (workflow path, job identity) in `keys`."""
        if not keys:
            return []
        query = pl.DataFrame(
            {
                "repo_id": [self.repo_id] * len(keys),
                "workflow_path": [path for path, _ in keys],
                "job_name": [identity for _, identity in keys],
                "created_at": [at] * len(keys),
            },
            schema={
                "repo_id": pl.Int64,
                "workflow_path": pl.String,
                "job_name": pl.String,
                "created_at": pl.Datetime("us", "UTC"),
            },
        )
        pool = self.jobs.select(
            pl.lit(self.repo_id, dtype=pl.Int64).alias("repo_id"),
            "workflow_path",
            pl.col("identity").alias("job_name"),
            "completed_at",
            "duration_s",
        )
        lists: list[list[float]] = history_durations(query, pool).to_list()
        return lists

    def matrix_jobs(
        self, workflow_path: str, identity: str, at: datetime
    ) -> list[tuple[str, list[float]]]:
        """The jobs a matrix given by an expression made in the repository's recent runs: the
        job names seen under this workflow path and identity (job key, no matrix values: the
        build cannot resolve them either) in its latest MATRIX_RUNS runs completed strictly
        before `at`, sorted, each with its own durations (up to HISTORY_MAX, most recent
        first); at most GitHub's MAX_MATRIX_JOBS, the latest seen. [] when it never ran."""
        mine = self.jobs.filter(
            (pl.col("workflow_path") == workflow_path)
            & (pl.col("identity") == identity)
            & (pl.col("completed_at") < at)
        )
        if mine.height == 0:
            return []
        runs = (
            mine.group_by("run_id")
            .agg(pl.col("completed_at").max())
            .sort(["completed_at", "run_id"], descending=True)
            .head(MATRIX_RUNS)["run_id"]
        )
        seen = (
            mine.filter(pl.col("run_id").is_in(runs.to_list()))
            .group_by("job_name")
            .agg(pl.col("completed_at").max())
            .sort(["completed_at", "job_name"], descending=[True, False])
        )
        names = sorted(seen["job_name"].head(MAX_MATRIX_JOBS).to_list())
        latest = mine.sort("completed_at", descending=True, maintain_order=True)
        return [
            (
                name,
                latest.filter(pl.col("job_name") == name)["duration_s"].head(HISTORY_MAX).to_list(),
            )
            for name in names
        ]


def dataset_repos(dataset: Path) -> list[str]:
    """The repositories a dataset holds (full names, sorted)."""
    return sorted(_read(dataset, ["repo"])["repo"].unique().to_list())


def _read(dataset: Path, columns: list[str]) -> pl.DataFrame:
    try:
        read_manifest(dataset)
        return pl.concat([load(dataset, _CONFIG, split, columns=columns) for split in SPLITS])
    except DatasetError as exc:
        raise HistoryError(
            str(exc),
            fix="give a dataset folder written by `gharuntime learn` (its dataset/) or "
            "`gharuntime build`",
        ) from None


def load_repo_history(dataset: Path, repo: str) -> RepoHistory:
    """`repo`'s jobs in `dataset` (matched without regard to case, as GitHub names are).
    Raises HistoryError when the dataset does not hold it, naming those it holds."""
    rows = _read(dataset, _COLUMNS)
    mine = rows.filter(pl.col("repo").str.to_lowercase() == repo.lower())
    if mine.height == 0:
        held = sorted(rows["repo"].unique().to_list())
        shown = ", ".join(held[:10]) + (f" and {len(held) - 10} more" if len(held) > 10 else "")
        raise HistoryError(
            f"{repo} was never crawled into this dataset (it holds {shown or 'no repository'})",
            where=str(dataset),
            fix=f"learn it first: gharuntime learn {repo} --token-env GITHUB_TOKEN --out DIR, "
            "or give --history-from a dataset built from a crawl of it",
        )
    latest = mine.sort("completed_at").row(-1, named=True)
    identities = [
        _row_identity(k, m)
        for k, m in zip(mine["job_key"].to_list(), mine["matrix"].to_list(), strict=True)
    ]
    jobs = (
        mine.select("workflow_path", "job_name", "run_id", "completed_at", "duration_s")
        .with_columns(pl.Series("identity", identities, dtype=pl.String))
        .filter(pl.col("identity").is_not_null())
    )
    meta = {k: latest[k] for k in _COLUMNS if k.startswith("repo_") or k == "repo"}
    runs = (
        mine.filter(pl.col("duration_s").is_not_null() & pl.col("completed_at").is_not_null())
        .group_by("workflow_path", "run_id", "run_attempt")
        .agg(
            pl.col("event").first(),
            pl.len().alias("jobs"),
            pl.col("duration_s").sum().alias("total_s"),
            pl.col("started_at").min().alias("started"),
            pl.col("completed_at").max().alias("completed"),
        )
        .filter(pl.col("started").is_not_null())
    )
    return RepoHistory(
        repo=str(latest["repo"]),
        repo_id=int(latest["repo_id"]),
        dataset=dataset,
        jobs=jobs,
        meta=meta,
        last_completed=latest["completed_at"],
        runs=runs,
    )
