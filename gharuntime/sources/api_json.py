"""Read GitHub REST API job and run records as people commit them: a single file, a plain
folder tree, or straight out of a git repository (an archive of `YYYY/MM/DD/N/job.json` files
need not be checked out), in any JSON shape:

- one object per file (a job, or a run), a list of objects, a page (`{"jobs": [...]}`,
  `{"workflow_runs": [...]}`), or any other nesting: job and run records are found by their
  fields wherever they sit (a job has id, run_id, name and steps or started_at; a run has id,
  head_sha and workflow_id or run_number), and are not searched inside; so are a repository's
  workflow listing (`{"workflows": [...]}`: id, name, path, state) and repository records
  (id, full_name, private), which place jobs that come without their run records;
- JSON Lines (`.jsonl`, `.ndjson`, or a `.json` file holding one document per line);
- each of those gzip-compressed (`.json.gz`, `.jsonl.gz`, `.ndjson.gz`).

Other files are not read; a source's info counts them by suffix. Every record keeps where it
came from (source, file path, the source's commit when it is a git repository). Nothing is
filled in that the record does not say: a field it lacks is null here. A file that is not JSON
(or not gzip, or over MAX_FILE_BYTES once decompressed, or holding over MAX_FILE_CONTAINERS
objects and arrays: never parsed), a document that holds no record, or an
item of a list of records that is not one, is counted in `Problems` with the file named, and
skipped.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from gharuntime.errors import GharuntimeError
from gharuntime.progress import Progress
from gharuntime.sources._columns import (
    ColumnBuffer,
    Problems,
    SourceError,
    gc_paused,
    pack_list,
)
from gharuntime.sources.gitstore import GitError, GitRepo, looks_like_git_dir
from gharuntime.sources.values import api_id, api_int, api_text, api_time_us, api_title
from gharuntime.workflow import strip_ref

__all__ = [
    "JOB_SCHEMA",
    "MAX_FILE_BYTES",
    "MAX_FILE_CONTAINERS",
    "REPOSITORY_SCHEMA",
    "RUN_SCHEMA",
    "SUFFIXES",
    "WORKFLOW_SCHEMA",
    "ApiSource",
    "ApiTables",
    "documents",
    "read_api_json",
    "records",
    "source_label",
]

PLAIN_SUFFIXES = (".json", ".jsonl", ".ndjson")
SUFFIXES = (*PLAIN_SUFFIXES, *(s + ".gz" for s in PLAIN_SUFFIXES))
MAX_FILE_BYTES = 1 << 30
"""A file larger than this (once decompressed) is counted as unreadable, not read."""
MAX_FILE_CONTAINERS = 1 << 23
"""A file holding more JSON objects and arrays than this (8,388,608, counted as its `{` and `[`
before anything is parsed) is counted as unreadable, not read: parsed, each costs Python about
70 bytes, so 900 MB of `[{},{},...]` (a 0.9 MB .json.gz) would be 300 million dicts, over 20 GB.
Real API files hold about one per 100 to 250 bytes: a 1 GB one, some 4 to 10 million."""
_PIECE_BYTES = 16 << 20
_STRS = pl.List(pl.String)
_REPO_IN_URL = re.compile(r"/repos/([^/]+/[^/]+)/")

JOB_SCHEMA = {
    "job_id": pl.Int64(),
    "run_id": pl.Int64(),
    "job_run_attempt": pl.Int32(),
    "job_name": pl.String(),
    "status": pl.String(),
    "conclusion": pl.String(),
    "job_created_at": pl.Int64(),
    "started_at": pl.Int64(),
    "completed_at": pl.Int64(),
    "api_labels": _STRS,
    "step_names": _STRS,
    "job_head_sha": pl.String(),
    "job_workflow_name": pl.String(),
    "job_repo": pl.String(),
    "src": pl.Int32(),
    "job_file": pl.String(),
}
RUN_SCHEMA = {
    "run_id": pl.Int64(),
    "run_attempt": pl.Int32(),
    "repo_id": pl.Int64(),
    "repo": pl.String(),
    "repo_fork": pl.Boolean(),
    "run_number": pl.Int64(),
    "event": pl.String(),
    "head_branch": pl.String(),
    "head_sha": pl.String(),
    "head_commit_message": pl.String(),
    "workflow_id": pl.Int64(),
    "run_workflow_path": pl.String(),
    "workflow_name": pl.String(),
    "run_created_at": pl.Int64(),
    "run_started_at": pl.Int64(),
    "run_src": pl.Int32(),
    "run_file": pl.String(),
}
WORKFLOW_SCHEMA = {
    "listed_workflow_id": pl.Int64(),
    "listed_repo": pl.String(),  # owner/name from the workflow's url, lowercase
    "listed_name": pl.String(),
    "listed_path": pl.String(),
}
REPOSITORY_SCHEMA = {"repository_id": pl.Int64(), "repository_name": pl.String()}


@dataclass(frozen=True)
class ApiSource:
    """A folder or git repository of API records; `label` names it in provenance (default: the
    git remote's owner/name, else the folder's name)."""

    path: Path
    label: str | None = None
    licence: str | None = None  # SPDX id, when known (else read from a git source's LICENSE)


@dataclass
class ApiTables:
    """Every job and run record read, one row each (times in epoch microseconds)."""

    jobs: pl.DataFrame
    runs: pl.DataFrame
    sources: list[dict[str, Any]]
    problems: Problems = field(default_factory=Problems)
    workflows: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=WORKFLOW_SCHEMA))
    repositories: pl.DataFrame = field(
        default_factory=lambda: pl.DataFrame(schema=REPOSITORY_SCHEMA)
    )


def source_label(path: Path, repo: GitRepo | None) -> str:
    """owner/name of a git source's origin remote, else the folder's own name (for a bare
    mirror at `.../NAME/repo` or `.../NAME/.git`, NAME)."""
    if repo is not None:
        remote = repo.remote_name()
        if remote:
            return remote
    path = path.resolve()
    name = path.name
    if name in ("repo", ".git") and path.parent.name:
        name = path.parent.name
    return name.removesuffix(".git")


class _TooLarge(GharuntimeError, ValueError):
    """A file over a cap (its bytes, decompressed, or its objects and arrays): not read."""


def _containers(data: bytes) -> int:
    """How many JSON objects and arrays `data` can hold at most: its `{` and `[` (those inside
    strings counted too), counted in C without parsing anything."""
    return data.count(b"{") + data.count(b"[")


def _too_many(count: int, limit: int) -> _TooLarge:
    return _TooLarge(
        f"holds over {limit:,} JSON objects and arrays (counted as {{ and [: {count:,} so far), "
        "more than any API file holds (about one per 100 bytes); it is not read: split it into "
        "smaller files"
    )


def _gunzip(data: bytes, limit: int, max_containers: int) -> bytes:
    """The bytes of a gzip file (every member), decompressed in pieces of at most 16 MiB,
    refusing more than `limit` bytes or `max_containers` objects and arrays once decompressed:
    a small bomb (1 MB of `[{},{},...]` is 1 GB) stops at the piece that passes a cap, never
    held whole, never parsed. Raises ValueError."""
    out: list[bytes] = []
    size = containers = 0
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        tail = data
        while not d.eof:
            try:
                piece = d.decompress(tail, min(_PIECE_BYTES, limit - size + 1))
            except zlib.error as exc:
                raise ValueError(f"not gzip ({exc})") from None
            tail = d.unconsumed_tail
            if not piece and not tail:
                break  # no input left and no output: the stream ends early
            size += len(piece)
            if size > limit:
                raise _TooLarge(f"over {limit:,} bytes once decompressed")
            containers += _containers(piece)
            if containers > max_containers:
                raise _too_many(containers, max_containers)
            out.append(piece)
        if not d.eof:
            raise ValueError("truncated gzip file")
        data = d.unused_data.lstrip(b"\0")
    return b"".join(out)


def documents(
    data: bytes,
    name: str,
    limit: int = MAX_FILE_BYTES,
    max_containers: int | None = None,
) -> Iterator[tuple[int, Any]]:
    """(line number or 0, document) of a JSON or JSON Lines file, gzip-compressed when `name`
    ends in `.gz`. Raises ValueError (with the line) when the file is neither; a JSON Lines file
    with some bad lines raises at the first. A file over `limit` bytes or `max_containers`
    objects and arrays (default MAX_FILE_CONTAINERS) is refused before anything is parsed
    (ValueError)."""
    if max_containers is None:
        max_containers = MAX_FILE_CONTAINERS
    if name.endswith(".gz"):
        data = _gunzip(data, limit, max_containers)
        name = name.removesuffix(".gz")
    elif len(data) > limit:
        raise _TooLarge(f"over {limit:,} bytes")
    elif _containers(data) > max_containers:
        raise _too_many(_containers(data), max_containers)
    text = data.decode("utf-8-sig")
    if not name.endswith((".jsonl", ".ndjson")):
        try:
            yield 0, json.loads(text)
            return
        except ValueError as exc:
            first_error = exc
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if len(lines) < 2:
            raise first_error
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                raise ValueError(f"line {number}: {exc}") from exc


def _is_job(d: dict[str, Any]) -> bool:
    return "id" in d and "run_id" in d and "name" in d and ("steps" in d or "started_at" in d)


def _is_run(d: dict[str, Any]) -> bool:
    return "id" in d and "head_sha" in d and ("workflow_id" in d or "run_number" in d)


def _is_workflow(d: dict[str, Any]) -> bool:
    """An item of a repository's workflow listing (GET /repos/{o}/{r}/actions/workflows)."""
    return "id" in d and "path" in d and "state" in d and "name" in d and "run_id" not in d


