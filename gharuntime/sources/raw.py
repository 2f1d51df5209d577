"""Read one or more raw stores (a crawl, several crawl shards, or `simulate dump`) into compact
tables, one per record kind, keeping only the fields the job table needs.

Records stream through `gharuntime.rawstore.iter_records`; nothing holds the raw JSON. Bad input
(an unreadable line, a truncated shard, a record missing its fields) is counted in `Problems`
and skipped, never raised.
"""

from __future__ import annotations

import base64
import binascii
import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from gharuntime.contract import RawKind, RawStoreLayout
from gharuntime.progress import Progress
from gharuntime.rawstore import iter_records, listed_shards
from gharuntime.sources._columns import (
    ColumnBuffer,
    Problems,
    epoch_us,
    first_line,
    gc_paused,
    pack_list,
)
from gharuntime.sources.values import api_int
from gharuntime.workflow import strip_ref

__all__ = ["RawTables", "count_records", "read_raw_stores", "runner_from_log"]

_LAYOUT = RawStoreLayout()
_STRS = pl.List(pl.String)
_INT32 = 2**31 - 1  # run_attempt is an Int32 column

REPOSITORY_SCHEMA = {
    "repo_id": pl.Int64(),
    "repo": pl.String(),
    "repo_language": pl.String(),
    "repo_stars": pl.Int64(),
    "repo_size_kb": pl.Int64(),
    "repo_topics": _STRS,
    "repo_fork": pl.Boolean(),
    "repo_created_at": pl.Int64(),
    "default_branch": pl.String(),
}
WORKFLOW_SCHEMA = {"workflow_id": pl.Int64(), "workflow_record_name": pl.String()}
RUN_SCHEMA = {
    "run_id": pl.Int64(),
    "run_attempt": pl.Int32(),
    "repo_id": pl.Int64(),
    "run_repo": pl.String(),
    "run_number": pl.Int64(),
    "event": pl.String(),
    "head_branch": pl.String(),
    "head_sha": pl.String(),
    "head_commit_message": pl.String(),
    "workflow_id": pl.Int64(),
    "workflow_path": pl.String(),
    "workflow_name": pl.String(),
    "run_created_at": pl.Int64(),
    "run_started_at": pl.Int64(),
}
JOB_SCHEMA = {
    "job_id": pl.Int64(),
    "run_id": pl.Int64(),
    "run_attempt": pl.Int32(),
    "job_name": pl.String(),
    "status": pl.String(),
    "conclusion": pl.String(),
    "created_at": pl.Int64(),
    "started_at": pl.Int64(),
    "completed_at": pl.Int64(),
    "api_labels": _STRS,
    "step_names": _STRS,
}
FILE_SCHEMA = {
    "repo_id": pl.Int64(),
    "workflow_path": pl.String(),
    "blob_sha": pl.String(),
    "workflow_yaml": pl.String(),
}
REF_SCHEMA = {
    "repo_id": pl.Int64(),
    "workflow_path": pl.String(),
    "head_sha": pl.String(),
    "blob_sha": pl.String(),
}
LOG_SCHEMA = {
    "job_id": pl.Int64(),
    "log_status": pl.String(),
    "log_bytes": pl.Int64(),
    "log_image": pl.String(),
    "log_labels": _STRS,
}

_IMAGE = re.compile(r"^(?:\S+Z )?Image: (\S+)\s*$", re.M)
_VERSION = re.compile(r"^(?:\S+Z )?Version: (\S+)\s*$", re.M)
_LABELS = re.compile(r"^(?:\S+Z )?Requested labels: (.+?)\s*$", re.M)
_LOG_HEAD = 20_000  # the runner writes its image and labels in the first lines


def runner_from_log(text: str) -> tuple[str | None, list[str] | None]:
    """Runner image ('ubuntu-22.04 20230917.1.0') and requested labels from a job log's header."""
    head = text[:_LOG_HEAD]
    image = _IMAGE.search(head)
    version = _VERSION.search(head)
    labels = _LABELS.search(head)
    name = None
    if image:
        name = image.group(1) + (f" {version.group(1)}" if version else "")
    return name, ([s.strip() for s in labels.group(1).split(",")] if labels else None)


