"""The table `gharuntime leaderboard reproduce --all` writes (TABLE.md and TABLE.json), and
its reading by `gharuntime leaderboard`.

A row vouches for one result file's exact content: it names the file relative to the results
folder and the sha256 of the text that was checked and re-run. The leaderboard counts a row
only while the file still holds that text, so a result replaced after its re-run (`leaderboard
add --replace`) is "changed since", never "reproduced". The two files are written as a pair:
both rendered and checked first (strict JSON, no NaN), then each staged beside its place and
renamed; the JSON names the Markdown's sha256, so a pair that does not match is refused."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import jsonschema

from gharuntime.jsonout import strict_dumps
from gharuntime.leaderboard.compare import Comparison, Section, Status, beyond, sections
from gharuntime.leaderboard.registry import REPRODUCED_TABLE, Entry
from gharuntime.markdown import md as escape
from gharuntime.paths import is_within, make_temp_file, output_file_problem
from gharuntime.readfile import InputFileError, parse_json, read_bytes, read_text
from gharuntime.version import __version__

__all__ = [
    "TABLE_VERSION",
    "AllRun",
    "Reproduction",
    "Skipped",
    "TableCounts",
    "read_table",
    "table_problems",
    "write_table",
]

TABLE_VERSION: Final = 2
"""2: rows name their file relative to the results folder and its sha256; refused rows."""
MAX_TABLE_BYTES: Final = 16 * 2**20
_HEADING: Final = "# Reproduced results"
_SHOWN: Final = 20  # rows past the tolerance kept in the JSON, per result


@dataclass
class Reproduction:
    """What re-running one result gave."""

    result: Path
    method: str
    status: Status
    tolerance: float
    rows: list[Comparison] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    sha256: str = ""

    @property
    def reproduced(self) -> bool:
        return self.status != "differs"

    @property
    def metric_rows(self) -> list[Comparison]:
        """The rows of the `metrics` block (value and interval of each metric)."""
        return [row for row in self.rows if row.section == "metrics"]

    @property
    def beyond(self) -> list[Comparison]:
        """The rows past the method's tolerance."""
        return [row for row in self.rows if beyond(row, self.tolerance)]

    @property
    def sections(self) -> list[Section]:
        return sections(self.rows, self.tolerance)

    def verdict(self) -> str:
        """The one closing line."""
        if self.status == "exact":
            return "reproduced exactly"
        if self.status == "within":
            return f"reproduced within {self.method}'s stated tolerance ({self.tolerance:g})"
        why = "; ".join(self.reasons) or "no difference in commit, dataset or version recorded"
        return f"not reproduced: {why}"

    def to_json(self) -> dict[str, Any]:
        return {
            "sha256": self.sha256,
            "method": self.method,
            "status": self.status,
            "tolerance": self.tolerance,
            "verdict": self.verdict(),
            "reasons": self.reasons,
            "metrics": [_row(row) for row in self.metric_rows],
            "sections": [
                {
                    "section": s.name,
                    "numbers": s.numbers,
                    "largest_difference": s.largest,
                    "beyond_tolerance": s.beyond,
                }
                for s in self.sections
            ],
            "beyond_tolerance": [_row(row) for row in self.beyond[:_SHOWN]],
        }


def _row(row: Comparison) -> dict[str, Any]:
    return {
        "metric": row.metric,
        "committed": row.committed,
        "reproduced": row.reproduced,
        "difference": row.difference,
    }


@dataclass(frozen=True)
class Skipped:
    """A result not re-run: why, and the sha256 of its checked text (None when it could not
    be read as a result)."""

    result: Path
    reason: str
    sha256: str | None = None


@dataclass
class AllRun:
    """What `reproduce --all FOLDER` did with each result under FOLDER: re-run (`done`), not
    run here (`not_run`: its dataset not at hand, a transfer result, ...) or `refused` (not a
    valid result, or its re-run failed)."""

    folder: Path
    done: list[Reproduction] = field(default_factory=list)
    not_run: list[Skipped] = field(default_factory=list)
    refused: list[Skipped] = field(default_factory=list)

    @property
    def failed(self) -> list[Reproduction]:
        return [item for item in self.done if not item.reproduced]


