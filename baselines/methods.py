"""The reference methods by name, each declared once: its class, what `gharuntime baseline
--help` says of it, and how `gharuntime pipeline` runs it. The baseline command's choices and
help, the pipeline's plan and its help are all made from `REGISTERED`, so a new method is one
entry here."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from gharuntime.baselines.catboost_method import CatBoost
from gharuntime.baselines.gbdt import LightGBM, XGBoost
from gharuntime.baselines.laser.method import Laser
from gharuntime.baselines.method import Method, MethodError
from gharuntime.baselines.naive import GroupMedian, LastRun, Median
from gharuntime.baselines.tuned import LightGBMTuned, XGBoostTuned

__all__ = [
    "LASER_PIPELINE_PARAMS",
    "METHODS",
    "REGISTERED",
    "TUNED_PIPELINE_TRIALS",
    "PipelineRun",
    "Registered",
    "make_method",
    "methods_help",
]


@dataclass(frozen=True)
class PipelineRun:
    """How `gharuntime pipeline` runs a method: its parameters there (fitting the pipeline's
    time budget), the tracks it runs on (None: every track its inputs allow), and a note for
    the pipeline's help."""

    params: Mapping[str, Any] = field(default_factory=dict)
    tracks: tuple[str, ...] | None = None
    note: str = ""


@dataclass(frozen=True)
class Registered:
    """A reference method: its class, its help text, and its pipeline run (None: not run)."""

    method: type[Method]
    summary: str
    pipeline: PipelineRun | None = field(default_factory=PipelineRun)

    @property
    def name(self) -> str:
        return self.method.name


LASER_PIPELINE_PARAMS: Final[dict[str, Any]] = {
    "model": "tiny",
    "max_steps": 150,
    "batch_size": 8,
    "budget": 256,
}
"""LASER at a size that fits the pipeline's 10-minute budget on 2 CPU cores: the tiny model, a
few hundred training steps. Far too little training to beat the trees; `gharuntime baseline
laser` trains as long as it is asked to."""

TUNED_PIPELINE_TRIALS: Final = 10
"""Optuna trials of each tuned tree in the pipeline (`gharuntime baseline` defaults to 20)."""

_TUNED = PipelineRun(
    {"trials": TUNED_PIPELINE_TRIALS},
    # the config track, where the identity of a job is all the trees have; each trial is a fit
    tracks=("config",),
    note="a few seeded Optuna trials",
)

REGISTERED: Final[tuple[Registered, ...]] = (
    Registered(Median, "the training median of each target"),
    Registered(
        GroupMedian,
        "median of the same repo + workflow + job name, then of the repo, then global",
    ),
    Registered(
        LastRun, "the job's most recent earlier duration (history track), else group-median"
    ),
    Registered(
        LightGBM,
        "LightGBM on features of the job's YAML, runner, matrix and repository, its identity "
        "(repository, workflow, job, matrix values, name words) and out-of-fold group target "
        "encodings (--param identity=false target_encoding=false: the configuration alone)",
    ),
    Registered(XGBoost, "XGBoost on the same features"),
    Registered(
        CatBoost, "CatBoost on the same features, the identity columns as its own categoricals"
    ),
    Registered(
        LightGBMTuned,
        "lightgbm, hyperparameters searched on the validation split: --param trials=20 "
        "(default) seeded Optuna trials, the first one the defaults",
        _TUNED,
    ),
    Registered(
        XGBoostTuned,
        "xgboost, hyperparameters searched on the validation split, likewise",
        _TUNED,
    ),
    Registered(
        Laser,
        "a language model fine-tuned on serialized jobs (pip install 'gharuntime[laser]'; "
        "--param model=tiny|tiny-256|small|smollm2-135m|PATH, max_steps, lora_r, ...; "
        "samples=16 (default) predicts the median of 16 draws and writes P10/P90 to the "
        "quantile sidecar (runs/a.quantiles.jsonl for --out runs/a.jsonl); samples=1 is "
        "greedy: faster, biased low). On several GPUs: accelerate launch --multi_gpu "
        "--num_processes P -m gharuntime.cli.main baseline laser ... (each process trains on "
        "its share of every step and decodes its share of the jobs; rank 0 writes)",
        PipelineRun(
            LASER_PIPELINE_PARAMS,
            tracks=("config",),  # its headline claim
            note="the tiny model, a few hundred steps",
        ),
    ),
)
"""Every reference method, in the order the help lists them and the pipeline runs them."""

METHODS: Final[dict[str, type[Method]]] = {r.name: r.method for r in REGISTERED}


def methods_help(indent: int = 2, width: int = 96) -> str:
    """The methods as `gharuntime baseline --help` lists them: each name, then its summary
    wrapped beside it (lines for a click `\\b` block, which keeps them as they are)."""
    column = indent + max(len(r.name) for r in REGISTERED) + 2
    lines = []
    for r in REGISTERED:
        wrapped = textwrap.wrap(
            r.summary, width - column, break_on_hyphens=False, break_long_words=False
        )
        lines.append(" " * indent + r.name.ljust(column - indent) + wrapped[0])
        lines += [" " * column + line for line in wrapped[1:]]
    return "\n".join(lines)


def make_method(
    name: str,
    track: str,
    *,
    seed: int = 0,
    params: dict[str, Any] | None = None,
    targets: Sequence[str] | None = None,
) -> Method:
    """A fresh method predicting `targets` (of the track's; default all of them); raises
    MethodError for an unknown name or parameter, and ForbiddenInputError when the method reads
    a column `track` forbids."""
    cls = METHODS.get(name)
    if cls is None:
        raise MethodError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    if params:
        if not hasattr(cls, "defaults"):
            raise MethodError(f"method {name!r} takes no parameters (got {', '.join(params)})")
        return cls(track, seed=seed, targets=targets, **params)
    return cls(track, seed=seed, targets=targets)
