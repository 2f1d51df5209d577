"""Match the job names GitHub's API shows ('test (ubuntu-latest, 3.11)', 'call / build') to the
job keys of the workflow YAML, using gharuntime.workflow's naming rules.

Resolution runs once per distinct (workflow file, job name) pair, not once per row, so it stays
cheap at millions of rows. In order of preference:
1. exact: the name is one GitHub gives a matrix combination of exactly one job key;
   A job of a reusable workflow of the same repository, read at the same commit
   (`callees`), is listed as GitHub names it, 'caller / callee (matrix)': how 'callee'
   ('callee_pattern' when the callee job's matrix or name is only known at run time);
2. caller: 'caller / callee' where `caller` names a job that calls a reusable workflow that
   could not be followed (another repository, a file missing at that commit, a cycle, deeper
   than GitHub allows);
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

from gharuntime.progress import Progress
from gharuntime.workflow import (
    ExpandedJob,
    JobSpec,
    Workflow,
    WorkflowError,
    expand_jobs,
    expand_matrix,
    job_key_of,
    job_needs,
    job_yaml_of,
    local_callee_path,
    parse_workflow,
)

__all__ = [
    "JobKeyMatch",
    "WorkflowIndex",
    "local_calls",
    "resolve_job_keys",
    "resolve_unit",
    "yaml_sha256",
]

_EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)


def yaml_sha256(text: str) -> str:
    """workflow_sha256 of the contract: sha256 of the YAML's UTF-8 bytes."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class JobKeyMatch:
    """What the YAML says about one API job name."""

    job_key: str
    how: str  # exact | callee | caller | pattern
    job_yaml: str
    matrix: str | None  # JSON object of the combination, None without (or with unknown) matrix
    runner_labels: tuple[str, ...] | None
    needs: tuple[str, ...]
    reusable: str | None = None  # followed | unknown_inputs | a CALL_PROBLEMS key; None: no call


def _matrix_json(job: ExpandedJob) -> str | None:
    if not job.matrix:
        return None
    return json.dumps(job.matrix, ensure_ascii=False, separators=(",", ":"), default=str)


def _template_regex(template: str) -> str:
    """A name template with each `${{ ... }}` left open as a wildcard."""
    parts = _EXPR.split(template)
    return "(?:.*?)".join(re.escape(p) for p in parts)


_LOCAL_USES = re.compile(r"""^\s*(?:-\s+)?uses:\s*["']?(\./[^\s"'#]+)""", re.M)


def local_calls(text: str) -> list[str]:
    """Paths (`.github/workflows/x.yml`) of the same-repository workflows a workflow text calls,
    in order, without repeats (a cheap scan; the parser decides what is a job's `uses:`)."""
    out: list[str] = []
    for m in _LOCAL_USES.finditer(text):
        path = local_callee_path(m.group(1))
        if path and path.endswith((".yml", ".yaml")) and path not in out:
            out.append(path)
    return out


