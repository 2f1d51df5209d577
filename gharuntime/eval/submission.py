"""Read a submission (JSON Lines, one `{"id": ..., "duration_s": ...}` per record of the split)
line by line, never whole, checking every line and collecting every problem with its line
number, and compute the file's sha256 on the way."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping
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

_BATCH_BYTES = 1 << 20


def _parse_batch(batch: list[bytes], buffer: bytes) -> list[Any] | None:
    """Every line of `batch` parsed in one call, or None when the batch needs the line-by-line
    path (a problem, blank or nested lines). The checks make sure the array parse cannot join
    or split lines: each line is one `{...}` with no other brace or bracket (JSON strings never
    hold a raw newline)."""
    n = len(batch)
    ends = buffer.count(b"}\n") + (0 if buffer.endswith(b"\n") else int(buffer.endswith(b"}")))
    if (
        not buffer.startswith(b"{")
        or buffer.count(b"{") != n
        or buffer.count(b"}") != n
        or ends != n
        or buffer.count(b"\n{") != n - 1
        or b"[" in buffer
    ):
        return None
    try:
        objs = json.loads(b"[" + b",".join(batch) + b"]")
    except ValueError:
        return None
    return objs if isinstance(objs, list) and len(objs) == n else None


def _parse_lines(
    batch: list[bytes], before: int, log: ProblemLog, where: str
) -> tuple[list[int], list[Any]]:
    """Each line on its own: the precise path, reporting lines that are not JSON."""
    numbers: list[int] = []
    objs: list[Any] = []
    for i, raw in enumerate(batch, before + 1):
        try:
            objs.append(json.loads(raw))
            numbers.append(i)
        except ValueError as exc:
            if raw.strip():
                log.add("not_json", where, f"not JSON: {exc}", i)
    return numbers, objs


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
    isfinite = math.isfinite
    n_targets = len(targets)
    with open(path, "rb") as f:
        while True:
            batch = f.readlines(_BATCH_BYTES)
            if not batch:
                break
            buffer = b"".join(batch)
            digest.update(buffer)
            done_bytes += len(buffer)
            numbers: Iterable[int]
            objs = _parse_batch(batch, buffer)
            if objs is None:
                numbers, objs = _parse_lines(batch, lineno, log, where)
            else:
                numbers = range(lineno + 1, lineno + 1 + len(batch))
            lineno += len(batch)
            if progress:
                progress(done_bytes, total_bytes)
            for ln, obj in zip(numbers, objs):  # noqa: B905 (equal by construction)
                if type(obj) is not dict:
                    log.add(
                        "not_object",
                        where,
                        f"expected an object like {{'id': ..., {targets[0]!r}: ...}}, got {type(obj).__name__}",
                        ln,
                    )
                    continue
                rid = obj.get("id")
                row = -1
                if type(rid) is not str:
                    what = "no 'id'" if rid is None and "id" not in obj else f"id {_describe(rid)}"
                    log.add("bad_id", where, f"{what}; every record needs its id as a string", ln)
                else:
                    found = index.get(rid)
                    if found is None:
                        log.add(
                            "unknown_id",
                            where,
                            f"id {rid!r} is not a record of this split",
                            ln,
                        )
                    elif present[found]:
                        log.add(
                            "duplicate_id",
                            where,
                            f"id {rid!r} again (first on line {int(first_line[found])})",
                            ln,
                        )
                    else:
                        row = found
                        present[found] = True
                        first_line[found] = ln
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
                                ln,
                            )
                        else:
                            log.add(
                                "unknown_field",
                                where,
                                f"unknown field {key!r}; a record holds 'id' and {', '.join(map(repr, targets))}",
                                ln,
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
                        log.add("bad_value", where, f"{target!r} is too large", ln)
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
                    log.add("bad_value", where, problem, ln)
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