def _is_repository(d: dict[str, Any]) -> bool:
    return "id" in d and "full_name" in d and "private" in d


def _kind(d: dict[str, Any]) -> str | None:
    if _is_job(d):
        return "job"
    if _is_run(d):
        return "run"
    if _is_workflow(d):
        return "workflow"
    if _is_repository(d):
        return "repository"
    return None


def records(doc: Any) -> Iterator[tuple[str, Any]]:
    """('job' | 'run' | 'workflow' | 'repository' | 'other', object) for each record of one
    document, in any shape: records wherever they are nested (not searched inside), 'other' for a document holding
    none (an empty jobs or runs page holds nothing, and is not 'other'), and for each object of
    a list that holds records but is not one itself."""
    found = False
    # Iterative, depth-first in document order: a deeply nested document cannot overflow the
    # stack.
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        node, in_record_list = stack.pop()
        if isinstance(node, dict):
            kind = _kind(node)
            if kind is not None:
                found = True
                yield kind, node
                continue
            children = [v for v in node.values() if isinstance(v, (dict, list))]
            if in_record_list and not any(_holds_record(c) for c in children):
                yield "other", node
                continue
            stack.extend((c, False) for c in reversed(children))
        elif isinstance(node, list):
            lists_records = any(isinstance(x, dict) and _kind(x) is not None for x in node)
            stack.extend((x, lists_records) for x in reversed(node) if isinstance(x, (dict, list)))
            if lists_records:
                for x in node:
                    if not isinstance(x, (dict, list)):
                        yield "other", x
    if not found and not _empty_page(doc):
        yield "other", doc


