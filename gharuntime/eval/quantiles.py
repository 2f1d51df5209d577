"""The quantile sidecar: a range for every prediction, from any method, checked like the
submission and scored by eval.

`preds.jsonl` → `preds.quantiles.jsonl` (gharuntime.eval.submission_files names it), one line
per record of the submission:
`{"id": "1000001", "duration_s_p10": 41.0, "duration_s_p50": 80.0, "duration_s_p90": 190.0}`.
A level is `p` and a percentage strictly between 0 and 100 (`p10`, `p99`, `p2.5`); every line
holds the same levels for every target of the track, at least p10, p50 and p90. Values are
seconds (bytes for `log_bytes`): finite, non-negative, and non-decreasing in the level.

Eval scores it (gharuntime.eval.metrics.INTERVAL_METRICS): coverage of each central interval
(p10–p90: nominal 80%), its mean width in log1p space, the pinball loss of each level on the
log1p scale, and the observed share of records at or below each level (the calibration table).

Limits, each checked before anything is scored: the sidecar is a regular file (a FIFO, device
or folder is refused at once, never waited on or skipped); a line holds at most
`MAX_LINE_BYTES` (1 MB; a longer one is refused with its line number, never held whole); at
most `MAX_LEVELS` (200) levels per target, counted on the keys most of the first 100 object
lines give (one odd line is its own problem) before the rest is read; a line nested too deeply for the parser is one problem of that line.
Scoring is linear in the number of levels. Two sidecars with different levels (`--vs`) are
compared on the levels both give.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import polars as pl

from gharuntime.eval.provenance import result_path
from gharuntime.eval.submission import MAX_LINE_BYTES, read_submission
from gharuntime.problems import ProblemLog
from gharuntime.readfile import iter_lines

__all__ = [
    "MAX_LEVELS",
    "REQUIRED_LEVELS",
    "IntervalTerms",
    "ParsedQuantiles",
    "QuantileLevels",
    "interval_terms",
    "level_name",
    "read_quantiles",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

REQUIRED_LEVELS: Final = ("p10", "p50", "p90")
MAX_LEVELS: Final = 200
"""The most levels a sidecar may give per target (p1 to p99 in steps of 0.5 fit), checked on
its first line before anything else is read."""
_LEVEL: Final = re.compile(r"p(\d{1,2}(?:\.\d{1,3})?)")
_SHOW: Final = 20  # non-monotone lines reported with their text per target, then counted
_SAMPLE: Final = 100  # object lines whose most common keys give the levels


def level_name(percent: float) -> str:
    """`p10` for 10.0, `p2.5` for 2.5."""
    return f"p{percent:g}"


def _percent(name: str) -> float | None:
    m = _LEVEL.fullmatch(name)
    if m is None:
        return None
    value = float(m[1])
    return value if 0.0 < value < 100.0 else None


@dataclass(frozen=True)
class QuantileLevels:
    """The levels of a sidecar, ascending, and the central intervals they form (each computed
    once, in linear time: scoring is linear in the number of levels)."""

    percents: tuple[float, ...]

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(level_name(p) for p in self.percents)

    @cached_property
    def fractions(self) -> tuple[float, ...]:
        return tuple(p / 100.0 for p in self.percents)

    @cached_property
    def central(self) -> tuple[tuple[int, int], ...]:
        """(low, high) level indices of each central interval (p10 with p90), widest first."""
        index = {round(p, 6): i for i, p in enumerate(self.percents)}
        out = []
        for i, a in enumerate(self.percents):
            j = index.get(round(100.0 - a, 6))
            if j is not None and j > i:
                out.append((i, j))
        return tuple(out)

    def interval_name(self, pair: tuple[int, int]) -> str:
        return f"{self.names[pair[0]]}-{self.names[pair[1]]}"

    def nominal(self, pair: tuple[int, int]) -> float:
        return (self.percents[pair[1]] - self.percents[pair[0]]) / 100.0


@dataclass(frozen=True)
class ParsedQuantiles:
    """A checked sidecar aligned with the truth's rows: values[target] is (levels, rows)."""

    path: Path
    sha256: str
    lines: int
    levels: QuantileLevels
    values: dict[str, FloatArray]

    def to_json(self) -> dict[str, Any]:
        return {
            "path": result_path(self.path),
            "sha256": self.sha256,
            "lines": self.lines,
            "levels": list(self.levels.names),
        }


