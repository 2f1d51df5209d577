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
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from gharuntime.contract import CONFIGS, HISTORY_MAX, SPLITS
from gharuntime.dataset import DatasetError, load, read_manifest
from gharuntime.errors import GharuntimeError
from gharuntime.history import history_durations
from gharuntime.matrix import MAX_MATRIX_JOBS
from gharuntime.workflow import ExpandedJob, job_key_of

__all__ = [
    "MATRIX_RUNS",
    "HistoryError",
    "RepoHistory",
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
]
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
class RepoHistory:
    """One repository's completed jobs in a dataset, ready to answer each job's history."""

    repo: str
    repo_id: int
    dataset: Path
    jobs: pl.DataFrame  # workflow_path, identity, job_name, run_id, completed_at, duration_s
    meta: dict[str, Any]  # the repository's job-table columns, from its latest job
    last_completed: datetime | None

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
    meta = {k: latest[k] for k in _COLUMNS if k.startswith("repo")}
    return RepoHistory(
        repo=str(latest["repo"]),
        repo_id=int(latest["repo_id"]),
        dataset=dataset,
        jobs=jobs,
        meta=meta,
        last_completed=latest["completed_at"],
    )