def _empty_page(doc: Any) -> bool:
    """A page of the list-jobs or list-runs API with no item (`{"total_count": 0, "jobs": []}`):
    a record of nothing, not a record of another shape."""
    return isinstance(doc, dict) and any(
        doc.get(k) == [] for k in ("jobs", "workflow_runs", "workflows")
    )


def _holds_record(node: Any) -> bool:
    stack = [node]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if _kind(x) is not None:
                return True
            stack.extend(v for v in x.values() if isinstance(v, (dict, list)))
        elif isinstance(x, list):
            stack.extend(v for v in x if isinstance(v, (dict, list)))
    return False


def _describe(obj: Any) -> str:
    if isinstance(obj, dict):
        keys = sorted(obj)[:6]
        return "an object with keys " + ", ".join(keys) + ("..." if len(obj) > 6 else "")
    return f"a JSON {type(obj).__name__}"


class _Reader:
    def __init__(self) -> None:
        self.jobs = ColumnBuffer(JOB_SCHEMA)
        self.runs = ColumnBuffer(RUN_SCHEMA, 20_000)
        self.workflows = ColumnBuffer(WORKFLOW_SCHEMA, 1_000)
        self.repositories = ColumnBuffer(REPOSITORY_SCHEMA, 1_000)
        self.problems = Problems()

    def workflow(self, b: dict[str, Any]) -> None:
        m = _REPO_IN_URL.search(str(b.get("url") or b.get("html_url") or ""))
        path = api_text(b["path"], "path", required=True)
        self.workflows.append(
            (
                api_id(b["id"], "id"),
                m.group(1).lower() if m else None,
                api_text(b["name"], "name", required=True),
                strip_ref(path)[0] if path else None,
            )
        )

    def repository(self, b: dict[str, Any]) -> None:
        name = api_text(b["full_name"], "full_name", required=True)
        self.repositories.append((api_id(b["id"], "id"), name.lower() if name else None))

    def job(self, b: dict[str, Any], src: int, file: str) -> None:
        steps = b.get("steps")
        url = b.get("url") or b.get("run_url") or ""
        m = _REPO_IN_URL.search(str(url))
        self.jobs.append(
            (
                api_id(b["id"], "id"),
                api_id(b["run_id"], "run_id"),
                api_int(b.get("run_attempt"), "run_attempt", 2**31 - 1),
                api_text(b["name"], "name", required=True),
                api_text(b.get("status"), "status"),
                api_text(b.get("conclusion"), "conclusion"),
                api_time_us(b.get("created_at"), "created_at"),
                api_time_us(b.get("started_at"), "started_at"),
                api_time_us(b.get("completed_at"), "completed_at"),
                pack_list(b.get("labels")),
                pack_list([s.get("name") for s in steps if isinstance(s, dict)])
                if isinstance(steps, list)
                else None,
                api_text(b.get("head_sha"), "head_sha"),
                api_text(b.get("workflow_name"), "workflow_name"),
                m.group(1) if m else None,
                src,
                file,
            )
        )

    def run(self, b: dict[str, Any], src: int, file: str) -> None:
        found_repo, found_commit = b.get("repository"), b.get("head_commit")
        repo: dict[str, Any] = found_repo if isinstance(found_repo, dict) else {}
        commit: dict[str, Any] = found_commit if isinstance(found_commit, dict) else {}
        fork = repo.get("fork")
        path = api_text(b.get("path"), "path")
        self.runs.append(
            (
                api_id(b["id"], "id"),
                api_int(b.get("run_attempt"), "run_attempt", 2**31 - 1),
                api_int(repo.get("id"), "repository.id"),
                api_text(repo.get("full_name"), "repository.full_name"),
                fork if isinstance(fork, bool) else None,
                api_int(b.get("run_number"), "run_number"),
                api_text(b.get("event"), "event"),
                api_text(b.get("head_branch"), "head_branch"),
                api_text(b.get("head_sha"), "head_sha"),
                api_title(commit.get("message")),
                api_int(b.get("workflow_id"), "workflow_id"),
                strip_ref(path)[0] if path else None,
                api_text(b.get("name"), "name"),
                api_time_us(b.get("created_at"), "created_at"),
                api_time_us(b.get("run_started_at"), "run_started_at"),
                src,
                file,
            )
        )

    def file(self, data: bytes, src: int, label: str, file: str) -> tuple[int, int]:
        where = f"{label}:{file}"
        jobs = runs = 0
        try:
            docs = list(documents(data, file))
        except _TooLarge as exc:
            self.problems.add("unreadable_file", f"{where}: {exc}")
            return 0, 0
        except (ValueError, UnicodeDecodeError) as exc:
            self.problems.add("unreadable_file", f"{where}: not JSON ({exc})")
            return 0, 0
        except RecursionError:
            self.problems.add("unreadable_file", f"{where}: JSON nested too deeply")
            return 0, 0
        for line, doc in docs:
            at = f"{where}:{line}" if line else where
            for kind, obj in records(doc):
                try:
                    if kind == "job":
                        self.job(obj, src, file)
                        jobs += 1
                    elif kind == "run":
                        self.run(obj, src, file)
                        runs += 1
                    elif kind == "workflow":
                        self.workflow(obj)
                    elif kind == "repository":
                        self.repository(obj)
                    else:
                        self.problems.add(
                            "unrecognized_record",
                            f"{at}: {_describe(obj)} is neither a job nor a workflow run",
                        )
                except (KeyError, TypeError, ValueError, AttributeError) as exc:
                    self.problems.add(
                        f"malformed_{kind}_record", f"{at}: {type(exc).__name__}: {exc}"
                    )
        return jobs, runs


