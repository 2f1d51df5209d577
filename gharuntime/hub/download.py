"""Download a dataset revision from the Hub into the huggingface_hub cache, check every file the
manifest lists against its sha256, and hand back the folder (optionally copied to `--to`).
Nothing is returned, and nothing is written to `--to`, unless every file checks.

Importing this module registers `download` as the opener of Hub ids, so the one resolver
(`gharuntime.dataset.open_dataset`, also `load`) takes ORG/NAME[@REVISION]; `LocalDataset`,
`open_dataset` and `load` are re-exported here from where they live, the same objects."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from gharuntime.contract import DATASET_LAYOUT
from gharuntime.dataset import (
    MAX_MANIFEST_BYTES,
    DatasetError,
    load,
    open_dataset,
    read_manifest,
    sha256_file,
)
from gharuntime.dataset_ref import LocalDataset, register_hub_opener
from gharuntime.folderfiles import folder_files, target_kind
from gharuntime.hub.quiet import quiet
from gharuntime.hub.spec import (
    HubError,
    HubSpec,
    check_token,
    endpoint_url,
    parse_spec,
    scrub,
)
from gharuntime.paths import replace_folder
from gharuntime.progress import Progress
from gharuntime.readfile import read_bytes

__all__ = [
    "LocalDataset",
    "download",
    "load",
    "open_dataset",
    "verify_folder",
    "verify_snapshot",
]


def verify_folder(root: Path, *, progress: Progress | None = None) -> None:
    """Every file manifest.json lists is present with its sha256; HubError naming the first
    file that is not (and how to get a good copy)."""
    try:
        manifest = read_manifest(root)
    except DatasetError as exc:
        raise HubError(f"{exc}; the download is not a gharuntime dataset") from exc
    entries = [f for f in manifest.get("files", []) if isinstance(f, dict)]
    for i, entry in enumerate(entries):
        rel = str(entry.get("path", ""))
        path = root / rel
        if not rel or ".." in Path(rel).parts or Path(rel).is_absolute():
            raise HubError(f"{root / DATASET_LAYOUT.manifest}: unsafe file path {rel!r}")
        if not path.is_file():
            raise HubError(f"{rel}: listed in manifest.json but missing from the download")
        got = sha256_file(path)
        if got != entry.get("sha256"):
            raise HubError(
                f"{rel}: sha256 {got} does not match manifest.json ({entry.get('sha256')}); "
                f"the copy at {path.resolve()} is corrupted. Nothing was used. Download it "
                "again with `gharuntime download ... --force`, or delete that file from the "
                "Hub cache."
            )
        if progress:
            progress("checking", i + 1, len(entries))


def _git_blob_id(data: bytes) -> str:
    """The id git (and the Hub, as the ETag of a file not in LFS) gives `data`."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def verify_snapshot(snapshot: Path) -> None:
    """A Hub cache snapshot is what the revision holds: each of its files is a link into the
    repository's `blobs/` folder (a link anywhere else, or to what is not a regular file, is
    refused before it is read), and manifest.json's bytes match the blob id the Hub gave it
    (the name of its blob: the git blob id, or the sha256 of a file in LFS). Then the manifest,
    itself checked, vouches for every data file's sha256 in `verify_folder`."""
    blobs = snapshot.parent.parent / "blobs"
    for path in sorted(snapshot.rglob("*")):
        if path.is_dir() and not path.is_symlink():
            continue
        target = path.resolve()
        if not target.is_relative_to(blobs.resolve()) or not target.is_file():
            raise HubError(
                f"{path}: the Hub cache links it to {target_kind(path)} outside its blobs/ "
                "folder, which no download makes; nothing was read. Delete that snapshot "
                "folder and download again"
            )
    manifest = snapshot / DATASET_LAYOUT.manifest
    if not manifest.is_symlink():
        return  # a cache without links (no symlink support): the blob id is not at hand
    blob_id = manifest.resolve().name
    data = read_bytes(manifest, MAX_MANIFEST_BYTES)
    if len(blob_id) == 40:
        got = _git_blob_id(data)
    elif len(blob_id) == 64:
        got = hashlib.sha256(data).hexdigest()
    else:
        return  # not a blob id this module knows
    if got != blob_id:
        raise HubError(
            f"{manifest}: its bytes do not match the revision (the Hub gave blob {blob_id}, "
            f"the cache holds {got}); the cached manifest was altered and nothing was used. "
            "Download it again with `gharuntime download ... --force`"
        )


