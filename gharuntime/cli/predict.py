"""`gharuntime predict WORKFLOW.yml --model MODEL_DIR`."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.table import Table

from gharuntime.baselines.model_io import load_model
from gharuntime.baselines.predict import (
    FLAGS,
    RepoMeta,
    WorkflowPrediction,
    predict_workflow,
    repo_meta_from_json,
)
from gharuntime.baselines.timeout import JOB_LIMIT_MINUTES, MARGIN
from gharuntime.billing import (
    JobCost,
    JobTime,
    WorkflowCost,
    default_prices,
    load_prices,
    price_jobs,
)
from gharuntime.cli.errors import UsageProblem
from gharuntime.cli.output import out_console
from gharuntime.cli.types import INT64_MAX, Text
from gharuntime.readfile import InputFileError, read_json, read_text
from gharuntime.workflow import MAX_YAML_BYTES, WorkflowError

__all__ = ["predict_command"]


def _human(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {(s % 3600) // 60:02d}m"


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


def _job_times(result: WorkflowPrediction) -> list[JobTime]:
    """What billing sees of each job: its runner labels, predicted run time and, where the
    model gives one, its P10–P90 (the billed ranges)."""
    return [
        JobTime(
            j.runner_labels,
            j.predicted.get("duration_s", 0.0),
            j.quantiles.get("p10"),
            j.quantiles.get("p90"),
        )
        for j in result.jobs
    ]


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
        if flagged:
            cells.append(", ".join(_FLAG_WORDS[f] for f in j.flags))
        table.add_row(j.name, ", ".join(j.runner_labels) or "-", *cells)
    return table


_FLAG_WORDS = {
    "remote_reusable": "reusable workflow not read",
    "reusable_refused": "reusable workflow cycle or too deep",
    "unknown_inputs": "with: inputs from expressions",
    "expression_matrix": "matrix from an expression",
    "conditional": "if: may skip it",
}


@click.command("predict")
@click.argument("workflow", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--model",
    "model_dir",
    required=True,
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="A model folder written by `gharuntime baseline`.",
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
@click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout instead of a table.")
def predict_command(
    workflow: Path,
    model_dir: Path,
    repo_meta: Path | None,
    language: str | None,
    stars: int | None,
    size_kb: int | None,
    event: str,
    default_branch: bool,
    at: datetime | None,
    prices_file: Path | None,
    public: bool | None,
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

    What it cannot know is flagged per job and summed apart: a call to a reusable workflow it
    cannot read (another repository), a matrix given by an expression (counted as one job, its
    name template kept), and jobs gated by `if:` (sums given with and without them). A matrix
    over GitHub's limit of 256 jobs is refused (exit 2).

    Cost: each job's predicted run time in billed minutes (rounded up per job, as GitHub bills)
    and USD at its runner's rate, summed over the jobs (billing is per job, not along the
    critical path); --public bills nothing for standard hosted runners (larger runners are
    billed anyway). Runner labels map to a kind: GitHub's hosted labels, `self-hosted`, and
    larger-runner names with their OS and cores (`ubuntu-22.04-16core`); any other label is
    not priced, and says so, until a --prices file names its kind under `labels:`. The kinds
    are GitHub's billing SKUs (linux, windows_8_core, macos_xl, ...), linux_arm, windows_arm
    and self_hosted: the keys of `rates:` in the shipped gharuntime/billing/prices.yml.

    \b
    Exit codes: 0 ok, 2 a file that is not a workflow, a bad price file, a bad model or option.
    Example:
      gharuntime baseline lightgbm --dataset out/dataset --out runs/lgb.jsonl --model-out models/lgb
      gharuntime predict .github/workflows/ci.yml --model models/lgb --language Python --stars 120
      gharuntime predict .github/workflows/ci.yml --model models/lgb --public --json
      gharuntime predict ci.yml --model models/lgb --prices our-rates.yml   # a copy of prices.yml
    """
    meta = RepoMeta(event=event, default_branch=default_branch)
    if repo_meta is not None:
        try:
            data: Any = read_json(repo_meta, 2**20)
            if not isinstance(data, dict):
                raise ValueError("the top level must be a JSON object")
            meta = repo_meta_from_json(data, meta)
            if public is None and isinstance(data.get("private"), bool):
                public = not data["private"]
        except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
            raise UsageProblem(f"{repo_meta}: not usable repository metadata: {exc}") from exc
        except RecursionError:
            raise UsageProblem(
                f"{repo_meta}: not usable repository metadata: nested too deeply"
            ) from None
    meta = repo_meta_from_json(
        {"repo_language": language, "repo_stars": stars, "repo_size_kb": size_kb}, meta
    )
    # a PriceError or MethodError is refused as it is: its message names the file and the fix
    prices = load_prices(prices_file) if prices_file is not None else default_prices()
    try:
        text = read_text(workflow, MAX_YAML_BYTES)
    except InputFileError as exc:
        raise UsageProblem(f"{exc}; give the workflow's YAML file") from exc
    method, model_meta = load_model(model_dir)
    try:
        result = predict_workflow(
            text,
            method,
            path=str(workflow),
            meta=meta,
            at=at.replace(tzinfo=timezone.utc) if at else None,
            local_file=workflow,
            model_info={
                "method": model_meta["method"],
                "track": model_meta["track"],
                "dataset": (model_meta.get("dataset") or {}).get("id")
                if isinstance(model_meta.get("dataset") or {}, dict)
                else None,
                "folder": str(model_dir),
            },
        )
    except WorkflowError as exc:
        raise UsageProblem(
            f"{exc}\n  fix the YAML at that line; a workflow is a mapping with `on:` and `jobs:`"
        ) from exc
    cost = price_jobs(_job_times(result), prices, public=bool(public))
    if as_json:
        doc = result.to_json()
        for job, job_cost in zip(doc["jobs"], cost.jobs, strict=True):
            job.update(job_cost.to_json())
        doc.update(cost.to_json())
        try:  # strict JSON: a value JSON cannot carry is an error, never `Infinity` in the output
            text = json.dumps(doc, allow_nan=False)
        except ValueError:
            raise UsageProblem(
                "the prediction holds a value JSON cannot carry (NaN or Infinity)\n"
                "  check the model folder and the --prices file"
            ) from None
        out_console.print_json(text)
        return
    out_console.print(_table(result, cost))
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
    _print_cost(cost)


def _print_cost(cost: WorkflowCost) -> None:
    """The run's bill, where its rates come from, and which jobs it leaves out and why."""
    total, span = cost.total, cost.total_range
    where = "public repository: standard runners free" if cost.public else "private repository"
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
