"""Read a submission (JSON Lines, one `{"id": ..., "duration_s": ...}` per record of the split)
line by line, never whole, checking every line and collecting every problem with its line
number, and compute the file's sha256 on the way."""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import polars as pl

from gharuntime.contract import TARGETS
from gharuntime.errors import GharuntimeError
from gharuntime.problems import KEEP_PER_KIND, KEEP_UNKNOWN_IDS, ProblemLog
from gharuntime.progress import Progress
from gharuntime.readfile import open_regular

__all__ = ["ParsedSubmission", "read_submission"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]

_BATCH_BYTES = 1 << 20
MAX_LINE_BYTES = 1 << 20  # a record is ~100 bytes; a longer line is reported, never held whole


def _batches(f: Any, digest: Any, on_long: Callable[[int, int], None]) -> Any:
    """Lines of the file (each with its newline) in batches of about _BATCH_BYTES, reading
    fixed-size blocks: a line over MAX_LINE_BYTES (a 2 GB file without a newline) is passed
    to `on_long(line number, bytes)` and skipped, so memory stays bounded whatever the file."""
    carry = b""
    skipping = 0  # bytes of an over-long line read so far (0: not skipping)
    lineno = 0
    while True:
        block = f.read(_BATCH_BYTES)
        if not block:
            break
        digest.update(block)
        if skipping:
            cut = block.find(b"\n")
            if cut < 0:
                skipping += len(block)
                continue
            lineno += 1
            on_long(lineno, skipping + cut + 1)
            skipping = 0
            block = block[cut + 1 :]
        data = carry + block
        cut = data.rfind(b"\n")
        if cut < 0:
            carry = data
            if len(carry) > MAX_LINE_BYTES:
                skipping, carry = len(carry), b""
            continue
        lines = data[: cut + 1].splitlines(keepends=True)
        carry = data[cut + 1 :]
        if len(carry) > MAX_LINE_BYTES:
            skipping, carry = len(carry), b""
        yield lineno, lines
        lineno += len(lines)
    if skipping:
        on_long(lineno + 1, skipping)
        lineno += 1
    elif carry:
        yield lineno, [carry]


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise _DuplicateKey(dup)
    return obj


