"""The simulated world: repositories, their commits and workflow files, runs, attempts, jobs and
steps, deterministic from a seed and a scale and generated lazily one repository at a time.

A repository's whole history comes from `random.Random(f"{seed}:repo:{index}")`, so any
repository can be rebuilt on demand in any order, and the 27,000-repository world of the paper
never sits in memory. Ids encode the repository index, so a run or job id leads straight back to
the repository that holds it. Time is anchored at `END` (the world's "now"): runs still going at
END are in progress, and logs older than LOG_RETENTION_DAYS before END are expired. The entities
themselves are in `model.py` (re-exported here).
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import math
import random
from collections.abc import Iterator
from typing import Any

from gharuntime.expressions import UnknownExpression, evaluate
from gharuntime.sim.costs import (
    PlannedStep,
    RepoProfile,
    plan_steps,
    queue_seconds,
    run_steps,
    suite_factor,
)
from gharuntime.sim.model import (
    DAY,
    END,
    JOB_ID_BASE,
    JOB_ID_STRIDE,
    LOG_RETENTION_DAYS,
    REPO_ID_BASE,
    RUN_ID_BASE,
    RUN_ID_STRIDE,
    SCALES,
    WORKFLOW_ID_BASE,
    Attempt,
    Commit,
    Job,
    RepoMeta,
    RepoWorld,
    Run,
    Scale,
    Step,
    WorkflowFile,
    blob_sha,
    iso,
    parse_iso,
)
from gharuntime.sim.workflows import draft_workflows, render_yaml
from gharuntime.workflow import (
    ExpandedJob,
    JobSpec,
    Workflow,
    WorkflowError,
    expand_jobs,
    parse_workflow,
    runner_os,
)

__all__ = [
    "COMMIT_AUTHORS",
    "DAY",
    "END",
    "LOG_RETENTION_DAYS",
    "RUN_ID_BASE",
    "SCALES",
    "Attempt",
    "Commit",
    "Job",
    "RepoMeta",
    "RepoWorld",
    "Run",
    "Scale",
    "Step",
    "WorkflowFile",
    "World",
    "blob_sha",
    "iso",
    "parse_iso",
]


def _sha(*parts: object) -> str:
    return hashlib.sha1(":".join(map(str, parts)).encode()).hexdigest()


_ADJ = (
    "quick",
    "lazy",
    "brave",
    "calm",
    "eager",
    "fancy",
    "happy",
    "jolly",
    "kind",
    "lucky",
    "mighty",
    "noble",
    "proud",
    "silly",
    "witty",
    "zesty",
    "rapid",
    "shiny",
    "tiny",
    "vast",
)
_NOUN = (
    "otter",
    "falcon",
    "badger",
    "comet",
    "engine",
    "forge",
    "garden",
    "harbor",
    "island",
    "lantern",
    "meadow",
    "nebula",
    "orbit",
    "pixel",
    "quartz",
    "river",
    "summit",
    "tensor",
    "vertex",
    "widget",
)
_SUFFIX = ("py", "js", "rs", "go", "core", "kit", "lab", "hub", "cli", "lib", "app", "sdk")
_TOPICS = (
    "cli",
    "api",
    "web",
    "machine-learning",
    "devops",
    "database",
    "testing",
    "docker",
    "kubernetes",
    "library",
    "framework",
    "parser",
    "compiler",
    "game",
    "security",
)
_LANG_WEIGHTS = (
    ("Python", 26),
    ("JavaScript", 14),
    ("TypeScript", 16),
    ("Go", 10),
    ("Rust", 8),
    ("Java", 9),
    ("Ruby", 4),
    ("C++", 6),
    ("PHP", 3),
    ("C#", 4),
)
_MESSAGES = (
    "Fix typo in README",
    "Bump dependencies",
    "Add tests for parser",
    "Refactor config loading",
    "Fix flaky test",
    "Update CI",
    "Improve error messages",
    "Add caching",
    "Release v{v}",
    "Merge pull request #{pr} from {owner}/{branch}",
    "Handle empty input",
    "Speed up build",
    "Docs: clarify install steps",
)
_BRANCHES = (
    "feature/cache",
    "fix/parser",
    "dependabot/pip/requests-2.32.0",
    "refactor/core",
    "docs/readme",
    "feat/cli",
    "fix/windows-paths",
)
_STEP_TZ = (-480, -420, 60, 330)
_SECOND_LANGUAGE = {
    "Python": ("C++", "Rust", "JavaScript"),  # native extensions, a web front end
    "JavaScript": ("TypeScript", "C++"),
    "TypeScript": ("JavaScript", "Rust"),
    "Go": ("JavaScript", "C++"),
    "Rust": ("C++", "Python"),
    "Java": ("C++", "JavaScript"),
    "Ruby": ("JavaScript", "C++"),
    "C++": ("Python", "C#"),
    "PHP": ("JavaScript", "TypeScript"),
    "C#": ("C++", "TypeScript"),
}
"""The other language a repository's build compiles, hidden behind its largest language."""

