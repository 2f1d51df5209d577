"""The results registry: `results/<dataset>/<config>-<track>-<method>.json`, each one
`gharuntime eval` result (result_version 2), checked before anything is ranked or written.

A *table* is one (dataset, config, track). Within a table every result must name the same dataset
revision, be scored on the same records and with the same bootstrap resamples (seed, count and
repository set), so that methods can be compared pairwise, resample by resample.

A *transfer table* holds results whose methods were trained on another dataset than the one they
are scored on: each result names its training dataset under `trained_on` (name, content
revision, config and split), is filed as
`results/<dataset>/transfer-<training dataset>-<config>-<track>-<method>.json`, and is ranked
only with results trained on the same training dataset: one table per (dataset, config, track,
training dataset), and within it one training revision and split.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, Final

import jsonschema

from gharuntime.errors import GharuntimeError
from gharuntime.leaderboard.values import shape_problems, value_problems
from gharuntime.paths import write_atomic
from gharuntime.readfile import InputFileError, parse_json, read_text

__all__ = [
    "REPRODUCED_TABLE",
    "RESULT_VERSION",
    "Entry",
    "LeaderboardError",
    "Table",
    "add_result",
    "check_tables",
    "load_result",
    "read_result",
    "result_sha256",
    "scan",
    "table_name",
]

RESULT_VERSION: Final = 2
"""The result version the leaderboard reads (`gharuntime.eval.RESULT_VERSION`)."""

_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,79}", re.ASCII)  # fullmatch only

MAX_RESULT_BYTES: Final = 64 * 2**20
"""A result of 1,000 resamples and a 500-record sample is about 150 kB."""


class LeaderboardError(GharuntimeError):
    """Results that cannot be filed or ranked; `problems` names the file of each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@cache
