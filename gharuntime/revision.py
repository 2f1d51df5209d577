"""A dataset's revision: one digest of what a user loads, and nothing else.

The revision depends only on the data files (path, config, split, rows and sha256 of each Parquet
file), the data contract's schema version and the build parameters that change which rows exist
(the conclusion policy). Everything that varies between two builds of the same rows (the source's
stores, shard layout and digests, the crawl's server URL and port, timings, paths, the gharuntime
version) is recorded in manifest.json but stays outside the revision, so two crawls of the same
world, or a crawl and `build --source simulated`, give the same revision.

`gharuntime.dataset` re-exports everything here; this module imports nothing of gharuntime's so
that `dataset` and `validation` can both use it without importing each other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from gharuntime.readfile import open_regular, read_json

__all__ = ["REVISION_RULE", "dataset_revision", "revision_content", "sha256_file"]

REVISION_RULE: Final = (
    "sha256 of the canonical JSON of the schema version, the build's conclusion policy and each "
    "data file's path, config, split, rows and sha256"
)
"""What the revision digests, in words (the eval result and the card quote it)."""

_MANIFEST: Final = "manifest.json"


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in blocks."""
    h = hashlib.sha256()
    with open_regular(path) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def revision_content(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a manifest the revision digests (see the module docstring)."""
    build = manifest.get("build") or {}
    files = manifest.get("files") or []
    return {
        "schema_version": str(manifest.get("schema_version", "")),
        "conclusions": build.get("conclusions", "all") if isinstance(build, Mapping) else "all",
        "files": sorted(
            (
                {k: f.get(k) for k in ("path", "config", "split", "rows", "sha256")}
                for f in files
                if isinstance(f, Mapping)
            ),
            key=lambda f: str(f["path"]),
        ),
    }


def dataset_revision(manifest_or_folder: Mapping[str, Any] | Path | str) -> str:
    """The revision (64 hex digits) of a dataset, from its manifest or its folder.

    Only content counts: see the module docstring. A folder's files are not re-hashed here
    (`gharuntime validate` checks them against the manifest)."""
    if isinstance(manifest_or_folder, (str, Path)):
        manifest = read_json(Path(manifest_or_folder) / _MANIFEST, 64 * 2**20)
    else:
        manifest = manifest_or_folder
    text = json.dumps(revision_content(manifest), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
