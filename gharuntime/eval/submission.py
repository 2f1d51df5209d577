"""Read a submission (JSON Lines, one `{"id": ..., "duration_s": ...}` per record of the split)
line by line, never whole, checking every line and collecting every problem with its line
number, and compute the file's sha256 on the way."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gharuntime.contract import TARGETS
from gharuntime.eval.problems import ProblemLog

__all__ = ["ParsedSubmission", "read_submission"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_PROGRESS_EVERY = 1 << 16


@dataclass(frozen=True)
class ParsedSubmission:
    """Predictions aligned with the split's rows (NaN where a record has none)."""

    path: Path
    sha256: str
    lines: int
    records: int  # lines that named a known id
    predictions: dict[str, FloatArray]
    present: BoolArray

    @property
    def missing(self) -> int:
        return int(self.present.shape[0] - np.count_nonzero(self.present))


def _describe(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_submission(
    path: Path,
    index: Mapping[str, int],
    rows: int,
    targets: tuple[str, ...],
    track: str,
    log: ProblemLog,
    *,
    allow_partial: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> ParsedSubmission:
    """Parse `path` against the split's ids (`index`: id -> row) for the track's `targets`.

    Problems go to `log`; the predictions are only meaningful when none were added. Blank lines
    are ignored. Records of the split with no line are a problem unless `allow_partial`.
    """
    where = str(path)
    predictions = {t: np.full(rows, np.nan) for t in targets}
    present = np.zeros(rows, dtype=bool)
    first_line = np.zeros(rows, dtype=np.int64)
    allowed = {"id", *targets}
    digest = hashlib.sha256()
    total_bytes = path.stat().st_size
    done_bytes = 0
    lineno = 0
    records = 0
    loads = json.loads
    isfinite = math.isfinite
    n_targets = len(targets)
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            digest.update(raw)
            done_bytes += len(raw)
            if progress and lineno % _PROGRESS_EVERY == 0:
                progress(done_bytes, total_bytes)
            try:
                obj = loads(raw)
            except ValueError as exc:
                if not raw.strip():
                    continue
                log.add("not_json", where, f"not JSON: {exc}", lineno)
                continue
            if type(obj) is not dict:
                log.add(
                    "not_object",
                    where,
                    f"expected an object like {{'id': ..., {targets[0]!r}: ...}}, got {type(obj).__name__}",
                    lineno,
                )
                continue
            rid = obj.get("id")
            row = -1
            if type(rid) is not str:
                what = "no 'id'" if rid is None and "id" not in obj else f"id {_describe(rid)}"
                log.add("bad_id", where, f"{what}; every record needs its id as a string", lineno)
            else:
                found = index.get(rid)
                if found is None:
                    log.add(
                        "unknown_id",
                        where,
                        f"id {rid!r} is not a record of this split",
                        lineno,
                    )
                elif present[found]:
                    log.add(
                        "duplicate_id",
                        where,
                        f"id {rid!r} again (first on line {int(first_line[found])})",
                        lineno,
                    )
                else:
                    row = found
                    present[found] = True
                    first_line[found] = lineno
                    records += 1
            if len(obj) != n_targets + 1 or not allowed.issuperset(obj):
                for key in obj:
                    if key in allowed:
                        continue
                    if key in TARGETS:
                        log.add(
                            "target_not_in_track",
                            where,
                            f"{key!r} is not a target of track {track!r}, which predicts "
                            f"{', '.join(targets)}",
                            lineno,
                        )
                    else:
                        log.add(
                            "unknown_field",
                            where,
                            f"unknown field {key!r}; a record holds 'id' and {', '.join(map(repr, targets))}",
                            lineno,
                        )
            for target in targets:
                value: Any = obj.get(target)
                kind = type(value)
                try:
                    if (kind is float or kind is int) and isfinite(value) and value >= 0:
                        if row >= 0:
                            predictions[target][row] = value
                        continue
                except OverflowError:  # an integer too large for a float
                    log.add("bad_value", where, f"{target!r} is too large", lineno)
                    continue
                if value is None:
                    problem = f"no {target!r}" if target not in obj else f"{target!r} is null"
                elif kind is float or kind is int:
                    problem = (
                        f"{target!r} is {value!r}; predictions must be finite"
                        if not isfinite(value)
                        else f"{target!r} is negative ({value!r})"
                    )
                else:
                    problem = f"{target!r} is not a number: {_describe(value)}"
                log.add("bad_value", where, problem, lineno)
    if progress:
        progress(done_bytes, total_bytes)
    missing = rows - records
    if missing and not allow_partial:
        examples = (
            list(itertools.islice((k for k, i in index.items() if not present[i]), 5))
            if missing < rows
            else []
        )
        log.add(
            "missing_records",
            where,
            f"{missing} of {rows} records of the split have no prediction"
            + (f" (e.g. ids {', '.join(examples)})" if examples else "")
            + "; predict every record, or pass --allow-partial to score them as failures",
        )
    return ParsedSubmission(
        path=path,
        sha256=digest.hexdigest(),
        lines=lineno,
        records=records,
        predictions=predictions,
        present=present,
    )
