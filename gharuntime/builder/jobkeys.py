"""Match the job names GitHub's API shows ('test (ubuntu-latest, 3.11)', 'call / build') to the
job keys of the workflow YAML, using gharuntime.workflow's naming rules.

Resolution runs once per distinct (workflow file, job name) pair, not once per row, so it stays
cheap at millions of rows. In order of preference:
1. exact: the name is one GitHub gives a matrix combination of exactly one job key;
2. caller: 'caller / callee' where `caller` names a job that calls a reusable workflow;
3. pattern: the name fits one job's name template with the expressions left open (a matrix
   given by an expression, or a name built from contexts we cannot know, like github.*).
A name that fits no key, or more than one, stays unresolved (job_key null) and is counted.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import polars as pl

from gharuntime.workflow import (
    ExpandedJob,
    JobSpec,
    Workflow,
    WorkflowError,
    expand_jobs,
    expand_matrix,
    parse_workflow,
)

__all__ = ["JobKeyMatch", "WorkflowIndex", "resolve_job_keys", "yaml_sha256"]

_EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)


def yaml_sha256(text: str) -> str:
    """workflow_sha256 of the contract: sha256 of the YAML's UTF-8 bytes."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class JobKeyMatch:
    """What the YAML says about one API job name."""

    job_key: str
    how: str  # exact | caller | pattern
    job_yaml: str
    matrix: str | None  # JSON object of the combination, None without (or with unknown) matrix
    runner_labels: tuple[str, ...] | None
    needs: tuple[str, ...]


def _matrix_json(job: ExpandedJob) -> str | None:
    if not job.matrix:
        return None
    return json.dumps(job.matrix, ensure_ascii=False, separators=(",", ":"), default=str)


def _template_regex(template: str) -> str:
    """A name template with each `${{ ... }}` left open as a wildcard."""
    parts = _EXPR.split(template)
    return "(?:.*?)".join(re.escape(p) for p in parts)


class WorkflowIndex:
    """One parsed workflow file, ready to answer 'which key is this job name?'."""

    def __init__(self, workflow: Workflow) -> None:
        self.workflow = workflow
        self.by_name: dict[str, list[ExpandedJob]] = {}
        self.callers: list[tuple[str, ExpandedJob]] = []
        expanded = expand_jobs(workflow)
        for job in expanded:
            if job.spec.uses is not None:
                self.callers.append((job.name.removesuffix(" / ").rstrip(), job))
            else:
                self.by_name.setdefault(job.name, []).append(job)
        # Patterns only for jobs whose names cannot be listed statically: a matrix given by an
        # expression, or a name using contexts other than the matrix (github.*, inputs.*, ...).
        open_keys = {j.key for j in expanded if "${{" in j.name}
        open_keys |= {s.key for s in workflow.jobs.values() if expand_matrix(s.matrix) is None}
        self.patterns: list[tuple[re.Pattern[str], JobSpec]] = []
        for spec in workflow.jobs.values():
            if spec.key not in open_keys:
                continue
            base = _template_regex(spec.name) if spec.name is not None else re.escape(spec.key)
            suffix = r"(?: / .+)?" if spec.uses is not None else ""
            self.patterns.append((re.compile(rf"{base}(?: \(.*\))?{suffix}", re.S), spec))

    @classmethod
    def parse(cls, text: str) -> WorkflowIndex:
        """Raises WorkflowError when the text is not a workflow."""
        return cls(parse_workflow(text))

    def resolve(self, name: str) -> JobKeyMatch | None:
        """The job key GitHub's `name` belongs to, or None when it fits none or several."""
        found = self.by_name.get(name)
        if found:
            keys = {j.key for j in found}
            if len(keys) == 1:
                return self._match(found[0], "exact")
            return None
        callers = [j for prefix, j in self.callers if name.startswith(prefix + " / ")]
        if callers:
            if len({j.key for j in callers}) == 1:
                best = max(callers, key=lambda j: len(j.name))
                return self._match(best, "caller")
            return None
        specs = {spec.key: spec for rx, spec in self.patterns if rx.fullmatch(name)}
        if len(specs) == 1:
            spec = next(iter(specs.values()))
            return JobKeyMatch(spec.key, "pattern", spec.yaml_block, None, None, spec.needs)
        return None

    @staticmethod
    def _match(job: ExpandedJob, how: str) -> JobKeyMatch:
        labels = tuple(x for x in job.runner_labels if "${{" not in x) or None
        return JobKeyMatch(
            job.key, how, job.spec.yaml_block, _matrix_json(job), labels, job.spec.needs
        )


