"""`gharuntime baseline NAME --dataset DIR --track TRACK --out SUBMISSION.jsonl`."""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import click

from gharuntime.baselines.launch import finish, is_primary
from gharuntime.baselines.method import MethodError
from gharuntime.baselines.methods import METHODS, make_method, methods_help
from gharuntime.baselines.run import run_baseline
from gharuntime.cli.errors import UsageProblem
from gharuntime.cli.output import err_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.cli.types import SEED, Text
from gharuntime.contract import CONFIGS, SPLITS, TRACKS
from gharuntime.dataset import DatasetError
from gharuntime.eval.submission_files import SubmissionFiles
from gharuntime.hub import open_dataset
from gharuntime.paths import is_within, output_file_problem

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


def _check_output_dirs(params: dict[str, Any], dataset: Path, model_dir: Path) -> None:
    """A folder a method writes into (LASER's checkpoint_dir) never lies in an input dataset
    folder (or holds it), nor in the model folder, which is replaced whole when written."""
    for key, value in params.items():
        if not key.endswith("_dir") or not isinstance(value, str) or not value:
            continue
        folder = Path(value)
        if (dataset / "manifest.json").is_file() and (
            is_within(folder, dataset) or is_within(dataset, folder)
        ):
            raise click.BadParameter(
                f"{key}={value} overlaps the dataset folder {dataset}; write it elsewhere",
                param_hint="--param",
            )
        if is_within(folder, model_dir):
            raise click.BadParameter(
                f"{key}={value} is inside the model folder {model_dir}, which is replaced when "
                "the model is written; write it elsewhere",
                param_hint="--param",
            )


_HELP = f"""Fit a reference method on a dataset's train split and write its submission.

\b
Methods:
{methods_help()}
Gradient-boosted models train on log1p of each target with early stopping on the
validation split, 2 threads (OMP_NUM_THREADS=N gives N, the same trees) and a fixed seed.
The fitted model folder (model.json, importances.json, the library's files) is what
`gharuntime predict --model` reads.
A method that reads a column its track forbids (last-run on --track config) is refused.

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
) -> None:
    """Fit a reference method and write its submission (the help is _HELP: its method list
    is made from the method registry)."""
    model_dir = model_out or out.with_name((out.stem if out.suffix else out.name) + ".model")
    given = Path(dataset)  # a folder; a Hub id names no local path, so these checks pass it
    files = SubmissionFiles(out)
    for path in (files.predictions, files.meta):
        problem = output_file_problem(path, [given / "manifest.json"])
        if problem:
            raise click.BadParameter(problem, param_hint="--out")
    if is_within(given, model_dir) or (
        (given / "manifest.json").is_file() and is_within(model_dir, given)
    ):
        raise click.BadParameter(
            f"{model_dir} overlaps the dataset folder {dataset}; put the model elsewhere",
            param_hint="--model-out",
        )
    if model_dir.exists() and not model_dir.is_dir():
        raise click.BadParameter(f"{model_dir} is not a folder", param_hint="--model-out")
    parsed = _params(params)
    _check_output_dirs(parsed, given, model_dir)
    make_method(name, track, seed=seed, params=parsed or None)  # every --param checked first
    try:
        primary = is_primary()  # under `accelerate launch`, only rank 0 talks and writes
        with (
            ProgressView(first=f"{name} on {track} track…", prefix=f"{name}: ")
            if primary
            else nullcontext()
        ) as report:
            root = open_dataset(dataset).root
            result = run_baseline(
                name,
                root,
                config=config,
                track=track,
                out=out,
                model_dir=model_dir,
                split=split,
                seed=seed,
                params=parsed,
                progress=report,
            )
    except (MethodError, DatasetError):
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
    err_console.print(
        styled(
            ("wrote", "green"),
            f" {result.rows} predictions to {out} (+ {files.meta.name}); model in "
            f"{model_dir}; fit {result.fit_seconds:.1f} s, predict {result.predict_seconds:.1f} s",
        )
    )