def _schema() -> dict[str, Any]:
    text = resources.files("gharuntime.leaderboard").joinpath("result.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def _dataset_name(d: dict[str, Any]) -> str:
    """A dataset's name: a local folder's name, or a Hub id with '/' as '--'."""
    name = PurePosixPath(d["id"].replace("\\", "/")).name if d["kind"] == "local" else d["id"]
    return str(name).replace("/", "--")


@dataclass(frozen=True)
class Entry:
    """One checked result file; `sha256`: of the text checked (`result_sha256`), which a
    reproduce table names to vouch for exactly this content."""

    path: Path
    result: dict[str, Any]
    sha256: str = ""

    @property
    def dataset(self) -> str:
        """The scored dataset's name: a local folder's name, or a Hub id with '/' as '--'."""
        return _dataset_name(self.result["dataset"])

    @property
    def trained_on(self) -> str:
        """The training dataset's name for a transfer result (its `trained_on`); "" for a
        result trained on its own dataset's train split."""
        origin = self.result.get("trained_on")
        return _dataset_name(origin) if isinstance(origin, dict) else ""

    @property
    def config(self) -> str:
        return str(self.result["dataset"]["config"])

    @property
    def track(self) -> str:
        return str(self.result["track"])

    @property
    def method(self) -> str:
        return str(self.result["meta"]["method"])

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(dataset, config, track, training dataset): the table it belongs to."""
        return (self.dataset, self.config, self.track, self.trained_on)

    @property
    def table_name(self) -> str:
        return table_name(self.key)

    @property
    def canonical(self) -> PurePosixPath:
        """Where the result belongs, relative to the results folder."""
        if self.trained_on:
            name = f"transfer-{self.trained_on}-{self.config}-{self.track}-{self.method}.json"
            return PurePosixPath(self.dataset, name)
        return PurePosixPath(self.dataset, f"{self.config}-{self.track}-{self.method}.json")

    @property
    def partial(self) -> bool:
        return int(self.result["submission"]["missing"]) > 0


def table_name(key: tuple[str, str, str, str]) -> str:
    """`dataset/config/track`, and `trained on X` for a transfer table."""
    dataset, config, track, trained_on = key
    return f"{dataset}/{config}/{track}" + (f" trained on {trained_on}" if trained_on else "")


@dataclass(frozen=True)
class Table:
    """The results of one (dataset, config, track), or of one transfer table: the same, for
    methods trained on the dataset `trained_on` ("" when trained on `dataset` itself)."""

    dataset: str
    config: str
    track: str
    entries: tuple[Entry, ...]
    trained_on: str = ""

    @property
    def name(self) -> str:
        return table_name((self.dataset, self.config, self.track, self.trained_on))


def _check_document(doc: Any, where: str) -> list[str]:
    if not isinstance(doc, dict):
        return [f"{where}: not a result (a JSON object written by `gharuntime eval --out`)"]
    version = doc.get("result_version")
    if version != RESULT_VERSION:
        return [
            f"{where}: result_version {version!r}, but the leaderboard reads version "
            f"{RESULT_VERSION} (per-resample values, plot data); score the submission again "
            "with this gharuntime's `gharuntime eval --out`"
        ]
    validator = jsonschema.Draft202012Validator(_schema())
    problems = []
    for error in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.path))):
        at = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        problems.append(f"{where}: {at}: {error.message}")
    if problems:
        return problems
    if doc["meta"]["track"] != doc["track"]:
        problems.append(f"{where}: meta.track {doc['meta']['track']!r} ≠ track {doc['track']!r}")
    resamples = doc["bootstrap"]["resamples"]
    for target, metrics in doc["bootstrap"]["per_resample"].items():
        for metric, values in metrics.items():
            if len(values) != resamples:
                problems.append(
                    f"{where}: bootstrap/per_resample/{target}/{metric} has {len(values)} "
                    f"values for {resamples} resamples"
                )
    return problems + _multi_problems(doc, where)


def _multi_problems(doc: dict[str, Any], where: str) -> list[str]:
    """A multi result carries its targets and summary, and they agree with its blocks: a
    block per scored target, the summary over those, a value per resample."""
    if doc["track"] != "multi":
        return []
    if "summary" not in doc or "targets" not in doc:
        return [
            f"{where}: a multi result without `targets` and `summary` (scored before eval "
            "scored multi per target); score the submission again with this gharuntime's "
            "`gharuntime eval --out`"
        ]
    scored = list(doc["targets"]["scored"])
    problems = []
    for block in ("metrics", "counts/scored", "bootstrap/per_resample"):
        node = doc
        for part in block.split("/"):
            node = node[part]
        if sorted(node) != sorted(scored):
            problems.append(
                f"{where}: {block} holds {', '.join(sorted(node))}, but targets/scored names "
                f"{', '.join(scored)}; a result holds one block per scored target"
            )
    left = sorted(set(scored) & set(doc["targets"]["left_out"]))
    if left:
        problems.append(f"{where}: targets/left_out names scored targets: {', '.join(left)}")
    if list(doc["summary"]["targets"]) != scored:
        problems.append(
            f"{where}: summary/targets {doc['summary']['targets']} ≠ targets/scored {scored}"
        )
    resamples = doc["bootstrap"]["resamples"]
    for metric, values in doc["summary"]["per_resample"].items():
        if len(values) != resamples:
            problems.append(
                f"{where}: summary/per_resample/{metric} has {len(values)} values for "
                f"{resamples} resamples"
            )
    return problems


def read_result(path: Path) -> tuple[Entry, str]:
    """Read and check one result file: (the entry, the text read). Raises LeaderboardError
    naming the file. The file is read once, capped, and only if it is a regular file; every
    number and string it holds is checked (`values`) before anything reads it as a result."""
    where = str(path)
    try:
        text = read_text(path, MAX_RESULT_BYTES)
        doc = parse_json(text, where, max_depth=16)  # a result nests 7 levels deep
    except InputFileError as exc:
        raise LeaderboardError(
            [f"{exc}; a result is the file `gharuntime eval --out` writes"]
        ) from None
    problems = value_problems(doc, where) or _check_document(doc, where)
    if not problems:
        problems = shape_problems(doc, where)
    if problems:
        raise LeaderboardError(problems)
    return _named(Entry(path, doc, result_sha256(text)), doc, where), text


def result_sha256(text: str) -> str:
    """The sha256 of a result's text as read (UTF-8, a byte-order mark dropped): the bytes
    `leaderboard add` files."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_result(path: Path) -> Entry:
    """Read and check one result file; raises LeaderboardError naming the file."""
    return read_result(path)[0]


def _named(entry: Entry, doc: dict[str, Any], where: str) -> Entry:
    if not _NAME.fullmatch(entry.dataset):
        raise LeaderboardError([f"{where}: dataset name {entry.dataset!r} cannot name a folder"])
    if "trained_on" in doc:
        if not _NAME.fullmatch(entry.trained_on):
            raise LeaderboardError(
                [f"{where}: trained_on name {entry.trained_on!r} cannot name a result file"]
            )
        if entry.trained_on == entry.dataset:
            raise LeaderboardError(
                [
                    f"{where}: trained_on names {entry.trained_on!r}, the dataset it was scored "
                    "on; a method trained on its dataset's own train split belongs in the plain "
                    "table: drop `trained_on`"
                ]
            )
    return entry


def _fingerprint(entry: Entry) -> dict[str, Any]:
    d, b = entry.result["dataset"], entry.result["bootstrap"]
    t = entry.result.get("trained_on")
    return {
        "dataset revision": d["revision"],
        "split": d["split"],
        "records": (d["rows"], d["record_ids_sha256"]),
        "bootstrap resamples": (b["seed"], b["resamples"], b["repo_ids_sha256"]),
        "targets": tuple(entry.result.get("targets", {}).get("scored") or entry.result["metrics"]),
        "training dataset": (
            (t["revision"], t["config"], t["split"], t["rows"]) if isinstance(t, dict) else None
        ),
    }


_FIX: Final = {
    "dataset revision": "score every method on one revision of the dataset (or keep each "
    "revision's results in their own results folder)",
    "split": "score every method on the same split",
    "records": "score every method on the same records of the same dataset revision",
    "bootstrap resamples": "score with the same --resamples and --bootstrap-seed "
    "(the defaults, 1000 and 0)",
    "targets": "score every method of a multi table with one gharuntime on the same dataset "
    "(the targets it holds are scored, the others left out), so their summaries compare",
    "training dataset": "train every method of a transfer table on one revision and split of "
    "its training dataset (or keep each training dataset's results in their own results folder)",
}


def _describe(field: str, value: Any) -> str:
    if field == "records":
        return f"{value[0]:,} records (ids sha256 {value[1][:12]})"
    if field == "bootstrap resamples":
        return f"seed {value[0]}, {value[1]:,} resamples, repositories sha256 {value[2][:12]}"
    if field == "targets":
        return ", ".join(value)
    if field == "training dataset":
        return (
            f"revision {value[0][:12]}, {value[1]}/{value[2]} split, {value[3]:,} records"
            if value is not None
            else "none"
        )
    return str(value)


def check_tables(entries: Iterable[Entry]) -> tuple[list[Table], list[str]]:
    """Group entries into tables; the problems of duplicates and of tables whose results
    cannot be compared (each problem names both files)."""
    by_key: dict[tuple[str, str, str, str], list[Entry]] = {}
    for entry in entries:
        by_key.setdefault(entry.key, []).append(entry)
    problems: list[str] = []
    tables = []
    for key in sorted(by_key):
        group = sorted(by_key[key], key=lambda e: (e.method, str(e.path)))
        seen: dict[str, Entry] = {}
        for entry in group:
            if entry.method in seen:
                problems.append(
                    f"{entry.path}: a second result for method {entry.method!r} in "
                    f"{table_name(key)} (the first is {seen[entry.method].path}); keep one"
                )
            else:
                seen[entry.method] = entry
        first = group[0]
        for entry in group[1:]:
            a, b = _fingerprint(first), _fingerprint(entry)
            for field in a:
                if a[field] != b[field]:
                    problems.append(
                        f"{entry.path}: {field} {_describe(field, b[field])} differs from "
                        f"{first.path} ({_describe(field, a[field])}) in table {table_name(key)}; "
                        f"{_FIX[field]}"
                    )
        dataset, config, track, trained_on = key
        tables.append(Table(dataset, config, track, tuple(seen.values()), trained_on))
    return tables, problems


REPRODUCED_TABLE = "reproduced.json"
"""The table `gharuntime leaderboard reproduce --all DIR` writes into DIR (with its .md)."""


def scan(results: Path) -> list[Table]:
    """Every result under `results` (`<dataset>/*.json`), checked, as tables (transfer tables
    included); raises LeaderboardError listing every problem."""
    if not results.is_dir():
        raise LeaderboardError([f"{results}: no such results folder"])
    entries: list[Entry] = []
    problems: list[str] = []
    for path in sorted(results.glob("*/*.json")):
        if path.name == REPRODUCED_TABLE:  # `leaderboard reproduce --all`'s table, not a result
            continue
        try:
            entry = load_result(path)
        except LeaderboardError as exc:
            problems.extend(exc.problems)
            continue
        rel = PurePosixPath(path.relative_to(results).as_posix())
        if rel != entry.canonical:
            problems.append(
                f"{path}: holds {entry.method!r} on {entry.table_name}, whose place is "
                f"{results / entry.canonical}; file results with `gharuntime leaderboard add`"
            )
        entries.append(entry)
    tables, table_problems = check_tables(entries)
    problems.extend(table_problems)
    if problems:
        raise LeaderboardError(problems)
    if not tables:
        raise LeaderboardError(
            [f"{results}: no results (expected {results}/<dataset>/<config>-<track>-<method>.json)"]
        )
    return tables


def add_result(
    result: Path, results: Path, *, allow_partial: bool = False, replace: bool = False
) -> Path:
    """Check `result` and file it under its canonical name in `results`; returns the path.

    Refuses (LeaderboardError, nothing written) a result that is not valid, a partial
    submission unless `allow_partial`, a method the table already holds unless `replace`, a
    result that cannot be compared with the table's others (another dataset revision, other
    records or resamples, another training revision or split in a transfer table), and one
    whose file name a result of another table already holds."""
    entry, text = read_result(result)
    where = str(result)
    if entry.partial and not allow_partial:
        missing = entry.result["submission"]["missing"]
        raise LeaderboardError(
            [
                f"{where}: a partial submission ({missing:,} records without a prediction, "
                "scored as failures); file it with --allow-partial to say so (the table marks it)"
            ]
        )
    target = results / entry.canonical
    others: list[Entry] = []
    folder = results / entry.dataset
    if (target.exists() or target.is_symlink()) and not target.is_file():
        raise LeaderboardError(
            [f"{where}: its place {target} exists and is not a regular file; nothing replaced"]
        )
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            other = load_result(path)
        except LeaderboardError as exc:
            if path.name == target.name and not replace:
                raise LeaderboardError(
                    [
                        f"{where}: its place {target} holds a result that cannot be read "
                        f"({exc.problems[0]}); pass --replace to replace it"
                    ]
                ) from None
            continue  # `gharuntime leaderboard` reports it; it does not block filing
        if other.key != entry.key:
            if path.name == target.name:
                raise LeaderboardError(
                    [
                        f"{where}: its place {target} holds a result of another table "
                        f"({other.method!r} on {other.table_name}); nothing replaced"
                    ]
                )
            continue
        if other.method == entry.method:
            if not replace:
                raise LeaderboardError(
                    [
                        f"{where}: the table {entry.table_name} already holds method "
                        f"{entry.method!r} ({path}); pass --replace to replace it"
                    ]
                )
            continue
        others.append(other)
    if others:
        _, problems = check_tables([*others[:1], entry])
        if problems:
            raise LeaderboardError(problems)
    write_atomic(target, text, mode=0o644)  # the text eval wrote, as it was read and checked
    return target
