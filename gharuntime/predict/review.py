"""Review a workflow change before it merges: the same model's predictions for the file before
and after, job by job, and what the change does to the run's time and bill.

Jobs are matched as GitHub names them apart: by job key (`test`, or `caller/callee` for a
reusable workflow's job) and matrix values (a matrix from history: each member's own name). A
job whose matrix values change is one job removed and one added, as it is on GitHub's checks
page. A removed job and an added job that run the same steps are one job `moved` (renamed, or
moved into a called workflow: gharuntime.predict.moves). A job is `changed` when its predicted
time, its P10-P90, its runners or its cost moved; what predict cannot know is flagged on both
sides.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gharuntime.billing import JobCost, WorkflowCost
from gharuntime.markdown import md
from gharuntime.predict.history_jobs import member_label, unit_of
from gharuntime.predict.moves import move_pairs
from gharuntime.predict.workflow import (
    FLAG_WORDS,
    JobPrediction,
    WorkflowPrediction,
    human_seconds,
)
from gharuntime.sources.gitstore import GitError, GitRepo

__all__ = [
    "JobChange",
    "WorkflowReview",
    "read_at_revision",
    "review_markdown",
    "review_workflows",
]

Status = Literal["added", "removed", "moved", "changed", "unchanged"]


def _identity(job: JobPrediction) -> tuple[str, str, str]:
    return (
        job.key,
        json.dumps(job.matrix, sort_keys=True, default=str),
        member_label(job.from_history),
    )


@dataclass(frozen=True)
class JobChange:
    """One job before and after the change (None on the side where it does not exist)."""

    status: Status
    name: str
    before: JobPrediction | None
    after: JobPrediction | None
    cost_before: JobCost | None
    cost_after: JobCost | None
    old_name: str | None = None  # a moved job's name before the change

    def _seconds(self, job: JobPrediction | None) -> float:
        return job.predicted.get("duration_s", 0.0) if job else 0.0

    @property
    def label(self) -> str:
        """The job's name, `old → new` for a moved one."""
        return f"{self.old_name} → {self.name}" if self.old_name is not None else self.name

    @property
    def delta_s(self) -> float:
        return self._seconds(self.after) - self._seconds(self.before)

    def to_json(self) -> dict[str, Any]:
        def side(job: JobPrediction | None, cost: JobCost | None) -> dict[str, Any] | None:
            if job is None:
                return None
            return {
                "duration_s": round(job.predicted.get("duration_s", 0.0), 1),
                "p10": _round(job.quantiles.get("p10")),
                "p90": _round(job.quantiles.get("p90")),
                "runner_labels": list(job.runner_labels),
                "flags": list(job.flags),
                **(cost.to_json() if cost else {}),
            }

        return {
            "status": self.status,
            "name": self.name,
            "old_name": self.old_name,
            "before": side(self.before, self.cost_before),
            "after": side(self.after, self.cost_after),
            "delta_s": round(self.delta_s, 1),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _usd(cost: JobCost | None) -> float:
    return cost.point.cost_usd if cost and cost.point else 0.0


@dataclass(frozen=True)
class WorkflowReview:
    """Every job's change and the run's deltas: sum of job time, critical path and bill."""

    base: WorkflowPrediction
    new: WorkflowPrediction
    base_cost: WorkflowCost
    new_cost: WorkflowCost
    jobs: list[JobChange]

    @property
    def delta_total_job_s(self) -> float:
        return self.new.total_job_s - self.base.total_job_s

    @property
    def delta_critical_path_s(self) -> float:
        return self.new.critical_path_s - self.base.critical_path_s

    @property
    def delta_cost_usd(self) -> float:
        return self.new_cost.total.cost_usd - self.base_cost.total.cost_usd

    @property
    def delta_billed_minutes(self) -> int:
        return self.new_cost.total.billed_minutes - self.base_cost.total.billed_minutes

    def counts(self) -> dict[str, int]:
        found = {
            s: sum(j.status == s for j in self.jobs)
            for s in ("added", "removed", "moved", "changed")
        }
        found["unchanged"] = sum(j.status == "unchanged" for j in self.jobs)
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base.path,
            "workflow": self.new.path,
            "model": self.new.model,
            "jobs": [j.to_json() for j in self.jobs],
            "counts": self.counts(),
            "total_job_s": {
                "before": round(self.base.total_job_s, 1),
                "after": round(self.new.total_job_s, 1),
                "delta": round(self.delta_total_job_s, 1),
            },
            "critical_path_s": {
                "before": round(self.base.critical_path_s, 1),
                "after": round(self.new.critical_path_s, 1),
                "delta": round(self.delta_critical_path_s, 1),
            },
            "bill": {
                "billed_minutes_before": self.base_cost.total.billed_minutes,
                "billed_minutes_after": self.new_cost.total.billed_minutes,
                "cost_usd_before": round(self.base_cost.total.cost_usd, 4),
                "cost_usd_after": round(self.new_cost.total.cost_usd, 4),
                "delta_cost_usd": round(self.delta_cost_usd, 4),
            },
            "flags_before": self.base.flagged,
            "flags_after": self.new.flagged,
        }