@dataclass
class RawTables:
    """What a raw store holds, one compact table per record kind (times in epoch microseconds)."""

    repositories: pl.DataFrame
    workflows: pl.DataFrame
    runs: pl.DataFrame
    jobs: pl.DataFrame
    workflow_files: pl.DataFrame
    workflow_refs: pl.DataFrame
    logs: pl.DataFrame
    fetch_errors: dict[str, int] = field(default_factory=dict)
    records: int = 0
    problems: Problems = field(default_factory=Problems)


def count_records(roots: Iterable[Path]) -> int | None:
    """Records listed in the stores' state databases (for a progress total), or None."""
    total = 0
    for root in roots:
        try:
            con = sqlite3.connect(f"file:{root / _LAYOUT.state}?mode=ro", uri=True)
            try:
                total += int(
                    con.execute("SELECT COALESCE(SUM(records), 0) FROM shards").fetchone()[0]
                )
            finally:
                con.close()
        except sqlite3.Error:
            return None
    return total


class _Reader:
    def __init__(self) -> None:
        self.repos = ColumnBuffer(REPOSITORY_SCHEMA, 10_000)
        self.workflows = ColumnBuffer(WORKFLOW_SCHEMA, 10_000)
        self.runs = ColumnBuffer(RUN_SCHEMA)
        self.jobs = ColumnBuffer(JOB_SCHEMA)
        self.files = ColumnBuffer(FILE_SCHEMA, 5_000)
        self.refs = ColumnBuffer(REF_SCHEMA)
        self.logs = ColumnBuffer(LOG_SCHEMA)
        self.error_keys: dict[str, str] = {}  # error record key -> what could not be fetched
        self.resolved: set[str] = set()
        self.problems = Problems()

    def repository(self, repo_id: int | None, b: dict[str, Any]) -> None:
        self.repos.append(
            (
                api_int(b.get("id", repo_id), "id"),
                b["full_name"],
                b.get("language"),
                api_int(b.get("stargazers_count"), "stargazers_count"),
                api_int(b.get("size"), "size"),
                pack_list(b.get("topics")),
                b.get("fork"),
                epoch_us(b.get("created_at")),
                b.get("default_branch"),
            )
        )

    def workflow(self, repo_id: int | None, b: dict[str, Any]) -> None:
        self.workflows.append((api_int(b["id"], "id"), b.get("name")))

    def run(self, repo_id: int | None, b: dict[str, Any]) -> None:
        repo = b.get("repository") or {}
        commit = b.get("head_commit") or {}
        self.runs.append(
            (
                api_int(b["id"], "id"),
                api_int(b.get("run_attempt"), "run_attempt", _INT32) or 1,
                api_int(repo.get("id", repo_id), "repository.id"),
                repo.get("full_name"),
                api_int(b.get("run_number"), "run_number"),
                b.get("event"),
                b.get("head_branch"),
                b.get("head_sha"),
                first_line(commit.get("message")),
                api_int(b.get("workflow_id"), "workflow_id"),
                strip_ref(b["path"])[0] if b.get("path") else None,
                b.get("name"),
                epoch_us(b.get("created_at")),
                epoch_us(b.get("run_started_at")),
            )
        )

    def job(self, repo_id: int | None, b: dict[str, Any]) -> None:
        steps = b.get("steps")
        self.jobs.append(
            (
                api_int(b["id"], "id"),
                api_int(b["run_id"], "run_id"),
                api_int(b.get("run_attempt"), "run_attempt", _INT32) or 1,
                b["name"],
                b.get("status"),
                b.get("conclusion"),
                epoch_us(b.get("created_at")),
                epoch_us(b.get("started_at")),
                epoch_us(b.get("completed_at")),
                pack_list(b.get("labels")),
                pack_list([s.get("name") for s in steps]) if isinstance(steps, list) else None,
            )
        )

    def workflow_file(self, repo_id: int | None, key: str, b: dict[str, Any]) -> None:
        rid, _, rest = key.partition(":")
        path, _, blob = rest.rpartition(":")
        if b.get("source") == "graphql":  # a GraphQL Blob's text, fetched in a batch
            text = b.get("text")
            if not isinstance(text, str):
                raise ValueError("a GraphQL blob record without text")
        else:  # the contents API's answer: base64
            content = b.get("content")
            if b.get("encoding", "base64") != "base64" or not isinstance(content, str):
                raise ValueError("content is not base64 text")
            text = base64.b64decode(content.replace("\\n", "").encode(), validate=False).decode()
        self.files.append((int(rid), strip_ref(path)[0], b.get("sha") or blob, text))

    def workflow_ref(self, repo_id: int | None, b: dict[str, Any]) -> None:
        self.refs.append(
            (
                api_int(b.get("repo_id", repo_id), "repo_id"),
                strip_ref(b["path"])[0],
                b["head_sha"],
                b.get("blob_sha"),
            )
        )

    def log(self, repo_id: int | None, b: dict[str, Any]) -> None:
        text = b.get("text")
        image, labels = runner_from_log(text) if isinstance(text, str) else (None, None)
        size = b.get("bytes")
        if size is None and isinstance(text, str) and b.get("status") == "ok":
            size = len(text.encode())
        self.logs.append(
            (
                api_int(b["job_id"], "job_id"),
                b.get("status"),
                api_int(size, "bytes"),
                image,
                pack_list(labels),
            )
        )


