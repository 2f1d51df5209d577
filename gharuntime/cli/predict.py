"""`gharuntime predict WORKFLOW.yml --model MODEL_DIR`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.table import Table

from gharuntime.billing import JobCost, WorkflowCost
from gharuntime.cli.output import out_console, print_wide
from gharuntime.jsonout import strict_dumps
from gharuntime.markdown import md
from gharuntime.paramtypes import INT64_MAX, FiniteFloatRange, Text
from gharuntime.predict.learned import PredictModels
from gharuntime.predict.request import PredictOutcome, PredictRequest, run_predict
from gharuntime.predict.review import (
    VISIBILITY_WORDS,
    ChangeReview,
    WorkflowReview,
    base_words,
    billing_words,
    deltas_line,
    noise_line,
    review_markdown,
    signed_seconds,
    signed_usd,
)
from gharuntime.predict.timeout import JOB_LIMIT_MINUTES, MARGIN
from gharuntime.predict.workflow import (
    BASIS_WORDS,
    FLAG_WORDS,
    FLAGS,
    HISTORY_MATRIX,
    JobPrediction,
    WorkflowPrediction,
    human_seconds,
)

__all__ = ["predict_command"]


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


def _cost_cell(j: JobCost) -> str:
    """The job's cost at its point prediction; its billed minutes and their range (from the
    P10–P90) are in --json and summed in the run's line below the table, so the table fits
    an 80-column terminal."""
    return "not priced" if j.point is None else _usd(j.point.cost_usd)


def _table(result: WorkflowPrediction, cost: WorkflowCost) -> Table:
    targets = list(result.jobs[0].predicted) if result.jobs else ["duration_s"]
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
        cells.append(_cost_cell(c))
        if based:
            cells.append(_basis_cell(j, short=True))
        if flagged:
            cells.append(", ".join(_FLAG_WORDS[f] for f in j.flags))
        table.add_row(j.name, ", ".join(j.runner_labels) or "-", *cells)
    return table


_FLAG_WORDS = FLAG_WORDS
_VISIBILITY_WORDS = VISIBILITY_WORDS


def _basis_cell(job: JobPrediction, short: bool = False) -> str:
    """`history (5 runs)`, `config fallback` or `no history`: what the job's prediction rests
    on, when the repository's history was asked for; `short` for the table's narrow `history`
    column (`5 runs`, `fallback`, `none`), so the table still fits a terminal."""
    runs = len(job.history)
    if job.basis in ("history", HISTORY_MATRIX):
        text = f"{runs} run{'s' if runs != 1 else ''}"
        return text if short else f"{job.basis} ({text})"
    if short:
        return {"config fallback": "fallback", "no history": "none"}.get(job.basis or "", "")
    return job.basis or ""


@click.command("predict")
@click.argument("workflow", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--model",
    "model_dir",
    required=True,
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="A folder written by `gharuntime learn` (history and config models and the "
    "repositories' own history), or a model folder written by `gharuntime baseline`.",
)
@click.option(
    "--history-from",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="A dataset folder to take each job's recent durations from (a fresher build of the "
    "repository's runs) [default: a learned --model's own dataset].",
)
@click.option(
    "--repo",
    type=Text(200),
    help="The repository the workflow belongs to, whose history is used [default: the one "
    "the learned model or --history-from holds].",
)
@click.option(
    "--repo-meta",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="JSON with the repository's metadata: GitHub's GET /repos/{owner}/{repo} response, "
    "or job-table names (repo_language, repo_stars, repo_size_kb, ...).",
)
@click.option("--language", type=Text(100), help="Repository language [default: unknown].")
@click.option("--stars", type=click.IntRange(0, INT64_MAX), help="Stargazers [default: unknown].")
@click.option(
    "--size-kb", type=click.IntRange(0, INT64_MAX), help="Repository size in KB [default: unknown]."
)
@click.option(
    "--event", type=Text(100), default="push", show_default=True, help="Triggering event."
)
@click.option(
    "--default-branch/--other-branch",
    default=True,
    show_default=True,
    help="Whether the run is on the default branch.",
)
@click.option(
    "--at",
    type=click.DateTime(formats=["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"]),
    help="When the run is queued, UTC [default: now]; fixes the output for a given time.",
)
@click.option(
    "--prices",
    "prices_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="A price table in the format of the shipped one (gharuntime/billing/prices.yml): "
    "negotiated rates, your self-hosted runners' cost per minute, your runner labels' kinds "
    "[default: GitHub's published rates, dated in the file].",
)
@click.option(
    "--public/--private",
    "public",
    default=None,
    help="The repository's visibility: standard GitHub-hosted runners are free in a public one "
    "[default: `private` from --repo-meta, else private].",
)
@click.option(
    "--base",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Review a change: the workflow file before it. Prints each job added, removed, moved "
    "(renamed, same steps: it keeps its history) or changed with its time, range and cost "
    "before and after, and the run's deltas.",
)
@click.option(
    "--base-ref",
    type=Text(200),
    help="Review a change against WORKFLOW as it was at this git revision (a commit, branch or "
    "tag of the repository holding it), e.g. the pull request's base.",
)
@click.option(
    "--path",
    "identity",
    type=Text(1000),
    help="The workflow's path in its repository, e.g. .github/workflows/ci.yml: the identity "
    "its runs are recorded under, for the model, the history and both sides of a review "
    "[default: the file's place in its git repository, or under its .github/ folder].",
)
@click.option(
    "--callers/--no-callers",
    default=True,
    show_default=True,
    help="Review a change to a reusable workflow (on: workflow_call) through every workflow of "
    "the repository that calls it, as GitHub records its runs under them; --no-callers: the "
    "file alone.",
)
@click.option(
    "--threshold",
    type=FiniteFloatRange(0, 100),
    default=1.0,
    show_default=True,
    help="A review's Δ is beyond the noise when it is over THRESHOLD × the repository's "
    "run-to-run noise (half the P10–P90 width of its recent runs); without history to measure "
    "it, when the Δ's own P10–P90 leaves out 0. JSON: `beyond_noise`.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="markdown: for a pull-request comment or $GITHUB_STEP_SUMMARY.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout (--format json).")
def predict_command(
    workflow: Path,
    model_dir: Path,
    history_from: Path | None,
    repo: str | None,
    repo_meta: Path | None,
    language: str | None,
    stars: int | None,
    size_kb: int | None,
    event: str,
    default_branch: bool,
    at: datetime | None,
    prices_file: Path | None,
    public: bool | None,
    base: Path | None,
    base_ref: str | None,
    identity: str | None,
    callers: bool,
    threshold: float,
    fmt: str,
    as_json: bool,
) -> None:
    """Predict how long each job of a workflow file will run, with a saved model.

    Expands the workflow's jobs and matrix as GitHub would (include/exclude, job names such as
    `test (ubuntu-latest, 3.11)`, local reusable workflows), builds the same features the model
    was trained on, and prints the predicted duration per job, the sum over jobs and the
    critical path through `needs`. A model that gives a range (every reference method saved by
    this version) adds each job's P10–P90 and a recommended `timeout-minutes`: 1.5 × its P99
    (a model without one: its highest level), rounded up, never above 360 (GitHub-hosted
    runners' job limit). The workflow need never have run. Unknown repository
    metadata is treated as missing by the model; give it with --repo-meta or the options.

    With a folder `gharuntime learn` wrote, each job is predicted from its own recent runs in
    that repository (matched by workflow path, job key and matrix values, as the build matches
    them; --history-from DATASET for fresher ones) and the repository's metadata; a job that
    never ran falls back to the config-track model, and the `history` column (`basis` in
    --json, `from` in markdown) says which per job: its runs, or `fallback` (config fallback).
    A matrix given by an expression becomes the jobs its latest runs there show, each from its
    own runs (`from-history matrix`).

    What it cannot know is flagged per job and summed apart: a call to a reusable workflow it
    cannot read (another repository), a matrix given by an expression (without history: counted
    as one job, its name template kept), and jobs gated by `if:` (sums given with and without
    them). A matrix
    over GitHub's limit of 256 jobs is refused (exit 2).

    Cost: each job's predicted run time in billed minutes (rounded up per job, as GitHub bills)
    and USD at its runner's rate, summed over the jobs (billing is per job, not along the
    critical path); --public bills nothing for standard hosted runners (larger runners are
    billed anyway). Runner labels map to a kind: GitHub's hosted labels, `self-hosted`, and
    larger-runner names with their OS and cores (`ubuntu-22.04-16core`); any other label is
    not priced, and says so, until a --prices file names its kind under `labels:`. The kinds
    are GitHub's billing SKUs (linux, windows_8_core, macos_xl, ...), linux_arm, windows_arm
    and self_hosted: the keys of `rates:` in the shipped gharuntime/billing/prices.yml.

    The workflow is named by its path in its repository (--path, else the file's place in its
    git repository or under its .github/ folder), never by the string typed. Review a change
    with --base FILE or --base-ref REV: the base is read whole at its revision, the local
    reusable workflows it calls included; a reusable workflow (on: workflow_call) is reviewed
    through every workflow of the repository calling it (--no-callers: alone). Each row
    states its basis (history, config fallback, from-history matrix, config only, unknown);
    each run-level Δ has a P10–P90 (joint draws, jobs independent, a job on both sides drawn
    once) and, with the repository's history, its run-to-run noise; `beyond_noise` in JSON
    says whether a Δ is over --threshold × that noise.

    \b
    Exit codes: 0 ok, 2 a file that is not a workflow, a bad price file, a bad model or option.
    Example:
      gharuntime baseline lightgbm --dataset out/dataset --out runs/lgb.jsonl --model-out models/lgb
      gharuntime predict .github/workflows/ci.yml --model models/lgb --language Python --stars 120
      gharuntime predict .github/workflows/ci.yml --model models/lgb --public --json
      gharuntime predict ci.yml --model models/lgb --prices our-rates.yml   # a copy of prices.yml
      gharuntime predict .github/workflows/ci.yml --model models/lgb --base-ref origin/main --format markdown
      gharuntime learn octo-org/api --token-env GITHUB_TOKEN --out models/mine
      gharuntime predict .github/workflows/ci.yml --model models/mine
    """
    request = PredictRequest(
        workflow,
        model_dir,
        history_from=history_from,
        repo=repo,
        repo_meta=repo_meta,
        language=language,
        stars=stars,
        size_kb=size_kb,
        event=event,
        default_branch=default_branch,
        at=at,
        prices_file=prices_file,
        public=public,
        base=base,
        base_ref=base_ref,
        path=identity,
        callers=callers,
        threshold=threshold,
    )
    outcome = run_predict(request)
    fmt = "json" if as_json else fmt
    if outcome.review is not None:
        _print_review(outcome.review, fmt)
    elif fmt == "markdown":
        click.echo(_markdown(outcome.result, outcome.cost, outcome.models), nl=False)
    elif fmt == "json":
        out_console.print_json(strict_dumps(_json(outcome)))
    else:
        _print_table(outcome)


def _json(outcome: PredictOutcome) -> dict[str, Any]:
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
    return doc


def _print_table(outcome: PredictOutcome) -> None:
    """The jobs' table, the run's sums and ranges, what cannot be known, and the bill."""
    result, cost, models = outcome.result, outcome.cost, outcome.models
    print_wide(_table(result, cost))
    if models.history is not None:
        out_console.print(_history_line(result, models), highlight=False, markup=False)
    out_console.print(
        f"{len(result.jobs)} job(s); sum of job time {_human(result.total_job_s)}, "
        f"critical path through needs {_human(result.critical_path_s)}",
        highlight=False,
    )
    if result.path_quantiles.keys() >= {"p10", "p90"}:
        basis = sorted({j.timeout.basis for j in result.jobs if j.timeout})
        out_console.print(
            f"critical path P10–P90 {_human(result.path_quantiles['p10'])}–"
            f"{_human(result.path_quantiles['p90'])} (each job's quantile along the path); "
            f"timeout-minutes: {MARGIN:g} × each job's {'/'.join(basis).upper()}, rounded up, "
            f"at most {JOB_LIMIT_MINUTES} (GitHub-hosted runners' job limit)",
            highlight=False,
        )
        for j in result.jobs:
            if j.timeout and j.timeout.capped:
                out_console.print(
                    f"{j.name}: its {j.timeout.basis.upper()} {_human(j.timeout.basis_s)} × "
                    f"{MARGIN:g} is over {JOB_LIMIT_MINUTES} minutes; GitHub-hosted runners "
                    "would cancel it: split the job or use a self-hosted runner",
                    highlight=False,
                )
    flagged = result.flagged
    if "conditional" in flagged:
        out_console.print(
            f"without the {flagged['conditional']} job(s) gated by `if:`: sum of job time "
            f"{_human(result.unconditional_job_s)}, critical path "
            f"{_human(result.unconditional_path_s)}",
            highlight=False,
        )
    for flag, n in flagged.items():
        out_console.print(f"{n} job(s) {_FLAG_WORDS[flag]}: {FLAGS[flag]}", highlight=False)
    _print_cost(cost, outcome.visibility_from)
    if outcome.callers:
        out_console.print(
            f"a reusable workflow: GitHub records its runs under {', '.join(outcome.callers)}; "
            "predict that file for its jobs as they run, with their history",
            highlight=False,
            markup=False,
        )


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


def _markdown(
    result: WorkflowPrediction, cost: WorkflowCost, models: PredictModels | None = None
) -> str:
    """One workflow's prediction as a Markdown table (every name escaped)."""
    based = models is not None and models.history is not None
    lines = [
        f"### {md(result.path)}: predicted time and cost",
        "",
        f"Sum of job time **{_human(result.total_job_s)}**, critical path "
        f"**{_human(result.critical_path_s)}**, bill **${cost.total.cost_usd:.3f}** "
        f"({cost.total.billed_minutes} billed min). Model: {md(result.model.get('method'))} "
        f"({md(result.model.get('track'))} track).",
        "",
        "| job | runs on | time (P10–P90) | timeout | cost |"
        + (" from |" if based else "")
        + " cannot know |",
        "| --- | --- | ---: | ---: | ---: |" + (" --- |" if based else "") + " --- |",
    ]
    for j, c in zip(result.jobs, cost.jobs, strict=True):
        q = j.quantiles
        span = f" ({_human(q['p10'])}–{_human(q['p90'])})" if "p10" in q and "p90" in q else ""
        lines.append(
            f"| {md(j.name)} | {md(', '.join(j.runner_labels) or '-')} | "
            f"{_human(j.predicted.get('duration_s', 0.0))}{span} | "
            f"{f'{j.timeout.minutes} min' if j.timeout else '-'} | {_cost_cell(c)} | "
            + (f"{_basis_cell(j)} | " if based else "")
            + f"{', '.join(_FLAG_WORDS[f] for f in j.flags)} |"
        )
    if based and models is not None:
        lines.extend(["", md(_history_line(result, models))])
    return "\n".join(lines) + "\n"