def _relative(path: Path, folder: Path) -> str:
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return path.name


def _markdown(run: AllRun) -> str:
    lines = [
        _HEADING,
        "",
        f"Re-run by `gharuntime leaderboard reproduce --all` with gharuntime {__version__}. "
        "Every scored number of a result is compared: its metrics, per-resample values, "
        "interval and calibration numbers, breakdowns and counts.",
        "",
        "| result | method | verdict | numbers compared | largest difference |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for item in run.done:
        worst = max((s.largest for s in item.sections), default=0.0)
        lines.append(
            f"| {escape(_relative(item.result, run.folder))} | {escape(item.method)} "
            f"| {escape(item.verdict())} | {len(item.rows):,} | {worst:.3g} |"
        )
    for skipped, label in [(s, "not run") for s in run.not_run] + [
        (s, "refused") for s in run.refused
    ]:
        lines.append(
            f"| {escape(_relative(skipped.result, run.folder))} | "
            f"| {label}: {escape(skipped.reason)} | | |"
        )
    return "\n".join(lines) + "\n"


def _skipped(items: list[Skipped], folder: Path) -> list[dict[str, Any]]:
    return [
        {
            "file": _relative(s.result, folder),
            "sha256": s.sha256,
            "reason": s.reason,
        }
        for s in items
    ]


def _stage(path: Path, text: str) -> Path:
    """`text` in a new temporary sibling of `path` (flushed to disk), for a rename into place."""
    fd, tmp = make_temp_file(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def write_table(run: AllRun, out: Path) -> tuple[Path, Path]:
    """OUT.md and OUT.json: one row per result, for the leaderboard page to link. Both are
    rendered and checked before either is written (the JSON strict: a NaN is null, never
    `NaN`), then staged beside their places and renamed, the Markdown first: a failure leaves
    both old files, or a new Markdown that the old JSON does not vouch for (refused)."""
    md, js = out.with_suffix(".md"), out.with_suffix(".json")
    markdown = _markdown(run)
    folder = Path(os.path.relpath(run.folder.resolve(), js.parent.resolve())).as_posix()
    doc = {
        "table_version": TABLE_VERSION,
        "gharuntime_version": __version__,
        "folder": folder,
        "markdown_sha256": hashlib.sha256(markdown.encode("utf-8")).hexdigest(),
        "reproduced": [
            {"file": _relative(item.result, run.folder), **item.to_json()} for item in run.done
        ],
        "not_run": _skipped(run.not_run, run.folder),
        "refused": _skipped(run.refused, run.folder),
    }
    text = strict_dumps(doc, indent=2, ensure_ascii=False) + "\n"
    _check(parse_json(text, js), js)  # what the leaderboard will read back
    md.parent.mkdir(parents=True, exist_ok=True)
    staged: list[Path] = []
    try:
        staged = [_stage(md, markdown), _stage(js, text)]
        os.replace(staged[0], md)
        os.replace(staged[1], js)
    finally:
        for tmp in staged:
            tmp.unlink(missing_ok=True)
    return md, js


_ROW: Final = {
    "type": "object",
    "required": ["file", "sha256"],
    "properties": {"file": {"type": "string", "minLength": 1}},
}
TABLE_SCHEMA: Final = {
    "type": "object",
    "required": ["table_version", "folder", "markdown_sha256", "reproduced", "not_run", "refused"],
    "properties": {
        "table_version": {"const": TABLE_VERSION},
        "gharuntime_version": {"type": "string"},
        "folder": {"type": "string", "minLength": 1},
        "markdown_sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "reproduced": {
            "type": "array",
            "items": {
                **_ROW,
                "required": ["file", "sha256", "status"],
                "properties": {
                    "file": {"type": "string", "minLength": 1},
                    "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    "status": {"enum": ["exact", "within", "differs"]},
                },
            },
        },
        "not_run": {"type": "array", "items": _ROW},
        "refused": {"type": "array", "items": _ROW},
    },
}


def _check(doc: Any, where: Path) -> None:
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(TABLE_SCHEMA).iter_errors(doc)
    )
    if error is not None:
        at = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise InputFileError(f"{where}: {at}: {error.message}")