KEY_SCHEMA = {
    "workflow_sha256": pl.String(),
    "job_name": pl.String(),
    "job_key": pl.String(),
    "job_key_how": pl.String(),
    "job_yaml": pl.String(),
    "matrix": pl.String(),
    "yaml_labels": pl.List(pl.String()),
    "needs": pl.List(pl.String()),
}


Row = tuple[object, ...]

PARALLEL_FILES = 2_000
"""Above this many distinct workflow files, parsing runs in worker processes (YAML parsing is
pure Python, ~1 ms a file, and a paper-scale crawl holds tens of thousands of files)."""


def _resolve_file(sha: str, text: str, names: list[str]) -> tuple[list[Row], str | None]:
    """Rows for every name of one workflow file, and the parse error (text) if it fails."""
    try:
        index = WorkflowIndex.parse(text)
    except WorkflowError as exc:
        return [(sha, n, None, "bad_yaml", None, None, None, None) for n in names], str(exc)
    rows: list[Row] = []
    for name in names:
        m = index.resolve(name)
        if m is None:
            rows.append((sha, name, None, "unresolved", None, None, None, None))
        else:
            labels = list(m.runner_labels) if m.runner_labels else None
            rows.append((sha, name, m.job_key, m.how, m.job_yaml, m.matrix, labels, list(m.needs)))
    return rows, None


def _resolve_chunk(
    work: list[tuple[str, str, list[str]]],
) -> list[tuple[list[Row], str | None]]:
    return [_resolve_file(*unit) for unit in work]


def resolve_job_keys(
    pairs: pl.DataFrame,
    yaml_by_sha: dict[str, str],
    *,
    on_bad_yaml: Callable[[str, str], None] | None = None,
    workers: int | None = None,
    parallel_above: int = PARALLEL_FILES,
    progress: Callable[[int, int], None] | None = None,
) -> pl.DataFrame:
    """For each distinct (workflow_sha256, job_name) of `pairs`, what the YAML says (KEY_SCHEMA).

    A YAML that does not parse is passed to `on_bad_yaml(sha, message)` once, and its jobs stay
    unresolved with `job_key_how` = 'bad_yaml'; a name that fits no key gets 'unresolved'.
    Each file is parsed once and dropped before the next; with `workers` > 1 and many files,
    in that many processes (spawned: the caller's main module must be import-safe, as the
    `gharuntime` command is). A pool that cannot start or breaks falls back to this process.
    """
    grouped = (
        pairs.select("workflow_sha256", "job_name")
        .unique()
        .group_by("workflow_sha256")
        .agg(pl.col("job_name").sort())
        .sort("workflow_sha256")
    )
    work = [(sha, yaml_by_sha[sha], names) for sha, names in grouped.iter_rows()]
    n_workers = workers or 1
    size = max(200, len(work) // (max(n_workers, 1) * 8))
    chunks = [work[i : i + size] for i in range(0, len(work), size)]
    results: list[tuple[list[Row], str | None]] | None = None
    if n_workers > 1 and len(work) > parallel_above:
        ctx = multiprocessing.get_context("spawn")  # polars' threads make fork unsafe
        try:
            with ProcessPoolExecutor(n_workers, mp_context=ctx) as pool:
                results = []
                for chunk in pool.map(_resolve_chunk, chunks):
                    results.extend(chunk)
                    if progress is not None:
                        progress(len(results), len(work))
        except (BrokenProcessPool, OSError, RuntimeError):
            results = None
    if results is None:
        results = []
        for unit in chunks:
            results.extend(_resolve_chunk(unit))
            if progress is not None:
                progress(len(results), len(work))
    rows: list[Row] = []
    for (sha, _, _), (file_rows, error) in zip(work, results, strict=True):
        if error is not None and on_bad_yaml is not None:
            on_bad_yaml(sha, error)
        rows.extend(file_rows)
    return pl.DataFrame(rows, schema=KEY_SCHEMA, orient="row")
