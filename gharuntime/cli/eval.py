"""`gharuntime eval SUBMISSION --dataset DIR`: check a submission and score it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.text import Text as RichText

from gharuntime.cli.errors import Refusal, error_line
from gharuntime.cli.output import echo_json, err_console, out_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.contract import CONFIGS, SPLITS, TRACKS
from gharuntime.dataset import DatasetError
from gharuntime.eval.api import DEFAULT_CONFIG, DEFAULT_SPLIT
from gharuntime.eval.evaluate import InvalidSubmission
from gharuntime.eval.meta import MethodMeta
from gharuntime.eval.report import render_tables, write_result
from gharuntime.eval.request import EvalRequest, evaluate, gold_failures, parse_inputs
from gharuntime.hub import DATASET_ENV, DEFAULT_DATASET, default_dataset
from gharuntime.jsonout import strict_dumps
from gharuntime.paramtypes import INT64_MAX, SEED, Text
from gharuntime.problems import ProblemLog

__all__ = ["eval_command"]

_SHOW_PER_KIND = 20


def _problems_refusal(problems: ProblemLog) -> Refusal:
    """The first problems of each kind, a count of the rest, and what was refused."""
    lines: list[str | RichText] = []
    shown: dict[str, int] = {}
    # problems of the whole file first, then by line
    for p in sorted(problems.kept, key=lambda p: (p.line is not None, p.line or 0)):
        shown[p.kind] = shown.get(p.kind, 0) + 1
        if shown[p.kind] <= _SHOW_PER_KIND:
            lines.append(styled((p.kind, "red"), f" {p}"))
    for kind, count in problems.counts.items():
        if count > _SHOW_PER_KIND:
            lines.append(f"… and {count - _SHOW_PER_KIND:,} more {kind} problem(s)")
    summary = ", ".join(f"{n:,} {k}" for k, n in problems.counts.items())
    lines.append(
        styled(
            ("invalid submission", "bold red"),
            f": {problems.total:,} problem(s) ({summary}); no result written",
        )
    )
    return Refusal(*lines)


def _command() -> list[str]:
    """The command line, for the result's provenance (the program as `gharuntime`)."""
    return ["gharuntime", *sys.argv[1:]]


def _check_usage(
    submission: Path | None, *, gold: bool, vs: Path | None, quantiles: Path | None
) -> None:
    """A SUBMISSION or --gold, not both, and nothing --gold has no use for."""
    if gold == (submission is not None):
        raise click.UsageError(
            "give a SUBMISSION to score, or --gold for the self-check (not both)"
        )
    if gold and vs is not None:
        raise click.UsageError("--vs compares two submissions; --gold already compares two")
    if gold and quantiles is not None:
        raise click.UsageError("--quantiles belongs to a SUBMISSION; --gold scores none")


def _show(result: dict[str, Any], *, as_json: bool) -> None:
    """The result: its JSON or tables on stdout, its warnings on stderr."""
    if as_json:
        echo_json(strict_dumps(result, indent=2))
    else:
        for table in render_tables(result):
            out_console.print(table)
    for warning in result.get("warnings", []):
        err_console.print(styled(("warning", "yellow"), f": {warning}"))


def _self_check(result: dict[str, Any]) -> None:
    """The --gold verdict on stderr; exit 1 when the ground truth did not score perfectly."""
    failures = gold_failures(result)
    for line in failures:
        err_console.print(styled(("self-check failed", "red"), f": {line}"))
    if failures:
        sys.exit(1)
    err_console.print(styled(("self-check passed", "green"), ": the ground truth scores perfectly"))


