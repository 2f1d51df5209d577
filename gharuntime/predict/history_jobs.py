"""Which of the repository's recent runs each expanded job takes its history from, before the
model sees it.

- A job's own runs: the same workflow path, job key and matrix values (gharuntime.predict
  .history).
- A moved job (a review paired it with a removed job that runs the same steps,
  gharuntime.predict.moves) that has no run of its own takes the removed job's runs: a `HistoryAlias`.
- A matrix given by an expression (`matrix: ${{ fromJSON(...) }}`), which no one knows before
  the run, becomes the jobs the repository's latest runs of it show (`RepoHistory.matrix_jobs`):
  one job per name seen, each with its own durations, marked `from_history`. A name GitHub gives
  as the job's name plus a suffix (`basic` → `basic (unit)`) keeps that suffix under the job's
  name here (`CI / basic (unit)` for a job moved into a called workflow); any other name is kept
  as the history has it. Without any run it stays one job, as before; so does one whose
  expansion would take the workflow past MAX_WORKFLOW_JOBS (at most GitHub's 256 names each).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import polars as pl

from gharuntime.contract import HISTORY_COLUMN
from gharuntime.predict.history import RepoHistory, job_identity
from gharuntime.workflow import MAX_WORKFLOW_JOBS, ExpandedJob, expand_matrix, job_key_of

__all__ = [
    "HistoryAlias",
    "HistoryJob",
    "JobUnit",
    "history_jobs",
    "history_rows",
    "is_expression_matrix",
    "member_label",
    "unit_of",
]

JobUnit = tuple[str, str]
"""A job as a review matches it, before any expansion from history: (job key, matrix values as
JSON)."""


def unit_of(key: str, matrix: Mapping[str, object] | None) -> JobUnit:
    return key, json.dumps(matrix, sort_keys=True, default=str)


@dataclass(frozen=True)
class HistoryAlias:
    """Where a moved job's history is: the removed job's workflow path and identity, and its
    name before any expansion from history (what its runs' names start with)."""

    workflow_path: str
    identity: str
    name: str


@dataclass(frozen=True)
class HistoryJob:
    """One job to predict: the expanded job (renamed for a matrix member from history), its row
    in the workflow's frame, its durations, where they were looked up, and for a matrix member
    from history (the name its runs' names were read against, the job name in the history)."""

    job: ExpandedJob
    row: int
    durations: list[float]
    lookup: tuple[str, str]
    from_history: tuple[str, str] | None = None


def is_expression_matrix(job: ExpandedJob) -> bool:
    """Whether the job's matrix (or its callee's) is an expression only the run knows."""
    return expand_matrix(job.spec.matrix) is None or (
        job.callee is not None and expand_matrix(job.callee.matrix) is None
    )


def member_label(from_history: tuple[str, str] | None) -> str:
    """What tells a matrix member from history apart from its siblings, whatever the job is
    called: the history's name after the prefix it was read against (` (unit)`), or the whole
    name when it does not start with it; "" for any other job."""
    if from_history is None:
        return ""
    prefix, name = from_history
    return name[len(prefix) :] if prefix and name.startswith(prefix) else name


def history_jobs(
    jobs: Sequence[ExpandedJob],
    history: RepoHistory,
    workflow_path: str,
    at: datetime,
    aliases: Mapping[JobUnit, HistoryAlias] | None = None,
) -> list[HistoryJob]:
    """Every job with the history it is predicted from (see the module), in file order; a
    matrix given by an expression may become several."""
    aliases = aliases or {}
    own = [(workflow_path, job_identity(j)) for j in jobs]
    lists = history.lookup(own, at)
    out: list[HistoryJob] = []
    for i, job in enumerate(jobs):
        alias = aliases.get(unit_of(job_key_of(job), job.matrix))
        if is_expression_matrix(job):
            members = _from_history(job, i, history, own[i], job.name, at)
            if not members and alias is not None:
                place = (alias.workflow_path, alias.identity)
                members = _from_history(job, i, history, place, alias.name, at)
            # the workflow's jobs stay within MAX_WORKFLOW_JOBS: past it, one job as before
            if members and len(out) + len(members) + len(jobs) - i - 1 <= MAX_WORKFLOW_JOBS:
                out.extend(members)
                continue
        durations, lookup = lists[i], own[i]
        if not durations and alias is not None:
            lookup = (alias.workflow_path, alias.identity)
            durations = history.lookup([lookup], at)[0]
        out.append(HistoryJob(job, i, durations, lookup))
    return out


def _from_history(
    job: ExpandedJob,
    row: int,
    history: RepoHistory,
    place: tuple[str, str],
    prefix: str,
    at: datetime,
) -> list[HistoryJob]:
    out = []
    for name, durations in history.matrix_jobs(*place, at):
        label = member_label((prefix, name))
        shown = job.name + label if label != name else name
        out.append(HistoryJob(replace(job, name=shown), row, durations, place, (prefix, name)))
    return out


def history_rows(frame: pl.DataFrame, picked: Sequence[HistoryJob]) -> pl.DataFrame:
    """The workflow's frame with one row per picked job: its row (repeated for each matrix
    member from history), its name, and its durations as history_duration_s."""
    if frame.height == 0:
        return frame
    rows = frame.select(pl.all().gather([p.row for p in picked]))
    return rows.with_columns(
        pl.Series("id", [f"predict-{i}" for i in range(len(picked))], dtype=pl.String),
        pl.Series("job_name", [p.job.name for p in picked], dtype=pl.String),
        pl.Series(HISTORY_COLUMN, [p.durations for p in picked], dtype=pl.List(pl.Float64)),
    )