@dataclass(frozen=True)
class TableCounts:
    """What one table vouches for, counted over the plain results filed under its folder now:
    each result whose current text was re-run, by verdict; `changed`: results whose text is not
    the one re-run (replaced since, or added after the run)."""

    exact: int = 0
    within: int = 0
    differs: int = 0
    not_run: int = 0
    refused: int = 0
    changed: int = 0
    version: str = ""


def read_table(path: Path, entries: Iterable[Entry]) -> TableCounts:
    """The table at `path` (a `reproduced.json` under the results folder) checked (its shape,
    and its Markdown against the sha256 it names) and counted against `entries`, the results
    filed now: only those under the table's folder, and only rows whose sha256 is the file's.
    InputFileError when it is not a table of this version."""
    doc = parse_json(read_text(path, MAX_TABLE_BYTES), path)
    _check(doc, path)
    md = path.with_suffix(".md")
    if hashlib.sha256(read_bytes(md, MAX_TABLE_BYTES)).hexdigest() != doc["markdown_sha256"]:
        raise InputFileError(
            f"{md}: not the Markdown its table {path.name} was written with (half-written or "
            "edited since)"
        )
    base = path.parent / doc["folder"]
    rows: dict[Path, tuple[str, str | None]] = {}
    for kind in ("not_run", "refused", "reproduced"):
        for row in doc[kind]:
            status = row["status"] if kind == "reproduced" else kind
            rows[(base / row["file"]).resolve()] = (status, row.get("sha256"))
    counts: dict[str, int] = {}
    for entry in entries:
        if entry.trained_on or not is_within(entry.path, path.parent):
            continue  # `reproduce --all` re-runs plain results only
        status, sha = rows.get(entry.path.resolve(), ("changed", None))
        key = status if sha is not None and sha == entry.sha256 else "changed"
        counts[key] = counts.get(key, 0) + 1
    return TableCounts(**counts, version=str(doc.get("gharuntime_version", "")))


def _holds_table(md: Path, js: Path) -> list[str]:
    """The existing files at OUT.md / OUT.json that are not a reproduce table's (a README, a
    result): a table replaces only a table."""
    problems = []
    if md.is_file():
        try:
            first = read_text(md, MAX_TABLE_BYTES).split("\n", 1)[0]
        except InputFileError as exc:
            first = str(exc)
        if first != _HEADING:
            problems.append(f"{md} exists and is not a reproduce table; nothing replaced")
    if js.is_file():
        try:
            doc = parse_json(read_text(js, MAX_TABLE_BYTES), js)
        except InputFileError:
            doc = None
        if not (isinstance(doc, dict) and "reproduced" in doc and "not_run" in doc):
            problems.append(f"{js} exists and is not a reproduce table; nothing replaced")
    return problems


def table_problems(out: Path, folder: Path, inputs: Iterable[Path]) -> list[str]:
    """Why OUT.md / OUT.json must not be written by `reproduce --all FOLDER` (checked before
    anything is run): one is an input (a result, a dataset given), inside a dataset folder, not
    a regular file, or a file that is not a table; or the JSON lies in FOLDER under another
    name than `reproduced.json`, where it would be read as a result."""
    md, js = out.with_suffix(".md"), out.with_suffix(".json")
    given = list(inputs)
    problems = [p for p in (output_file_problem(f, given) for f in (md, js)) if p]
    if not problems and is_within(js, folder) and js.name != REPRODUCED_TABLE:
        problems.append(
            f"{js} lies in the results folder {folder}, where every .json is read as a result; "
            f"name the table {Path(REPRODUCED_TABLE).stem} (the default) or write it elsewhere"
        )
    if not problems:
        problems += _holds_table(md, js)
    return problems