def read_raw_stores(
    roots: Iterable[Path], *, progress: Progress | None = None, every: int = 50_000
) -> RawTables:
    """Stream every listed shard of the stores at `roots` into RawTables."""
    roots = list(roots)
    for root in roots:
        listed_shards(root)  # raises RawStoreError naming the folder when it is not a raw store
    total = count_records(roots)
    r = _Reader()

    def on_error(where: str, message: str) -> None:
        r.problems.add("unreadable_record", f"{where}: {message}")

    def on_lost(where: str, message: str, lost: int) -> None:
        # A damaged shard: count the records it lost (a whole lost shard is all of its records);
        # bytes changed with nothing lost still count once, so the build cannot exit 0.
        kind = "truncated_shard" if lost else "changed_shard"
        r.problems.add(kind, f"{where}: {message}", n=max(lost, 1))

    with gc_paused():
        n = _read_into(r, roots, on_error, progress, every, total, on_lost)
    return RawTables(
        repositories=r.repos.frame(),
        workflows=r.workflows.frame(),
        runs=r.runs.frame(),
        jobs=r.jobs.frame(),
        workflow_files=r.files.frame(),
        workflow_refs=r.refs.frame(),
        logs=r.logs.frame(),
        fetch_errors=dict(
            sorted(Counter(w for k, w in r.error_keys.items() if k not in r.resolved).items())
        ),
        records=n,
        problems=r.problems,
    )


def _read_into(
    r: _Reader,
    roots: list[Path],
    on_error: Callable[[str, str], None],
    progress: Progress | None,
    every: int,
    total: int | None,
    on_lost: Callable[[str, str, int], None] | None = None,
) -> int:
    n = 0
    for rec in iter_records(roots, on_error=on_error, on_lost=on_lost):
        n += 1
        if progress is not None and n % every == 0:
            progress("reading raw records", n, total)
        body = rec.body
        try:
            if not isinstance(body, dict):
                raise TypeError("body is not a JSON object")
            kind = rec.kind
            if kind is RawKind.JOB:
                r.job(rec.repo_id, body)
            elif kind is RawKind.RUN:
                r.run(rec.repo_id, body)
            elif kind is RawKind.LOG:
                r.log(rec.repo_id, body)
            elif kind is RawKind.WORKFLOW_REF:
                r.workflow_ref(rec.repo_id, body)
            elif kind is RawKind.WORKFLOW_FILE:
                r.workflow_file(rec.repo_id, rec.key, body)
            elif kind is RawKind.REPOSITORY:
                r.repository(rec.repo_id, body)
            elif kind is RawKind.WORKFLOW:
                r.workflow(rec.repo_id, body)
            elif kind is RawKind.ERROR:
                if "resolved" in body:  # a later run fetched what this key's error record lacks
                    r.resolved.add(str(body["resolved"]))
                else:
                    r.error_keys[rec.key] = str(body.get("what", "unknown"))
        except (KeyError, TypeError, ValueError, AttributeError, binascii.Error) as exc:
            r.problems.add(
                f"malformed_{rec.kind.value}_record",
                f"{rec.shard}:{rec.line}: {type(exc).__name__}: {exc}",
            )
    if progress is not None:
        progress("reading raw records", n, total)
    return n