def _suffix(name: str) -> str:
    """`.json`, `.jsonl.gz`, ...: the suffix a file is read (or skipped) by."""
    base = name.rsplit("/", 1)[-1]
    gz = base.endswith(".gz")
    stem = base.removesuffix(".gz")
    dot = stem.rfind(".")
    ext = stem[dot:].lower() if dot > 0 else ""
    return ext + (".gz" if gz else "") if ext or gz else "(none)"


def _wanted(name: str, skipped: dict[str, int]) -> bool:
    if _suffix(name) in SUFFIXES:
        return True
    skipped[_suffix(name)] = skipped.get(_suffix(name), 0) + 1
    return False


def _folder_files(root: Path, skipped: dict[str, int]) -> Iterator[tuple[str, bytes | None]]:
    if root.is_file():
        yield root.name, _read(root)
        return
    paths = sorted(
        p
        for p in root.rglob("*")
        if ".git" not in p.relative_to(root).parts
        and p.is_file()
        and _wanted(p.relative_to(root).as_posix(), skipped)
    )
    for p in paths:
        yield p.relative_to(root).as_posix(), _read(p)


def _read(p: Path) -> bytes | None:
    try:
        if p.stat().st_size > MAX_FILE_BYTES:
            return None
        return p.read_bytes()
    except OSError:
        return None


