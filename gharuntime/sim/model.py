"""The simulated world's data model: its clock, scales and ids, and the entities a world is made
of (repositories, commits, workflow files, runs, attempts, jobs, steps). `world.py` generates
them (through `meta.py`, `history.py`, `runs.py` and `attempts.py`); the server, the payloads
and the dump read them."""

from __future__ import annotations

import bisect
import calendar
import functools
import hashlib
from dataclasses import dataclass, field

from gharuntime.sim.costs import RepoProfile

__all__ = [
    "DAY",
    "END",
    "JOB_ID_BASE",
    "JOB_ID_STRIDE",
    "LOG_RETENTION_DAYS",
    "REPO_ID_BASE",
    "RUN_ID_BASE",
    "RUN_ID_STRIDE",
    "SCALES",
    "WORKFLOW_ID_BASE",
    "Attempt",
    "Commit",
    "Job",
    "RepoWorld",
    "Run",
    "Scale",
    "SimRepo",
    "Step",
    "WorkflowFile",
    "blob_sha",
    "iso",
    "parse_iso",
]

END = calendar.timegm((2026, 11, 1, 0, 0, 0))
"""The world's "now" (2026-11-01T00:00:00Z) as a Unix time: fixed, so output is deterministic."""
LOG_RETENTION_DAYS = 90
DAY = 86400

REPO_ID_BASE = 100_000
WORKFLOW_ID_BASE = 1_000_000_000
RUN_ID_BASE = 10_000_000_000
RUN_ID_STRIDE = 100_000
JOB_ID_BASE = 30_000_000_000
JOB_ID_STRIDE = 1_000_000


@dataclass(frozen=True)
class Scale:
    """How big a world is: repositories, mean workflows per repository, mean runs per workflow,
    and the days of history before END."""

    repos: int
    workflows_per_repo: float = 2.5
    runs_per_workflow: float = 8.6
    days: int = 120


SCALES: dict[str, Scale] = {
    "tiny": Scale(12, 2.5, 6.0, 120),
    "small": Scale(150, 2.5, 8.6, 120),
    "medium": Scale(2000, 2.5, 8.6, 120),
    "paper": Scale(27000, 2.5, 9.1, 120),  # ≈ 580,000 runs
}


def iso(ts: float, offset_min: int = 0, millis: bool = False) -> str:
    """ISO 8601 the way GitHub writes it: `Z` in UTC, `±HH:MM` (with milliseconds) otherwise."""
    t = int(ts) + offset_min * 60
    day, rest = divmod(t, DAY)
    if not offset_min and not millis:  # the common case, by table: the dump formats millions
        return _day_prefix(day) + _clock()[rest] + "Z"
    base = _day_prefix(day) + _clock()[rest]
    if millis:
        base += ".000"
    if offset_min == 0:
        return base + "Z"
    sign = "-" if offset_min < 0 else "+"
    return f"{base}{sign}{abs(offset_min) // 60:02d}:{abs(offset_min) % 60:02d}"


@functools.cache
def _clock() -> tuple[str, ...]:
    """`HH:MM:SS` for every second of a day."""
    return tuple(f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}" for s in range(DAY))


@functools.lru_cache(maxsize=65536)
def _day_prefix(day: int) -> str:
    import time

    g = time.gmtime(day * DAY)
    return f"{g.tm_year:04d}-{g.tm_mon:02d}-{g.tm_mday:02d}T"


def parse_iso(text: str) -> float:
    """Unix time of `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SS(Z|±HH:MM)`."""
    from datetime import datetime, timezone

    text = text.strip()
    if len(text) == 10:
        text += "T00:00:00Z"
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def blob_sha(text: str) -> str:
    """git's blob id of a file's content."""
    data = text.encode()
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


