"""Fit a reference method on a dataset folder and write its submission for `gharuntime eval`.

A submission is JSON Lines, one `{"id": ..., "<target>": value, ...}` per record of the evaluated
split (the track's targets), plus its metadata sidecar (`preds.meta.json` for `preds.jsonl`) saying which method
made it, on which track, from which inputs, on which dataset revision, config, split and seed,
and its quantiles when the method gives a range: the files and their names are
gharuntime.eval.submission_files', each written under a temporary name and renamed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from gharuntime.baselines.journal import journal_lock
from gharuntime.baselines.launch import is_primary, launched
from gharuntime.baselines.method import Method, MethodError, Resumable
from gharuntime.baselines.methods import make_method
from gharuntime.baselines.model_io import save_model
from gharuntime.baselines.queue_load import JobEvents
from gharuntime.contract import TRACKS
from gharuntime.dataset import dataset_revision, load, read_manifest
from gharuntime.eval.submission_files import SubmissionFiles, write_submission_files
from gharuntime.progress import Progress, say
from gharuntime.resume import fit_inputs
from gharuntime.targets import TargetsHeld, count_values, targets_held
from gharuntime.version import __version__

__all__ = [
    "BaselineRun",
    "dataset_identity",
    "held_by",
    "per_1000",
    "run_baseline",
    "submission_meta",
    "write_submission",
]


@dataclass(frozen=True)
class BaselineRun:
    """What `run_baseline` produced."""

    submission: Path
    meta: dict[str, Any]
    model_dir: Path | None
    fit_seconds: float
    predict_seconds: float
    rows: int
    written: bool = True  # False on the processes of a launch that are not the primary one
    resumed: tuple[str, ...] = ()
    """What a resumable fit's journal kept, dropped or started (lines to keep on screen)."""


def _check_quantiles(quantiles: dict[str, dict[str, np.ndarray]]) -> None:
    for level in quantiles.values():
        for target, values in level.items():
            bad = ~np.isfinite(values) | (np.asarray(values) < 0)
            if bad.any():
                raise MethodError(
                    f"{target}: {int(bad.sum())} quantiles are negative or not finite"
                )


def dataset_identity(root: Path) -> dict[str, Any]:
    """The dataset's id and revision (`gharuntime.dataset.dataset_revision`: its content)."""
    manifest = read_manifest(root)
    source = manifest.get("source", {})
    return {
        "id": manifest.get("pretty_name") or root.resolve().name,
        "revision": dataset_revision(manifest),
        "source": source.get("kind"),
        "schema_version": manifest.get("schema_version"),
    }


def write_submission(
    path: Path,
    ids: list[str],
    predictions: dict[str, np.ndarray],
    meta: dict[str, Any],
    quantiles: dict[str, dict[str, np.ndarray]] | None = None,
) -> SubmissionFiles:
    """Check a method's values (one per record, finite, non-negative) and write the submission's
    files (gharuntime.eval.submission_files: predictions, metadata, quantiles)."""
    for target, values in predictions.items():
        if len(values) != len(ids):
            raise MethodError(f"{target}: {len(values)} predictions for {len(ids)} records")
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            raise MethodError(f"{target}: {int(bad.sum())} predictions are negative or not finite")
    if quantiles:
        _check_quantiles(quantiles)
    return write_submission_files(path, ids, predictions, meta, quantiles)


def held_by(train: pl.DataFrame, config: str, track: str) -> TargetsHeld:
    """The track's targets the dataset holds on `config` (gharuntime.targets: those with a
    value in its train split `train`), and why the others are left out."""
    return targets_held(
        track,
        count_values(train, TRACKS[track].targets),
        config=config,
        rows=train.height,
    )


def per_1000(seconds: float, rows: int) -> float | None:
    """Seconds per 1,000 jobs, as a submission's timing records them (None without rows)."""
    return round(1000 * seconds / rows, 4) if rows else None


def submission_meta(
    name: str,
    method: Method,
    identity: dict[str, Any],
    *,
    config: str,
    track: str,
    split: str,
    seed: int,
    left_out: dict[str, str],
    timing: dict[str, Any],
) -> dict[str, Any]:
    """The submission's metadata sidecar of a fitted `method`: what made it, from which
    inputs, on which dataset revision, config and split, how its ranges were calibrated, and
    its timing (eval carries these into the result's meta.extra; the leaderboard shows the
    per-1,000 figures)."""
    return {
        "method": name,
        "method_version": method.version,
        "track": track,
        "targets": list(method.targets),
        **({"targets_left_out": left_out} if left_out else {}),
        "inputs": list(method.inputs),
        "dataset": identity["id"],
        "dataset_revision": identity["revision"],
        "config": config,
        "split": split,
        "seed": seed,
        "method_config": method.config(),
        # how the ranges were calibrated (what ran, on how many held-out rows, the adjustment)
        **({"calibration": calibration} if (calibration := method.calibration()) else {}),
        "gharuntime_version": __version__,
        "timing": timing,
    }


