"""Calibrate a saved LASER model's ranges without training it again.

A model saved before LASER calibrated its ranges (or trained elsewhere, on a GPU, for hours)
gives the raw P10/P90 of its draws, and those hold far fewer than 80% of held-out jobs. This
runs the calibration fit runs at its end (`Laser.calibrate`: split-conformal offsets per recency
stratum, on validation jobs decoded as predict decodes them) on the dataset the model was
trained on, saves the model again in place (a temporary folder renamed over it), and with `out`
predicts the config's test split into a submission whose metadata records the calibration, as
`gharuntime baseline laser` would have written it. `gharuntime laser calibrate` is the command.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gharuntime.baselines.method import MethodError
from gharuntime.baselines.model_io import load_model, save_model
from gharuntime.baselines.queue_load import JobEvents
from gharuntime.baselines.run import (
    dataset_identity,
    held_by,
    per_1000,
    submission_meta,
    write_submission,
)
from gharuntime.contract import CONFIGS
from gharuntime.dataset import load
from gharuntime.progress import Progress, say

__all__ = ["CalibrateRun", "calibrate_saved"]

_PROVENANCE = ("dataset", "dataset_config", "fit")
"""What save_model's caller recorded beside the state: kept as the model had it."""


@dataclass(frozen=True)
class CalibrateRun:
    """What `calibrate_saved` did: the calibration per target (as a submission records it),
    its seconds, and the submission when one was written."""

    model_dir: Path
    calibration: dict[str, Any]
    seconds: float
    submission: Path | None = None
    predict_seconds: float | None = None
    rows: int | None = None


def calibrate_saved(
    model_dir: Path,
    dataset: Path,
    *,
    out: Path | None = None,
    rows: int | None = None,
    progress: Progress | None = None,
) -> CalibrateRun:
    """Calibrate the LASER model in `model_dir` on the validation split of `dataset` (the one
    it was trained on: same revision, same config), save it in place, and with `out` write its
    submission for the config's test split. `rows` overrides the validation jobs decoded
    (`calibration_rows`). MethodError where it cannot, saying why and what to do."""
    from gharuntime.baselines.laser.method import Laser

    method, meta = load_model(model_dir)
    if not isinstance(method, Laser):
        raise MethodError(
            f"{model_dir}: a {meta.get('method')} model; only LASER models are calibrated "
            "after training (the trees calibrate their ranges when they fit)"
        )
    trained: dict[str, Any] = meta["dataset"] if isinstance(meta.get("dataset"), dict) else {}
    config = meta.get("dataset_config")
    if config not in CONFIGS:
        raise MethodError(
            f"{model_dir}: the model does not say which config it was trained on "
            "(`dataset_config` in model.json); retrain it with `gharuntime baseline laser`"
        )
    identity = dataset_identity(dataset)
    if trained.get("revision") != identity["revision"]:
        raise MethodError(
            f"{model_dir} was trained on {trained.get('id')} revision "
            f"{str(trained.get('revision'))[:12]}, and {dataset} is revision "
            f"{str(identity['revision'])[:12]}: calibrate it on the dataset it was trained on"
        )
    if rows is not None:
        method.params["calibration_rows"] = rows
    say(progress, f"loading the {config} train and validation splits")
    train = load(dataset, config, "train")
    validation = load(dataset, config, "validation")
    started = time.perf_counter()
    method.calibrate(train, validation, progress)
    seconds = time.perf_counter() - started
    say(progress, f"saving the calibrated model to {model_dir}")
    save_model(method, model_dir, {k: meta[k] for k in _PROVENANCE if k in meta})
    run = CalibrateRun(model_dir, method.calibration(), round(seconds, 3))
    if out is None:
        return run
    test = load(dataset, config, "test")
    method.observe(JobEvents.from_frames([train, validation, test]))
    say(progress, f"predicting {test.height} test rows")
    t0 = time.perf_counter()
    predictions = method.predict_rows(test)
    predict_seconds = time.perf_counter() - t0
    fit: dict[str, Any] = meta["fit"] if isinstance(meta.get("fit"), dict) else {}
    fit_seconds = fit.get("seconds")
    timing: dict[str, Any] = {
        # the training's, as the model recorded it; the calibration's apart
        "fit_seconds": fit_seconds,
        "fit_rows": train.height,
        "fit_seconds_per_1000_jobs": (
            per_1000(fit_seconds, train.height) if isinstance(fit_seconds, int | float) else None
        ),
        "calibrate_seconds": run.seconds,
        "predict_seconds": round(predict_seconds, 3),
        "predict_rows": test.height,
        "predict_seconds_per_1000_jobs": per_1000(predict_seconds, test.height),
        "processes": 1,
    }
    sub_meta = submission_meta(
        method.name,
        method,
        identity,
        config=str(config),
        track=method.track,
        split="test",
        seed=method.seed,
        left_out=held_by(train, str(config), method.track).left_out,
        timing=timing,
    )
    ids = [str(x) for x in test["id"].to_list()]
    write_submission(out, ids, predictions, sub_meta, method.quantiles())
    return CalibrateRun(
        model_dir,
        run.calibration,
        run.seconds,
        submission=out,
        predict_seconds=round(predict_seconds, 3),
        rows=test.height,
    )
