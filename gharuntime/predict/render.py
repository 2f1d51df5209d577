"""How one workflow's prediction is shown: the terminal's table and the lines below it, the
Markdown for a pull-request comment or `$GITHUB_STEP_SUMMARY`, and the `--json` document.

Nothing here prints: the table view is a list of blocks (a rich Table or a line of text) that
the command prints in order, the Markdown is one string, the JSON a dict. A review's views are
in gharuntime.predict.render_review, which shares `wait_document` with this module."""

from __future__ import annotations

from typing import Any, TypeAlias

from rich import box
from rich.table import Table

from gharuntime.billing import JobCost, WorkflowCost
from gharuntime.markdown import md
from gharuntime.predict.learned import PredictModels
from gharuntime.predict.request import PredictOutcome
from gharuntime.predict.review import VISIBILITY_WORDS, wait_words
from gharuntime.predict.siblings import MATRIX_SIBLINGS
from gharuntime.predict.timeout import JOB_LIMIT_MINUTES, MARGIN
from gharuntime.predict.wait import WAIT_TARGET, WALL_RULE
from gharuntime.predict.workflow import (
    BASIS_WORDS,
    FLAG_WORDS,
    FLAGS,
    HISTORY_MATRIX,
    JobPrediction,
    WorkflowPrediction,
    human_seconds,
)

__all__ = [
    "Block",
    "cost_cell",
    "prediction_blocks",
    "prediction_json",
    "prediction_markdown",
    "wait_document",
]

Block: TypeAlias = str | Table
"""One piece of a terminal view: a table, or a line printed verbatim."""

_human = human_seconds


def _bytes(n: float) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _usd(value: float) -> str:
    return f"${value:.3f}" if value < 100 else f"${value:,.2f}"


def cost_cell(j: JobCost) -> str:
    """The job's cost at its point prediction; its billed minutes and their range (from the
    P10–P90) are in --json and summed in the run's line below the table, so the table fits
    an 80-column terminal."""
    return "not priced" if j.point is None else _usd(j.point.cost_usd)


def _table(result: WorkflowPrediction, cost: WorkflowCost) -> Table:
    targets = list(result.jobs[0].predicted) if result.jobs else ["duration_s"]
    waited = any(j.wait for j in result.jobs)
    if waited:  # queue_s is shown as the wait, median and P90, below
        targets = [t for t in targets if t != WAIT_TARGET]
    title = f"{result.path} — {result.model.get('method')} ({result.model.get('track')} track)"
    # light rules, no outer padding: six columns in 80 characters, job names unbroken
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("job")
    table.add_column("runs on")
    labels = {"duration_s": "duration", "queue_s": "queue", "log_bytes": "log size"}
    for t in targets:
        table.add_column(labels.get(t, t), justify="right", no_wrap=True)
    ranged = any(j.timeout for j in result.jobs)
    if ranged:
        table.add_column("P10–P90", justify="right", no_wrap=True)
        table.add_column("timeout", justify="right", no_wrap=True)
    if waited:
        table.add_column("wait", justify="right", no_wrap=True)
        table.add_column("wait P90", justify="right", no_wrap=True)
    table.add_column("cost", justify="right", no_wrap=True)
    based = any(j.basis for j in result.jobs)
    if based:
        table.add_column("history", no_wrap=True)
    flagged = any(j.flags for j in result.jobs)
    if flagged:
        table.add_column("cannot know")
    for j, c in zip(result.jobs, cost.jobs, strict=True):
        cells = [
            _bytes(j.predicted[t]) if t == "log_bytes" else _human(j.predicted[t]) for t in targets
        ]
        if ranged:
            q = j.quantiles
            span = f"{_human(q['p10'])}–{_human(q['p90'])}".replace(" ", "") if "p10" in q else "-"
            cells.extend([span, f"{j.timeout.minutes} min" if j.timeout else "-"])
        if waited:
            p50, p90 = j.wait.get("p50"), j.wait.get("p90")
            cells.extend(
                [
                    _human(p50) if p50 is not None else "-",
                    _human(p90) if p90 is not None else "-",
                ]
            )
        cells.append(cost_cell(c))
        if based:
            cells.append(_basis_cell(j, short=True))
        if flagged:
            cells.append(", ".join(FLAG_WORDS[f] for f in j.flags))
        table.add_row(j.name, ", ".join(j.runner_labels) or "-", *cells)
    return table


def _basis_cell(job: JobPrediction, short: bool = False) -> str:
    """`history (5 runs)`, `config fallback` or `no history`: what the job's prediction rests
    on, when the repository's history was asked for; `short` for the table's narrow `history`
    column (`5 runs`, `fallback`, `none`), so the table still fits a terminal."""
    runs = len(job.history)
    if job.basis in ("history", HISTORY_MATRIX):
        text = f"{runs} run{'s' if runs != 1 else ''}"
        return text if short else f"{job.basis} ({text})"
    if short:
        short_words = {"config fallback": "fallback", "no history": "none"}
        return short_words.get(job.basis or "", "siblings" if job.basis == MATRIX_SIBLINGS else "")
    return job.basis or ""