def _review_table(review: WorkflowReview, base: str) -> Table:
    title = f"{review.new.path} against {base}"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name, justify in (
        ("job", "left"),
        ("change", "left"),
        ("basis", "left"),
        ("before", "right"),
        ("after", "right"),
        ("Δ time", "right"),
        ("Δ cost", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for j in review.jobs:
        if j.status == "unchanged":
            continue
        before = _human(j.before.predicted.get("duration_s", 0.0)) if j.before else "—"
        after = _human(j.after.predicted.get("duration_s", 0.0)) if j.after else "—"
        usd = (j.cost_after.point.cost_usd if j.cost_after and j.cost_after.point else 0.0) - (
            j.cost_before.point.cost_usd if j.cost_before and j.cost_before.point else 0.0
        )
        table.add_row(
            j.label,
            j.status,
            j.basis,
            before,
            after,
            signed_seconds(j.delta_s),
            signed_usd(usd),
        )
    return table


def _print_review(change: ChangeReview, fmt: str) -> None:
    if fmt == "json":
        out_console.print_json(strict_dumps(change.to_json()))
        return
    if fmt == "markdown":
        click.echo(review_markdown(change), nl=False)
        return
    say = {"highlight": False, "markup": False}
    out_console.print(
        f"{change.workflow} against {base_words(change.base)}: {change.shown_words()}", **say
    )
    for review in change.reviews:
        print_wide(_review_table(review, base_words(change.base)))
        counts = review.counts()
        bases = ", ".join(f"{n} {b}" for b, n in review.bases().items())
        out_console.print(
            f"{counts['added']} added, {counts['removed']} removed, "
            + (f"{counts['moved']} moved, " if counts["moved"] else "")
            + f"{counts['changed']} changed, {counts['unchanged']} unchanged; basis: "
            f"{bases or 'no job'}",
            **say,
        )
        out_console.print(deltas_line(review, ""), **say)
        out_console.print(noise_line(review), **say)
        for flag, n in review.new.flagged.items():
            out_console.print(f"{n} job(s) {_FLAG_WORDS[flag]}: {FLAGS[flag]}", **say)
    if change.billing:
        out_console.print(billing_words(change.billing), **say)
    out_console.print(
        f"beyond the noise: {'yes' if change.beyond_noise else 'no'} "
        f"(threshold {change.threshold:g})",
        **say,
    )


def _print_cost(cost: WorkflowCost, visibility_from: str = "assumed") -> None:
    """The run's bill, where its rates come from, and which jobs it leaves out and why."""
    total, span = cost.total, cost.total_range
    where = (
        "public repository: standard runners free" if cost.public else "private repository"
    ) + f" ({_VISIBILITY_WORDS.get(visibility_from, visibility_from)})"
    spread = (
        f" ({span[0].billed_minutes}–{span[1].billed_minutes} min, "
        f"{_usd(span[0].cost_usd)}–{_usd(span[1].cost_usd)})"
        if span
        else ""
    )
    p = cost.prices
    dated = f"rates from {p.rates_from}" if p.rates_from else "undated rates"
    read = f", read {p.read_on}" if p.read_on else ""
    out_console.print(
        f"billed {total.billed_minutes} min, {_usd(total.cost_usd)}{spread} for the run: the sum "
        f"over jobs, each rounded up to the minute; {where}; {dated}{read} ({p.path})",
        highlight=False,
        markup=False,
    )
    reasons: dict[str, int] = {}
    for j in cost.jobs:
        if j.unpriced:
            reasons[j.unpriced] = reasons.get(j.unpriced, 0) + 1
    for reason, n in reasons.items():
        out_console.print(
            f"{n} job(s) not priced, left out of the bill: {reason}", highlight=False, markup=False
        )
