"""Croissant (MLCommons' JSON-LD dataset format) for a dataset folder: what conferences ask
for and what tools such as `mlcroissant` read. Everything in it is derived from the manifest and
the data contract (field types, meanings and roles), so it is written at build time and
`validate` can tell when it no longer matches the data."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

import polars as pl

from gharuntime.contract import COLUMNS, CONFIGS, DATASET_LAYOUT, SPLITS, Column
from gharuntime.jsonout import strict_dumps
from gharuntime.paths import contained
from gharuntime.readfile import InputFileError, read_json
from gharuntime.revision import sha256_file

__all__ = [
    "CROISSANT_CONTEXT",
    "CROISSANT_VERSION",
    "PARQUET_MIME",
    "bibtex",
    "check_croissant",
    "croissant_metadata",
    "field_description",
    "release_licence",
    "write_croissant",
]

CROISSANT_VERSION: Final = "http://mlcommons.org/croissant/1.1"
MAX_CROISSANT_BYTES: Final = 64 * 2**20
"""croissant.json lists one object per Parquet file: a million files fit; more is not ours."""
_COVERAGE: Final = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
PARQUET_MIME: Final = "application/x-parquet"

CROISSANT_CONTEXT: Final[dict[str, Any]] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "containedIn": "cr:containedIn",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "description": {"@container": "@language"},
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "name": {"@container": "@language"},
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
"""The standard Croissant 1.1 @context (as the spec and mlcroissant write it): a reader warns
about any other."""

_SCALARS: Final[dict[type[pl.DataType], str]] = {
    pl.String: "sc:Text",
    pl.Int64: "cr:Int64",
    pl.Int32: "cr:Int32",
    pl.Float64: "cr:Float64",
    pl.Boolean: "sc:Boolean",
    pl.Datetime: "sc:DateTime",
}


def _data_type(dtype: pl.DataType) -> tuple[str, bool]:
    """The Croissant dataType of a contract column and whether it is an array."""
    if isinstance(dtype, pl.List):
        inner, _ = _data_type(dtype.inner)  # type: ignore[arg-type]
        return inner, True
    name = _SCALARS.get(dtype.base_type())
    if name is None:
        raise ValueError(f"no Croissant dataType for polars type {dtype}")
    return name, False


def _mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else empty: a hand-edited manifest never crashes a check."""
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def field_description(column: Column) -> str:
    """The contract's meaning of a column plus its role, as a Croissant field says it."""
    role = column.role.value + (" (history track only)" if column.history_only else "")
    required = "" if column.nullable else " Never null."
    return f"{column.meaning} Role: {role}.{required}"


def release_licence(manifest: Mapping[str, Any]) -> str:
    """The licence a release carries: the source's when it names one, Apache-2.0 for synthetic
    data (the project's own), else what the manifest says or `other`."""
    provenance = _mapping(manifest.get("source"))
    if provenance.get("licence"):
        return str(provenance["licence"])
    if provenance.get("synthetic"):
        return "apache-2.0"
    return str(manifest.get("license", "other"))


def bibtex(manifest: Mapping[str, Any]) -> str:
    """How to cite a release (the card prints it; Croissant's citeAs carries it)."""
    return (
        "@misc{gharuntime,\n"
        "  title  = {{GHARuntime}: A Benchmark for Predicting {GitHub Actions} Job Runtime from "
        "Configuration},\n"
        "  author = {{The GHARuntime authors}},\n"
        "  year   = {2026},\n"
        f"  note   = {{Dataset built with gharuntime {manifest.get('gharuntime_version', '')}, "
        f"data contract {manifest.get('schema_version', '')}}}\n"
        "}"
    )


def _collection(provenance: Mapping[str, Any]) -> tuple[str, str]:
    """RAI data collection: (how, in words) from what the manifest records of the source."""
    kind = str(provenance.get("kind", "unknown"))
    if provenance.get("synthetic"):
        return (
            "Simulation",
            "Synthetic: every repository, workflow, run and job timing comes from gharuntime's "
            "seeded simulated GitHub, not from github.com; its numbers say nothing about real "
            "GitHub Actions jobs.",
        )
    if kind == "ghalogs":
        return (
            "Secondary Data analysis",
            "Real GitHub Actions runs from the published GHALogs dump (Moriconi et al., MSR 2025).",
        )
    if kind == "api-json":
        return (
            "Secondary Data analysis",
            "Real GitHub Actions job and run records (GitHub REST API JSON) as their collectors "
            "committed them, with workflow YAML read from each project's git history.",
        )
    return (
        "Web API",
        f"Real GitHub Actions jobs collected from the GitHub REST API by the gharuntime crawler "
        f"(source kind {kind}).",
    )


