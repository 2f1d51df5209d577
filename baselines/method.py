"""What every reference method shares: the inputs it may read on a track, fit/predict on the
log1p scale's terms, and its saved state.

The track rule is enforced by construction: a method declares the columns it reads, that list is
checked against `gharuntime.contract.input_columns(track)`, and the method is then handed a frame
holding only those columns (and, when fitting, the track's targets). A method that asks for a
column the track forbids never sees a row; it is refused with `ForbiddenInputError`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import polars as pl

from gharuntime.baselines.params import ParamTable
from gharuntime.baselines.queue_load import JobEvents
from gharuntime.contract import COLUMN_BY_NAME, TRACKS, input_columns
from gharuntime.errors import GharuntimeError
from gharuntime.progress import Progress

__all__ = [
    "QUANTILE_LEVELS",
    "ForbiddenInputError",
    "Method",
    "MethodError",
    "Resumable",
    "inputs_for",
    "resolve_params",
    "restrict",
    "targets_of",
]


QUANTILE_LEVELS: dict[str, float] = {"p10": 0.1, "p50": 0.5, "p90": 0.9, "p99": 0.99}
"""The levels every reference method writes to its quantile sidecar (gharuntime.eval.quantiles);
p99 is what `predict` bases its recommended timeout on."""


class MethodError(GharuntimeError):
    """A method that cannot be fitted, used or loaded as asked."""


class ForbiddenInputError(MethodError):
    """A method asked to read a column its track does not allow."""


def _track(track: str) -> None:
    if track not in TRACKS:
        raise MethodError(f"unknown track {track!r}; choose one of {', '.join(TRACKS)}")


def targets_of(method_name: str, track: str, targets: Sequence[str] | None) -> tuple[str, ...]:
    """The targets a method predicts: the track's, or the `targets` of them a dataset holds
    (gharuntime.targets), in the track's order; refused when one is not the track's."""
    _track(track)
    own = TRACKS[track].targets
    if targets is None:
        return own
    wanted = list(targets)
    unknown = [t for t in wanted if t not in own]
    if unknown or not wanted:
        raise MethodError(
            f"method {method_name!r}: {', '.join(map(repr, unknown)) or 'no target'} "
            f"{'is not a target' if unknown else 'given'} of track {track!r}, which predicts "
            f"{', '.join(own)}; give one or more of those"
        )
    return tuple(t for t in own if t in wanted)


def inputs_for(method_name: str, wanted: tuple[str, ...], track: str) -> tuple[str, ...]:
    """`wanted` checked against the track: every column must be an input the track allows."""
    _track(track)
    allowed = set(input_columns(track))
    forbidden = [c for c in wanted if c not in allowed]
    if forbidden:
        reasons = []
        for c in forbidden:
            col = COLUMN_BY_NAME.get(c)
            if col is None:
                reasons.append(f"{c} (not a column of the job table)")
            elif col.history_only:
                reasons.append(f"{c} (history-only input; use a track with history)")
            else:
                reasons.append(f"{c} ({col.role.value} column, never an input)")
        raise ForbiddenInputError(
            f"method {method_name!r} reads {', '.join(reasons)}, which track {track!r} forbids; "
            f"allowed inputs on {track!r}: {', '.join(sorted(allowed))}"
        )
    return wanted


def resolve_params(method_name: str, table: ParamTable, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter of `table`, `given` over the defaults, in the table's order: MethodError
    for a name the table does not declare (with the closest one it does) or a value its spec
    refuses, before any data is read."""
    if given and not table:
        raise MethodError(f"method {method_name!r} takes no parameters (got {', '.join(given)})")
    unknown = table.unknown(given)
    if unknown:
        raise MethodError(f"{method_name}: {unknown}")
    values = {**table.defaults, **given}
    problems = table.problems(values)
    if problems:
        raise MethodError(f"{method_name}: bad --param: {problems}")
    return values