COMMIT_AUTHORS: tuple[str, ...] = ("alice", "bob", "carol", "dave", "dependabot[bot]")
"""Who writes the world's commits (the first commit of every repository is alice's)."""


class World:
    """A seeded world of `scale` repositories, built lazily and cached a few hundred at a time."""

    def __init__(
        self, seed: int = 0, scale: str | Scale = "tiny", *, cache_repos: int = 256
    ) -> None:
        self.seed = seed
        self.scale = SCALES[scale] if isinstance(scale, str) else scale
        self.end = END
        self._names: dict[str, tuple[int, bool]] | None = None
        self.repo = functools.lru_cache(maxsize=cache_repos)(self._build_repo)
        self.meta = functools.lru_cache(maxsize=max(cache_repos, 4096))(self._build_meta)

    # ----- repositories ---------------------------------------------------------------
    def __len__(self) -> int:
        return self.scale.repos

    def _build_meta(self, index: int) -> RepoMeta:
        if not 0 <= index < self.scale.repos:
            raise IndexError(index)
        rng = random.Random(f"{self.seed}:meta:{index}")
        # an owner holds three repositories; disjoint suffixes keep their names apart
        group = random.Random(f"{self.seed}:owner:{index // 3}")
        owner = f"{group.choice(_ADJ)}-{group.choice(_NOUN)}{index // 3}"
        name = f"{rng.choice(_NOUN)}-{_SUFFIX[index % 3 * 4 + rng.randrange(4)]}"
        language = rng.choices([x for x, _ in _LANG_WEIGHTS], [w for _, w in _LANG_WEIGHTS])[0]
        stars = int(min(400_000, 10 ** rng.uniform(1.3, 4.6) * rng.lognormvariate(0, 0.3)))
        # The cost model reads the hidden size of the code and the languages it is built from;
        # GitHub's `size` also counts git history and assets, and `language` names only the
        # largest language, so the served fields merely correlate with what costs time.
        code_kb = int(min(1_000_000, max(30, rng.lognormvariate(math.log(12000), 1.1))))
        history = rng.lognormvariate(0.5, 1.3)
        size_kb = int(min(4_000_000, max(40, code_kb * history)))
        share = 1.0 if rng.random() < 0.45 else rng.uniform(0.5, 0.95)
        second = rng.choice(_SECOND_LANGUAGE[language])
        stack = ((language, share),) if share == 1.0 else ((language, share), (second, 1 - share))
        created = END - int(rng.uniform(200, 4500) * DAY)
        # rarer kinds of repository; the first few indices always show one of each, so even a
        # tiny world has a renamed, a private, an archived and an Actions-disabled repository
        k = (index + self.seed) % 1000
        archived = index == 6 or k % 23 == 5
        pushed = (
            END - int(rng.uniform(0, 30) * DAY)
            if not archived
            else END - int(rng.uniform(40, 80) * DAY)
        )
        old_name = f"{owner}/{name}-old" if index == 4 or k % 97 == 4 else None
        profile = RepoProfile(
            stack=stack,
            code_kb=code_kb,
            speed=rng.lognormvariate(0.0, 0.8),  # test-suite size, machine luck: not served
            drift=rng.gauss(0.1, 0.15),
            flaky=min(0.4, rng.betavariate(1.2, 14)),
            cache_hit=rng.uniform(0.6, 0.97),
        )
        return RepoMeta(
            index=index,
            id=REPO_ID_BASE + index,
            owner=owner,
            name=name,
            language=language,
            stars=stars,
            size_kb=size_kb,
            forks=int(stars * rng.uniform(0.02, 0.2)),
            open_issues=rng.randrange(0, 300),
            topics=tuple(sorted(rng.sample(_TOPICS, rng.randrange(0, 4)))),
            default_branch="main" if rng.random() < 0.8 else "master",
            created_at=created,
            pushed_at=pushed,
            fork=rng.random() < 0.03,
            archived=archived,
            actions_disabled=index == 8 or k % 41 == 9,
            private=(index == 5 or k % 193 == 11) and old_name is None,
            old_name=old_name,
            license=rng.choice(("mit", "apache-2.0", "bsd-3-clause", "gpl-3.0", None)),
            description=f"A {rng.choice(_ADJ)} {language} {rng.choice(_TOPICS)} project",
            path_ref=k % 6 == 1,
            step_tz=_STEP_TZ[k % 4] if k % 7 == 3 else 0,
            profile=profile,
        )

    def metas(self) -> Iterator[RepoMeta]:
        for i in range(self.scale.repos):
            yield self.meta(i)

    def lookup(self, full_name: str) -> tuple[int, bool] | None:
        """(index, renamed) for an `owner/name` (case-insensitive), None when unknown."""
        if self._names is None:
            names: dict[str, tuple[int, bool]] = {}
            for m in self.metas():
                names[m.full_name.lower()] = (m.index, False)
                if m.old_name:
                    names[m.old_name.lower()] = (m.index, True)
            self._names = names
        return self._names.get(full_name.lower())

    def index_of_id(self, kind: str, ident: int) -> int | None:
        """Repository index encoded in a repository, run or job id."""
        base, stride = {
            "repo": (REPO_ID_BASE, 1),
            "run": (RUN_ID_BASE, RUN_ID_STRIDE),
            "job": (JOB_ID_BASE, JOB_ID_STRIDE),
        }[kind]
        i = (ident - base) // stride
        return i if 0 <= i < self.scale.repos and ident >= base else None

    def repos(self) -> Iterator[RepoWorld]:
        """Every repository, built one at a time (not cached)."""
        for i in range(self.scale.repos):
            yield self._build_repo(i)

    def completed_runs(
        self, since: float | None = None, until: float | None = None
    ) -> Iterator[tuple[RepoWorld, Run]]:
        """Ground truth for tests: runs whose latest attempt completed, created in [since, until)."""
        for rw in self.repos():
            if rw.meta.private:
                continue
            for run in rw.runs:
                if run.latest.status != "completed":
                    continue
                if since is not None and run.created < since:
                    continue
                if until is not None and run.created >= until:
                    continue
                yield rw, run

    # ----- one repository's history ----------------------------------------------------
    def _build_repo(self, index: int) -> RepoWorld:
        meta = self.meta(index)
        rng = random.Random(f"{self.seed}:repo:{index}")
        sc = self.scale
        start = END - sc.days * DAY
        n_wf = (
            0
            if meta.actions_disabled
            else max(1, min(5, round(rng.gauss(sc.workflows_per_repo, 0.9))))
        )
        drafts = draft_workflows(
            rng, meta.language, meta.default_branch, n_wf, rng.choice((0, 1, 2, 3))
        )
        # commits: one initial commit with every workflow, then a history over the span
        last = meta.pushed_at if meta.archived else END
        n_commits = max(3, int(sc.runs_per_workflow * max(1, n_wf) * rng.uniform(0.5, 1.0)))
        times = sorted(int(rng.uniform(start, last)) for _ in range(n_commits))
        commits: list[Commit] = []
        first = Commit(
            0,
            _sha(self.seed, index, "c", 0),
            _sha(self.seed, index, "t", 0),
            start - rng.randrange(DAY, 30 * DAY),
            meta.default_branch,
            "Initial commit",
            "alice",
            (),
        )
        commits.append(first)
        for ci, t in enumerate(times, start=1):
            branch = meta.default_branch if rng.random() < 0.6 else rng.choice(_BRANCHES)
            msg = rng.choice(_MESSAGES).format(
                v=f"1.{ci}.0", pr=100 + ci, owner=meta.owner, branch=branch
            )
            commits.append(
                Commit(
                    ci,
                    _sha(self.seed, index, "c", ci),
                    _sha(self.seed, index, "t", ci),
                    t,
                    branch,
                    msg,
                    rng.choice(COMMIT_AUTHORS),
                    (),
                )
            )
        default_idx = [c.index for c in commits if c.branch == meta.default_branch]
        workflows: list[WorkflowFile] = []
        for w, draft in enumerate(drafts):
            change_at = sorted(
                rng.sample(default_idx[1:], min(len(default_idx) - 1, len(draft.versions) - 1))
            )
            versions: list[tuple[int, str, str]] = []
            for ci, spec in zip([0, *change_at], draft.versions, strict=False):
                text = render_yaml(spec)
                versions.append((ci, text, blob_sha(text)))
                if ci:
                    c = commits[ci]
                    c.changed = (*c.changed, draft.path)
                    c.message = f"ci: update {draft.path.rsplit('/', 1)[-1]}"
            state = "active" if rng.random() > 0.04 else "disabled_manually"
            workflows.append(
                WorkflowFile(
                    WORKFLOW_ID_BASE + index * 1000 + w,
                    draft.path,
                    draft.name,
                    draft.kind,
                    state,
                    versions,
                    commits[0].time,
                    commits[versions[-1][0]].time,
                )
            )
        first.changed = tuple(wf.path for wf in workflows)
        runs = self._runs(rng, meta, commits, workflows, start, last)
        return RepoWorld(meta, commits, workflows, runs)

    def _runs(
        self,
        rng: random.Random,
        meta: RepoMeta,
        commits: list[Commit],
        workflows: list[WorkflowFile],
        start: int,
        last: int,
    ) -> list[Run]:
        sc = self.scale
        commit_times = [c.time for c in commits]
        plans: list[tuple[float, WorkflowFile, str, Commit]] = []
        parsed: dict[tuple[str, int], Workflow | None] = {}
        for wf in workflows:
            if wf.kind == "reusable":
                continue
            n = max(1, round(sc.runs_per_workflow * rng.lognormvariate(-0.125, 0.5)))
            if wf.state != "active":
                n = max(1, n // 3)
            first = self._parsed(wf, commits[wf.versions[0][0]], parsed)
            events = _events(first)
            cron = _cron(first)
            for _ in range(n):
                day = rng.uniform(start, last) // DAY * DAY
                event = rng.choice(events) if events else "push"
                if event == "schedule" and cron is not None:
                    # GitHub starts scheduled runs at the cron time, often some minutes late
                    created = day + cron[1] * 3600 + cron[0] * 60 + rng.expovariate(1 / 300)
                else:
                    hour = min(23, max(0, int(rng.gauss(14, 4.5))))
                    created = day + hour * 3600 + rng.uniform(0, 3600)
                created = int(min(created, last - 1))
                pos = max(0, bisect.bisect_right(commit_times, created) - 1)
                commit = commits[pos]
                if event == "pull_request":
                    for c in reversed(commits[: pos + 1]):
                        if c.branch != meta.default_branch:
                            commit = c
                            break
                    else:
                        event = "push"
                if event != "pull_request":
                    for c in reversed(commits[: pos + 1]):
                        if c.branch == meta.default_branch:
                            commit = c
                            break
                plans.append((created, wf, event, commit))
        if plans and not meta.archived and (meta.index % 4 == 1 or rng.random() < 0.2):
            # a run that is still going at END: listed, but not yet completed
            _, wf, event, _ = plans[rng.randrange(len(plans))]
            created = END - rng.randrange(20, 400)
            commit = next(c for c in reversed(commits) if c.branch == meta.default_branch)
            plans.append(
                (created, wf, "push" if event in ("pull_request", "schedule") else event, commit)
            )
        plans.sort(key=lambda p: (p[0], p[1].id))
        counters: dict[int, int] = {}
        runs: list[Run] = []
        next_job = [0]
        for k, (created, wf, event, commit) in enumerate(plans[:RUN_ID_STRIDE]):
            counters[wf.id] = counters.get(wf.id, rng.randrange(0, 400)) + 1
            branch = commit.branch
            run_id = RUN_ID_BASE + meta.index * RUN_ID_STRIDE + k
            path = wf.path + (f"@{branch}" if meta.path_ref else "")
            pr = 1000 + commit.index if event == "pull_request" else None
            run = Run(run_id, counters[wf.id], wf, event, branch, commit, created, [], pr, path)
            self._attempts(rng, meta, run, workflows, parsed, next_job, start)
            runs.append(run)
        return runs

    def _parsed(
        self, wf: WorkflowFile, commit: Commit, parsed: dict[tuple[str, int], Workflow | None]
    ) -> Workflow | None:
        v = wf.version_at(commit.index)
        if v is None:
            return None
        key = (wf.path, v[0])
        if key not in parsed:
            try:
                parsed[key] = parse_workflow(v[1], wf.path)
            except WorkflowError:
                parsed[key] = None
        return parsed[key]

    def _attempts(
        self,
        rng: random.Random,
        meta: RepoMeta,
        run: Run,
        workflows: list[WorkflowFile],
        parsed: dict[tuple[str, int], Workflow | None],
        next_job: list[int],
        start: int,
    ) -> None:
        wf = self._parsed(run.workflow, run.commit, parsed)
        by_path = {w.path: w for w in workflows}

        def resolve(uses: str) -> Workflow | None:
            target = by_path.get(uses.removeprefix("./"))
            return self._parsed(target, run.commit, parsed) if target else None

        expanded = expand_jobs(wf, resolve) if wf else []
        begin = run.created
        number = 1
        previous: Attempt | None = None
        while True:
            att = self._attempt(
                rng, meta, run, number, begin, expanded, resolve, next_job, start, previous
            )
            run.attempts.append(att)
            if (
                att.conclusion not in ("failure", "cancelled", "timed_out")
                or number >= 3
                or rng.random() > 0.3
            ):
                break
            number += 1
            begin = att.updated + rng.uniform(60, 4 * 3600)
            # "Re-run failed jobs" (most re-runs of a failure) carries the jobs that succeeded
            # over; "Re-run all jobs" runs everything again.
            previous = att if att.conclusion == "failure" and rng.random() < 0.6 else None
            if begin >= END:
                break

    def _attempt(
        self,
        rng: random.Random,
        meta: RepoMeta,
        run: Run,
        number: int,
        begin: float,
        expanded: list[ExpandedJob],
        resolve: Any,
        next_job: list[int],
        start: int,
        previous: Attempt | None = None,
    ) -> Attempt:
        """One attempt of a run. With `previous` (a "re-run failed jobs" attempt), every job that
        succeeded in `previous` is carried over as GitHub does: a new job id and run_attempt,
        created with this attempt, but its original start, end and steps."""
        ref = (
            f"refs/heads/{run.branch}"
            if run.event != "pull_request"
            else f"refs/pull/{run.pr_number}/merge"
        )
        github = {
            "event_name": run.event,
            "ref": ref,
            "ref_name": run.branch,
            "repository": meta.full_name,
            "actor": run.commit.author,
        }
        skip_all = rng.random() < 0.02
        cancel_at = begin + rng.uniform(20, 900) if rng.random() < 0.03 else None
        time_frac = (begin - start) / max(1.0, END - start)
        hour = int(begin % DAY // 3600)
        done: dict[str, list[Job]] = {}
        jobs: list[Job] = []
        width: dict[str, int] = {}
        for ej in expanded:
            width[ej.key] = width.get(ej.key, 0) + 1
        callee_cache: dict[str, Workflow | None] = {}
        tolerated: set[int] = set()
        for position, ej in enumerate(expanded):
            spec = ej.spec
            inner = None
            if ej.callee_key is not None and spec.uses:
                if spec.uses not in callee_cache:
                    callee_cache[spec.uses] = resolve(spec.uses)
                callee = callee_cache[spec.uses]
                inner = callee.jobs.get(ej.callee_key) if callee else None
            unit = f"{ej.key}/{ej.callee_key}" if ej.callee_key else ej.key
            needs = [j for n in spec.needs for j in done.get(n, [])]
            if inner is not None:
                needs += [j for n in inner.needs for j in done.get(f"{ej.key}/{n}", [])]
            ready = max([begin + rng.uniform(1, 4), *(j.completed for j in needs)])
            condition = (inner.condition if inner is not None else None) or spec.condition
            skip = skip_all or any(
                j.conclusion not in ("success", "skipped")
                and j.id not in tolerated
                and "always()" not in str(condition)
                for j in needs
            )
            skip = skip or any(j.conclusion == "skipped" for j in needs)
            if not skip and condition:
                try:
                    skip = not evaluate(
                        condition.replace("${{", "").replace("}}", ""),
                        {"github": github, "matrix": ej.matrix or {}, "inputs": {}},
                    )
                except UnknownExpression:
                    skip = False
            labels = ej.runner_labels or ("ubuntu-latest",)
            job_id = JOB_ID_BASE + meta.index * JOB_ID_STRIDE + next_job[0]
            next_job[0] += 1
            cancelled = cancel_at is not None and ready >= cancel_at
            earlier = previous.jobs[position] if previous is not None else None
            if earlier is not None and earlier.conclusion == "success":
                job = _carried_over(earlier, job_id, number, begin)
            elif cancelled or skip:
                # Never started: created, started and completed at the same moment, no steps.
                job = Job(
                    job_id,
                    run.id,
                    number,
                    unit,
                    ej.name,
                    labels,
                    ready,
                    ready,
                    ready,
                    "completed",
                    "cancelled" if cancelled else "skipped",
                    [],
                    None,
                    None,
                    None,
                    None,
                )
            else:
                job = self._job(
                    rng,
                    meta,
                    run,
                    number,
                    job_id,
                    unit,
                    ej,
                    inner,
                    labels,
                    ready,
                    hour,
                    width[ej.key],
                    time_frac,
                    cancel_at,
                )
            coe = spec.continue_on_error is True or str(spec.continue_on_error).lower() == "true"
            if coe and job.conclusion == "failure":
                tolerated.add(job.id)
            done.setdefault(unit, []).append(job)
            if inner is not None:
                done.setdefault(ej.key, []).append(job)
            jobs.append(job)
        # what GitHub shows at END: unfinished work is in progress or queued
        for job in jobs:
            if job.completed > END:
                job.status = "in_progress" if job.started <= END else "queued"
                job.conclusion = None
                for s in job.steps:
                    if s.completed is not None and s.completed > END:
                        s.status, s.conclusion = (
                            (
                                "in_progress"
                                if s.started is not None and s.started <= END
                                else "queued"
                            ),
                            None,
                        )
                        s.completed = None
                        if s.status == "queued":
                            s.started = None
        updated = max([begin + 2, *(j.completed for j in jobs)])
        if any(j.status != "completed" for j in jobs):
            return Attempt(number, begin, min(updated, END), "in_progress", None, jobs)
        fatal = {j.conclusion for j in jobs} - {"success", "skipped"}
        fatal_jobs = [
            j for j in jobs if j.conclusion not in ("success", "skipped") and j.id not in tolerated
        ]
        if not jobs or all(j.conclusion == "skipped" for j in jobs):
            conclusion = "skipped"
        elif cancel_at is not None and "cancelled" in fatal:
            conclusion = "cancelled"
        elif any(j.conclusion == "timed_out" for j in fatal_jobs):
            conclusion = "timed_out"
        elif fatal_jobs:
            conclusion = (
                "failure" if any(j.conclusion == "failure" for j in fatal_jobs) else "cancelled"
            )
        else:
            conclusion = "success"
        return Attempt(number, begin, updated, "completed", conclusion, jobs)

    def _job(
        self,
        rng: random.Random,
        meta: RepoMeta,
        run: Run,
        number: int,
        job_id: int,
        unit: str,
        ej: ExpandedJob,
        inner: Any,
        labels: tuple[str, ...],
        ready: float,
        hour: int,
        width: int,
        time_frac: float,
        cancel_at: float | None,
    ) -> Job:
        spec = inner if inner is not None else ej.spec
        os_name = runner_os(labels) or "Linux"
        steps, emulated, platforms = _job_plan(spec)
        if any(s.category == "wheels" for s in steps):
            arch = str((ej.matrix or {}).get("arch", "x86_64"))
            emulated = 0 if arch in ("x86_64", "auto", "AMD64") else 1
        timeout = spec.timeout_minutes if isinstance(spec.timeout_minutes, int) else 360
        queue = queue_seconds(rng, labels, os_name, hour, width)
        started = ready + queue
        cancel_after = None if cancel_at is None else max(0.0, cancel_at - started)
        outcomes, state = run_steps(
            rng,
            steps,
            meta.profile,
            labels,
            os_name,
            time_frac=time_frac,
            timeout_s=timeout * 60.0,
            emulated=emulated,
            docker_platforms=platforms,
            must_fail=False,
            cancel_after=cancel_after,
            test_factor=suite_factor(meta.full_name, (ej.matrix or {}).get("suite")),
        )
        t = started
        out_steps: list[Step] = []
        for n, (ps, oc) in enumerate(zip(steps, outcomes, strict=True), start=1):
            if oc.conclusion == "skipped":
                out_steps.append(Step(ps.name, n, "completed", "skipped", t, t, 0, ps.category))
                continue
            out_steps.append(
                Step(
                    ps.name, n, "completed", oc.conclusion, t, t + oc.seconds, oc.lines, ps.category
                )
            )
            t += oc.seconds
        conclusion = {
            "success": "success",
            "failure": "failure",
            "cancelled": "cancelled",
            "timed_out": "timed_out",
        }[state]
        low = [x.lower() for x in labels]
        if "self-hosted" in low:
            runner = (
                rng.randrange(1, 40),
                f"{meta.owner}-runner-{rng.randrange(1, 9)}",
                1,
                "Default",
            )
        elif any("core" in x for x in low):
            runner = (
                rng.randrange(1000, 9000),
                f"{labels[0]}_{rng.randrange(16**6):06x}",
                3,
                "Larger runners",
            )
        else:
            runner = (
                rng.randrange(1, 99),
                f"GitHub Actions {rng.randrange(1, 400)}",
                2,
                "GitHub Actions",
            )
        return Job(
            job_id,
            run.id,
            number,
            unit,
            ej.name,
            labels,
            ready,
            started,
            t,
            "completed",
            conclusion,
            out_steps,
            *runner,
        )


def _carried_over(earlier: Job, job_id: int, number: int, created: float) -> Job:
    """A successful job copied into a "re-run failed jobs" attempt."""
    steps = [
        Step(s.name, s.number, s.status, s.conclusion, s.started, s.completed, s.lines, s.category)
        for s in earlier.steps
    ]
    return Job(
        job_id,
        earlier.run_id,
        number,
        earlier.key,
        earlier.name,
        earlier.labels,
        created,
        earlier.started,
        earlier.completed,
        earlier.status,
        earlier.conclusion,
        steps,
        earlier.runner_id,
        earlier.runner_name,
        earlier.runner_group_id,
        earlier.runner_group_name,
    )


_PLANS: dict[str, tuple[list[PlannedStep], int, int]] = {}


def _job_plan(spec: JobSpec) -> tuple[list[PlannedStep], int, int]:
    """(steps as GitHub lists them, emulated docker platforms, docker platforms) of a job,
    cached by the job's YAML block: the same block always plans the same."""
    key = spec.yaml_block
    found = _PLANS.get(key)
    if found is not None:
        return found
    steps = plan_steps(spec.steps, len(spec.services), spec.container is not None)
    emulated, platforms = 0, 1
    for step in spec.steps:
        if "build-push" in str(step.get("uses", "")):
            with_ = step.get("with")
            wanted = (
                str(with_.get("platforms", "linux/amd64"))
                if isinstance(with_, dict)
                else "linux/amd64"
            )
            names = [p.strip() for p in wanted.split(",")]
            platforms = len(names)
            qemu = any("setup-qemu" in str(s.get("uses", "")) for s in spec.steps)
            emulated = sum(1 for p in names if "amd64" not in p) if qemu else 0
    if len(_PLANS) > 20000:
        _PLANS.clear()
    _PLANS[key] = (steps, emulated, platforms)
    return steps, emulated, platforms


def _cron(wf: Workflow | None) -> tuple[int, int] | None:
    """(minute, hour) of a workflow's first `schedule` cron, when both are plain numbers."""
    on = wf.raw.get("on") if wf is not None else None
    if not isinstance(on, dict) or not isinstance(on.get("schedule"), list) or not on["schedule"]:
        return None
    fields = str(on["schedule"][0].get("cron", "")).split()
    if len(fields) < 2 or not (fields[0].isdigit() and fields[1].isdigit()):
        return None
    return int(fields[0]), int(fields[1])


def _events(wf: Workflow | None) -> list[str]:
    if wf is None:
        return ["push"]
    events = [
        e
        for e in wf.events
        if e in ("push", "pull_request", "pull_request_target", "schedule", "workflow_dispatch")
    ]
    weights = {
        "push": 5,
        "pull_request": 4,
        "pull_request_target": 4,
        "schedule": 2,
        "workflow_dispatch": 1,
    }
    return [e for e in events for _ in range(weights[e])] or ["push"]
