"""Publish a dataset folder as one commit of a Hub dataset repository, and tag it.

The folder is validated first. Data, manifest, card and figures go up in a single commit (files
no longer in the folder are deleted in the same commit), so a revision on the Hub is always a
whole release. Unchanged files are not sent again: the Hub's preupload answer names what it
already has, and content it already stores is skipped by the LFS batch endpoint."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gharuntime.dataset import dataset_revision, sha256_file, validate
from gharuntime.folderfiles import folder_files
from gharuntime.hub.quiet import quiet
from gharuntime.hub.spec import HubError, check_token, endpoint_url, parse_spec, scrub
from gharuntime.progress import Progress

if TYPE_CHECKING:
    from huggingface_hub import HfApi

__all__ = ["PublishResult", "publish"]


@dataclass(frozen=True)
class PublishResult:
    """What publish did: the commit now holding the folder, its URL, and the files changed."""

    repo_id: str
    commit: str
    url: str
    tag: str | None
    dataset_revision: str
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)


def _git_blob_oid(path: Path) -> str:
    data = path.read_bytes()
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def _local_files(folder: Path) -> dict[str, Path]:
    """What goes up: the folder's files (gharuntime.folderfiles), never a link's target outside
    it (validate reports such a link first; this refuses it again, whoever calls)."""
    walked = folder_files(folder)
    if walked.leaving:
        raise HubError(
            f"{folder}/{walked.leaving[0]} is a symlink to something outside the folder; nothing "
            "was published (put the file itself in the folder)"
        )
    return walked.files


def _changed(local: dict[str, Path], remote: dict[str, tuple[str, bool]]) -> list[str]:
    """Local files whose content the remote revision does not have at that path."""
    out = []
    for rel, path in local.items():
        known = remote.get(rel)
        if known is None:
            out.append(rel)
            continue
        oid, lfs = known
        if oid != (sha256_file(path) if lfs else _git_blob_oid(path)):
            out.append(rel)
    return out


def _check_tag(api: HfApi, repo_id: str, tag: str, *, unchanged: bool) -> None:
    """Refuse, before the commit, a tag that already names a commit other than the one this
    publish leaves on main: main's head when nothing changed, a new commit otherwise."""
    refs = api.list_repo_refs(repo_id, repo_type="dataset")
    tags = {t.name: t.target_commit for t in refs.tags}
    head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    if tag in tags and not (unchanged and tags[tag] == head):
        raise HubError(
            f"{repo_id}: tag {tag} already names commit {tags[tag]}, and this folder "
            f"{'is not that commit' if not unchanged else 'is the head of main, not it'}; a "
            "release tag is never moved, so choose a new --tag. Nothing was published: main "
            "is unchanged"
        )


def publish(
    folder: Path,
    repo_id: str,
    *,
    tag: str | None = None,
    private: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
    progress: Progress | None = None,
) -> PublishResult:
    """Validate `folder`, create the dataset repository if needed, commit the folder to its
    main branch and tag that commit. The token comes from `token`, $HF_TOKEN or the
    huggingface_hub login. Raises HubError (nothing published) on any failure; a tag that
    already names another commit is refused, never moved."""
    import httpx2
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.hf_api import RepoFile

    spec = parse_spec(repo_id)
    endpoint_url(endpoint)  # a bad endpoint or token is refused before the folder is read
    check_token(token)
    if spec.revision is not None:
        raise HubError(f"--repo-id takes ORG/NAME without @REVISION (got {repo_id!r}); use --tag")
    if tag is not None and not re.fullmatch(r"[A-Za-z0-9][\w.-]*", tag):
        raise HubError(f"--tag {tag!r}: use letters, digits, '.', '_' and '-', e.g. v1.0")
    folder = Path(folder)
    if progress:
        progress("validating", 0, 1)
    problems = validate(folder)
    if problems:
        shown = "\n".join(f"  {p}" for p in problems[:10])
        more = f"\n  … and {len(problems) - 10} more" if len(problems) > 10 else ""
        raise HubError(
            f"{folder} is not a valid dataset folder; nothing was published "
            f"(`gharuntime validate {folder}` lists every problem):\n{shown}{more}"
        )
    revision = dataset_revision(folder)
    url = endpoint_url(endpoint)
    api = HfApi(endpoint=url, token=token)
    local = _local_files(folder)
    try:
        with quiet():
            repo_url = api.create_repo(
                spec.repo_id, repo_type="dataset", private=private, exist_ok=True
            )
            remote = {
                f.path: ((f.lfs.sha256, True) if f.lfs is not None else (f.blob_id, False))
                for f in api.list_repo_tree(spec.repo_id, repo_type="dataset", recursive=True)
                if isinstance(f, RepoFile)
            }
            changed = _changed(local, remote)
            deleted = sorted(p for p in remote if p not in local and not p.startswith("."))
            if tag is not None:  # checked before any ref moves: a refusal leaves main as it was
                _check_tag(api, spec.repo_id, tag, unchanged=not changed and not deleted)
            operations: list[CommitOperationAdd | CommitOperationDelete] = [
                CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(path))
                for rel, path in local.items()
            ]
            operations += [CommitOperationDelete(path_in_repo=p) for p in deleted]
            if progress:
                progress("uploading", 0, len(changed))
            info = api.create_commit(
                spec.repo_id,
                operations,
                commit_message=f"gharuntime publish: dataset revision {revision[:12]}",
                commit_description=f"manifest.json sha256 {revision}",
                repo_type="dataset",
            )
            if progress:
                progress("uploading", len(changed), len(changed))
            commit = str(info.oid)
            if tag is not None:
                refs = api.list_repo_refs(spec.repo_id, repo_type="dataset")
                tags = {t.name: t.target_commit for t in refs.tags}
                if tag in tags and tags[tag] != commit:
                    raise HubError(
                        f"{spec.repo_id}: tag {tag} already names commit {tags[tag]}, not the "
                        f"new commit {commit}; a release tag is never moved, so choose a new "
                        "--tag (the commit itself is published on main)"
                    )
                if tag not in tags:
                    api.create_tag(spec.repo_id, tag=tag, revision=commit, repo_type="dataset")
    except HfHubHTTPError as exc:
        raise HubError(
            f"publishing {folder} to {spec.repo_id} at {url} failed; the Hub answered "
            f"{scrub(str(exc), token)}. Nothing partial was published; run the same command "
            "again"
        ) from exc
    except (OSError, ValueError, RuntimeError, httpx2.HTTPError) as exc:
        raise HubError(
            f"publishing {folder} to {spec.repo_id} at {url} failed: {type(exc).__name__}: "
            f"{scrub(str(exc), token)}"
            + (f" ({scrub(str(exc.__cause__), token)})" if exc.__cause__ else "")
            + ". Nothing partial was published; run the same command again"
        ) from exc
    return PublishResult(
        repo_id=spec.repo_id,
        commit=commit,
        url=str(repo_url).rstrip("/") + (f"/tree/{tag}" if tag else f"/tree/{commit}"),
        tag=tag,
        dataset_revision=revision,
        changed=changed,
        deleted=deleted,
    )