@dataclass(frozen=True, slots=True)
class SimRepo:
    """A simulated repository as its listing shows it (cheap: no runs); the runs come from
    `gharuntime.sim.history.build_repo`."""

    index: int
    id: int
    owner: str
    name: str
    language: str
    stars: int
    size_kb: int
    forks: int
    open_issues: int
    topics: tuple[str, ...]
    default_branch: str
    created_at: int
    pushed_at: int
    fork: bool
    archived: bool
    actions_disabled: bool
    private: bool
    old_name: str | None  # renamed: the old full name answers 301
    license: str | None
    description: str
    path_ref: bool  # quirk: runs' `path` ends in `@branch`
    step_tz: int  # quirk: step times in this UTC offset (minutes), 0 for UTC
    profile: RepoProfile

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass(slots=True)
class Commit:
    index: int
    sha: str
    tree: str
    time: int
    branch: str
    message: str
    author: str
    changed: tuple[str, ...]  # workflow paths this commit changed


@dataclass(slots=True)
class WorkflowFile:
    """A workflow file and its versions: (commit index, text, blob sha), oldest first."""

    id: int
    path: str
    name: str
    kind: str
    state: str
    versions: list[tuple[int, str, str]]
    created_at: int
    updated_at: int

    def version_at(self, commit_index: int) -> tuple[int, str, str] | None:
        pos = bisect.bisect_right([v[0] for v in self.versions], commit_index) - 1
        return self.versions[pos] if pos >= 0 else None


@dataclass(slots=True)
class Step:
    name: str
    number: int
    status: str
    conclusion: str | None
    started: float | None
    completed: float | None
    lines: int
    category: str


@dataclass(slots=True)
class Job:
    id: int
    run_id: int
    run_attempt: int
    key: str
    name: str
    labels: tuple[str, ...]
    created: float
    started: float
    completed: float
    status: str
    conclusion: str | None
    steps: list[Step]
    runner_id: int | None
    runner_name: str | None
    runner_group_id: int | None
    runner_group_name: str | None

    @property
    def log_lines(self) -> int:
        return sum(s.lines for s in self.steps)


@dataclass(slots=True)
class Attempt:
    number: int
    started: float
    updated: float
    status: str
    conclusion: str | None
    jobs: list[Job]


@dataclass(slots=True)
class Run:
    id: int
    number: int
    workflow: WorkflowFile
    event: str
    branch: str
    commit: Commit
    created: float
    attempts: list[Attempt]
    pr_number: int | None
    path: str  # as served: may end in @ref

    @property
    def latest(self) -> Attempt:
        return self.attempts[-1]


@dataclass
class RepoWorld:
    """Everything about one repository."""

    meta: SimRepo
    commits: list[Commit]
    workflows: list[WorkflowFile]
    runs: list[Run]  # oldest first
    _commit_by_sha: dict[str, Commit] = field(default_factory=dict, repr=False)
    _run_by_id: dict[int, Run] = field(default_factory=dict, repr=False)
    _job_by_id: dict[int, tuple[Run, Attempt, Job]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._commit_by_sha = {c.sha: c for c in self.commits}
        self._run_by_id = {r.id: r for r in self.runs}
        for run in self.runs:
            for att in run.attempts:
                for job in att.jobs:
                    self._job_by_id[job.id] = (run, att, job)

    def commit(self, sha_or_branch: str) -> Commit | None:
        """A commit by sha, or the head of a branch at END."""
        found = self._commit_by_sha.get(sha_or_branch)
        if found is not None:
            return found
        for c in reversed(self.commits):
            if c.branch == sha_or_branch:
                return c
        return None

    def run(self, run_id: int) -> Run | None:
        return self._run_by_id.get(run_id)

    def job(self, job_id: int) -> tuple[Run, Attempt, Job] | None:
        return self._job_by_id.get(job_id)

    def file_at(self, path: str, ref: str) -> tuple[str, str] | None:
        """(text, blob sha) of a workflow file at a commit sha or branch, None when absent."""
        commit = self.commit(ref)
        if commit is None:
            return None
        for wf in self.workflows:
            if wf.path == path:
                v = wf.version_at(commit.index)
                return (v[1], v[2]) if v else None
        return None

    def blob_text(self, oid: str) -> str | None:
        """The text of the workflow-file version whose blob sha is `oid`, None when none is."""
        for wf in self.workflows:
            for v in wf.versions:
                if v[2] == oid:
                    return v[1]
        return None

    def workflow(self, id_or_file: str) -> WorkflowFile | None:
        for wf in self.workflows:
            if str(wf.id) == id_or_file or wf.path.rsplit("/", 1)[-1] == id_or_file:
                return wf
        return None
