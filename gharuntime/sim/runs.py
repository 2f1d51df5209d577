"""When a simulated repository's runs happen: their events, schedule times and commits."""

from __future__ import annotations

import bisect
import random

from gharuntime.sim.attempts import parsed_at, run_attempts
from gharuntime.sim.model import (
    DAY,
    END,
    RUN_ID_BASE,
    RUN_ID_STRIDE,
    Commit,
    Run,
    Scale,
    SimRepo,
    WorkflowFile,
)
from gharuntime.workflow import Workflow

__all__ = ["schedule_runs"]


def schedule_runs(
    rng: random.Random,
    scale: Scale,
    meta: SimRepo,
    commits: list[Commit],
    workflows: list[WorkflowFile],
    start: int,
    last: int,
) -> list[Run]:
    """A repository's runs: when each workflow fires, on which event and commit, then what
    each run does (its attempts)."""
    commit_times = [c.time for c in commits]
    plans: list[tuple[float, WorkflowFile, str, Commit]] = []
    parsed: dict[tuple[str, int], Workflow | None] = {}
    for wf in workflows:
        if wf.kind == "reusable":
            continue
        n = max(1, round(scale.runs_per_workflow * rng.lognormvariate(-0.125, 0.5)))
        if wf.state != "active":
            n = max(1, n // 3)
        first = parsed_at(wf, commits[wf.versions[0][0]], parsed)
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
        run_attempts(rng, meta, run, workflows, parsed, next_job, start)
        runs.append(run)
    return runs


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