def resolve_unit(sha: str, callees: dict[str, str | None] | None) -> str:
    """The resolution unit of a workflow file read with these callees: its sha256 alone when it
    calls none, else a digest of its sha256 and each callee's path and sha256."""
    if not callees:
        return sha
    parts = [sha] + [
        f"{path}={yaml_sha256(text) if text is not None else '-'}"
        for path, text in sorted(callees.items())
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _resolver(callees: dict[str, str | None]) -> Callable[[str], Workflow | None]:
    parsed: dict[str, Workflow | None] = {}

    def resolve(uses: str) -> Workflow | None:
        path = local_callee_path(uses)
        if path is None:
            return None
        if path not in parsed:
            text = callees.get(path)
            try:
                parsed[path] = parse_workflow(text, path) if text is not None else None
            except WorkflowError:
                parsed[path] = None
        return parsed[path]

    return resolve


class WorkflowIndex:
    """One parsed workflow file, ready to answer 'which key is this job name?'. `callees`
    ({path: text, or None when missing at that commit}) are the same-repository workflows it may
    call, read at the same commit; without them calls are not followed."""

    def __init__(
        self,
        workflow: Workflow,
        callees: dict[str, str | None] | None = None,
        path: str | None = None,
    ) -> None:
        self.workflow = workflow
        self.by_name: dict[str, list[ExpandedJob]] = {}
        self.callers: list[tuple[str, ExpandedJob]] = []
        resolver = _resolver(callees) if callees is not None else None
        expanded = expand_jobs(workflow, resolver, chain=(path,) if path else ())
        for job in expanded:
            if job.spec.uses is not None and (job.callee is None or job.call_problem):
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
        # The same for jobs of a followed call whose callee job has such a name or matrix.
        self.callee_patterns: list[tuple[re.Pattern[str], ExpandedJob]] = []
        for job in expanded:
            if job.callee is None or job.call_problem is not None:
                continue
            if "${{" in job.name or expand_matrix(job.callee.matrix) is None:
                rx = re.compile(rf"{_template_regex(job.name)}(?: \(.*\))?", re.S)
                self.callee_patterns.append((rx, job))

    @classmethod
    def parse(
        cls, text: str, callees: dict[str, str | None] | None = None, path: str | None = None
    ) -> WorkflowIndex:
        """Raises WorkflowError when the text is not a workflow."""
        return cls(parse_workflow(text), callees, path)

    def resolve(self, name: str) -> JobKeyMatch | None:
        """The job key GitHub's `name` belongs to, or None when it fits none or several."""
        found = self.by_name.get(name)
        if found:
            keys = {job_key_of(j) for j in found}
            if len(keys) == 1:
                return self._match(found[0], "callee" if found[0].callee else "exact")
            return None
        callers = [j for prefix, j in self.callers if name.startswith(prefix + " / ")]
        if callers:
            if len({j.key for j in callers}) == 1:
                best = max(callers, key=lambda j: len(j.name))
                return self._match(best, "caller")
            return None
        specs = {spec.key: spec for rx, spec in self.patterns if rx.fullmatch(name)}
        called = {job_key_of(j): j for rx, j in self.callee_patterns if rx.fullmatch(name)}
        if called and not specs.keys() - {k.split("/", 1)[0] for k in called}:
            if len(called) != 1:
                return None
            job = next(iter(called.values()))
            m = self._match(job, "callee_pattern")
            return JobKeyMatch(m.job_key, m.how, m.job_yaml, None, None, m.needs, m.reusable)
        if len(specs) == 1:
            spec = next(iter(specs.values()))
            reusable = None
            if spec.uses is not None:
                reusable = "remote" if local_callee_path(spec.uses) is None else "missing_callee"
            return JobKeyMatch(
                spec.key, "pattern", spec.yaml_block, None, None, spec.needs, reusable
            )
        return None

    @staticmethod
    def _match(job: ExpandedJob, how: str) -> JobKeyMatch:
        labels = tuple(x for x in job.runner_labels if "${{" not in x) or None
        if job.spec.uses is None:
            reusable = None
        elif job.call_problem is not None:
            reusable = job.call_problem
        else:
            reusable = "unknown_inputs" if job.unknown_inputs else "followed"
        return JobKeyMatch(
            job_key_of(job) if job.call_problem is None else job.key,
            how,
            job_yaml_of(job) if job.call_problem is None else job.spec.yaml_block,
            _matrix_json(job),
            labels,
            job_needs(job) if job.call_problem is None else job.spec.needs,
            reusable,
        )


KEY_SCHEMA = {
    "resolve_unit": pl.String(),
    "workflow_sha256": pl.String(),
    "job_name": pl.String(),
    "job_key": pl.String(),
    "job_key_how": pl.String(),
    "job_yaml": pl.String(),
    "matrix": pl.String(),
    "yaml_labels": pl.List(pl.String()),
    "needs": pl.List(pl.String()),
    "reusable": pl.String(),
}


Row = tuple[object, ...]

PARALLEL_FILES = 2_000
"""Above this many distinct workflow files, parsing runs in worker processes (YAML parsing is
pure Python, ~1 ms a file, and a paper-scale crawl holds tens of thousands of files)."""


Unit = tuple[str, str, str, list[str], dict[str, str | None] | None]
"""(resolve_unit, workflow_sha256, text, job names, callees) of one resolution."""


def _resolve_file(
    unit: str, sha: str, text: str, names: list[str], callees: dict[str, str | None] | None
) -> tuple[list[Row], str | None]:
    """Rows for every name of one workflow file, and the parse error (text) if it fails."""
    try:
        index = WorkflowIndex.parse(text, callees)
    except WorkflowError as exc:
        return [(unit, sha, n, None, "bad_yaml", None, None, None, None, None) for n in names], str(
            exc
        )
    rows: list[Row] = []
    for name in names:
        m = index.resolve(name)
        if m is None:
            rows.append((unit, sha, name, None, "unresolved", None, None, None, None, None))
        else:
            labels = list(m.runner_labels) if m.runner_labels else None
            rows.append(
                (
                    unit,
                    sha,
                    name,
                    m.job_key,
                    m.how,
                    m.job_yaml,
                    m.matrix,
                    labels,
                    list(m.needs),
                    m.reusable,
                )
            )
    return rows, None


def _resolve_chunk(work: list[Unit]) -> list[tuple[list[Row], str | None]]:
    return [_resolve_file(*unit) for unit in work]


def resolve_job_keys(
    pairs: pl.DataFrame,
    yaml_by_sha: dict[str, str],
    *,
    callees: dict[str, dict[str, str | None]] | None = None,
    on_bad_yaml: Callable[[str, str], None] | None = None,
    workers: int | None = None,
    parallel_above: int = PARALLEL_FILES,
    progress: Progress | None = None,
) -> pl.DataFrame:
    """For each distinct (resolve_unit, workflow_sha256, job_name) of `pairs`, what the YAML
    says (KEY_SCHEMA). `pairs` may lack `resolve_unit` (then it is the workflow_sha256);
    `callees` maps a unit to the same-repository workflows its file calls, read at its commit.

    A YAML that does not parse is passed to `on_bad_yaml(sha, message)` once, and its jobs stay
    unresolved with `job_key_how` = 'bad_yaml'; a name that fits no key gets 'unresolved'.
    Each file is parsed once per unit and dropped before the next; with `workers` > 1 and many
    files, in that many processes (spawned: the caller's main module must be import-safe, as the
    `gharuntime` command is). A pool that cannot start or breaks falls back to this process.
    """
    if "resolve_unit" not in pairs.columns:
        pairs = pairs.with_columns(pl.col("workflow_sha256").alias("resolve_unit"))
    grouped = (
        pairs.select("resolve_unit", "workflow_sha256", "job_name")
        .unique()
        .group_by("resolve_unit", "workflow_sha256")
        .agg(pl.col("job_name").sort())
        .sort("resolve_unit", "workflow_sha256")
    )
    callees = callees or {}
    work: list[Unit] = [
        (unit, sha, yaml_by_sha[sha], names, callees.get(unit))
        for unit, sha, names in grouped.iter_rows()
    ]
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
                        progress("resolving job keys", len(results), len(work))
        except (BrokenProcessPool, OSError, RuntimeError):
            results = None
    if results is None:
        results = []
        for unit_chunk in chunks:
            results.extend(_resolve_chunk(unit_chunk))
            if progress is not None:
                progress("resolving job keys", len(results), len(work))
    rows: list[Row] = []
    reported: set[str] = set()
    for (_, sha, _, _, _), (file_rows, error) in zip(work, results, strict=True):
        if error is not None and on_bad_yaml is not None and sha not in reported:
            reported.add(sha)
            on_bad_yaml(sha, error)
        rows.extend(file_rows)
    return pl.DataFrame(rows, schema=KEY_SCHEMA, orient="row")