@click.command("eval")
@click.argument(
    "submission", required=False, type=click.Path(path_type=Path, dir_okay=False, exists=False)
)
@click.option(
    "--dataset",
    "-d",
    metavar="DIR|ORG/NAME[@REVISION]",
    help="The dataset the predictions are for: a folder, or a Hub id downloaded and checked "
    f"[default: ${DATASET_ENV}, else the official benchmark {DEFAULT_DATASET}].",
    type=Text(4096),
)
@click.option(
    "--config",
    type=click.Choice(list(CONFIGS)),
    help=f"Dataset config [default: the metadata's, else {DEFAULT_CONFIG}].",
)
@click.option(
    "--split",
    type=click.Choice(list(SPLITS)),
    help=f"Split scored [default: the metadata's, else {DEFAULT_SPLIT}].",
)
@click.option(
    "--track",
    type=click.Choice(list(TRACKS)),
    help="Track the method competes in (decides the targets; --gold default: multi).",
)
@click.option("--method", type=Text(200), help="Method name (overrides the metadata file's).")
@click.option("--method-version", type=Text(200), help="Method version.")
@click.option(
    "--inputs",
    type=Text(5000),
    help="Comma-separated input columns the method read, e.g. repo,job_name,matrix.",
)
@click.option(
    "--dataset-revision",
    type=Text(200),
    help="The dataset revision the predictions were made on; must match the dataset's "
    "(for a folder: the `revision` in its manifest.json, a digest of its data files).",
)
@click.option(
    "--seed",
    "method_seed",
    type=click.IntRange(-INT64_MAX, INT64_MAX),
    help="The method's own training seed.",
)
@click.option(
    "--meta",
    "meta_path",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Metadata file [default: SUBMISSION with .meta.json in place of .jsonl].",
)
@click.option(
    "--quantiles",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The submission's quantile sidecar [default: SUBMISSION with .quantiles.jsonl in "
    "place of .jsonl, scored when it exists; --vs's is always the one beside it].",
)
@click.option(
    "--vs",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A second submission to compare with, on the same resamples (A − B).",
)
@click.option(
    "--gold",
    is_flag=True,
    help="Self-check: score the ground truth (must be perfect) against the constant "
    "training median. Takes no SUBMISSION.",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Score records without a prediction as failures (prediction 0, never within 2×) "
    "instead of refusing the submission.",
)
@click.option(
    "--resamples",
    type=click.IntRange(1, 100_000),
    default=1000,
    show_default=True,
    help="Bootstrap resamples of repositories for the 95% intervals.",
)
@click.option(
    "--bootstrap-seed",
    type=SEED,
    default=0,
    show_default=True,
    help="Seed of the resamples; with the split's repositories it fixes them, so every method "
    "scored with it gets the same ones.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the result JSON here (atomically).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result JSON (or the problems) on stdout instead of tables.",
)
def eval_command(
    submission: Path | None,
    dataset: str | None,
    config: str | None,
    split: str | None,
    track: str | None,
    method: str | None,
    method_version: str | None,
    inputs: str | None,
    dataset_revision: str | None,
    method_seed: int | None,
    meta_path: Path | None,
    quantiles: Path | None,
    vs: Path | None,
    gold: bool,
    allow_partial: bool,
    resamples: int,
    bootstrap_seed: int,
    out: Path | None,
    as_json: bool,
) -> None:
    """Check a submission and score it, with 95% intervals from a repository bootstrap.

    A submission is JSON Lines, one object per record of the split:
    {"id": "123", "duration_s": 84.0} (the multi track adds queue_s and log_bytes).
    Its metadata (method, method_version, track, inputs, dataset_revision, config, split,
    seed) comes from SUBMISSION's sidecar, preds.meta.json beside preds.jsonl, and from the
    options, which win. Every problem is reported, with its line, before anything is scored.

    \b
    Metrics per target: MAE, median APE, RMSLE, Spearman ρ, R² (log1p), within 2×; overall and
    by runner OS, duration decile and whether training saw the repository.

    \b
    Ranges: a quantile sidecar preds.quantiles.jsonl beside preds.jsonl, one line per record,
      {"id": "123", "duration_s_p10": 40.0, "duration_s_p50": 80.0, "duration_s_p90": 190.0}
    (any levels pNN, the same on every line and for every target, at least p10, p50, p90;
    non-decreasing in the level), is checked like the submission and scored: coverage and mean
    log width of each central interval (p10-p90: nominal 80%), pinball loss and the observed
    share at or below each level, with the same intervals; with --vs, A − B of each.

    \b
    A sidecar preds.meta.json, for example:
      {"method": "lgbm", "method_version": "1.0", "track": "config",
       "inputs": ["repo", "job_name", "matrix"], "seed": 0}

    \b
    Exit codes: 0 scored, 1 the --gold self-check failed, 2 invalid submission or usage.
    Examples:
      gharuntime eval preds.jsonl --dataset ./ds --track config --out result.json
      gharuntime eval a.jsonl --vs b.jsonl --dataset ./ds --track config
      gharuntime eval --gold --dataset ./ds --config temporal --split test
      gharuntime eval preds.jsonl   # the official benchmark, downloaded from the Hub
    """
    _check_usage(submission, gold=gold, vs=vs, quantiles=quantiles)
    pinned = dataset is None
    dataset = dataset or default_dataset()
    request = EvalRequest(
        dataset,
        submission,
        MethodMeta(
            method=method,
            method_version=method_version,
            track=track,
            inputs=parse_inputs(inputs),
            dataset_revision=dataset_revision,
            config=config,
            split=split,
            seed=method_seed,
        ),
        vs=vs,
        meta_path=meta_path,
        quantiles=quantiles,
        allow_partial=allow_partial,
        seed=bootstrap_seed,
        resamples=resamples,
        command=_command(),
    )
    problem = request.output_problem(out) if out is not None else None
    if problem:
        raise click.BadParameter(problem, param_hint="--out")
    try:
        with ProgressView() as progress:
            result = evaluate(request, progress)
    except DatasetError as exc:
        note = (
            f"no --dataset was given, so eval used the official benchmark {dataset} "
            f"(${DATASET_ENV} overrides it); pass --dataset DIR|ORG/NAME[@REVISION] or set "
            f"{DATASET_ENV}=ORG/NAME[@REVISION] to score against another dataset"
        )
        raise Refusal(error_line(exc, "dataset"), *([note] if pinned else [])) from exc
    except OSError as exc:
        raise Refusal(
            styled(("cannot read", "red"), f" {exc.filename or dataset}: {exc.strerror or exc}")
        ) from exc
    except InvalidSubmission as exc:
        if as_json:
            echo_json(strict_dumps({"valid": False, **exc.problems.to_json()}, indent=2))
        raise _problems_refusal(exc.problems) from exc
    if out is not None:
        try:
            write_result(result, out)
        except OSError as exc:
            raise Refusal(error_line(exc, f"cannot write {out}")) from exc
    _show(result, as_json=as_json)
    if out is not None:
        err_console.print(f"result written to {out}")
    if gold:
        _self_check(result)
