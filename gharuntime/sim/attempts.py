"""What a simulated run does: its attempts, their jobs and steps, timed by the cost model."""

from __future__ import annotations

import random
from typing import Any

from gharuntime.expressions import UnknownExpression, evaluate
from gharuntime.sim.costs import PlannedStep, plan_steps, queue_seconds, run_steps, suite_factor
from gharuntime.sim.model import (
    DAY,
    END,
    JOB_ID_BASE,
    JOB_ID_STRIDE,
    Attempt,
    Commit,
    Job,
    Run,
    SimRepo,
    Step,
    WorkflowFile,
)
from gharuntime.workflow import (
    ExpandedJob,
    JobSpec,
    Workflow,
    WorkflowError,
    expand_jobs,
    parse_workflow,
    runner_os,
)

__all__ = ["parsed_at", "run_attempts"]


def parsed_at(
    wf: WorkflowFile, commit: Commit, parsed: dict[tuple[str, int], Workflow | None]
) -> Workflow | None:
    """The workflow file as parsed at `commit` (None: absent or invalid there), parsed once per
    version into `parsed`."""
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


def run_attempts(
    rng: random.Random,
    meta: SimRepo,
    run: Run,
    workflows: list[WorkflowFile],
    parsed: dict[tuple[str, int], Workflow | None],
    next_job: list[int],
    start: int,
) -> None:
    """Append a run's attempts: the first, then re-runs of a failure (at most three in all).
    `next_job` holds the repository's next job number."""
    wf = parsed_at(run.workflow, run.commit, parsed)
    by_path = {w.path: w for w in workflows}

    def resolve(uses: str) -> Workflow | None:
        target = by_path.get(uses.removeprefix("./"))
        return parsed_at(target, run.commit, parsed) if target else None

    expanded = expand_jobs(wf, resolve) if wf else []
    begin = run.created
    number = 1
    previous: Attempt | None = None
    while True:
        att = _attempt(rng, meta, run, number, begin, expanded, resolve, next_job, start, previous)
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
    rng: random.Random,
    meta: SimRepo,
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
            job = _job(
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
                        ("in_progress" if s.started is not None and s.started <= END else "queued"),
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
    rng: random.Random,
    meta: SimRepo,
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
            Step(ps.name, n, "completed", oc.conclusion, t, t + oc.seconds, oc.lines, ps.category)
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