def prediction_json(outcome: PredictOutcome) -> dict[str, Any]:
    """The prediction, each job with its cost, the run's cost, and where its history came from."""
    result, cost, models = outcome.result, outcome.cost, outcome.models
    doc = result.to_json()
    for job, job_cost in zip(doc["jobs"], cost.jobs, strict=True):
        job.update(job_cost.to_json())
    doc.update(cost.to_json())
    doc["billing"]["visibility_from"] = outcome.visibility_from
    if outcome.identity is not None:
        doc["workflow_from"] = outcome.identity.source
    if outcome.callers:
        doc["callers"] = list(outcome.callers)
    if models.history is not None:
        doc["history"] = _history_json(result, models)
    doc.update(wait_document(outcome))
    return doc


def wait_document(outcome: PredictOutcome) -> dict[str, Any]:
    """`wait`: where each job's wait comes from and the queue at --at the model was given;
    `wall_clock_s`: wait + critical path with its range. Both null without a wait."""
    if not outcome.wait_from:
        return {"wait": None, "wall_clock_s": None}
    return {
        "wait": {
            "target": WAIT_TARGET,
            "model": outcome.wait_from,
            "queue": outcome.queue.to_json() if outcome.queue is not None else None,
        },
        "wall_clock_s": outcome.wall_clock.to_json() if outcome.wall_clock else None,
    }


def _wait_lines(outcome: PredictOutcome) -> list[str]:
    """The run's wall clock with the waits, and what the waits rest on."""
    clock = outcome.wall_clock
    if not outcome.wait_from or clock is None:
        return []
    queue = outcome.queue
    return [
        f"wall clock {_human(clock.estimate)} (P10–P90 {_human(clock.p10)}–{_human(clock.p90)}): "
        f"{WALL_RULE}",
        f"wait: {WAIT_TARGET} (created to started) from {outcome.wait_from}"
        + (f"; the queue at --at: {queue.words}" if queue is not None else ""),
    ]


def prediction_blocks(outcome: PredictOutcome) -> list[Block]:
    """The jobs' table, the run's sums and ranges, what cannot be known, and the bill."""
    result, cost, models = outcome.result, outcome.cost, outcome.models
    blocks: list[Block] = [_table(result, cost)]
    if models.history is not None:
        blocks.append(_history_line(result, models))
    blocks.append(
        f"{len(result.jobs)} job(s); sum of job time {_human(result.total_job_s)}, "
        f"critical path through needs {_human(result.critical_path_s)}"
    )
    if result.path_quantiles.keys() >= {"p10", "p90"}:
        basis = sorted({j.timeout.basis for j in result.jobs if j.timeout})
        blocks.append(
            f"critical path P10–P90 {_human(result.path_quantiles['p10'])}–"
            f"{_human(result.path_quantiles['p90'])} (each job's quantile along the path); "
            f"timeout-minutes: {MARGIN:g} × each job's {'/'.join(basis).upper()}, rounded up, "
            f"at most {JOB_LIMIT_MINUTES} (GitHub-hosted runners' job limit)"
        )
        for j in result.jobs:
            if j.timeout and j.timeout.capped:
                blocks.append(
                    f"{j.name}: its {j.timeout.basis.upper()} {_human(j.timeout.basis_s)} × "
                    f"{MARGIN:g} is over {JOB_LIMIT_MINUTES} minutes; GitHub-hosted runners "
                    "would cancel it: split the job or use a self-hosted runner"
                )
    blocks.extend(_wait_lines(outcome))
    flagged = result.flagged
    if "conditional" in flagged:
        blocks.append(
            f"without the {flagged['conditional']} job(s) gated by `if:`: sum of job time "
            f"{_human(result.unconditional_job_s)}, critical path "
            f"{_human(result.unconditional_path_s)}"
        )
    for flag, n in flagged.items():
        blocks.append(f"{n} job(s) {FLAG_WORDS[flag]}: {FLAGS[flag]}")
    blocks.extend(_cost_lines(cost, outcome.visibility_from))
    if outcome.callers:
        blocks.append(
            f"a reusable workflow: GitHub records its runs under {', '.join(outcome.callers)}; "
            "predict that file for its jobs as they run, with their history"
        )
    return blocks


def _basis_counts(result: WorkflowPrediction) -> dict[str, int]:
    counts: dict[str, int] = {}
    for j in result.jobs:
        if j.basis:
            counts[j.basis] = counts.get(j.basis, 0) + 1
    return counts


def _history_json(result: WorkflowPrediction, models: PredictModels) -> dict[str, Any]:
    """Where the jobs' history came from, and how many jobs rest on what."""
    h = models.history
    assert h is not None
    return {
        "repo": h.repo,
        "dataset": str(h.dataset),
        "last_completed": h.last_completed.strftime("%Y-%m-%dT%H:%M:%SZ")
        if h.last_completed
        else None,
        "jobs": _basis_counts(result),
        "meaning": {b: BASIS_WORDS[b] for b in _basis_counts(result)},
    }