def _check_to(to: Path) -> None:
    """--to must be a folder or not exist yet, and not a device, a FIFO or a file: refused
    before anything is downloaded."""
    if to.exists() and not to.is_dir():
        raise HubError(
            f"{to} exists and is not a folder (a file, a device or a FIFO); --to names the "
            "folder the dataset is copied to: choose a new or empty folder"
        )
    if to.exists() and any(to.iterdir()) and not (to / DATASET_LAYOUT.manifest).is_file():
        raise HubError(f"{to} exists and is not a dataset folder; choose another --to")


def _cache_dir(cache_dir: Path | None) -> Path | None:
    """The Hub cache: `cache_dir`, else $HF_HUB_CACHE, else $HF_HOME/hub, read at call time (so
    a process that changes them is followed), else huggingface_hub's default."""
    if cache_dir is not None:
        return cache_dir
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return None


def _snapshot(
    spec: HubSpec, endpoint: str, token: str | None, force: bool, cache_dir: Path | None
) -> Path:
    import httpx2
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"{spec} at {endpoint}"
    try:
        with quiet():
            path = snapshot_download(
                spec.repo_id,
                repo_type="dataset",
                revision=spec.revision,
                endpoint=endpoint,
                token=token,
                force_download=force,
                cache_dir=_cache_dir(cache_dir),
            )
    except RevisionNotFoundError as exc:
        raise HubError(
            f"{where}: no revision {spec.revision!r}; name a tag, branch or commit id of "
            f"{spec.repo_id}"
        ) from exc
    except RepositoryNotFoundError as exc:
        raise HubError(
            f"{where}: no such dataset repository (or it is private: set HF_TOKEN or log in "
            "with `hf auth login`)"
        ) from exc
    except (LocalEntryNotFoundError, OfflineModeIsEnabled) as exc:
        raise HubError(
            f"{where}: cannot be reached and that revision is not in the Hub cache "
            f"({type(exc).__name__}). Connect once without HF_HUB_OFFLINE to fill the cache, "
            "or pass a local dataset folder"
        ) from exc
    except HfHubHTTPError as exc:
        raise HubError(f"{where}: the Hub answered {scrub(str(exc), token)}") from exc
    except (OSError, ValueError, httpx2.HTTPError) as exc:
        raise HubError(
            f"{where}: download failed: {type(exc).__name__}: {scrub(str(exc), token)}"
        ) from exc
    return Path(path)


def _copy_to(src: Path, to: Path) -> None:
    """Copy the checked snapshot to `to` through a temporary sibling, renamed at the end."""
    to = to.resolve()
    _check_to(to)
    to.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{to.name}.tmp-", dir=to.parent))
    try:
        for rel, path in folder_files(src).files.items():  # the cache's links into blobs/
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dst)
        verify_folder(tmp)
        replace_folder(tmp, to)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def download(
    spec: str | HubSpec,
    *,
    to: Path | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    force: bool = False,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> LocalDataset:
    """Download ORG/NAME[@REVISION] (default branch main) and check it against its manifest.

    The token comes from `token`, $HF_TOKEN or the huggingface_hub login; the endpoint from
    `endpoint`, $HF_ENDPOINT or huggingface.co. With $HF_HUB_OFFLINE=1 the cache answers.
    Raises HubError (a DatasetError) naming what failed; a corrupted file is never used."""
    parsed = spec if isinstance(spec, HubSpec) else parse_spec(spec)
    url = endpoint_url(endpoint)
    check_token(token)
    if to is not None:
        _check_to(to)
    if progress:
        progress("downloading", 0, 1)
    snapshot = _snapshot(parsed, url, token, force, cache_dir)
    if progress:
        progress("downloading", 1, 1)
    verify_snapshot(snapshot)
    verify_folder(snapshot, progress=progress)
    commit = snapshot.name if len(snapshot.name) == 40 else None
    root = snapshot
    if to is not None:
        _copy_to(snapshot, to)
        root = to.resolve()
    return LocalDataset(root=root, repo_id=parsed.repo_id, revision=parsed.revision, commit=commit)


register_hub_opener(download)