def _changed(
    a: JobPrediction, b: JobPrediction, cost_a: JobCost | None, cost_b: JobCost | None
) -> bool:
    def rounded(job: JobPrediction) -> tuple[Any, ...]:
        return (
            round(job.predicted.get("duration_s", 0.0), 1),
            _round(job.quantiles.get("p10")),
            _round(job.quantiles.get("p90")),
            job.runner_labels,
            job.flags,
        )

    return rounded(a) != rounded(b) or round(_usd(cost_a), 4) != round(_usd(cost_b), 4)


def review_workflows(
    base: WorkflowPrediction,
    base_cost: WorkflowCost,
    new: WorkflowPrediction,
    new_cost: WorkflowCost,
) -> WorkflowReview:
    """Match the two predictions' jobs and say what changed (the new file's order, then the
    removed jobs in the base's order)."""
    before = {_identity(j): (j, c) for j, c in zip(base.jobs, base_cost.jobs, strict=True)}
    seen: set[tuple[str, str, str]] = set()
    changes: list[JobChange] = []
    for job, cost in zip(new.jobs, new_cost.jobs, strict=True):
        ident = _identity(job)
        if ident in before and ident not in seen:
            seen.add(ident)
            old, old_cost = before[ident]
            status: Status = "changed" if _changed(old, job, old_cost, cost) else "unchanged"
            changes.append(JobChange(status, job.name, old, job, old_cost, cost))
        else:
            changes.append(JobChange("added", job.name, None, job, None, cost))
    for ident, (old, old_cost) in before.items():
        if ident not in seen:
            changes.append(JobChange("removed", old.name, old, None, old_cost, None))
    return WorkflowReview(base, new, base_cost, new_cost, _moved(changes, base, new))


def _moved(
    changes: list[JobChange], base: WorkflowPrediction, new: WorkflowPrediction
) -> list[JobChange]:
    """Each added job that a removed one moved to (gharuntime.predict.moves), as one `moved`
    change where the added one stood; the removed one's row goes."""
    pairs = move_pairs(base.jobs, new.jobs)
    if not pairs:
        return changes

    def place(job: JobPrediction) -> tuple[tuple[str, str], str]:
        return unit_of(job.key, job.matrix), member_label(job.from_history)

    removed = {place(c.before): c for c in changes if c.status == "removed" and c.before}
    out: list[JobChange] = []
    taken: set[int] = set()
    for c in changes:
        if c.status == "added" and c.after is not None:
            unit, label = place(c.after)
            old = removed.get((pairs.get(unit, ("", "")), label))
            if old is not None and id(old) not in taken:
                taken.add(id(old))
                out.append(
                    JobChange(
                        "moved",
                        c.name,
                        old.before,
                        c.after,
                        old.cost_before,
                        c.cost_after,
                        old_name=old.name,
                    )
                )
                continue
        out.append(c)
    return [c for c in out if id(c) not in taken]


def _signed(seconds: float) -> str:
    return ("+" if round(seconds) > 0 else "") + human_seconds(seconds) if round(seconds) else "±0s"


def _time(job: JobPrediction | None) -> str:
    if job is None:
        return "—"
    text = human_seconds(job.predicted.get("duration_s", 0.0))
    q = job.quantiles
    if "p10" in q and "p90" in q:
        text += f" ({human_seconds(q['p10'])}–{human_seconds(q['p90'])})"
    return text


