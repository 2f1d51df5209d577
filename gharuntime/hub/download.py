"""Download a dataset revision from the Hub into the huggingface_hub cache, check every file the
manifest lists against its sha256, and hand back the folder (optionally copied to `--to`).
Nothing is returned, and nothing is written to `--to`, unless every file checks."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from gharuntime.contract import DATASET_LAYOUT
from gharuntime.dataset import MAX_MANIFEST_BYTES, DatasetError, read_manifest, sha256_file
from gharuntime.dataset import load as load_folder
from gharuntime.folderfiles import folder_files, target_kind
from gharuntime.hub.quiet import quiet
from gharuntime.hub.spec import (
    HUB_ID,
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


@dataclass(frozen=True)
class LocalDataset:
    """A dataset opened for reading, the one reference every reader takes (`open_dataset`
    makes it): the folder on disk; for one from the Hub, the id, the revision asked for and
    the exact commit it resolved to."""

    root: Path
    repo_id: str | None = None
    revision: str | None = None
    commit: str | None = None

    @property
    def spec(self) -> str:
        """ORG/NAME@REVISION as asked for (the folder's path for a local folder)."""
        if self.repo_id is None:
            return str(self.root)
        return self.repo_id + (f"@{self.revision}" if self.revision else "")

    @property
    def id(self) -> str:
        """How results name it: the Hub id as asked for, else the folder's path (`spec`)."""
        return self.spec

    @property
    def kind(self) -> str:
        """ "hub" for a Hub id, "local" for a folder."""
        return "local" if self.repo_id is None else "hub"


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


def open_dataset(
    spec: str | Path,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    progress: Progress | None = None,
    refuse_links: bool = True,
) -> LocalDataset:
    """A dataset folder, or a Hub id ORG/NAME[@REVISION] downloaded and checked first. A
    folder holding a symlink that leads outside it is refused (DatasetError), so nothing
    outside a dataset folder is read; `validate` passes refuse_links=False to report each."""
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise DatasetError(f"{spec}: not a folder; give a dataset folder or ORG/NAME[@REV]")
        leaving = folder_files(path).leaving if refuse_links else []
        if leaving:
            raise DatasetError(
                f"{spec}: {leaving[0]} is a symlink to {target_kind(path / leaving[0])} "
                "outside the dataset folder, and nothing outside a dataset folder is read; "
                "put the file itself there "
                f"(`gharuntime validate {spec}` lists every such link)"
            )
        return LocalDataset(root=path.resolve())
    if not HUB_ID.match(str(spec)):
        raise DatasetError(
            f"{spec}: no such folder, and not a Hub id (ORG/NAME[@REVISION]); give a dataset "
            "folder or a Hub dataset id"
        )
    return download(str(spec), endpoint=endpoint, token=token, progress=progress)


def load(
    source: Path | str,
    config: str = "temporal",
    split: str = "train",
    columns: list[str] | None = None,
) -> pl.DataFrame:
    """One split as a polars DataFrame, from a dataset folder or a Hub dataset id
    ORG/NAME[@REVISION] (downloaded and checked against its manifest on first use)."""
    if not Path(source).exists() and HUB_ID.match(str(source)):
        source = open_dataset(str(source)).root
    return load_folder(source, config, split, columns)
