"""The files of one submission and the one rule that names them.

A submission is `preds.jsonl` (the predictions) with two sidecars beside it, named by replacing
a final `.jsonl` (any other name keeps its whole name):

- `preds.meta.json`: what made the predictions (gharuntime.eval.meta);
- `preds.quantiles.jsonl`: a range for each prediction (gharuntime.eval.quantiles), optional.

`X.txt` gives `X.txt.meta.json` and `X.txt.quantiles.jsonl`. Every writer (the baselines, LASER,
the pipeline, reproduce) writes through `write_submission_files`, and every reader (eval, its
`--out` guard) finds the files through `SubmissionFiles`, so the rule lives here only.

Earlier releases wrote the metadata as `preds.jsonl.meta.json` and eval also read
`X.meta.json` for `X.txt`: those old names are still read when the current one is absent, each
with a deprecation notice saying what to rename it to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

import numpy as np
import numpy.typing as npt

from gharuntime.paths import write_atomic

__all__ = [
    "META_SUFFIX",
    "QUANTILES_SUFFIX",
    "SubmissionFiles",
    "write_submission_files",
]

META_SUFFIX: Final = ".meta.json"
QUANTILES_SUFFIX: Final = ".quantiles.jsonl"
_PREDICTIONS_SUFFIX: Final = ".jsonl"


@dataclass(frozen=True)
class SubmissionFiles:
    """Where the predictions, metadata and quantiles of one submission are."""

    predictions: Path

    @property
    def _base(self) -> str:
        p = self.predictions
        return p.stem if p.suffix == _PREDICTIONS_SUFFIX else p.name

    @property
    def meta(self) -> Path:
        """`preds.jsonl` → `preds.meta.json`."""
        return self.predictions.with_name(self._base + META_SUFFIX)

    @property
    def quantiles(self) -> Path:
        """`preds.jsonl` → `preds.quantiles.jsonl`."""
        return self.predictions.with_name(self._base + QUANTILES_SUFFIX)

    @property
    def legacy_meta(self) -> tuple[Path, ...]:
        """Metadata names earlier releases wrote or read, still read with a deprecation notice:
        `preds.jsonl.meta.json`, and `X.meta.json` for `X.txt`."""
        p = self.predictions
        old = (p.with_name(p.name + META_SUFFIX), p.with_name(p.stem + META_SUFFIX))
        return tuple(dict.fromkeys(x for x in old if x != self.meta))

    def readable(self) -> list[Path]:
        """Every file a reader of this submission may open (the legacy names included)."""
        return [self.predictions, self.meta, *self.legacy_meta, self.quantiles]

    def find_meta(self, notices: list[str] | None = None) -> Path | None:
        """The metadata file: the current name when it is a file, else the first old name that
        is one (its deprecation notice appended to `notices`), else None."""
        if self.meta.is_file():
            return self.meta
        for old in self.legacy_meta:
            if old.is_file():
                if notices is not None:
                    notices.append(
                        f"{old} is an old name for the metadata of {self.predictions}; it is "
                        f"still read, but a future release will not: rename it to {self.meta}"
                    )
                return old
        return None


def _digits(target: str) -> int:
    """Values are rounded to 0.1 s, and to whole bytes for `log_bytes`."""
    return 0 if target == "log_bytes" else 1


def _write_predictions(
    path: Path, ids: Sequence[str], predictions: Mapping[str, npt.NDArray[np.float64]]
) -> None:
    targets = list(predictions)
    columns = [np.asarray(predictions[t]).tolist() for t in targets]
    digits = [_digits(t) for t in targets]

    def lines(f: IO[str]) -> None:
        for i, record_id in enumerate(ids):
            row: dict[str, Any] = {"id": record_id}
            for t, col, d in zip(targets, columns, digits, strict=True):
                row[t] = round(col[i], d) if d else float(round(col[i]))
            f.write(json.dumps(row, separators=(",", ":")) + "\n")

    write_atomic(path, lines)


def _write_quantiles(
    path: Path, ids: Sequence[str], quantiles: Mapping[str, Mapping[str, npt.NDArray[np.float64]]]
) -> None:
    """One `{"id": ..., "<target>_p10": ..., ...}` line per record, rounded like the
    predictions; each record's values are made non-decreasing in the level (a running maximum)
    so rounding never inverts them."""
    levels = list(quantiles)
    targets = list(next(iter(quantiles.values())))
    columns = []
    for target in targets:
        stacked = np.stack([np.asarray(quantiles[q][target], dtype=np.float64) for q in levels])
        stacked = np.maximum.accumulate(stacked, axis=0)
        for q, row in zip(levels, stacked, strict=True):
            columns.append((f"{target}_{q}", np.round(row, _digits(target)).tolist()))

    def lines(f: IO[str]) -> None:
        for i, record_id in enumerate(ids):
            row: dict[str, Any] = {"id": record_id}
            for name, values in columns:
                row[name] = values[i]
            f.write(json.dumps(row, separators=(",", ":")) + "\n")

    write_atomic(path, lines)


def write_submission_files(
    predictions_path: Path,
    ids: Sequence[str],
    predictions: Mapping[str, npt.NDArray[np.float64]],
    meta: Mapping[str, Any],
    quantiles: Mapping[str, Mapping[str, npt.NDArray[np.float64]]] | None = None,
) -> SubmissionFiles:
    """Write a submission's files, each atomically: the predictions, the metadata, and the
    quantiles (`quantiles[level][target]`) when given; an earlier run's quantiles never stay
    beside these predictions (metadata under an old name may: the current name is read first,
    and an old file may belong to another submission, so it is never deleted). The caller has checked the values
    (finite, non-negative, one per id)."""
    files = SubmissionFiles(predictions_path)
    _write_predictions(files.predictions, ids, predictions)
    text = json.dumps(dict(meta), indent=2) + "\n"
    write_atomic(files.meta, text)
    if quantiles:
        _write_quantiles(files.quantiles, ids, quantiles)
    else:
        files.quantiles.unlink(missing_ok=True)
    return files