def _git_files(repo: GitRepo, skipped: dict[str, int]) -> Iterator[tuple[str, bytes | None]]:
    wanted = sorted((path, sha) for path, sha in repo.files(repo.head) if _wanted(path, skipped))
    reads = repo.read_many(sha for _, sha in wanted)
    for (path, _), (_, data) in zip(wanted, reads, strict=True):
        yield path, data


def read_api_json(
    sources: Sequence[ApiSource],
    *,
    progress: Progress | None = None,
    every: int = 1_000,
) -> ApiTables:
    """Every job and run record of every source (a file, a folder or a git repository). A source
    that is none of these is counted (`source_not_readable`), not raised; SourceError only when
    no source could be opened at all."""
    r = _Reader()
    infos: list[dict[str, Any]] = []
    files_done = 0
    with gc_paused():
        for src, source in enumerate(sources):
            path = Path(source.path)
            repo: GitRepo | None = None
            if looks_like_git_dir(path):
                try:
                    repo = GitRepo(path)
                except GitError as exc:
                    r.problems.add("source_not_readable", f"{path}: {exc}")
                    continue
            elif not path.is_dir() and not path.is_file():
                r.problems.add(
                    "source_not_readable", f"{path}: not a file, folder or git repository"
                )
                continue
            label = source.label or source_label(path, repo)
            skipped: dict[str, int] = {}
            info: dict[str, Any] = {
                "label": label,
                "kind": "git" if repo is not None else "file" if path.is_file() else "folder",
                "commit": repo.head if repo is not None else None,
                "files": 0,
                "jobs": 0,
                "runs": 0,
                "files_not_read": skipped,  # by suffix: not JSON by name
            }
            try:
                it = _git_files(repo, skipped) if repo is not None else _folder_files(path, skipped)
                for file, data in it:
                    info["files"] += 1
                    files_done += 1
                    if data is None:
                        r.problems.add(
                            "unreadable_file",
                            f"{label}:{file}: could not be read (or over {MAX_FILE_BYTES:,} bytes)",
                        )
                    else:
                        jobs, runs = r.file(data, src, label, file)
                        info["jobs"] += jobs
                        info["runs"] += runs
                    if progress is not None and files_done % every == 0:
                        progress("reading API records", files_done, None)
            except GitError as exc:
                r.problems.add("source_not_readable", f"{label}: {exc}")
            finally:
                if repo is not None:
                    repo.close()
            infos.append(info)
    if not infos:
        raise SourceError(
            "no source could be read: "
            + "; ".join(r.problems.examples.get("source_not_readable", []))
            + ". Pass folders of API JSON files or git repositories holding them"
        )
    if progress is not None:
        progress("reading API records", files_done, files_done)
    return ApiTables(
        jobs=r.jobs.frame(),
        runs=r.runs.frame(),
        sources=infos,
        problems=r.problems,
        workflows=r.workflows.frame().unique(maintain_order=True),
        repositories=r.repositories.frame().unique(maintain_order=True),
    )