def _money(cost: JobCost | None) -> str:
    if cost is None:
        return "—"
    return "not priced" if cost.point is None else f"${cost.point.cost_usd:.3f}"


def review_markdown(review: WorkflowReview) -> str:
    """The review as GitHub-flavoured Markdown, for a pull-request comment or
    `$GITHUB_STEP_SUMMARY`: a line of deltas, then the jobs that changed (unchanged ones are
    counted, not listed). Every name from the files is escaped."""
    counts = review.counts()
    b, n = review.base_cost.total, review.new_cost.total
    lines = [
        f"### {md(review.new.path)}: predicted time and cost of this change",
        "",
        f"Sum of job time **{human_seconds(review.base.total_job_s)} → {human_seconds(review.new.total_job_s)}** "
        f"({_signed(review.delta_total_job_s)}), critical path "
        f"**{human_seconds(review.base.critical_path_s)} → {human_seconds(review.new.critical_path_s)}** "
        f"({_signed(review.delta_critical_path_s)}), bill **${b.cost_usd:.3f} → ${n.cost_usd:.3f}** "
        f"({'+' if review.delta_cost_usd >= 0 else '−'}${abs(review.delta_cost_usd):.3f}; "
        f"{b.billed_minutes} → {n.billed_minutes} billed min).",
        "",
        f"{counts['added']} job(s) added, {counts['removed']} removed, "
        + (f"{counts['moved']} moved (renamed, same steps), " if counts["moved"] else "")
        + f"{counts['changed']} changed, {counts['unchanged']} unchanged. Model: "
        f"{md(review.new.model.get('method'))} ({md(review.new.model.get('track'))} track).",
        "",
    ]
    listed = [j for j in review.jobs if j.status != "unchanged"]
    if listed:
        lines += [
            "| job | change | before (P10–P90) | after (P10–P90) | Δ time | cost before | "
            "cost after | cannot know |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for j in listed:
            flags = sorted(
                {*(j.before.flags if j.before else ()), *(j.after.flags if j.after else ())}
            )
            lines.append(
                f"| {md(j.label)} | {j.status} | {_time(j.before)} | {_time(j.after)} | "
                f"{_signed(j.delta_s)} | {_money(j.cost_before)} | {_money(j.cost_after)} | "
                f"{', '.join(FLAG_WORDS.get(f, f) for f in flags) or ''} |"
            )
    else:
        lines.append("No job's predicted time, range, runners or cost changed.")
    unpriced = sum(1 for c in review.new_cost.jobs if c.unpriced)
    if unpriced:
        lines += ["", f"{unpriced} job(s) not priced after the change (runner label unknown)."]
    return "\n".join(lines) + "\n"


def read_at_revision(path: Path, rev: str, limit: int) -> str | None:
    """The file at `path` as it was at commit `rev` of the git repository holding it; None when
    it did not exist there (a new workflow: every job is added). Raises GitError for a path
    outside a repository, an unknown revision, or a file that is not UTF-8 text within `limit`."""
    if not rev or rev.startswith("-") or any(c in rev for c in "\0\n:"):
        raise GitError(f"{rev!r}: not a git revision", fix="give a commit, branch or tag")
    here = path.resolve()
    try:
        top = subprocess.run(
            ["git", "-C", str(here.parent), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitError(f"cannot run git to read {path} at {rev}: {exc}") from exc
    if top.returncode != 0:
        raise GitError(
            f"{path}: not inside a git repository, so --base-ref cannot read it",
            fix="run it in the repository's checkout, or give the old file with --base FILE",
        )
    root = Path(top.stdout.strip())
    with GitRepo(root) as repo:
        commit = repo.read(f"{rev}^{{commit}}")
        if commit is None:
            raise GitError(
                f"{rev}: no such revision in {root}",
                fix="fetch it first (actions/checkout with fetch-depth: 0), or name another",
            )
        relative = here.relative_to(root.resolve()).as_posix()
        found = repo.read(f"{rev}:{relative}")
    if found is None:
        return None
    kind, data = found
    if kind != "blob":
        raise GitError(f"{rev}:{relative} is a {kind}, not a file")
    if len(data) > limit:
        raise GitError(f"{rev}:{relative} is {len(data):,} bytes, over the {limit:,}-byte limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GitError(f"{rev}:{relative}: not UTF-8 text ({exc.reason})") from exc
