"""`gharuntime predict WORKFLOW.yml --model MODEL_DIR`: the options, the request, and the
printing of the view gharuntime.predict.render (a prediction) or render_review (a review of a
change) builds."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from gharuntime.cli.output import out_console, print_wide
from gharuntime.jsonout import strict_dumps
from gharuntime.paramtypes import INT64_MAX, FiniteFloatRange, Text
from gharuntime.predict.render import (
    Block,
    prediction_blocks,
    prediction_json,
    prediction_markdown,
)
from gharuntime.predict.render_review import review_blocks, review_json, review_markdown_text
from gharuntime.predict.request import PredictRequest, run_predict

__all__ = ["predict_command"]


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
@click.option(
    "--wait/--no-wait",
    "wait",
    default=None,
    help="Each job's wait for a runner (median and P90 of queue_s) and the run's wall clock "
    "(wait + critical path): shown when the model predicts queue_s (a --track multi model, or "
    "a folder `gharuntime learn` wrote); --wait refuses a model without it (exit 2), --no-wait "
    "leaves it out.",
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
    wait: bool | None,
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
    A new combination of a matrix whose other combinations ran is the config-track model's
    prediction scaled to how they ran (`siblings`: matrix siblings).
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
    states its basis (history, config fallback, matrix siblings, from-history matrix, config
    only, unknown);
    each run-level Δ has a P10–P90 (joint draws, jobs independent, a job on both sides drawn
    once) and, with the repository's history, its run-to-run noise; `beyond_noise` in JSON
    says whether a Δ is over --threshold × that noise.

    Where the model predicts queue_s (trained with --track multi, or the multi/ model of a
    learned folder), each job's wait for a runner is shown (median and P90) and the run's wall
    clock: each job's wait, then its duration, along the longest chain of `needs`, with its
    P10-P90 from seeded joint draws (a run's waits drawn together). The queue the model reads
    (the repository's and organisation's jobs queued or running) is counted at --at in the
    repository's dataset (a learned folder's, or --history-from) when it covers --at, else
    unknown (NaN), and said so. --wait refuses a model without queue_s; --no-wait hides it.

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
        wait=wait,
    )
    outcome = run_predict(request)
    fmt = "json" if as_json else fmt
    change = outcome.review
    if fmt == "json":
        doc = prediction_json(outcome) if change is None else review_json(change, outcome)
        out_console.print_json(strict_dumps(doc))
    elif fmt == "markdown":
        text = (
            prediction_markdown(outcome)
            if change is None
            else review_markdown_text(change, outcome)
        )
        click.echo(text, nl=False)
    else:
        _print_blocks(
            prediction_blocks(outcome) if change is None else review_blocks(change, outcome)
        )


def _print_blocks(blocks: list[Block]) -> None:
    """A table at its full width (print_wide), a line verbatim."""
    for block in blocks:
        if isinstance(block, str):
            out_console.print(block)
        else:
            print_wide(block)
