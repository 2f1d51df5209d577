"""`validate`: check a dataset folder against the contract and report every problem found, each
with the file (and row) at fault, rather than stopping at the first."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq
import yaml

from gharuntime.contract import COLUMNS, CONFIGS, DATASET_LAYOUT, SCHEMA_VERSION, SPLITS
from gharuntime.croissant import check_croissant
from gharuntime.folderfiles import folder_files, target_kind
from gharuntime.parquet import parquet_schema, read_parquet
from gharuntime.paths import contained
from gharuntime.progress import Progress, say
from gharuntime.readfile import InputFileError, read_bytes, read_json
from gharuntime.revision import dataset_revision, sha256_file

__all__ = ["Problem", "schema_version_problem", "validate_folder"]

_MAX_ROWS_REPORTED = 10


def schema_version_problem(manifest: dict[str, Any]) -> str | None:
    """Why a manifest's data contract is not the one this gharuntime reads (None when its major
    version is): the one check `validate` reports and every reader of a dataset's data refuses
    by (gharuntime.dataset.split_paths)."""
    version = manifest.get("schema_version")
    if isinstance(version, str) and version.split(".")[0] == SCHEMA_VERSION.split(".")[0]:
        return None
    shown = "missing" if version in (None, "") else ascii(str(version))[1:-1][:40]
    return f"schema_version {shown} is not compatible with this gharuntime's {SCHEMA_VERSION}"


@dataclass(frozen=True)
class Problem:
    """One way a dataset folder breaks the contract."""

    where: str  # file (relative to the dataset), with ':row N' when a row is at fault
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def validate_folder(root: Path, progress: Progress | None = None) -> list[Problem]:
    """Every way the folder at `root` breaks the contract (empty when it is valid); `progress`
    hears which file is being checked."""
    problems: list[Problem] = []

    def add(where: str, message: str) -> None:
        problems.append(Problem(where, message))

    if not root.is_dir():
        return [Problem(str(root), "not a folder")]
    leaving = folder_files(root).leaving
    if leaving:  # checked first, and alone: nothing outside the folder is read
        return [
            Problem(
                rel,
                f"a symlink to {target_kind(root / rel)} outside the dataset folder, which would be "
                "read and published with it; put the file itself in the folder (nothing else "
                "was checked)",
            )
            for rel in leaving
        ]
    manifest_path = root / DATASET_LAYOUT.manifest
    try:
        if not os.path.lexists(manifest_path):
            raise FileNotFoundError(manifest_path)
        manifest = read_json(manifest_path, 64 * 2**20)
        if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), list):
            raise ValueError("expected an object with a 'files' list")
    except FileNotFoundError:
        return [
            Problem(
                DATASET_LAYOUT.manifest,
                "missing; a dataset folder needs its manifest (rebuild it with `gharuntime build`)",
            )
        ]
    except (ValueError, OSError) as exc:
        return [Problem(DATASET_LAYOUT.manifest, f"unreadable: {exc}")]

    problem = schema_version_problem(manifest)
    if problem:
        add(DATASET_LAYOUT.manifest, problem)
    _check_card(root, manifest, add)
    stated = manifest.get("revision")
    if stated is not None and stated != dataset_revision(manifest):
        add(
            DATASET_LAYOUT.manifest,
            f"revision {str(stated)[:12]}… is not the revision of the files it lists "
            f"({dataset_revision(manifest)[:12]}…); the manifest was edited after the build",
        )

    listed: dict[str, dict[str, Any]] = {}
    for i, entry in enumerate(manifest["files"]):
        if (
            not isinstance(entry, dict)
            or not {"path", "config", "split", "rows", "sha256"} <= entry.keys()
        ):
            add(DATASET_LAYOUT.manifest, f"files[{i}] lacks path, config, split, rows or sha256")
            continue
        if (
            not isinstance(entry["path"], str)
            or contained(root, entry["path"], follow_links=False) is None
        ):
            add(
                DATASET_LAYOUT.manifest,
                f"files[{i}] path {ascii(entry['path'])[:100]} is not a path inside the folder",
            )
            continue
        if entry["config"] not in CONFIGS or entry["split"] not in SPLITS:
            add(
                DATASET_LAYOUT.manifest,
                f"files[{i}] names unknown config/split {entry['config']}/{entry['split']}",
            )
            continue
        listed[entry["path"]] = entry
    on_disk = (
        {p.relative_to(root).as_posix() for p in (root / DATASET_LAYOUT.data).rglob("*.parquet")}
        if (root / DATASET_LAYOUT.data).is_dir()
        else set()
    )
    for rel in sorted(on_disk - listed.keys()):
        add(rel, "parquet file not listed in the manifest")

    expected = {c.name: c for c in COLUMNS}
    readable: dict[str, dict[str, Any]] = {}
    digests: dict[str, str] = {}
    for rel, entry in listed.items():
        say(progress, f"checking {rel}")
        path = root / rel
        try:  # a listed name the OS refuses (over NAME_MAX, unreadable) is a problem, not a crash
            if not path.is_file():
                add(rel, "missing (listed in the manifest)")
                continue
            digest = sha256_file(path)
        except OSError as exc:
            add(rel, f"cannot be read: {exc.strerror or exc}")
            continue
        digests[rel] = digest
        if digest != entry["sha256"]:
            add(
                rel,
                f"sha256 {digest[:12]}… does not match the manifest's {str(entry['sha256'])[:12]}…; the file changed after the build",
            )
        try:
            meta = pq.read_metadata(path)
            schema = parquet_schema(path)
        except Exception as exc:  # pyarrow raises several unrelated types for a bad file
            add(rel, f"not a readable Parquet file: {exc}")
            continue
        if meta.num_rows != entry["rows"]:
            add(rel, f"{meta.num_rows} rows, the manifest says {entry['rows']}")
        ok = True
        for name, col in expected.items():
            if name not in schema:
                add(rel, f"column {name!r} missing")
                ok = False
            elif schema[name] != col.dtype:
                add(rel, f"column {name!r} has type {schema[name]}, the contract says {col.dtype}")
                ok = False
        for name in schema:
            if name not in expected:
                add(rel, f"column {name!r} is not in the contract (schema {SCHEMA_VERSION})")
        if ok:
            readable[rel] = entry

    _check_rows(root, readable, manifest, add)
    check_croissant(root, manifest, digests, add)
    return problems


def _check_card(root: Path, manifest: dict[str, Any], add: Callable[[str, str], None]) -> None:
    card = root / DATASET_LAYOUT.card
    if not card.is_file():
        add(DATASET_LAYOUT.card, "missing; the dataset card is required")
        return
    try:
        text = read_bytes(card, 16 * 2**20).decode("utf-8", errors="replace")
    except InputFileError as exc:
        add(DATASET_LAYOUT.card, f"unreadable: {exc}")
        return
    if not text.startswith("---\n") or "\n---" not in text[4:]:
        add(DATASET_LAYOUT.card, "no YAML front matter (a Hugging Face card starts with ---)")
        return
    try:
        front = yaml.safe_load(text[4 : text.index("\n---", 4)])
    except yaml.YAMLError as exc:
        add(DATASET_LAYOUT.card, f"front matter is not valid YAML: {exc}")
        return
    names = {c.get("config_name") for c in (front or {}).get("configs", []) if isinstance(c, dict)}
    for config in CONFIGS:
        if config not in names:
            add(DATASET_LAYOUT.card, f"front matter `configs` lacks {config!r}")


def _check_rows(
    root: Path,
    files: dict[str, dict[str, Any]],
    manifest: dict[str, Any],
    add: Callable[[str, str], None],
) -> None:
    """Ids unique, required values present, splits disjoint, counts as the manifest says."""
    required = [c.name for c in COLUMNS if not c.nullable]
    split_counts = manifest.get("splits", {})
    for config in CONFIGS:
        parts = []
        for rel, entry in sorted(files.items()):
            if entry["config"] != config:
                continue
            frame = read_parquet(
                root / rel,
                columns=[
                    "id",
                    "repo_id",
                    "run_id",
                    *[c for c in required if c not in ("id", "repo_id", "run_id")],
                ],
            )
            frame = frame.with_row_index("row", offset=1).with_columns(
                pl.lit(rel).alias("file"), pl.lit(entry["split"]).alias("split")
            )
            for name in required:
                nulls = frame.filter(pl.col(name).is_null())
                for r in nulls.head(_MAX_ROWS_REPORTED).iter_rows(named=True):
                    add(f"{rel}:row {r['row']}", f"{name} is null; the contract requires a value")
                if nulls.height > _MAX_ROWS_REPORTED:
                    add(rel, f"{nulls.height - _MAX_ROWS_REPORTED} more rows with {name} null")
            parts.append(frame.select("id", "repo_id", "run_id", "row", "file", "split"))
        if not parts:
            continue
        rows = pl.concat(parts)
        for split in SPLITS:
            want = split_counts.get(config, {}).get(split)
            have = rows.filter(pl.col("split") == split).height
            if want is not None and want != have and len(files) == len(manifest["files"]):
                add(
                    DATASET_LAYOUT.manifest,
                    f"splits.{config}.{split} says {want} rows, the files hold {have}",
                )
        dups = rows.filter(pl.col("id").is_duplicated()).sort("id", "file", "row")
        for r in dups.head(_MAX_ROWS_REPORTED).iter_rows(named=True):
            add(f"{r['file']}:row {r['row']}", f"duplicate id {r['id']!r} (config {config})")
        if dups.height > _MAX_ROWS_REPORTED:
            add(
                f"data/{config}", f"{dups.height - _MAX_ROWS_REPORTED} more rows with duplicate ids"
            )
        unit = ["repo_id", "run_id"] if config == "temporal" else ["repo_id"]
        what = "run" if config == "temporal" else "repository"
        leaked = (
            rows.group_by(unit)
            .agg(
                pl.col("split").n_unique().alias("n"),
                pl.col("split").unique().sort().alias("splits"),
            )
            .filter(pl.col("n") > 1)
            .sort(unit)
        )
        for r in leaked.head(_MAX_ROWS_REPORTED).iter_rows(named=True):
            first = (
                rows.filter(*(pl.col(k) == r[k] for k in unit))
                .sort("file", "row")
                .row(0, named=True)
            )
            ident = (
                f"run {r['run_id']} of repo {r['repo_id']}"
                if config == "temporal"
                else f"repo {r['repo_id']}"
            )
            add(
                f"{first['file']}:row {first['row']}",
                f"{ident} appears in splits {', '.join(r['splits'])}; a {what} must sit in one {config} split",
            )
        if leaked.height > _MAX_ROWS_REPORTED:
            add(
                f"data/{config}",
                f"{leaked.height - _MAX_ROWS_REPORTED} more {what}s split across {config} splits",
            )