def _first_object(path: Path) -> tuple[int, dict[str, Any] | None]:
    """The first line that is a JSON object with the keys most of the first _SAMPLE object
    lines have (so one odd line, first or not, is its own problem, not every other line's),
    read through the bounded reader: a line over MAX_LINE_BYTES, a FIFO or a device raise
    InputFileError; nesting too deep for the parser is a line that is not an object."""
    seen: list[tuple[int, dict[str, Any], frozenset[str]]] = []
    for lineno, raw in iter_lines(path, MAX_LINE_BYTES):
        if raw.strip():
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if isinstance(obj, dict):
                seen.append((lineno, obj, frozenset(obj)))
                if len(seen) == _SAMPLE:
                    break
    if not seen:
        return 1, None
    common = Counter(keys for _, _, keys in seen).most_common(1)[0][0]
    line, obj, _ = next(item for item in seen if item[2] == common)
    return line, obj


def _levels(
    first: tuple[int, dict[str, Any] | None], targets: Sequence[str], log: ProblemLog, where: str
) -> QuantileLevels | None:
    """The levels the first object line declares; problems (missing or uneven levels) go to
    `log`. None, with its problem logged, when it gives more than MAX_LEVELS: nothing more is
    read."""
    line, obj = first
    if obj is None:
        return QuantileLevels(tuple(float(n[1:]) for n in REQUIRED_LEVELS))
    per_target: dict[str, set[float]] = {t: set() for t in targets}
    for key in obj:
        for t in targets:
            if key.startswith(t + "_"):
                pct = _percent(key[len(t) + 1 :])
                if pct is not None:
                    per_target[t].add(pct)
    union = sorted(set().union(*per_target.values()))
    if len(union) > MAX_LEVELS:
        log.add(
            "quantile_levels",
            where,
            f"line {line} gives {len(union):,} levels; a sidecar gives at most {MAX_LEVELS} "
            "(e.g. p1 to p99 in steps of 0.5): keep the levels you mean to be scored on",
            line,
        )
        return None
    for t, got in per_target.items():
        lacking = [level_name(p) for p in union if p not in got]
        lacking += [n for n in REQUIRED_LEVELS if float(n[1:]) not in got and n not in lacking]
        if lacking:
            log.add(
                "quantile_levels",
                where,
                f"line {line} has no {', '.join(f'{t}_{n}' for n in lacking)}; every line "
                f"gives the same levels for every target ({', '.join(targets)}), at least "
                f"{', '.join(REQUIRED_LEVELS)}",
                line,
            )
    required = {float(n[1:]) for n in REQUIRED_LEVELS}
    return QuantileLevels(tuple(sorted(set(union) | required)))


