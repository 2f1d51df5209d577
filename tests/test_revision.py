"""The dataset revision is its content: data files, schema version, conclusion policy; never the
source's provenance (stores, shards, ports, URLs, timings, paths)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from gharuntime.dataset import dataset_revision, read_manifest
from gharuntime.validation import validate_folder


def _manifest(root: Path) -> dict[str, Any]:
    return read_manifest(root)


def test_the_manifest_states_its_revision(fixture_dataset: Path) -> None:
    m = _manifest(fixture_dataset)
    assert len(m["revision"]) == 64
    assert m["revision"] == dataset_revision(m) == dataset_revision(fixture_dataset)


def test_provenance_does_not_change_the_revision(fixture_dataset: Path) -> None:
    m = _manifest(fixture_dataset)
    other = copy.deepcopy(m)
    other["source"] = {
        "kind": "raw",
        "stores": [{"name": "x", "meta": {"api_url": "http://127.0.0.1:40123"}, "shards": 7}],
    }
    other["build"]["records"] = 123456
    other["gharuntime_version"] = "9.9.9"
    other["files"] = list(reversed(other["files"]))  # order of the listing
    other["files"][0]["bytes"] = 1
    assert dataset_revision(other) == dataset_revision(m)


def test_content_changes_the_revision(fixture_dataset: Path) -> None:
    m = _manifest(fixture_dataset)
    base = dataset_revision(m)
    for change in (
        lambda x: x["files"][0].update(sha256="0" * 64),
        lambda x: x["files"][0].update(rows=x["files"][0]["rows"] + 1),
        lambda x: x["files"][0].update(path="data/temporal/other.parquet"),
        lambda x: x.update(schema_version="2.0.0"),
        lambda x: x["build"].update(conclusions=["failure"]),
    ):
        other = copy.deepcopy(m)
        change(other)
        assert dataset_revision(other) != base


def test_validate_reports_a_revision_that_is_not_the_files(fixture_dataset: Path) -> None:
    path = fixture_dataset / "manifest.json"
    m = json.loads(path.read_text())
    m["revision"] = "f" * 64
    path.write_text(json.dumps(m))
    problems = validate_folder(fixture_dataset)
    assert any("revision" in p.message for p in problems)
