"""Review a workflow change before it merges: the same model's predictions for the file before
and after, job by job, and what the change does to the run's time and bill.

Jobs are matched as GitHub names them apart: by job key (`test`, or `caller/callee` for a
reusable workflow's job) and matrix values (a matrix from history: each member's own name). A
job whose matrix values change is one job removed and one added, as it is on GitHub's checks
page. A removed job and an added job that run the same steps are one job `moved` (renamed, or
moved into a called workflow: gharuntime.predict.moves). A job is `changed` when its predicted
time, its P10-P90, its runners or its cost moved; what predict cannot know is flagged on both
sides. Where the model predicts queue_s, each side of a job shows its wait and the run's wall
clock (wait + critical path, gharuntime.predict.wait) is one more Δ; a wait that moved alone
(the queue model reads the whole workflow's shape) does not make a job `changed`: the wall
clock's Δ counts it.

Every row says what its prediction rests on (`basis`, BASIS_MEANINGS), and every run-level Δ
has its P10–P90 and the repository's own run-to-run noise beside it (gharuntime.predict.spread
states both rules). A change to a reusable workflow is reviewed through the workflows that call
it (`ChangeReview`): GitHub records its runs under them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from gharuntime.billing import JobCost, WorkflowCost
from gharuntime.markdown import md
from gharuntime.predict.history import RunSpread
from gharuntime.predict.history_jobs import member_label, unit_of
from gharuntime.predict.moves import move_pairs
from gharuntime.predict.siblings import MATRIX_SIBLINGS
from gharuntime.predict.spread import DeltaSpread, Measure, judge
from gharuntime.predict.wait import WALL_CLOCK, clock_estimate
from gharuntime.predict.workflow import (
    FLAG_WORDS,
    HISTORY_MATRIX,
    JobPrediction,
    WorkflowPrediction,
    human_seconds,
    wait_json,
)

__all__ = [
    "BASIS_MEANINGS",
    "STEPS_CHANGED_MEANING",
    "STEPS_UNSEEN_WORDS",
    "VISIBILITY_WORDS",
    "ChangeReview",
    "JobChange",
    "WorkflowReview",
    "base_words",
    "billing_words",
    "deltas_line",
    "noise_line",
    "review_markdown",
    "review_workflows",
    "row_basis",
    "signed_seconds",
    "signed_usd",
    "unseen_steps_line",
    "wait_words",
]

Status = Literal["added", "removed", "moved", "changed", "unchanged"]


def _identity(job: JobPrediction) -> tuple[str, str, str]:
    return (
        job.key,
        json.dumps(job.matrix, sort_keys=True, default=str),
        member_label(job.from_history),
    )


BASIS_MEANINGS: dict[str, str] = {
    "history": "predicted by the history-track model from the job's own recent runs",
    "config fallback": "no earlier run of this job in the repository's history: predicted by "
    "the config-track model from its configuration, with its wider range",
    "from-history matrix": "a matrix given by an expression, its jobs taken from the "
    "repository's recent runs of that job",
    MATRIX_SIBLINGS: "a new combination of a matrix whose other combinations have run: the "
    "config-track model's prediction scaled to how those combinations ran, its range widened "
    "by how much they disagree",
    "config only": "no history was given (a model folder alone): predicted from the job's "
    "configuration",
    "unknown": "predict cannot know this job (a reusable workflow it could not read, a matrix "
    "given by an expression, or a history-track model with no run of it and no config-track "
    "model to fall back on): a guess, counted as one job",
}
"""What each row's `basis` means, in every format of a review."""

STEPS_CHANGED_MEANING = (
    "a job's `steps_changed`: what its steps run differs from the base (each step's `uses:` "
    "without its @ref, `run:`, `with:`); where its basis is history or from-history matrix, "
    "its new side is predicted from its runs before the change, which ran the old steps"
)
"""What a review row's `steps_changed` means, in the review's JSON."""

STEPS_UNSEEN_WORDS = "steps changed: predicted from runs before the change"
"""A row whose steps changed but whose new side rests on its runs before (JobChange.unseen_steps),
for a table's `cannot know` column."""