def _record_set(config: str, split: str, rows: int) -> dict[str, Any]:
    rid = f"{config}/{split}"
    fields = []
    for column in COLUMNS:
        data_type, is_array = _data_type(column.dtype)
        field: dict[str, Any] = {
            "@type": "cr:Field",
            "@id": f"{rid}/{column.name}",
            "name": column.name,
            "description": field_description(column),
            "dataType": data_type,
            "source": {"fileSet": {"@id": f"{rid}/files"}, "extract": {"column": column.name}},
        }
        if is_array:
            field["isArray"] = True
            field["arrayShape"] = "-1"
        fields.append(field)
    return {
        "@type": "cr:RecordSet",
        "@id": rid,
        "name": rid,
        "description": f"Config {config}, split {split}: {rows:,} jobs. {CONFIGS[config]}",
        "key": {"@id": f"{rid}/id"},
        "field": fields,
    }


def croissant_metadata(
    manifest: Mapping[str, Any], *, time_window: tuple[str, str] | None = None
) -> dict[str, Any]:
    """The croissant.json document of a dataset folder with this manifest: one FileObject (with
    sha256) per Parquet file, one FileSet and one RecordSet per config and split."""
    provenance = _mapping(manifest.get("source"))
    synthetic = bool(provenance.get("synthetic"))
    how, collection = _collection(provenance)
    listed = manifest.get("files")
    files = [
        f
        for f in (listed if isinstance(listed, list) else [])
        if isinstance(f, Mapping) and isinstance(f.get("path"), str)
    ]
    distribution: list[dict[str, Any]] = [
        {
            "@type": "cr:FileObject",
            "@id": str(f["path"]),
            "name": str(f["path"]),
            "contentUrl": str(f["path"]),
            "encodingFormat": PARQUET_MIME,
            "sha256": str(f.get("sha256")),
            **({"contentSize": f"{_count(f['bytes'])} B"} if "bytes" in f else {}),
        }
        for f in sorted(files, key=lambda f: str(f["path"]))
    ]
    row_file = _mapping(provenance.get("provenance"))  # provenance.parquet's entry
    if isinstance(row_file.get("path"), str):
        distribution.append(
            {
                "@type": "cr:FileObject",
                "@id": row_file["path"],
                "name": row_file["path"],
                "description": "Where each row's record came from (row id, source, file, "
                "commit); beside the splits, not one of them.",
                "contentUrl": row_file["path"],
                "encodingFormat": PARQUET_MIME,
                "sha256": str(row_file.get("sha256")),
            }
        )
    record_sets = []
    splits = _mapping(manifest.get("splits"))
    for config in CONFIGS:
        for split in SPLITS:
            rid = f"{config}/{split}"
            distribution.append(
                {
                    "@type": "cr:FileSet",
                    "@id": f"{rid}/files",
                    "name": f"{rid}/files",
                    "description": f"The Parquet files of config {config}, split {split}.",
                    "encodingFormat": PARQUET_MIME,
                    "includes": f"{DATASET_LAYOUT.data}/{config}/{split}-*.parquet",
                }
            )
            rows = _count(_mapping(splits.get(config)).get(split))
            record_sets.append(_record_set(config, split, rows))
    name = str(manifest.get("pretty_name") or "GHARuntime")
    if synthetic and "synthetic" not in name.lower():
        name += " (synthetic)"
    description = (
        f"{'Synthetic. ' if synthetic else ''}GHARuntime: GitHub Actions jobs for predicting a "
        f"job's runtime (duration_s), queue time and log size from its configuration. "
        f"{_count(manifest.get('rows')):,} jobs, {_count(manifest.get('runs')):,} runs, "
        f"{_count(manifest.get('repositories')):,} repositories. Data contract "
        f"{manifest.get('schema_version', '')}, dataset revision {manifest.get('revision')}. "
        f"{collection}"
    )
    keywords = ["github-actions", "ci", "runtime-prediction", "gharuntime"]
    if synthetic:
        keywords.append("synthetic")
    doc: dict[str, Any] = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CROISSANT_VERSION,
        "name": name,
        "description": description,
        "license": release_licence(manifest),
        "citeAs": bibtex(manifest),
        "version": str(manifest.get("schema_version", "")),
        "identifier": f"gharuntime-revision:{manifest.get('revision')}",
        "keywords": keywords,
        "creator": {"@type": "sc:Organization", "name": "The GHARuntime authors"},
        "isLiveDataset": False,
        "rai:dataCollection": collection,
        "rai:dataCollectionType": how,
        "distribution": distribution,
        "recordSet": record_sets,
    }
    if provenance.get("kind") == "ghalogs":
        doc["isBasedOn"] = "GHALogs: Large-Scale Dataset of GitHub Actions Runs (MSR 2025)"
    if time_window is not None:
        doc["temporalCoverage"] = f"{time_window[0]}/{time_window[1]}"
    return doc