def read_quantiles(
    path: Path,
    ids: pl.Series,
    targets: Sequence[str],
    track: str,
    present: BoolArray,
    log: ProblemLog,
    *,
    left_out: Sequence[str] = (),
) -> ParsedQuantiles | None:
    """Read and check the sidecar `path` against the split's `ids` and the submission's rows
    (`present`): the same ids, every value finite and non-negative, non-decreasing in the level.
    The levels of `left_out` targets (those the dataset does not hold) may be given; they are
    not read.
    Every problem goes to `log` with its line; the values are meaningful only without any.
    None (its problem logged) for a sidecar with more than MAX_LEVELS levels, which is not
    read further. InputFileError (an OSError) for a file that is not regular or whose line
    holds over MAX_LINE_BYTES, before anything is scored."""
    where = str(path)
    levels = _levels(_first_object(path), targets, log, where)
    if levels is None:
        return None
    fields = tuple(f"{t}_{n}" for t in targets for n in levels.names)
    parsed = read_submission(
        path,
        ids,
        fields,
        track,
        log,
        allow_partial=True,
        left_out=dict.fromkeys(left_out, ""),  # their levels are not read
        sidecar=True,
    )
    has = parsed.present
    lacking = np.flatnonzero(present & ~has)
    if lacking.shape[0]:
        examples = ", ".join(ids.gather(lacking[:5]).to_list())
        log.add(
            "missing_quantiles",
            where,
            f"{lacking.shape[0]} record(s) of the submission have no quantiles (e.g. ids "
            f"{examples}); give a line for every line of the submission",
        )
    extra = np.flatnonzero(has & ~present)
    for i in extra[:_SHOW].tolist():
        log.add(
            "quantiles_without_prediction",
            where,
            f"id {ids[i]!r} has quantiles but no prediction in the submission",
            int(parsed.row_lines[i]),
        )
    if extra.shape[0] > _SHOW:
        log.add_count("quantiles_without_prediction", extra.shape[0] - _SHOW)
    values: dict[str, FloatArray] = {}
    for t in targets:
        v = np.stack([parsed.predictions[f"{t}_{n}"] for n in levels.names])
        values[t] = v
        with np.errstate(invalid="ignore"):
            down = np.flatnonzero(has & np.any(v[1:] < v[:-1], axis=0))
        for k, i in enumerate(down.tolist()):
            if k == _SHOW:
                log.add_count("not_monotone", down.shape[0] - k)
                break
            j = int(np.argmax(v[1:, i] < v[:-1, i]))
            a, b = levels.names[j], levels.names[j + 1]
            log.add(
                "not_monotone",
                where,
                f"{t}_{a} = {v[j, i]:g} is above {t}_{b} = {v[j + 1, i]:g}; a quantile never "
                "decreases as its level rises",
                int(parsed.row_lines[i]),
            )
    return ParsedQuantiles(path, parsed.sha256, parsed.lines, levels, values)


@dataclass(frozen=True)
class IntervalTerms:
    """Per-row terms of one target whose means are the interval metrics, by term name:
    `coverage:p10-p90`, `log_width:p10-p90`, `calibration:p10`, `pinball:p10`,
    `mean_pinball`."""

    names: tuple[str, ...]
    values: FloatArray  # (len(names), rows)


def interval_terms(
    y: FloatArray, q: FloatArray, failed: BoolArray, levels: QuantileLevels
) -> IntervalTerms:
    """The terms for truth `y` (rows), quantiles `q` (levels, rows) and failures (scored as
    every quantile 0, as eval scores a failure's prediction 0)."""
    q = np.where(failed[None, :], 0.0, q)
    ly = np.log1p(y)
    lq = np.log1p(q)
    names: list[str] = []
    rows: list[FloatArray] = []
    for pair in levels.central:
        lo, hi = q[pair[0]], q[pair[1]]
        name = levels.interval_name(pair)
        names += [f"coverage:{name}", f"log_width:{name}"]
        rows += [((lo <= y) & (y <= hi)).astype(np.float64), lq[pair[1]] - lq[pair[0]]]
    pinballs = []
    for k, (name, tau) in enumerate(zip(levels.names, levels.fractions, strict=True)):
        diff = ly - lq[k]
        pinball = np.maximum(tau * diff, (tau - 1.0) * diff)
        pinballs.append(pinball)
        names += [f"calibration:{name}", f"pinball:{name}"]
        rows += [(y <= q[k]).astype(np.float64), pinball]
    names.append("mean_pinball")
    rows.append(np.mean(pinballs, axis=0))
    return IntervalTerms(tuple(names), np.stack(rows).astype(np.float64))