_UNKNOWN_FLAGS = frozenset({"remote_reusable", "reusable_refused", "expression_matrix"})


def row_basis(job: JobPrediction) -> str:
    """What a job's prediction rests on (a BASIS_MEANINGS key, or the basis a newer rule gave
    it): its history, the config-track fallback, the configuration alone when no history was
    given, or `unknown` when predict cannot know the job and no history stands behind it."""
    if job.basis not in (None, "config fallback", "no history"):
        return str(job.basis)  # history, from-history matrix, ...
    if job.basis == "no history" or _UNKNOWN_FLAGS & set(job.flags):
        return "unknown"
    return "config fallback" if job.basis == "config fallback" else "config only"


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
    steps_changed: bool = False  # what its steps run differs (gharuntime.predict.steps)

    @property
    def unseen_steps(self) -> bool:
        """Its steps changed while its new side is predicted from its runs before the change
        (history, from-history matrix): runs of steps it no longer has."""
        return self.steps_changed and self.basis in ("history", HISTORY_MATRIX)

    def _seconds(self, job: JobPrediction | None) -> float:
        return job.predicted.get("duration_s", 0.0) if job else 0.0

    @property
    def label(self) -> str:
        """The job's name, `old → new` for a moved one."""
        return f"{self.old_name} → {self.name}" if self.old_name is not None else self.name

    @property
    def delta_s(self) -> float:
        return self._seconds(self.after) - self._seconds(self.before)

    @property
    def basis(self) -> str:
        """The row's basis: its new side's (its old side's for a removed job)."""
        job = self.after or self.before
        assert job is not None
        return row_basis(job)

    def to_json(self) -> dict[str, Any]:
        def side(job: JobPrediction | None, cost: JobCost | None) -> dict[str, Any] | None:
            if job is None:
                return None
            return {
                "duration_s": round(job.predicted.get("duration_s", 0.0), 1),
                "p10": _round(job.quantiles.get("p10")),
                "p90": _round(job.quantiles.get("p90")),
                "basis": row_basis(job),
                "wait_s": wait_json(job.wait),
                "runner_labels": list(job.runner_labels),
                "flags": list(job.flags),
                **(cost.to_json() if cost else {}),
            }

        return {
            "status": self.status,
            "name": self.name,
            "old_name": self.old_name,
            "basis": self.basis,
            "before": side(self.before, self.cost_before),
            "after": side(self.after, self.cost_after),
            "delta_s": round(self.delta_s, 1),
            "steps_changed": self.steps_changed,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _usd(cost: JobCost | None) -> float:
    return cost.point.cost_usd if cost and cost.point else 0.0


@dataclass(frozen=True)
class WorkflowReview:
    """Every job's change and the run's deltas: sum of job time, critical path and bill, each
    with its P10–P90 (`spread`) and the workflow's run-to-run noise (`noise`, from the
    repository's history; None: not measured). `base_there` / `new_there`: whether the
    workflow exists on that side (a workflow added or removed by the change)."""

    base: WorkflowPrediction
    new: WorkflowPrediction
    base_cost: WorkflowCost
    new_cost: WorkflowCost
    jobs: list[JobChange]
    spread: DeltaSpread | None = None
    noise: RunSpread | None = None
    threshold: float = 1.0
    base_there: bool = True
    new_there: bool = True
    clock: tuple[float, float] | None = None  # the wall clock (wait + critical path) before, after

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

    def measures(self) -> dict[str, Measure]:
        """Each run-level Δ judged against the noise (gharuntime.predict.spread.judge)."""
        deltas = {
            "total_job_s": self.delta_total_job_s,
            "critical_path_s": self.delta_critical_path_s,
            "cost_usd": self.delta_cost_usd,
        }
        if self.clock is not None:
            deltas[WALL_CLOCK] = self.clock[1] - self.clock[0]
        return judge(
            deltas,
            self.spread,
            self.noise,
            self.base.total_job_s,
            self.base_cost.total.cost_usd,
            self.threshold,
        )

    @property
    def beyond_noise(self) -> bool:
        return any(m.beyond for m in self.measures().values())

    @property
    def unseen_steps(self) -> int:
        """How many jobs run other steps now but are predicted from their runs before."""
        return sum(j.unseen_steps for j in self.jobs)

    def counts(self) -> dict[str, int]:
        found = {
            s: sum(j.status == s for j in self.jobs)
            for s in ("added", "removed", "moved", "changed")
        }
        found["unchanged"] = sum(j.status == "unchanged" for j in self.jobs)
        return found

    def bases(self) -> dict[str, int]:
        """How many rows rest on each basis."""
        out: dict[str, int] = {}
        for j in self.jobs:
            out[j.basis] = out.get(j.basis, 0) + 1
        return out

    def to_json(self) -> dict[str, Any]:
        measures = self.measures()
        return {
            "workflow": self.new.path,
            "there": {"before": self.base_there, "after": self.new_there},
            "model": self.new.model,
            "jobs": [j.to_json() for j in self.jobs],
            "counts": self.counts(),
            "basis": self.bases(),
            "total_job_s": {
                "before": round(self.base.total_job_s, 1),
                "after": round(self.new.total_job_s, 1),
                **measures["total_job_s"].to_json(1),
            },
            "critical_path_s": {
                "before": round(self.base.critical_path_s, 1),
                "after": round(self.new.critical_path_s, 1),
                **measures["critical_path_s"].to_json(1),
            },
            "bill": {
                "billed_minutes_before": self.base_cost.total.billed_minutes,
                "billed_minutes_after": self.new_cost.total.billed_minutes,
                "cost_usd_before": round(self.base_cost.total.cost_usd, 4),
                "cost_usd_after": round(self.new_cost.total.cost_usd, 4),
                **{
                    {"delta": "delta_cost_usd"}.get(k, k.replace("delta_", "delta_cost_usd_")): v
                    for k, v in measures["cost_usd"].to_json(4).items()
                },
            },
            WALL_CLOCK: {
                "before": round(self.clock[0], 1),
                "after": round(self.clock[1], 1),
                **measures[WALL_CLOCK].to_json(1),
            }
            if self.clock is not None
            else None,
            "noise": self.noise.to_json() if self.noise else None,
            "beyond_noise": self.beyond_noise,
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
    *,
    noise: RunSpread | None = None,
    threshold: float = 1.0,
    base_there: bool = True,
    new_there: bool = True,
) -> WorkflowReview:
    """Match the two predictions' jobs and say what changed (the new file's order, then the
    removed jobs in the base's order), with the run-level Δ's range (spread.delta_spread) and
    `noise`, the workflow's run-to-run spread, to judge it by."""
    from gharuntime.predict.spread import delta_spread

    before = {_identity(j): (j, c) for j, c in zip(base.jobs, base_cost.jobs, strict=True)}
    seen: set[tuple[str, str, str]] = set()
    changes: list[JobChange] = []
    for job, cost in zip(new.jobs, new_cost.jobs, strict=True):
        ident = _identity(job)
        if ident in before and ident not in seen:
            seen.add(ident)
            old, old_cost = before[ident]
            steps = old.steps != job.steps
            changed = steps or _changed(old, job, old_cost, cost)
            status: Status = "changed" if changed else "unchanged"
            changes.append(JobChange(status, job.name, old, job, old_cost, cost, None, steps))
        else:
            changes.append(JobChange("added", job.name, None, job, None, cost))
    for ident, (old, old_cost) in before.items():
        if ident not in seen:
            changes.append(JobChange("removed", old.name, old, None, old_cost, None))
    changes = _moved(changes, base, new)
    # rows share their draws (a moved job's two sides too: one job under a new name)
    spread = delta_spread(
        [(c.before, c.after) for c in changes], base.jobs, base_cost, new.jobs, new_cost
    )
    waited = any(j.wait for j in (*base.jobs, *new.jobs))
    return WorkflowReview(
        base,
        new,
        base_cost,
        new_cost,
        changes,
        spread=spread,
        noise=noise,
        threshold=threshold,
        base_there=base_there,
        new_there=new_there,
        clock=(clock_estimate(base.jobs), clock_estimate(new.jobs)) if waited else None,
    )


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


def signed_seconds(seconds: float) -> str:
    """`+1m 05s`, `−42s`, `±0s`: a Δ of time, its sign always shown."""
    if not round(seconds):
        return "±0s"
    return ("+" if seconds > 0 else "") + human_seconds(seconds)


def signed_usd(value: float) -> str:
    """`+$0.072`, `−$0.270`, `±$0.000`: a Δ of money, one format everywhere (a true minus sign,
    as times have, and the dollar sign)."""
    cents = round(value, 3)
    if cents == 0:
        return "±$0.000"
    text = f"${abs(cents):.3f}" if abs(cents) < 100 else f"${abs(cents):,.2f}"
    return ("+" if cents > 0 else "−") + text


_signed = signed_seconds


def _time(job: JobPrediction | None) -> str:
    if job is None:
        return "—"
    text = human_seconds(job.predicted.get("duration_s", 0.0))
    q = job.quantiles
    if "p10" in q and "p90" in q:
        text += f" ({human_seconds(q['p10'])}–{human_seconds(q['p90'])})"
    return text


def wait_words(job: JobPrediction | None) -> str:
    """`2m 05s (P90 21m 40s)`: a job's median wait for a runner and its P90; `—` for no job,
    `-` for a job without a wait."""
    if job is None:
        return "—"
    if not job.wait:
        return "-"
    p90 = job.wait.get("p90")
    return human_seconds(job.wait.get("p50", 0.0)) + (
        f" (P90 {human_seconds(p90)})" if p90 is not None else ""
    )


def _money(cost: JobCost | None) -> str:
    if cost is None:
        return "—"
    return "not priced" if cost.point is None else f"${cost.point.cost_usd:.3f}"


def _range(m: Measure, money: bool) -> str:
    if m.p10 is None or m.p90 is None:
        return ""
    show = signed_usd if money else signed_seconds
    return f", P10–P90 {show(m.p10)} to {show(m.p90)}"


def noise_words(review: WorkflowReview, m: Measure, money: bool = False) -> str:
    """`noise ±1h 40m: beyond it` / `inside the noise (±1h 40m)` / `` (no noise measured)."""
    if m.band is None:
        return ""
    band = f"±${m.band:.3f}" if money else "±" + human_seconds(m.band)
    return f"; runs swing {band}: {'beyond' if m.beyond else 'inside'} the noise"


def deltas_line(review: WorkflowReview, bold: str = "**") -> str:
    """Sum of job time, critical path and bill, before → after (Δ, its P10–P90, the noise)."""
    ms = review.measures()
    b, n = review.base_cost.total, review.new_cost.total
    total, path, bill = ms["total_job_s"], ms["critical_path_s"], ms["cost_usd"]
    clock = ""
    if review.clock is not None and WALL_CLOCK in ms:
        wall = ms[WALL_CLOCK]
        clock = (
            f", wall clock (each job's wait + the critical path) {bold}"
            f"{human_seconds(review.clock[0])} → {human_seconds(review.clock[1])}{bold} "
            f"({signed_seconds(wall.delta)}{_range(wall, False)}{noise_words(review, wall)})"
        )
    return (
        f"Sum of job time {bold}{human_seconds(review.base.total_job_s)} → "
        f"{human_seconds(review.new.total_job_s)}{bold} ({signed_seconds(total.delta)}"
        f"{_range(total, False)}{noise_words(review, total)}), critical path "
        f"{bold}{human_seconds(review.base.critical_path_s)} → "
        f"{human_seconds(review.new.critical_path_s)}{bold} ({signed_seconds(path.delta)}"
        f"{_range(path, False)}{noise_words(review, path)}){clock}, bill {bold}"
        f"${b.cost_usd:.3f} → "
        f"${n.cost_usd:.3f}{bold} ({signed_usd(bill.delta)}{_range(bill, True)}"
        f"{noise_words(review, bill, True)}; {b.billed_minutes} → {n.billed_minutes} billed "
        "min)."
    )


_MEASURE_WORDS = {
    "total_job_s": "sum of job time",
    "critical_path_s": "critical path",
    "cost_usd": "bill",
    WALL_CLOCK: "wall clock",
}


def noise_line(review: WorkflowReview) -> str:
    """Where the noise comes from, or that there is none, and the verdict."""
    beyond = [_MEASURE_WORDS[k] for k, m in review.measures().items() if m.beyond]
    verdict = f"beyond the noise ({', '.join(beyond)})" if beyond else "inside the noise"
    if review.noise is None:
        return (
            f"No history of this workflow's runs measures its run-to-run noise: the change is "
            f"taken as {verdict} "
            + (
                "by its P10–P90 alone (beyond when it leaves out 0)."
                if review.spread is not None
                else "as any Δ other than 0 (the model gives no range)."
            )
        )
    nz = review.noise
    return (
        f"Run-to-run noise: the {nz.runs} latest complete runs of this workflow"
        f"{f' on {nz.event}' if nz.event else ''} summed {human_seconds(nz.total_job_s[0])}–"
        f"{human_seconds(nz.total_job_s[2])} of job time (P10–P90); a Δ is beyond the noise "
        f"when it is over {review.threshold:g} × half that width. This change is {verdict}."
    )


def unseen_steps_line(count: int) -> str:
    """Why a job whose steps changed may show no Δ: its prediction rests on runs of its old
    steps."""
    return (
        f"{count} job(s) run other steps now but are predicted from their runs before the "
        "change: the model has not seen the new steps run, so their Δ is what those runs say "
        "(often none), not what the new steps will take."
    )


def _review_section(review: WorkflowReview, heading: str | None) -> list[str]:
    counts = review.counts()
    lines = [heading, ""] if heading else []
    if not review.base_there:
        lines += ["Not in the base: every job is added.", ""]
    if not review.new_there:
        lines += ["Removed by this change: every job is removed.", ""]
    bases = ", ".join(f"{n} {md(b)}" for b, n in review.bases().items())
    lines += [
        md(deltas_line(review, "")),
        "",
        md(noise_line(review)),
        "",
        f"{counts['added']} job(s) added, {counts['removed']} removed, "
        + (f"{counts['moved']} moved (renamed, same steps), " if counts["moved"] else "")
        + f"{counts['changed']} changed, {counts['unchanged']} unchanged; basis: "
        f"{bases or 'no job'}. Model: "
        f"{md(review.new.model.get('method'))} ({md(review.new.model.get('track'))} track).",
        "",
    ]
    listed = [j for j in review.jobs if j.status != "unchanged"]
    waited = review.clock is not None
    if listed:
        lines += [
            "| job | change | basis | before (P10–P90) | after (P10–P90) | Δ time | "
            + ("wait before (P90) | wait after (P90) | " if waited else "")
            + "cost before | cost after | cannot know |",
            "| --- | --- | --- | ---: | ---: | ---: | "
            + ("---: | ---: | " if waited else "")
            + "---: | ---: | --- |",
        ]
        for j in listed:
            flags = sorted(
                {*(j.before.flags if j.before else ()), *(j.after.flags if j.after else ())}
            )
            words = [FLAG_WORDS.get(f, f) for f in flags]
            words += [STEPS_UNSEEN_WORDS] if j.unseen_steps else []
            lines.append(
                f"| {md(j.label)} | {j.status} | {md(j.basis)} | {_time(j.before)} | "
                f"{_time(j.after)} | {signed_seconds(j.delta_s)} | "
                + (f"{wait_words(j.before)} | {wait_words(j.after)} | " if waited else "")
                + f"{_money(j.cost_before)} | {_money(j.cost_after)} | "
                f"{md(', '.join(words))} |"
            )
    else:
        lines.append("No job's predicted time, range, runners or cost changed.")
    if review.unseen_steps:
        lines += ["", md(unseen_steps_line(review.unseen_steps))]
    unpriced = sum(1 for c in review.new_cost.jobs if c.unpriced)
    if unpriced:
        lines += ["", f"{unpriced} job(s) not priced after the change (runner label unknown)."]
    return lines


@dataclass(frozen=True)
class ChangeReview:
    """A change to one workflow file reviewed: `workflow` its identity (found from `source`:
    git, --path, a .github folder), `base` what it is compared with, `reviews` one per
    workflow shown — the file itself, or the workflows that call it (`callers`), since GitHub
    records a reusable workflow's runs under its callers (`shown` says which and why)."""

    workflow: str
    source: str
    base: dict[str, Any]
    shown: str
    callers: list[str]
    reviews: list[WorkflowReview]
    threshold: float = 1.0
    billing: dict[str, Any] = field(default_factory=dict)

    @property
    def beyond_noise(self) -> bool:
        return any(r.beyond_noise for r in self.reviews)

    def shown_words(self) -> str:
        if self.shown == "callers":
            names = ", ".join(self.callers)
            return (
                f"a reusable workflow (on: workflow_call), shown through the "
                f"{'workflow' if len(self.callers) == 1 else f'{len(self.callers)} workflows'} "
                f"that call{'s' if len(self.callers) == 1 else ''} it, {names}: GitHub records "
                "its runs under them (--no-callers: the file alone)"
            )
        if self.shown == "no caller":
            return (
                "a reusable workflow (on: workflow_call) that no workflow of this repository "
                "calls: shown alone, with no history of its own"
            )
        if self.shown == "--no-callers":
            return (
                "a reusable workflow (on: workflow_call) shown alone (--no-callers): GitHub "
                "records its runs under the workflows that call it, so its jobs find no history "
                "of their own"
            )
        return "shown as itself"

    def to_json(self) -> dict[str, Any]:
        return {
            "workflow": self.workflow,
            "workflow_from": self.source,
            "base": self.base,
            "shown": self.shown,
            "callers": self.callers,
            "shown_words": self.shown_words(),
            "threshold": self.threshold,
            "beyond_noise": self.beyond_noise,
            "basis_meaning": BASIS_MEANINGS,
            "steps_changed_meaning": STEPS_CHANGED_MEANING,
            "billing": self.billing,
            "reviews": [r.to_json() for r in self.reviews],
        }


def base_words(base: dict[str, Any]) -> str:
    """`origin/main (commit 1a2b3c4d5e6f)` or `the file old.yml`."""
    if base.get("ref") is not None:
        return f"{base['ref']} (commit {str(base.get('commit'))[:12]})"
    return f"the file {base.get('file')}"


def review_markdown(change: ChangeReview) -> str:
    """The review as GitHub-flavoured Markdown, for a pull-request comment or
    `$GITHUB_STEP_SUMMARY`: the verdict against the noise, then per workflow shown a line of
    deltas and the jobs that changed (unchanged ones are counted, not listed). Every name from
    the files is escaped (gharuntime.markdown.md: no live mention, link or invisible
    character)."""
    verdict = "**beyond the noise**" if change.beyond_noise else "**inside the noise**"
    lines = [
        f"### {md(change.workflow)}: predicted time and cost of this change",
        "",
        f"Against {md(base_words(change.base))}; {md(change.shown_words())}. This change is "
        f"{verdict} (threshold {change.threshold:g}).",
        "",
    ]
    several = len(change.reviews) > 1 or change.shown == "callers"
    for review in change.reviews:
        heading = f"#### {md(review.new.path)}" if several else None
        lines += _review_section(review, heading)
        lines.append("")
    if change.billing:
        lines.append(md(billing_words(change.billing)))
    return "\n".join(lines).rstrip("\n") + "\n"


VISIBILITY_WORDS: dict[str, str] = {
    "assumed": "visibility unknown, billed as private: give --public for a public one",
    "learn.json": "as `learn` read it from GitHub",
    "--repo-meta": "from --repo-meta",
    "--public": "--public",
    "--private": "--private",
}
"""Where the repository's visibility (public: standard runners bill nothing) was read."""


def billing_words(billing: dict[str, Any]) -> str:
    """`Billed as a public repository (--public).`"""
    source = str(billing.get("visibility_from", "assumed"))
    return (
        f"Billed as a {billing.get('repository')} repository "
        f"({VISIBILITY_WORDS.get(source, source)})."
    )