def write_croissant(
    root: Path, manifest: Mapping[str, Any], *, time_window: tuple[str, str] | None = None
) -> Path:
    """Write root/croissant.json (the caller writes into a folder it renames into place)."""
    path = root / DATASET_LAYOUT.croissant
    doc = croissant_metadata(manifest, time_window=time_window)
    path.write_text(strict_dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _by_id(items: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(items, list):
        return {}
    return {str(i["@id"]): i for i in items if isinstance(i, dict) and "@id" in i}


def _duplicate_ids(doc: Any) -> list[str]:
    """Every @id that more than one node of `doc` carries (JSON-LD: an @id names one node)."""
    seen: set[str] = set()
    dups: set[str] = set()
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            nid = node.get("@id")
            if isinstance(nid, str) and len(node) > 1:  # {"@id": x} alone refers, not names
                (dups if nid in seen else seen).add(nid)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(dups)


def _digest(root: Path, rel: str) -> str | None:
    """sha256 of a file the data checks did not hash (provenance.parquet), None if unreadable."""
    path = contained(root, rel, follow_links=False)
    try:
        return sha256_file(path) if path is not None and path.is_file() else None
    except OSError:
        return None


def check_croissant(
    root: Path,
    manifest: Mapping[str, Any],
    digests: Mapping[str, str],
    add: Callable[[str, str], None],
) -> None:
    """Report every way root/croissant.json disagrees with the data: a Parquet file it lacks,
    lists but the folder does not hold, or gives another sha256 than the file has (`digests`,
    by path, as validation computed them); a record set or field (type, column, array) that
    the data contract and the manifest do not give."""
    where = DATASET_LAYOUT.croissant
    path = root / where
    if not path.is_file():
        if manifest.get("croissant"):
            add(where, "missing, though manifest.json lists it; rebuild the dataset")
        return
    try:
        doc = read_json(path, MAX_CROISSANT_BYTES)
    except InputFileError as exc:  # over the cap, NaN or Infinity, too deep, not a file
        add(where, f"not readable: {exc}; rebuild the dataset")
        return
    if not isinstance(doc, dict):
        add(where, "not a JSON object; rebuild the dataset")
        return
    fix = "; rebuild the dataset (or restore the files it describes)"
    if doc.get("conformsTo") != CROISSANT_VERSION:
        add(where, f"conformsTo {str(doc.get('conformsTo'))[:80]!a}, expected {CROISSANT_VERSION}")
    for dup in _duplicate_ids(doc):
        add(where, f"@id {dup[:100]!a} names two nodes; an @id names one{fix}")
    expected = croissant_metadata(manifest)
    for key in sorted(set(expected) | set(doc)):
        if key in ("distribution", "recordSet", "conformsTo"):
            continue
        if key == "temporalCoverage":  # from the rows' times, not the manifest: its form only
            if not _COVERAGE.fullmatch(str(doc[key])):
                add(where, f"temporalCoverage {str(doc[key])[:80]!a} is not FIRST/LAST{fix}")
        elif key not in expected:
            add(where, f"{key[:100]!a} is not a key the manifest gives{fix}")
        elif doc.get(key) != expected[key]:
            add(
                where,
                f"{key} {strict_dumps(doc.get(key))[:100]}, the manifest gives "
                f"{strict_dumps(expected[key])[:100]}{fix}",
            )
    have = _by_id(doc.get("distribution"))
    want = _by_id(expected["distribution"])
    for fid, entry in want.items():
        got = have.get(fid)
        if got is None:
            add(where, f"distribution lacks {fid}{fix}")
            continue
        for key in sorted((set(entry) | set(got)) - {"sha256"}):
            if got.get(key) != entry.get(key):
                add(
                    where,
                    f"{fid}: {key} {strict_dumps(got.get(key))[:100]}, expected "
                    f"{strict_dumps(entry.get(key))[:100]}{fix}",
                )
        if "sha256" in entry:
            actual = digests.get(fid) or _digest(root, fid) or entry["sha256"]
            if got.get("sha256") != actual:
                add(
                    where,
                    f"{fid}: sha256 {str(got.get('sha256'))[:12]}… is not the file's "
                    f"{actual[:12]}…; croissant.json describes other data{fix}",
                )
    for fid in sorted(have.keys() - want.keys()):
        add(where, f"distribution lists {fid[:100]!a}, which the dataset does not hold{fix}")
    have_sets = _by_id(doc.get("recordSet"))
    for rid, record_set in _by_id(expected["recordSet"]).items():
        got_set = have_sets.get(rid)
        if got_set is None:
            add(where, f"record set {rid} missing{fix}")
            continue
        got_fields = _by_id(got_set.get("field"))
        want_fields = _by_id(record_set["field"])
        for fid, field in want_fields.items():
            got_field = got_fields.get(fid)
            if got_field is None:
                add(where, f"record set {rid} lacks field {fid}{fix}")
                continue
            # a field's description is the contract's wording, which may improve between
            # versions without changing the data: everything else must be as written
            for key in sorted((set(field) | set(got_field)) - {"description"}):
                if got_field.get(key) != field.get(key):
                    add(
                        where,
                        f"field {fid}: {key} {json.dumps(got_field.get(key))[:100]}, the data "
                        f"contract gives {json.dumps(field.get(key))}{fix}",
                    )
        for fid in sorted(got_fields.keys() - want_fields.keys()):
            add(where, f"record set {rid} has field {fid[:100]!a}, not in the data contract{fix}")
    for rid in sorted(have_sets.keys() - {r["@id"] for r in expected["recordSet"]}):
        add(where, f"record set {rid[:100]!a} is not a config/split of the dataset{fix}")
