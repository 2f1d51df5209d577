"""Predict the jobs of a workflow file that may never have run: expand its jobs and matrix the
way GitHub does (gharuntime.workflow), build job-table rows with the repository's metadata, and
run a saved model on them.

Repository metadata comes from a `--repo-meta` JSON file — either GitHub's repository object
(`GET /repos/{owner}/{repo}`: `full_name`, `id`, `language`, `stargazers_count`, `size`, `fork`,
`created_at`) or the job table's own names (`repo`, `repo_id`, `repo_language`, `repo_stars`,
`repo_size_kb`, `repo_fork`, `repo_created_at`) — or from options. Defaults (documented in
`RepoMeta`): an unknown language, stars and size (the model treats them as missing), not a fork,
a `push` on the default branch, now.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

import numpy as np
import polars as pl

from gharuntime.baselines.method import Method
from gharuntime.contract import HISTORY_COLUMN, job_table_schema
from gharuntime.expressions import Partial, UnknownExpression, evaluate
from gharuntime.predict.history import RepoHistory
from gharuntime.predict.history_jobs import HistoryAlias, JobUnit, history_jobs, history_rows
from gharuntime.predict.siblings import MATRIX_SIBLINGS, anchor_on_siblings
from gharuntime.predict.steps import step_fingerprint
from gharuntime.predict.timeout import Timeout, recommend_timeout
from gharuntime.readfile import InputFileError, read_text
from gharuntime.workflow import (
    MAX_YAML_BYTES,
    ExpandedJob,
    Workflow,
    WorkflowError,
    expand_jobs,
    expand_matrix,
    job_key_of,
    job_needs,
    job_yaml_of,
    local_callee_path,
    parse_workflow,
    runner_os,
)

__all__ = [
    "BASIS_WORDS",
    "FLAGS",
    "FLAG_WORDS",
    "HISTORY_MATRIX",
    "WAIT_TARGET",
    "JobPrediction",
    "RepoMeta",
    "WorkflowPrediction",
    "critical_path_draws",
    "human_seconds",
    "job_context",
    "job_flags",
    "may_skip",
    "predict_workflow",
    "repo_meta_from_json",
    "repo_workflow_path",
    "wait_json",
    "workflow_rows",
]


@dataclass(frozen=True)
class RepoMeta:
    """What the model knows about the repository and the trigger; None means unknown."""

    repo: str = "local/repository"
    repo_id: int = 0
    language: str | None = None
    stars: int | None = None
    size_kb: int | None = None
    fork: bool = False
    created_at: datetime | None = None
    topics: tuple[str, ...] = ()
    event: str = "push"
    default_branch: bool = True


def _parse_time(value: Any) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value
    text = str(value).replace("Z", "+00:00")
    try:
        t = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"not an ISO 8601 time: {value!r}") from exc
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def repo_meta_from_json(data: Mapping[str, Any], base: RepoMeta | None = None) -> RepoMeta:
    """RepoMeta from GitHub's repository object or from job-table column names."""
    base = base or RepoMeta()

    def pick(*names: str) -> Any:
        return next((data[n] for n in names if n in data and data[n] is not None), None)

    def opt_int(*names: str) -> int | None:
        value = pick(*names)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{names[0]} must be a number, not {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{names[0]} must be a finite number, not {value!r}")
        if not -(2**63) <= int(value) < 2**63:
            raise ValueError(f"{names[0]} {int(value)} is out of range")
        return int(value)

    def opt_str(*names: str) -> str | None:
        value = pick(*names)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ValueError(f"{names[0]} must be a string, not {type(value).__name__}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"{names[0]} is not valid Unicode (a lone surrogate)") from None
        return value

    repo = opt_str("full_name", "repo")
    repo_id = opt_int("id", "repo_id")
    fork = pick("fork", "repo_fork")
    topics = pick("topics", "repo_topics")
    return replace(
        base,
        repo=str(repo) if repo is not None else base.repo,
        repo_id=repo_id if repo_id is not None else base.repo_id,
        language=opt_str("language", "repo_language") or base.language,
        stars=opt_int("stargazers_count", "repo_stars")
        if pick("stargazers_count", "repo_stars") is not None
        else base.stars,
        size_kb=opt_int("size", "repo_size_kb")
        if pick("size", "repo_size_kb") is not None
        else base.size_kb,
        fork=bool(fork) if fork is not None else base.fork,
        created_at=_parse_time(pick("created_at", "repo_created_at")) or base.created_at,
        topics=tuple(str(t).encode("utf-8", "replace").decode() for t in topics)
        if isinstance(topics, list)
        else base.topics,
    )


POST_STEP_ACTIONS = frozenset(
    {
        "actions/checkout",
        "actions/cache",
        "actions/setup-node",
        "actions/setup-python",
        "actions/setup-java",
        "actions/setup-go",
        "docker/login-action",
        "docker/setup-buildx-action",
    }
)
"""Actions whose `post:` step GitHub lists as `Post <step name>` after the job's steps."""


def _step_names(job: ExpandedJob) -> list[str]:
    """Step names as GitHub lists them: Set up job, each step, the post steps of actions that
    have one (in reverse order), Complete job."""
    names = ["Set up job"]
    posts: list[str] = []
    for step in (job.callee or job.spec).steps:
        uses, run = step.get("uses"), step.get("run")
        if step.get("name"):
            name = str(step["name"])
        elif uses:
            name = f"Run {uses}"
        elif run and str(run).strip():
            name = f"Run {str(run).strip().splitlines()[0]}"
        else:
            continue
        names.append(name)
        if isinstance(uses, str) and uses.split("@", 1)[0].lower() in POST_STEP_ACTIONS:
            posts.append(f"Post {name}")
    names.extend(reversed(posts))
    names.append("Complete job")
    return names


def _local_resolver(workflow_path: Path | None) -> Any:
    """Resolve `uses: ./.github/workflows/x.yml` against the repository holding the file."""
    if workflow_path is None:
        return None
    root = next(
        (p.parent for p in workflow_path.resolve().parents if p.name == ".github"),
        None,
    )

    def resolve(uses: str) -> Workflow | None:
        rel = local_callee_path(uses)
        if root is None or rel is None:
            return None
        path = root / rel
        try:
            return parse_workflow(read_text(path, MAX_YAML_BYTES), str(path))
        except (InputFileError, WorkflowError):
            return None

    return resolve


def _repo_path(workflow_path: Path | None) -> str | None:
    """`.github/workflows/x.yml` of a file inside a repository (so a call back to it is seen as
    a cycle), else None."""
    if workflow_path is None:
        return None
    resolved = workflow_path.resolve()
    root = next((p.parent for p in resolved.parents if p.name == ".github"), None)
    return resolved.relative_to(root).as_posix() if root is not None else None


def repo_workflow_path(local_file: Path | None, path: str) -> str:
    """The workflow path GitHub records for its runs (`.github/workflows/ci.yml`): the file's
    place under the repository's `.github/`, or, for a file outside one, its name under
    `.github/workflows/` (where GitHub reads workflows from)."""
    inside = _repo_path(local_file)
    if inside is not None:
        return inside
    return f".github/workflows/{(local_file.name if local_file is not None else Path(path).name)}"


FLAGS: dict[str, str] = {
    "remote_reusable": "calls a reusable workflow that could not be read (another repository, or "
    "a file not found): its jobs are unknown, predicted as one job from the caller's YAML",
    "reusable_refused": "calls reusable workflows in a cycle or nested deeper than GitHub's "
    "levels: GitHub refuses such a run; predicted as one job from the caller's YAML",
    "unknown_inputs": "a job of a reusable workflow whose `with:` inputs are expressions known "
    "only at run time: those `${{ inputs.* }}` are left as written",
    "expression_matrix": "its matrix is an expression only known at run time, and the "
    "repository's history has no run of it: counted as one job",
    "history_matrix": "its matrix is an expression only known at run time: one job for each name "
    "the job's latest runs in the repository's history show, each from its own runs",
    "conditional": "gated by `if:`: it may be skipped, so it is left out of the sums without "
    "conditional jobs",
    "needs_cycle": "on or behind a cycle of `needs:` (GitHub refuses such a run): the critical "
    "path counts only its waits outside the cycle",
}

FLAG_WORDS: dict[str, str] = {
    "remote_reusable": "reusable workflow not read",
    "reusable_refused": "reusable workflow cycle or too deep",
    "unknown_inputs": "with: inputs from expressions",
    "expression_matrix": "matrix from an expression",
    "history_matrix": "matrix from history",
    "conditional": "if: may skip it",
    "needs_cycle": "needs: cycle",
}
"""Each flag in a few words, for a table's `cannot know` column."""


def human_seconds(seconds: float) -> str:
    """`42s`, `3m 05s`, `1h 02m`: a duration as a CI engineer reads it (a sign when negative)."""
    s = round(abs(seconds))
    if s < 60:
        text = f"{s}s"
    elif s < 3600:
        text = f"{s // 60}m {s % 60:02d}s"
    else:
        text = f"{s // 3600}h {(s % 3600) // 60:02d}m"
    return ("−" if seconds < 0 and s else "") + text


"""What `predict` cannot know about a job, by flag name."""


STATUS_IN_A_PASSING_RUN: Final = {
    "success": True,
    "always": True,
    "cancelled": False,
    "failure": False,
}
"""The status functions of an `if:` in a run whose earlier jobs all pass (the run predict
predicts): a job gated by `always()` or `success()` runs, one gated by `failure()` does not."""


def _condition_text(condition: str) -> str | None:
    """The expression of an `if:` (written with or without `${{ }}`); None when it mixes text
    and expressions, which predict does not read."""
    text = condition.strip()
    if text.startswith("${{") and text.endswith("}}") and text.count("${{") == 1:
        return text[3:-2]
    return None if "${{" in text else text


def may_skip(condition: str | None, context: Mapping[str, Any] | None) -> bool:
    """Whether a job gated by `condition` may be skipped in a passing run on the trigger
    `context` describes (`github`: a Partial holding what is known, `matrix`): False when the
    `if:` is true there (`always()`, `github.event_name == 'push'` on a push, ...), True when
    it is false or needs what predict cannot know (`needs.*.outputs`, `vars`, ...). Without a
    context every `if:` may skip."""
    if condition is None:
        return False
    if context is None:
        return True
    text = _condition_text(condition)
    if text is None:
        return True
    if text.lower() in ("true", "false"):  # YAML's `if: true` (read as a boolean)
        return text.lower() == "false"
    try:
        return not bool(evaluate(text, context, STATUS_IN_A_PASSING_RUN))
    except UnknownExpression:
        return True


def job_context(job: ExpandedJob, event: str, repo: str | None) -> dict[str, Any]:
    """What an `if:` of `job` can read in the run predicted: the trigger's name, the
    repository's name when known, the job's matrix values when known."""
    github = Partial(event_name=event)
    if repo is not None:
        github["repository"] = repo
    context: dict[str, Any] = {"github": github}
    if job.matrix is not None or expand_matrix(job.spec.matrix) is not None:
        context["matrix"] = job.matrix or {}
    return context


def job_flags(job: ExpandedJob, context: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The FLAGS that apply to one expanded job, in FLAGS order. With `context` (job_context),
    an `if:` flags the job only when it may skip it there."""
    flags = []
    if job.call_problem in ("cycle", "too_deep"):
        flags.append("reusable_refused")
    elif job.call_problem is not None:
        flags.append("remote_reusable")
    if job.unknown_inputs:
        flags.append("unknown_inputs")
    if expand_matrix(job.spec.matrix) is None or (
        job.callee is not None and expand_matrix(job.callee.matrix) is None
    ):
        flags.append("expression_matrix")
    if may_skip(job.spec.condition, context) or may_skip(job.callee_if, context):
        flags.append("conditional")
    return tuple(flags)


def _known_labels(job: ExpandedJob) -> list[str]:
    """Runner labels the model may see: a label still holding `${{ ... }}` is unknown."""
    return [x for x in job.runner_labels if "${{" not in x and x.strip()]


def workflow_rows(
    text: str,
    *,
    path: str,
    meta: RepoMeta,
    at: datetime,
    workflow: Workflow | None = None,
    local_file: Path | None = None,
    resolve_reusable: Callable[[str], Workflow | None] | None = None,
) -> tuple[pl.DataFrame, list[ExpandedJob]]:
    """Job-table rows (inputs filled, outcome columns null) for every job GitHub would create.
    Local reusable workflows are read by `resolve_reusable` when given (a side of a review),
    else beside `local_file`; `path` is the workflow's identity."""
    wf = workflow or parse_workflow(text, path)
    if resolve_reusable is not None:
        jobs = expand_jobs(wf, resolve_reusable, chain=(path,))
    else:
        jobs = expand_jobs(wf, _local_resolver(local_file), chain=(_repo_path(local_file) or path,))
    sha = hashlib.sha256(text.encode()).hexdigest()
    rows = []
    for i, job in enumerate(jobs):
        labels = _known_labels(job)
        rows.append(
            {
                "id": f"predict-{i}",
                "repo": meta.repo,
                "repo_id": meta.repo_id,
                "repo_language": meta.language,
                "repo_stars": meta.stars,
                "repo_size_kb": meta.size_kb,
                "repo_topics": list(meta.topics),
                "repo_fork": meta.fork,
                "repo_created_at": meta.created_at,
                "run_attempt": 1,
                "event": meta.event,
                "is_default_branch": meta.default_branch,
                "workflow_path": path,
                "workflow_name": wf.name or path,
                "workflow_sha256": sha,
                "job_name": job.name,
                "job_key": job_key_of(job),
                "job_yaml": job_yaml_of(job),
                "matrix": json.dumps(job.matrix) if job.matrix is not None else None,
                "runner_labels": labels,
                "runner_os": runner_os(labels),
                "needs": list(job_needs(job)),
                "step_names": _step_names(job),
                "created_at": at,
                HISTORY_COLUMN: [],
            }
        )
    schema = job_table_schema()
    # The file's text is the same in every row: added as one literal (a string view column
    # whose rows all point at one buffer), not copied into each row's dict.
    frame = (
        pl.DataFrame(rows, schema={k: v for k, v in schema.items() if k != "workflow_yaml"})
        .with_columns(pl.lit(text, dtype=pl.String).alias("workflow_yaml"))
        .select(list(schema))
        if rows
        else pl.DataFrame(schema=schema)
    )
    return frame, jobs


HISTORY_MATRIX = "from-history matrix"
"""The basis of a job of a matrix given by an expression, expanded from the history."""


@dataclass(frozen=True)
class JobPrediction:
    """One expanded job and its predicted targets."""

    key: str
    name: str
    runner_labels: tuple[str, ...]
    runner_os: str | None
    matrix: dict[str, Any] | None
    needs: tuple[str, ...]
    predicted: dict[str, float]
    flags: tuple[str, ...] = ()
    quantiles: dict[str, float] = field(default_factory=dict)  # duration_s by level
    timeout: Timeout | None = None
    basis: str | None = None  # a BASIS_WORDS key when the repository's history was asked for
    history: tuple[float, ...] = ()  # the job's recent durations the prediction used
    steps: str = ""  # what its steps run (moves.step_fingerprint): a review pairs moves by it
    history_key: tuple[str, str] | None = None  # (workflow path, identity) its history is under
    from_history: tuple[str, str] | None = None  # a matrix member from history: history_jobs
    wait: dict[str, float] = field(default_factory=dict)  # queue_s by level (p50: the median)


BASIS_WORDS: dict[str, str] = {
    "history": "predicted by the history-track model from the job's own recent runs",
    "config fallback": "no earlier run of this job (workflow path, job key, matrix values) in "
    "the repository's history: predicted by the config-track model from its configuration",
    "no history": "no earlier run of this job in the repository's history, and no config-track "
    "model to fall back on: predicted by the history-track model without history",
    HISTORY_MATRIX: "its matrix is an expression only known at run time: one job per name its "
    "latest runs in the repository's history show, each predicted by the history-track model "
    "from that job's own recent runs",
    MATRIX_SIBLINGS: "no earlier run of this matrix combination, but of the same job's other "
    "combinations: predicted by the config-track model, scaled by how far those combinations' "
    "recent runs (their medians) sit from the config-track model's predictions for them "
    "(the median ratio over those it predicts most alike; their spread widens the range)",
}
"""What each job's prediction rests on, when `predict` is given the repository's history."""


@dataclass(frozen=True)
class WorkflowPrediction:
    """All jobs of a workflow, with the two totals a CI engineer asks for."""

    path: str
    jobs: list[JobPrediction]
    total_job_s: float  # sum over jobs: what billing sees (before per-job rounding)
    critical_path_s: float  # longest chain through `needs`, matrix jobs in parallel
    model: dict[str, Any] = field(default_factory=dict)
    unconditional_job_s: float = 0.0  # the sum without jobs gated by `if:`
    unconditional_path_s: float = 0.0  # the critical path without jobs gated by `if:`
    path_quantiles: dict[str, float] = field(default_factory=dict)  # critical path of each level

    @property
    def flagged(self) -> dict[str, int]:
        """How many jobs carry each flag (only flags that occur)."""
        counts = {f: sum(f in j.flags for j in self.jobs) for f in FLAGS}
        return {f: n for f, n in counts.items() if n}

    def to_json(self) -> dict[str, Any]:
        return {
            "workflow": self.path,
            "model": self.model,
            "jobs": [
                {
                    "key": j.key,
                    "name": j.name,
                    "runner_labels": list(j.runner_labels),
                    "runner_os": j.runner_os,
                    "matrix": j.matrix,
                    "needs": list(j.needs),
                    "flags": list(j.flags),
                    **{k: round(v, 1) for k, v in j.predicted.items()},
                    **_range_json(j.quantiles, j.timeout),
                    **_basis_json(j),
                    "wait_s": wait_json(j.wait),
                }
                for j in self.jobs
            ],
            "total_job_s": round(self.total_job_s, 1),
            "critical_path_s": round(self.critical_path_s, 1),
            "total_job_s_without_conditional": round(self.unconditional_job_s, 1),
            "critical_path_s_without_conditional": round(self.unconditional_path_s, 1),
            "critical_path_p10_s": _round(self.path_quantiles.get("p10")),
            "critical_path_p90_s": _round(self.path_quantiles.get("p90")),
            "flags": {f: {"jobs": n, "meaning": FLAGS[f]} for f, n in self.flagged.items()},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def wait_json(wait: Mapping[str, float]) -> dict[str, float | None] | None:
    """A job's wait for a runner: `median` (its P50), `p10`, `p90`, `p99` (s); None when the
    model gives no wait."""
    if not wait:
        return None
    return {
        "median": _round(wait.get("p50")),
        "p10": _round(wait.get("p10")),
        "p90": _round(wait.get("p90")),
        "p99": _round(wait.get("p99")),
    }


def _basis_json(job: JobPrediction) -> dict[str, Any]:
    """`basis` and `history_s` (the durations used, most recent first), only when the
    repository's history was asked for."""
    if job.basis is None:
        return {}
    return {"basis": job.basis, "history_s": [round(x, 1) for x in job.history]}


def _range_json(quantiles: dict[str, float], timeout: Timeout | None) -> dict[str, Any]:
    """A job's `p10`, `p90` (duration, s), `timeout_minutes` and what the timeout rests on;
    null where the model gives no range."""
    return {
        "p10": _round(quantiles.get("p10")),
        "p90": _round(quantiles.get("p90")),
        "p99": _round(quantiles.get("p99")),
        "timeout_minutes": timeout.minutes if timeout else None,
        "timeout_basis": timeout.basis if timeout else None,
    }


def _waits(jobs: list[JobPrediction]) -> dict[str, list[str]]:
    """Each job key → the job keys it waits for; `needs: caller` waits for every job of the
    workflow the caller calls (`caller/...`)."""
    keys = {j.key for j in jobs}
    members: dict[str, list[str]] = {}
    for key in keys:
        parts = key.split("/")
        for i in range(1, len(parts)):
            members.setdefault("/".join(parts[:i]), []).append(key)
    waits: dict[str, list[str]] = {}
    for j in jobs:
        deps = waits.setdefault(j.key, [])
        for need in j.needs:
            deps.extend([need] if need in keys else members.get(need, ()))
    return waits


def _order(waits: Mapping[str, list[str]]) -> tuple[list[str], set[str]]:
    """Keys in an order where each comes after all it waits for (a loop, not recursion: a chain
    of thousands of jobs is no deeper than one), and the keys on or behind a `needs` cycle."""
    users: dict[str, list[str]] = {k: [] for k in waits}
    pending = {k: 0 for k in waits}
    for key, deps in waits.items():
        for dep in set(deps):
            users[dep].append(key)
            pending[key] += 1
    ready = [k for k, n in pending.items() if n == 0]
    order: list[str] = []
    while ready:
        key = ready.pop()
        order.append(key)
        for user in users[key]:
            pending[user] -= 1
            if pending[user] == 0:
                ready.append(user)
    return order, set(waits) - set(order)


def needs_cycle(jobs: list[JobPrediction]) -> set[str]:
    """Keys of the jobs on or behind a `needs` cycle (GitHub refuses such a run)."""
    return _order(_waits(jobs))[1]


def critical_path(jobs: list[JobPrediction], level: str | None = None) -> float:
    """Wall time if every job started as soon as its `needs` finished (queueing ignored); with
    `level`, the path of each job's quantile of that level (the P90s' path: not the P90 of the
    path, which no model gives). Jobs on a `needs` cycle (flagged `needs_cycle`) wait only for
    the jobs outside it."""
    longest: dict[str, float] = {}
    for j in jobs:
        value = j.quantiles.get(level, 0.0) if level else j.predicted.get("duration_s", 0.0)
        longest[j.key] = max(longest.get(j.key, 0.0), value)
    waits = _waits(jobs)
    order, stuck = _order(waits)
    finish: dict[str, float] = {}
    for key in [*order, *sorted(stuck)]:
        start = max((finish.get(d, 0.0) for d in waits[key] if d in finish), default=0.0)
        finish[key] = start + longest[key]
    return max(finish.values(), default=0.0)


def critical_path_draws(jobs: list[JobPrediction], seconds: np.ndarray) -> np.ndarray:
    """`critical_path` in each of many draws: `seconds[i]` holds job i's drawn durations (one
    column per draw); the path of each draw is computed as critical_path computes one."""
    draws = seconds.shape[1] if seconds.ndim == 2 else 0
    longest: dict[str, np.ndarray] = {}
    for j, row in zip(jobs, seconds, strict=True):
        longest[j.key] = np.maximum(longest[j.key], row) if j.key in longest else row
    waits = _waits(jobs)
    order, stuck = _order(waits)
    finish: dict[str, np.ndarray] = {}
    zero = np.zeros(draws)
    for key in [*order, *sorted(stuck)]:
        start = zero
        for d in waits[key]:
            if d in finish:
                start = np.maximum(start, finish[d])
        finish[key] = start + longest[key]
    path = zero
    for value in finish.values():
        path = np.maximum(path, value)
    return path


def _run(
    method: Method, frame: pl.DataFrame
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """A method's predictions for `frame`, and its duration quantiles by level."""
    if frame.height == 0:
        return {}, {}
    predicted = {t: np.asarray(v, dtype=np.float64) for t, v in method.predict_rows(frame).items()}
    levels = {
        q: np.asarray(by_target["duration_s"], dtype=np.float64)
        for q, by_target in method.quantiles().items()
        if "duration_s" in by_target
    }
    return predicted, levels


WAIT_TARGET: Final = "queue_s"
"""The target whose prediction is a job's wait for a runner (started − created)."""


def _wait_levels(method: Method | None, frame: pl.DataFrame) -> list[dict[str, float]]:
    """Each row's queue_s by level (p10, p50, p90, p99 where the model gives them; p50 is the
    point prediction when it gives no levels); [{}] * rows without a wait model."""
    if method is None or WAIT_TARGET not in method.targets or frame.height == 0:
        return [{} for _ in range(frame.height)]
    point = np.asarray(method.predict_rows(frame)[WAIT_TARGET], dtype=np.float64)
    levels = {
        q: np.asarray(by_target[WAIT_TARGET], dtype=np.float64)
        for q, by_target in method.quantiles().items()
        if WAIT_TARGET in by_target
    }
    out = []
    for i in range(frame.height):
        row = {q: float(v[i]) for q, v in levels.items()}
        row.setdefault("p50", float(point[i]))
        out.append(row)
    return out


def _merge(
    n: int, parts: list[tuple[np.ndarray, dict[str, np.ndarray]]], keys: set[str]
) -> dict[str, np.ndarray]:
    """Arrays of several models' row subsets, scattered back into row order (only the keys
    every part gives)."""
    out = {k: np.zeros(n, dtype=np.float64) for k in keys}
    for rows, values in parts:
        for k in keys:
            out[k][rows] = values[k]
    return out


def _predict_frame(
    frame: pl.DataFrame,
    method: Method,
    fallback: Method | None,
    with_history: np.ndarray | None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Predictions and duration quantiles for every row: rows with history (or all rows, when
    no history was asked for or there is no fallback) by `method`, the others by `fallback`."""
    if with_history is None or fallback is None or with_history.all():
        return _run(method, frame)
    n = frame.height
    mine = np.flatnonzero(with_history)
    other = np.flatnonzero(~with_history)
    a = _run(method, frame[mine]) if len(mine) else None
    b = _run(fallback, frame[other])
    runs = [(mine, a), (other, b)] if a is not None else [(other, b)]
    targets = set.intersection(*(set(r[0]) for _, r in runs))
    levels = set.intersection(*(set(r[1]) for _, r in runs))
    return (
        _merge(n, [(rows, r[0]) for rows, r in runs], targets),
        _merge(n, [(rows, r[1]) for rows, r in runs], levels),
    )


def _on_siblings(
    jobs: list[ExpandedJob],
    members: list[tuple[str, str] | None],
    lists: list[list[float]],
    frame: pl.DataFrame,
    fallback: Method,
    with_history: np.ndarray,
    predictions: dict[str, np.ndarray],
    levels: dict[str, np.ndarray],
) -> set[int]:
    """Anchor each matrix job without history on the same job's combinations with history
    (gharuntime.predict.siblings: the median of each one's recent durations, `lists`), in
    place; the rows moved."""
    keys = [job_key_of(j) for j in jobs]
    plain = np.array([m is None for m in members], dtype=bool)
    matrix = np.array([j.matrix is not None for j in jobs], dtype=bool)

    def config_of(rows: np.ndarray) -> np.ndarray:
        return _run(fallback, frame[rows])[0]["duration_s"]

    observed = np.array([float(np.median(d)) if d else 0.0 for d in lists], dtype=np.float64)
    done = anchor_on_siblings(
        keys,
        ~with_history & plain & matrix,
        with_history & plain & matrix,
        observed,
        predictions["duration_s"],
        levels,
        config_of,
    )
    return {a.row for a in done}


def predict_workflow(
    text: str,
    method: Method,
    *,
    path: str,
    meta: RepoMeta | None = None,
    at: datetime | None = None,
    local_file: Path | None = None,
    model_info: Mapping[str, Any] | None = None,
    history: RepoHistory | None = None,
    fallback: Method | None = None,
    history_path: str | None = None,
    aliases: Mapping[JobUnit, HistoryAlias] | None = None,
    resolve_reusable: Callable[[str], Workflow | None] | None = None,
    wait: Method | None = None,
) -> WorkflowPrediction:
    """Predict every job of the workflow `text`; raises WorkflowError for a file that is not one.

    With `history` (the repository's own jobs), each job's history_duration_s is its recent
    durations there, matched by workflow path, job key and matrix values; a job without any is
    predicted by `fallback` (a config-track model) when given, and each job says which
    (`basis`). `history_path` is the workflow path to look up (default: `local_file`'s place
    in its repository): a review's base file is looked up as the file it changes. A matrix
    given by an expression becomes the jobs its latest runs show (basis `from-history
    matrix`); `aliases` (a review's moved jobs, gharuntime.predict.moves) name where a job
    with no run of its own finds its history. `resolve_reusable` reads the local reusable
    workflows it calls (default: beside `local_file`). An `if:` flags its job only when it may
    skip it on `meta.event`. `wait`, a model predicting queue_s, gives each job its wait for a
    runner (JobPrediction.wait)."""
    when = at or datetime.now(timezone.utc)
    meta = meta or RepoMeta()
    frame, jobs = workflow_rows(
        text,
        path=path,
        meta=meta,
        at=when,
        local_file=local_file,
        resolve_reusable=resolve_reusable,
    )
    repo_name = meta.repo if meta.repo != RepoMeta.repo else None
    lists: list[list[float]] = [[] for _ in jobs]
    with_history: np.ndarray | None = None
    looked: list[tuple[str, str] | None] = [None] * len(jobs)
    members: list[tuple[str, str] | None] = [None] * len(jobs)
    if history is not None:
        where = history_path or repo_workflow_path(local_file, path)
        picked = history_jobs(jobs, history, where, when, aliases)
        jobs = [p.job for p in picked]
        lists = [p.durations for p in picked]
        looked = [p.lookup for p in picked]
        members = [p.from_history for p in picked]
        frame = history_rows(frame, picked)
        with_history = np.array([bool(x) for x in lists], dtype=bool)
    predictions, levels = _predict_frame(frame, method, fallback, with_history)
    anchored: set[int] = set()
    if with_history is not None and fallback is not None and "duration_s" in predictions:
        anchored = _on_siblings(
            jobs, members, lists, frame, fallback, with_history, predictions, levels
        )
    waits = _wait_levels(wait, frame)
    out = []
    for i, job in enumerate(jobs):
        labels = tuple(job.runner_labels)
        quantiles = {q: float(v[i]) for q, v in levels.items()}
        basis = None
        flags = job_flags(job, job_context(job, meta.event, repo_name))
        if members[i] is not None:
            basis = HISTORY_MATRIX
            flags = tuple("history_matrix" if f == "expression_matrix" else f for f in flags)
        elif i in anchored:
            basis = MATRIX_SIBLINGS
        elif with_history is not None:
            basis = (
                "history"
                if with_history[i]
                else ("config fallback" if fallback is not None else "no history")
            )
        out.append(
            JobPrediction(
                key=job_key_of(job),
                name=job.name,
                runner_labels=labels,
                runner_os=runner_os(_known_labels(job)),
                matrix=job.matrix,
                needs=job_needs(job),
                predicted={t: float(v[i]) for t, v in predictions.items()},
                flags=flags,
                quantiles=quantiles,
                timeout=recommend_timeout(quantiles),
                basis=basis,
                history=tuple(lists[i]),
                steps=step_fingerprint(job),
                history_key=looked[i],
                from_history=members[i],
                wait=waits[i],
            )
        )
    cycle = needs_cycle(out)
    out = [replace(j, flags=(*j.flags, "needs_cycle")) if j.key in cycle else j for j in out]
    sure = [j for j in out if "conditional" not in j.flags]
    return WorkflowPrediction(
        path,
        out,
        _duration_sum(out),
        critical_path(out),
        dict(model_info or {}),
        unconditional_job_s=_duration_sum(sure),
        unconditional_path_s=critical_path(sure),
        path_quantiles={q: critical_path(out, q) for q in levels},
    )


def _duration_sum(jobs: list[JobPrediction]) -> float:
    return float(sum(j.predicted.get("duration_s", 0.0) for j in jobs))
