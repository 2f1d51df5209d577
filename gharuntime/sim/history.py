"""A simulated repository's history: its commits and the workflow files they change."""

from __future__ import annotations

import hashlib
import random

from gharuntime.sim.model import (
    DAY,
    END,
    WORKFLOW_ID_BASE,
    Commit,
    RepoWorld,
    Scale,
    SimRepo,
    WorkflowFile,
    blob_sha,
)
from gharuntime.sim.runs import schedule_runs
from gharuntime.sim.vocabulary import BRANCHES, COMMIT_AUTHORS, COMMIT_MESSAGES
from gharuntime.sim.workflows import draft_workflows, render_yaml

__all__ = ["build_repo"]


def _sha(*parts: object) -> str:
    return hashlib.sha1(":".join(map(str, parts)).encode()).hexdigest()


def build_repo(seed: int, scale: Scale, meta: SimRepo) -> RepoWorld:
    """A repository's whole history, from its own seed: commits, workflow files, then runs."""
    index = meta.index
    rng = random.Random(f"{seed}:repo:{index}")
    start = END - scale.days * DAY
    n_wf = (
        0
        if meta.actions_disabled
        else max(1, min(5, round(rng.gauss(scale.workflows_per_repo, 0.9))))
    )
    drafts = draft_workflows(
        rng, meta.language, meta.default_branch, n_wf, rng.choice((0, 1, 2, 3))
    )
    # commits: one initial commit with every workflow, then a history over the span
    last = meta.pushed_at if meta.archived else END
    n_commits = max(3, int(scale.runs_per_workflow * max(1, n_wf) * rng.uniform(0.5, 1.0)))
    times = sorted(int(rng.uniform(start, last)) for _ in range(n_commits))
    commits: list[Commit] = []
    first = Commit(
        0,
        _sha(seed, index, "c", 0),
        _sha(seed, index, "t", 0),
        start - rng.randrange(DAY, 30 * DAY),
        meta.default_branch,
        "Initial commit",
        "alice",
        (),
    )
    commits.append(first)
    for ci, t in enumerate(times, start=1):
        branch = meta.default_branch if rng.random() < 0.6 else rng.choice(BRANCHES)
        msg = rng.choice(COMMIT_MESSAGES).format(
            v=f"1.{ci}.0", pr=100 + ci, owner=meta.owner, branch=branch
        )
        commits.append(
            Commit(
                ci,
                _sha(seed, index, "c", ci),
                _sha(seed, index, "t", ci),
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
    runs = schedule_runs(rng, scale, meta, commits, workflows, start, last)
    return RepoWorld(meta, commits, workflows, runs)
