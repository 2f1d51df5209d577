"""`gharuntime baseline NAME --dataset DIR --track TRACK --out SUBMISSION.jsonl`."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click

from gharuntime.baselines.launch import finish, is_primary
from gharuntime.baselines.method import MethodError
from gharuntime.baselines.methods import METHODS, methods_help
from gharuntime.baselines.request import BaselineRequest, run_request
from gharuntime.cli.errors import UsageProblem
from gharuntime.cli.output import err_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.contract import CONFIGS, SPLITS, TRACKS
from gharuntime.dataset import DatasetError
from gharuntime.eval.submission_files import SubmissionFiles
from gharuntime.folderlock import FolderLockError
from gharuntime.paramtypes import SEED, Text

__all__ = ["baseline_command"]


def _params(values: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--param")
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


_HELP = f"""Fit a reference method on a dataset's train split and write its submission.

\b
Methods:
{methods_help()}
Gradient-boosted models train on log1p of each target with early stopping on the
validation split, 2 threads (OMP_NUM_THREADS=N gives N, the same trees) and a fixed seed.
The fitted model folder (model.json, importances.json, the library's files) is what
`gharuntime predict --model` reads.
A method that reads a column its track forbids (last-run on --track config) is refused.
The tuned trees (lightgbm-tuned, xgboost-tuned) keep each finished trial in
OUT without .jsonl plus .tuning.sqlite3: run the same command again after a kill and it
keeps those trials (same dataset revision, method, parameters, seed, code), runs the rest
and ends with the model and submission of an uninterrupted run. --fresh starts over.

\b
Exit codes: 0 written, 2 bad input or a method the track forbids.
Example:
  gharuntime baseline lightgbm --dataset out/dataset --track config --out runs/lgb.jsonl
  gharuntime eval runs/lgb.jsonl --dataset out/dataset
"""


@click.command("baseline", help=_HELP)
@click.argument("name", type=click.Choice(list(METHODS)))
@click.option(
    "--dataset",
    "dataset",
    required=True,
    metavar="DIR|ORG/NAME[@REVISION]",
    help="Dataset folder (from `gharuntime build`), or a Hub id downloaded and checked.",
)
@click.option(
    "--config",
    default="temporal",
    show_default=True,
    type=click.Choice(list(CONFIGS)),
    help="Split configuration.",
)
@click.option(
    "--track",
    default="config",
    show_default=True,
    type=click.Choice(list(TRACKS)),
    help="Which inputs the method may read (history adds history_duration_s).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Submission to write (JSON Lines); its metadata goes beside it, preds.meta.json "
    "for preds.jsonl.",
)
@click.option(
    "--model-out",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder for the fitted model [default: OUT without .jsonl, plus .model].",
)
@click.option(
    "--split",
    default="test",
    show_default=True,
    type=click.Choice(list(SPLITS)),
    help="Split to predict.",
)
@click.option(
    "--seed", default=0, show_default=True, type=SEED, help="Seed of every random choice."
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    type=Text(1000),
    help="A method hyperparameter, e.g. --param n_estimators=300 (lightgbm, xgboost), "
    "--param model=tiny (laser).",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="Tuned trees: run every trial again, even those an earlier run with the same inputs "
    "finished (removes OUT's .tuning.sqlite3 journal).",
)
def baseline_command(
    name: str,
    dataset: str,
    config: str,
    track: str,
    out: Path,
    model_out: Path | None,
    split: str,
    seed: int,
    params: tuple[str, ...],
    fresh: bool,
) -> None:
    """Fit a reference method and write its submission (the help is _HELP: its method list
    is made from the method registry)."""
    request = BaselineRequest(
        name,
        dataset,
        out,
        config=config,
        track=track,
        split=split,
        seed=seed,
        params=_params(params),
        model_out=model_out,
        fresh=fresh,
    )
    for option, problem in request.output_problems()[:1]:
        raise click.BadParameter(problem, param_hint=option)
    try:
        primary = is_primary()  # under `accelerate launch`, only rank 0 talks and writes
        with (
            ProgressView(first=f"{name} on {track} track…", prefix=f"{name}: ")
            if primary
            else nullcontext()
        ) as report:
            result = run_request(request, report)
    except (MethodError, DatasetError, FolderLockError):
        finish(wait=False)
        raise
    except OSError as exc:
        finish(wait=False)
        raise UsageProblem(
            f"{exc.filename or out}: {exc.strerror or exc}; nothing was replaced"
        ) from exc
    finish()  # under `accelerate launch`: every process waits here until rank 0 has written
    if not result.written:
        return
    for line in result.resumed:
        err_console.print(styled(f"{name}: {line}"))
    for target, why in (result.meta.get("targets_left_out") or {}).items():
        err_console.print(styled(f"{name}: {target} left out (not predicted): {why}"))
    err_console.print(
        styled(
            ("wrote", "green"),
            f" {result.rows} predictions to {out} (+ {SubmissionFiles(out).meta.name}); model "
            f"in {request.model_dir}; fit {result.fit_seconds:.1f} s, predict "
            f"{result.predict_seconds:.1f} s",
        )
    )