def restrict(frame: pl.DataFrame, columns: tuple[str, ...]) -> pl.DataFrame:
    """Only `columns` of `frame`: what a method is allowed to see."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MethodError(f"input frame lacks columns {missing}")
    # drop() rather than select(): a method that reads no column still sees how many rows there are
    kept = frame.drop([c for c in frame.columns if c not in columns])
    return kept.select(columns) if columns else kept


class Method(ABC):
    """A reference method: predicts the track's targets from the inputs it declares."""

    name: ClassVar[str]
    version: ClassVar[str]
    reproduce_tolerance: ClassVar[float] = 1e-9
    """How exactly a refit reproduces a result's metrics (`gharuntime leaderboard reproduce`):
    the largest difference of any value or bound taken as the same result, absolute for values
    up to 1 and relative above (`leaderboard.reproduce.allowed_difference`). Seeded and
    deterministic methods: bit for bit on the same machine, 1e-9 across machines."""
    param_specs: ClassVar[ParamTable] = ParamTable()
    """The parameters it takes (`--param KEY=VALUE`), each typed and bounded with its default
    and help (gharuntime.baselines.params), in the order `config()` records them: checked by
    `__init__` before any data is read; none by default."""

    def __init__(
        self,
        track: str,
        *,
        seed: int = 0,
        targets: Sequence[str] | None = None,
        **params: Any,
    ) -> None:
        self.params: dict[str, Any] = resolve_params(self.name, self.param_specs, params)
        _track(track)
        self.track = track
        self.targets: tuple[str, ...] = targets_of(self.name, track, targets)
        self.seed = seed
        self.inputs = inputs_for(self.name, self.reads(track), track)

    @abstractmethod
    def reads(self, track: str) -> tuple[str, ...]:
        """The input columns this method reads on `track` (checked against the contract)."""

    @abstractmethod
    def fit(
        self,
        train: pl.DataFrame,
        validation: pl.DataFrame | None = None,
        progress: Progress | None = None,
    ) -> None:
        """Learn from `train` (declared inputs + the track's targets); `validation` likewise;
        say how it goes through `progress` (a message is `progress(message, 0, None)`)."""

    @abstractmethod
    def predict(self, inputs: pl.DataFrame) -> dict[str, np.ndarray]:
        """One float array per target (seconds, bytes), in the row order of `inputs`."""

    def observe(self, events: JobEvents | None) -> None:
        """The job events of the rows a run reads (gharuntime.baselines.queue_load), before
        `fit`: a method that counts the queue a job met at its creation keeps them (and reads
        of them only what `load_counts` lets through); the others ignore them."""
        return None

    @property
    def reads_queue_load(self) -> bool:
        """Whether the fitted model reads the queue a job met at its creation (the counts of
        gharuntime.baselines.queue_load), so `predict` should hand it the job events."""
        return False

    def predict_rows(self, frame: pl.DataFrame) -> dict[str, np.ndarray]:
        """Predict for job-table rows, handing the method only the columns it declared."""
        return self.predict(restrict(frame, self.inputs))

    def config(self) -> dict[str, Any]:
        """Hyperparameters and options, recorded in the model folder and the submission: its
        parameters' values (none for a method without any). A parameter added after results
        were recorded (`recorded_at_default=False`) is named only when set, so a config those
        results record is still this method's config."""
        specs = type(self).param_specs
        return {
            k: v
            for k, v in self.params.items()
            if k not in specs or specs[k].recorded_at_default or v != specs[k].default
        }

    def quantiles(self) -> dict[str, dict[str, np.ndarray]]:
        """{"p10": {target: values}, "p50": ..., "p90": ...} of the last predict, ascending in
        the level, written beside the submission as OUT.quantiles.jsonl; empty when the method
        gives no range (a model saved before it did)."""
        return {}

    def calibration(self) -> dict[str, Any]:
        """Per target, how the ranges of `quantiles` were calibrated after fitting (what ran,
        on how many held-out rows, the fitted adjustment), recorded in the submission's
        metadata; {} when the method gives no calibrated range."""
        return {}

    def importances(self) -> dict[str, list[tuple[str, float]]]:
        """Per target, (feature, importance) pairs; empty for methods without features."""
        return {}

    @abstractmethod
    def save_state(self, folder: Path) -> dict[str, Any]:
        """Write learned state into `folder`; return JSON-able extra metadata."""

    @classmethod
    @abstractmethod
    def load_state(cls, folder: Path, meta: dict[str, Any]) -> Method:
        """Rebuild a fitted method from `folder` and its metadata."""

    # helpers every method uses
    def _fit_frames(
        self, train: pl.DataFrame, validation: pl.DataFrame | None
    ) -> tuple[pl.DataFrame, pl.DataFrame | None]:
        cols = (*self.inputs, *self.targets)
        train = restrict(train, cols)
        if train.height == 0:
            raise MethodError(f"{self.name}: the training split is empty")
        for target in self.targets:
            if train[target].drop_nulls().len() == 0:
                raise MethodError(
                    f"{self.name}: no training row has a value for {target}, so track "
                    f"{self.track!r} cannot be learned from this dataset (log_bytes needs a "
                    "crawl with --logs)"
                )
        val = restrict(validation, cols) if validation is not None else None
        return train, val


@runtime_checkable
class Resumable(Protocol):
    """A method whose fit keeps its finished work in a journal file (the tuned trees' trials),
    so the same run, started again after a kill, does only what is left."""

    def resume_in(self, journal: Path, inputs: dict[str, Any], *, fresh: bool = False) -> None:
        """Keep the fit's work in `journal`, resuming what it holds under the same `inputs`
        (gharuntime.resume.fit_inputs); `fresh` starts it over."""

    def resumed(self) -> list[str]:
        """After the fit: what the journal kept, dropped or started, one line each."""


def as_float(values: pl.Series) -> np.ndarray:
    """A target column as float64 with nulls as NaN."""
    return values.cast(pl.Float64).fill_null(float("nan")).to_numpy().astype(np.float64)