def _history_line(result: WorkflowPrediction, models: PredictModels) -> str:
    """`3 job(s) from their own recent runs, 1 by the config-track model (no earlier run)...`"""
    h = models.history
    assert h is not None
    counts = _basis_counts(result)
    parts = [f"{counts.get('history', 0)} job(s) from their own recent runs (history)"]
    if counts.get(HISTORY_MATRIX):
        parts.append(
            f"{counts[HISTORY_MATRIX]} of matrices given by an expression, one per job their "
            f"latest runs show ({HISTORY_MATRIX})"
        )
    if counts.get(MATRIX_SIBLINGS):
        parts.append(
            f"{counts[MATRIX_SIBLINGS]} new matrix combination(s) by the config-track model "
            f"scaled to the same job's other combinations (siblings: {MATRIX_SIBLINGS})"
        )
    if counts.get("config fallback"):
        parts.append(
            f"{counts['config fallback']} with no earlier run by the config-track model "
            "(fallback: config fallback)"
        )
    if counts.get("no history"):
        parts.append(
            f"{counts['no history']} with no earlier run and no config-track model to fall back "
            "on (none: no history)"
        )
    last = h.last_completed.strftime("%Y-%m-%d %H:%M UTC") if h.last_completed else "never"
    return f"{', '.join(parts)}; history of {h.repo} from {h.dataset}, last run {last}"


def prediction_markdown(outcome: PredictOutcome) -> str:
    """One workflow's prediction as a Markdown table (every name escaped)."""
    result, cost, models = outcome.result, outcome.cost, outcome.models
    based = models.history is not None
    waited = any(j.wait for j in result.jobs)
    lines = [
        f"### {md(result.path)}: predicted time and cost",
        "",
        f"Sum of job time **{_human(result.total_job_s)}**, critical path "
        f"**{_human(result.critical_path_s)}**, bill **${cost.total.cost_usd:.3f}** "
        f"({cost.total.billed_minutes} billed min). Model: {md(result.model.get('method'))} "
        f"({md(result.model.get('track'))} track).",
        "",
        "| job | runs on | time (P10–P90) | timeout |"
        + (" wait (P90) |" if waited else "")
        + " cost |"
        + (" from |" if based else "")
        + " cannot know |",
        "| --- | --- | ---: | ---: |"
        + (" ---: |" if waited else "")
        + " ---: |"
        + (" --- |" if based else "")
        + " --- |",
    ]
    for j, c in zip(result.jobs, cost.jobs, strict=True):
        q = j.quantiles
        span = f" ({_human(q['p10'])}–{_human(q['p90'])})" if "p10" in q and "p90" in q else ""
        lines.append(
            f"| {md(j.name)} | {md(', '.join(j.runner_labels) or '-')} | "
            f"{_human(j.predicted.get('duration_s', 0.0))}{span} | "
            f"{f'{j.timeout.minutes} min' if j.timeout else '-'} | "
            + (f"{wait_words(j)} | " if waited else "")
            + f"{cost_cell(c)} | "
            + (f"{_basis_cell(j)} | " if based else "")
            + f"{', '.join(FLAG_WORDS[f] for f in j.flags)} |"
        )
    if based:
        lines.extend(["", md(_history_line(result, models))])
    for line in _wait_lines(outcome):
        lines.extend(["", md(line)])
    return "\n".join(lines) + "\n"


def _cost_lines(cost: WorkflowCost, visibility_from: str = "assumed") -> list[str]:
    """The run's bill, where its rates come from, and which jobs it leaves out and why."""
    total, span = cost.total, cost.total_range
    where = (
        "public repository: standard runners free" if cost.public else "private repository"
    ) + f" ({VISIBILITY_WORDS.get(visibility_from, visibility_from)})"
    spread = (
        f" ({span[0].billed_minutes}–{span[1].billed_minutes} min, "
        f"{_usd(span[0].cost_usd)}–{_usd(span[1].cost_usd)})"
        if span
        else ""
    )
    p = cost.prices
    dated = f"rates from {p.rates_from}" if p.rates_from else "undated rates"
    read = f", read {p.read_on}" if p.read_on else ""
    lines = [
        f"billed {total.billed_minutes} min, {_usd(total.cost_usd)}{spread} for the run: the sum "
        f"over jobs, each rounded up to the minute; {where}; {dated}{read} ({p.path})"
    ]
    reasons: dict[str, int] = {}
    for j in cost.jobs:
        if j.unpriced:
            reasons[j.unpriced] = reasons.get(j.unpriced, 0) + 1
    for reason, n in reasons.items():
        lines.append(f"{n} job(s) not priced, left out of the bill: {reason}")
    return lines