def run_baseline(
    name: str,
    dataset: Path,
    *,
    config: str,
    track: str,
    out: Path,
    model_dir: Path | None = None,
    split: str = "test",
    seed: int = 0,
    params: dict[str, Any] | None = None,
    progress: Progress | None = None,
    journal: Path | None = None,
    fresh: bool = False,
) -> BaselineRun:
    """Fit `name` on the train split (validation for early stopping), predict `split`, write the
    submission, and save the fitted model to `model_dir` when given. Under a launcher of several
    processes (`accelerate launch`) every process fits and predicts and only the primary one
    (rank 0) writes: the others return `written=False`.

    A resumable method (the tuned trees) keeps its finished work in `journal` when given
    (gharuntime.baselines.journal), keyed by the fit's inputs: run again after a kill, it does
    only what is left, to the same result; `fresh` starts the journal over."""
    make_method(name, track, seed=seed, params=params)  # every parameter checked first
    identity = dataset_identity(dataset)
    say(progress, "loading train and validation splits")
    train = load(dataset, config, "train")
    validation = load(dataset, config, "validation")
    target = train if split == "train" else load(dataset, config, split)
    held = held_by(train, config, track)
    # without any (an empty train split) the method's fit says what is wrong
    targets = held.held or None
    method = make_method(name, track, seed=seed, params=params, targets=targets)
    for left, why in held.left_out.items():
        say(progress, f"track {track}: {left} left out: {why}")
    method.observe(JobEvents.from_frames([train, validation, target]))

    def fit() -> BaselineRun:
        return _fit_and_write(
            name,
            method,
            identity,
            Splits(train, validation, target, held.left_out),
            config=config,
            track=track,
            out=out,
            model_dir=model_dir,
            split=split,
            seed=seed,
            progress=progress,
        )

    if journal is not None and isinstance(method, Resumable) and is_primary():
        inputs = fit_inputs(
            method=name,
            method_version=method.version,
            params=method.config(),
            seed=seed,
            config=config,
            track=track,
            dataset_revision=str(identity["revision"]),
        )
        with journal_lock(journal):  # one run at a time writes a journal
            method.resume_in(journal, inputs, fresh=fresh)
            return fit()
    return fit()


@dataclass(frozen=True)
class Splits:
    """What one baseline run reads: its train, validation and predicted splits, and the targets
    the dataset holds no value of (left out, with why)."""

    train: pl.DataFrame
    validation: pl.DataFrame
    target: pl.DataFrame
    left_out: dict[str, str]


def _fit_and_write(
    name: str,
    method: Method,
    identity: dict[str, Any],
    splits: Splits,
    *,
    config: str,
    track: str,
    out: Path,
    model_dir: Path | None,
    split: str,
    seed: int,
    progress: Progress | None,
) -> BaselineRun:
    train, validation, target = splits.train, splits.validation, splits.target
    say(progress, f"fitting {name} on {train.height} rows")
    t0 = time.perf_counter()
    method.fit(train, validation, progress=progress)
    fit_seconds = time.perf_counter() - t0
    say(progress, f"predicting {target.height} {split} rows")
    t1 = time.perf_counter()
    predictions = method.predict_rows(target)
    predict_seconds = time.perf_counter() - t1
    meta = submission_meta(
        name,
        method,
        identity,
        config=config,
        track=track,
        split=split,
        seed=seed,
        left_out=splits.left_out,
        timing={
            "fit_seconds": round(fit_seconds, 3),
            "fit_rows": train.height,
            "fit_seconds_per_1000_jobs": per_1000(fit_seconds, train.height),
            "predict_seconds": round(predict_seconds, 3),
            "predict_rows": target.height,
            "predict_seconds_per_1000_jobs": per_1000(predict_seconds, target.height),
            "processes": launched()[1],  # those of one launch (accelerate) shared the work
        },
    )
    ids = [str(x) for x in target["id"].to_list()]
    if not is_primary():  # one of several launched processes: the primary one writes
        return BaselineRun(
            out, meta, model_dir, fit_seconds, predict_seconds, target.height, written=False
        )
    resumed = tuple(method.resumed()) if isinstance(method, Resumable) else ()
    write_submission(out, ids, predictions, meta, method.quantiles())
    if model_dir is not None:
        say(progress, f"saving the model to {model_dir}")
        save_model(
            method,
            model_dir,
            {
                "dataset": identity,
                "dataset_config": config,
                "fit": {
                    "train_rows": train.height,
                    "validation_rows": validation.height,
                    "seconds": round(fit_seconds, 3),
                },
            },
        )
    return BaselineRun(
        out, meta, model_dir, fit_seconds, predict_seconds, target.height, resumed=resumed
    )