class _DuplicateKey(GharuntimeError, ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")


def _parse_batch(batch: list[bytes], buffer: bytes, keys_per_line: int = 0) -> list[Any] | None:
    """Every line of `batch` parsed in one call, or None when the batch needs the line-by-line
    path (a problem, blank or nested lines). The checks make sure the array parse cannot join
    or split lines: each line is one `{...}` with no other brace or bracket (JSON strings never
    hold a raw newline)."""
    n = len(batch)
    # every line holds exactly the expected number of `"key":` tokens, so no object repeats a
    # key (json.loads would keep the last silently); otherwise the line-by-line path says which
    if keys_per_line and buffer.count(b'":') != n * keys_per_line:
        return None
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
    except (ValueError, RecursionError):
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
            objs.append(json.loads(raw, object_pairs_hook=_no_duplicate_keys))
            numbers.append(i)
        except _DuplicateKey as exc:
            log.add("duplicate_key", where, f"{exc}; which value is meant?", i)
        except RecursionError:
            log.add("not_json", where, "not JSON a record can be: nested too deeply", i)
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
    row_lines: IntArray  # per row of the split, the line its record came from (0: none)

    @property
    def missing(self) -> int:
        return int(self.present.shape[0] - np.count_nonzero(self.present))


def _is_unicode(text: str) -> bool:
    """False for a string holding lone surrogates (JSON's "\\ud800"), which no id can be."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_TARGET_LIKE: Final = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?:s|bytes|seconds|sec)$")


def _looks_like_target(key: str) -> bool:
    """A key that names a target the contract does not have (`wait_s`, `duration`, `queue_S`):
    one of its unit suffixes, or close to a target's name."""
    if key in TARGETS or key == "id":
        return False
    return bool(_TARGET_LIKE.match(key) or difflib.get_close_matches(key, TARGETS, n=1, cutoff=0.6))


def _describe(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read_submission(
    path: Path,
    ids: pl.Series,
    targets: tuple[str, ...],
    track: str,
    log: ProblemLog,
    *,
    allow_partial: bool = False,
    progress: Progress | None = None,
    left_out: Mapping[str, str] | None = None,
    sidecar: bool = False,
) -> ParsedSubmission:
    """Parse `path` against the split's `ids` (in row order) for `targets`: the track's
    targets the dataset holds (gharuntime.targets); a record may also give those `left_out`
    (target -> why), which are not read. `sidecar`: the fields are a quantile sidecar's
    (`queue_s_p90`), reported as fields rather than targets.

    Problems go to `log`; the predictions are only meaningful when none were added. Blank lines
    are ignored. Records of the split with no line are a problem unless `allow_partial`. A
    target missing from a record, or a key the contract does not know, is reported with its
    line, or once for the whole file where every record has the same problem.
    The file is read in batches of lines; a batch of well-formed lines is parsed and checked
    with whole-batch operations, any other batch line by line, reporting each problem. Ids are
    matched to the split's rows at the end, in one join.
    """
    reader = _Reader(str(path), targets, track, log, left_out or {}, sidecar)
    digest = hashlib.sha256()
    total_bytes = path.stat().st_size
    done_bytes = 0
    total_lines = 0

    def on_long(line: int, size: int) -> None:
        nonlocal total_lines
        total_lines = max(total_lines, line)
        log.add(
            "line_too_long",
            reader.where,
            f"a line of {size:,} bytes; a record is one short line (at most "
            f"{MAX_LINE_BYTES:,} bytes)",
            line,
        )

    with open_regular(path) as f:
        for lineno, batch in _batches(f, digest, on_long):
            total_lines = max(total_lines, lineno + len(batch))
            buffer = b"".join(batch)
            done_bytes += len(buffer)
            objs = _parse_batch(batch, buffer, len(targets) + 1)
            if objs is None or not reader.whole_batch(objs, lineno + 1):
                numbers, objs = (
                    _parse_lines(batch, lineno, log, reader.where)
                    if objs is None
                    else (list(range(lineno + 1, lineno + 1 + len(objs))), objs)
                )
                reader.line_by_line(numbers, objs)
            if progress:
                progress("reading " + path.name, done_bytes, total_bytes)
    reader.report_keys()
    rows, values, row_line = reader.resolve(ids)
    n = ids.len()
    present = np.zeros(n, dtype=bool)
    present[rows] = True
    row_lines = np.zeros(n, dtype=np.int64)
    row_lines[rows] = row_line
    predictions = {t: np.full(n, np.nan) for t in targets}
    for t in targets:
        predictions[t][rows] = values[t]
    records = int(rows.shape[0])
    missing = n - records
    if missing and not allow_partial:
        examples = ids.filter(pl.Series(~present)).head(5).to_list() if records else []
        log.add(
            "missing_records",
            reader.where,
            f"{missing} of {n} records of the split have no prediction"
            + (f" (e.g. ids {', '.join(examples)})" if examples else "")
            + "; predict every record, or pass --allow-partial to score them as failures",
        )
    return ParsedSubmission(
        path=path,
        sha256=digest.hexdigest(),
        lines=total_lines,
        records=records,
        predictions=predictions,
        present=present,
        row_lines=row_lines,
    )


class _Reader:
    """The checks, and what the lines with a string id gave: the id, the line and the values
    (NaN where a value is bad), a batch at a time."""

    def __init__(
        self,
        where: str,
        targets: tuple[str, ...],
        track: str,
        log: ProblemLog,
        left_out: Mapping[str, str] | None = None,
        sidecar: bool = False,
    ) -> None:
        self.where = where
        self.targets = targets
        self.track = track
        self.log = log
        self.left_out = dict(left_out or {})
        self.sidecar = sidecar
        self.allowed = {"id", *targets}
        self.objects = 0  # lines holding an object
        # (kind, key) -> lines with that problem (the first KEEP_PER_KIND) and their count:
        # reported at the end, once for the file when every object line has it
        self.key_lines: dict[tuple[str, str], tuple[list[int], int]] = {}
        self.id_chunks: list[pl.Series] = []
        self.line_chunks: list[IntArray] = []
        self.value_chunks: dict[str, list[FloatArray]] = {t: [] for t in targets}

    def whole_batch(self, objs: list[Any], first: int) -> bool:
        """Take a batch in whole-batch operations when every line is a clean record; False
        (and nothing taken) when any is not, so the line-by-line path can say which."""
        if set(map(type, objs)) != {dict} or set(map(len, objs)) != {len(self.targets) + 1}:
            return False
        try:  # C-level loops; a missing key sends the batch down the line-by-line path
            ids = list(map(itemgetter("id"), objs))
            columns = {t: list(map(itemgetter(t), objs)) for t in self.targets}
        except KeyError:
            return False
        if set(map(type, ids)) != {str} or not all(map(str.isascii, ids)):
            return False  # the line-by-line path checks non-ASCII ids for lone surrogates
        values = {}
        for t, column in columns.items():
            if not set(map(type, column)) <= {float, int}:
                return False
            try:
                array = np.asarray(column, dtype=np.float64)
            except OverflowError:
                return False
            if not (np.isfinite(array).all() and (array >= 0).all()):
                return False
            values[t] = array
        self._take(ids, np.arange(first, first + len(objs), dtype=np.int64), values)
        self.objects += len(objs)
        return True

    def _take(self, ids: list[str], lines: IntArray, values: dict[str, FloatArray]) -> None:
        self.id_chunks.append(pl.Series("id", ids, dtype=pl.String))
        self.line_chunks.append(lines)
        for t, array in values.items():
            self.value_chunks[t].append(array)

    def line_by_line(self, numbers: Iterable[int], objs: list[Any]) -> None:
        """Check each object, reporting every problem with its line."""
        where, log, targets = self.where, self.log, self.targets
        isfinite = math.isfinite
        ids: list[str] = []
        lines: list[int] = []
        values: dict[str, list[float]] = {t: [] for t in targets}
        for ln, obj in zip(numbers, objs):  # noqa: B905 (equal by construction)
            if type(obj) is not dict:
                log.add(
                    "not_object",
                    where,
                    f"expected an object like {{'id': ..., {targets[0]!r}: ...}}, got {type(obj).__name__}",
                    ln,
                )
                continue
            self.objects += 1
            rid: Any = obj.get("id")
            keep = type(rid) is str and _is_unicode(rid)
            if keep:
                ids.append(rid)
                lines.append(ln)
            else:
                what = (
                    "no 'id'"
                    if rid is None and "id" not in obj
                    else f"id {ascii(rid)[:60]} is not valid Unicode (a lone surrogate)"
                    if type(rid) is str
                    else f"id {_describe(rid)}"
                )
                log.add("bad_id", where, f"{what}; every record needs its id as a string", ln)
            if len(obj) != len(targets) + 1 or not self.allowed.issuperset(obj):
                self._fields(obj, ln)
            for target in targets:
                value: Any = obj.get(target)
                kind = type(value)
                too_large = False
                try:
                    if (kind is float or kind is int) and isfinite(value) and value >= 0:
                        if keep:
                            values[target].append(value)
                        continue
                except OverflowError:  # an integer too large for a float
                    too_large = True
                if keep:
                    values[target].append(math.nan)
                if value is None and target not in obj and not self.sidecar:
                    self._key_problem("missing_target", target, ln)
                    continue
                if value is None:
                    problem = f"no {target!r}" if target not in obj else f"{target!r} is null"
                elif too_large:
                    problem = f"{target!r} is too large for a number"
                elif kind is float or kind is int:
                    problem = (
                        f"{target!r} is {_describe(value)}; predictions must be finite"
                        if not isfinite(value)
                        else f"{target!r} is negative ({value!r})"
                    )
                else:
                    problem = f"{target!r} is not a number: {_describe(value)}"
                log.add("bad_value", where, problem, ln)
        self._take(
            ids,
            np.asarray(lines, dtype=np.int64),
            {t: np.asarray(v, dtype=np.float64) for t, v in values.items()},
        )

    def _key_problem(self, kind: str, key: str, line: int) -> None:
        lines, count = self.key_lines.get((kind, key), ([], 0))
        if len(lines) < KEEP_PER_KIND:
            lines.append(line)
        self.key_lines[(kind, key)] = (lines, count + 1)

    def _key_message(self, kind: str, key: str) -> str:
        holds = ", ".join(self.targets)
        if kind == "missing_target":
            return (
                f"no {key!r}, a target of track {self.track!r} that this dataset holds; every "
                f"record gives 'id' and {holds}"
            )
        close = difflib.get_close_matches(key, [*TARGETS, "id"], n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return (
            f"{key!r} is not a target the contract knows ({', '.join(TARGETS)}){hint}; track "
            f"{self.track!r} predicts {holds} on this dataset: rename the key or drop it"
        )

    def report_keys(self) -> None:
        """The problems of missing targets and unknown target names: once for the file where
        every object line has it (with the count), else per line."""
        for (kind, key), (lines, count) in self.key_lines.items():
            message = self._key_message(kind, key)
            if count == self.objects and count > 1:
                self.log.add(
                    kind, self.where, f"on all {count:,} lines: {message}", lines[0], n=count
                )
                continue
            for line in lines:
                self.log.add(kind, self.where, message, line)
            if count > len(lines):
                self.log.add_count(kind, count - len(lines))

    def _left_out_level(self, key: str) -> bool:
        """A sidecar's level of a left-out target (`log_bytes_p90`), which is not read."""
        return any(key.startswith(t + "_") for t in self.left_out)

    def _fields(self, obj: dict[str, Any], ln: int) -> None:
        for key in obj:
            if key in self.allowed or (key in self.left_out and not self.sidecar):
                continue
            if self.sidecar and self._left_out_level(key):
                continue
            if not self.sidecar and _looks_like_target(key):
                self._key_problem("unknown_target", key, ln)
                continue
            if key in TARGETS:
                self.log.add(
                    "target_not_in_track",
                    self.where,
                    f"{key!r} is not a target of track {self.track!r}, which predicts "
                    f"{', '.join(self.targets)}",
                    ln,
                )
            else:
                self.log.add(
                    "unknown_field",
                    self.where,
                    f"unknown field {key!r}; a record holds 'id' and "
                    f"{', '.join(map(repr, self.targets))}",
                    ln,
                )

    def resolve(self, split_ids: pl.Series) -> tuple[IntArray, dict[str, FloatArray], IntArray]:
        """Match every id read to its row of the split (one join), reporting unknown and
        repeated ids with their lines; the rows, values and lines of each first occurrence."""
        ids = pl.concat(self.id_chunks) if self.id_chunks else pl.Series("id", [], dtype=pl.String)
        lines = np.concatenate(self.line_chunks) if self.line_chunks else np.empty(0, np.int64)
        table = pl.DataFrame({"id": split_ids}).with_row_index("row")
        row = (
            pl.DataFrame({"id": ids})
            .join(table, on="id", how="left", maintain_order="left")["row"]
            .cast(pl.Int64)
            .fill_null(-1)
            .to_numpy()
        )
        unknown = np.flatnonzero(row < 0)
        for k, i in enumerate(unknown):
            if k == KEEP_UNKNOWN_IDS:
                self.log.add_count("unknown_id", unknown.shape[0] - k)
                break
            self.log.add(
                "unknown_id",
                self.where,
                f"id {ids[int(i)]!r} is not a record of this split",
                int(lines[i]),
            )
        known = np.flatnonzero(row >= 0)
        if np.bincount(row[known], minlength=1).max(initial=0) <= 1:
            firsts = known  # no id twice (the usual case): no sort needed to find the firsts
        else:
            _, first = np.unique(row[known], return_index=True)
            firsts = known[np.sort(first)]
        if firsts.shape[0] < known.shape[0]:
            first_line = np.zeros(split_ids.len(), dtype=np.int64)
            first_line[row[firsts]] = lines[firsts]
            repeats = np.setdiff1d(known, firsts, assume_unique=True)
            for k, i in enumerate(repeats):
                if k == KEEP_PER_KIND:
                    self.log.add_count("duplicate_id", repeats.shape[0] - k)
                    break
                self.log.add(
                    "duplicate_id",
                    self.where,
                    f"id {ids[int(i)]!r} again (first on line {int(first_line[row[i]])})",
                    int(lines[i]),
                )
        values = {
            t: (np.concatenate(chunks) if chunks else np.empty(0))[firsts]
            for t, chunks in self.value_chunks.items()
        }
        return row[firsts], values, lines[firsts]
