"""Read the published GHALogs dump (Moriconi et al., MSR 2025) into candidate job rows.

The dump is gzip JSON Lines: `repositories.json.gz` (one repository document per line) and
`runs.json.gz` (one run document per line, with the GitHub run object in `metadata` and one
`log_insights` entry per job log), plus an optional tree of per-run log archives. Runs stream
line by line; only the repositories (tens of thousands) are held in memory.

What GHALogs cannot give, and how each column is filled:
- no job ids: `id` is a stable hash of repository id, run id, attempt and the job's log file name;
  `job_id` stays null;
- no workflow YAML: workflow_yaml, workflow_sha256, job_key, job_yaml, matrix and needs stay null;
- no per-job conclusion: a job of a successful run is `success` (GitHub only marks a run
  successful when every job that ran succeeded); jobs of other runs are `unknown`;
- no job queue times: `created_at` is the run's start (run_started_at), so queue_s includes
  the wait for the jobs a job needs;
- started/completed: with the log archive, from the job log's first line written by the runner
  (`Current runner version`, the start of "Set up job", which is where GitHub's own `started_at`
  falls) and its last line; the lines before it are the wait for a runner (`Requested labels`,
  `Waiting for a runner`, `Job is about to start running`), 5-12 s of queueing that belongs in
  queue_s, not in duration_s. Without the archive, from its logged steps (first step start, last
  step end), which leaves out the few seconds of job set-up and clean-up;
- runner labels only come from the log archive; the runner image from the insights;
- step_names stay null: GHALogs knows a job's steps only from the per-step log files, which exist
  only for the steps that ran, so as an input they would leak the outcome (a failed job's list
  stops early).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl

from gharuntime.paths import contained
from gharuntime.progress import Progress
from gharuntime.readfile import bounded_lines, lone_surrogate
from gharuntime.sources._columns import (
    ColumnBuffer,
    Problems,
    SourceError,
    epoch_us,
    first_line,
    gc_paused,
    pack_list,
)
from gharuntime.sources.base import to_datetime, with_runner_os
from gharuntime.sources.raw import runner_from_log
from gharuntime.sources.values import api_id, api_int
from gharuntime.workflow import strip_ref

__all__ = [
    "GHALOGS_FILES",
    "job_name_from_log_file",
    "read_ghalogs",
    "runner_start",
    "stable_id",
]

MAX_RECORD_BYTES = 64 << 20
"""A line of runs.json.gz or repositories.json.gz over this, once decompressed, is counted as
unreadable and read past, never held (the logs are in their own archives; a record is KBs)."""
GHALOGS_FILES = {"runs": "runs.json.gz", "repositories": "repositories.json.gz"}

_STRS = pl.List(pl.String)
_TS_LINE_TEXT = re.compile(r"^\ufeff?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ", re.M)
_TS_LINE = re.compile(r"^\ufeff?(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) (.*)$", re.M)
_WAITING = (
    "Requested labels:",
    "Job defined at:",
    "Waiting for a runner",
    "Job is waiting for",
    "Job is about to start running",
)
"""Lines GitHub writes at the top of a job log while the job waits for a runner."""
_LOG_FILE = re.compile(r"^(\d+)_(.*?)(?: \((\d+)\))?\.txt$")

ROW_SCHEMA = {
    "id": pl.String(),
    "repo": pl.String(),
    "repo_id": pl.Int64(),
    "run_id": pl.Int64(),
    "run_attempt": pl.Int32(),
    "run_number": pl.Int64(),
    "event": pl.String(),
    "head_branch": pl.String(),
    "head_sha": pl.String(),
    "head_commit_message": pl.String(),
    "workflow_id": pl.Int64(),
    "workflow_path": pl.String(),
    "workflow_name": pl.String(),
    "job_name": pl.String(),
    "runner_labels": _STRS,
    "runner_image": pl.String(),
    "step_names": _STRS,
    "created_at": pl.Int64(),
    "started_at": pl.Int64(),
    "completed_at": pl.Int64(),
    "conclusion": pl.String(),
    "log_bytes": pl.Int64(),
}
REPO_SCHEMA = {
    "repo_key": pl.String(),
    "repo_record_id": pl.Int64(),
    "repo_language": pl.String(),
    "repo_stars": pl.Int64(),
    "repo_size_kb": pl.Int64(),
    "repo_topics": _STRS,
    "repo_fork": pl.Boolean(),
    "repo_created_at": pl.Int64(),
    "default_branch": pl.String(),
}


def stable_id(repo_id: int, run_id: int, attempt: int, log_file: str) -> str:
    """Row id for a GHALogs job: GHALogs has no job ids, so hash what identifies the job."""
    text = f"ghalogs:{repo_id}:{run_id}:{attempt}:{log_file}"
    return "ghalogs-" + hashlib.sha256(text.encode()).hexdigest()[:24]


def job_name_from_log_file(file: str) -> str:
    """'2_Test 3.9 x64 wheels for ubuntu-latest.txt' → 'Test 3.9 x64 wheels for ubuntu-latest'.

    GitHub's log archive numbers each job's log and adds ' (1)' to tell apart two files of the
    same name; both are removed (a matrix job really named 'key (1)' loses its suffix too)."""
    m = _LOG_FILE.match(PurePosixPath(file).name)
    return m.group(2) if m else PurePosixPath(file).name.removesuffix(".txt")


def _lines(path: Path, what: str, problems: Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, document) of a gzip JSON Lines file; bad lines and truncation are counted."""
    number = 0
    try:
        with gzip.open(path, "rb") as fh:
            for number, raw in bounded_lines(fh, MAX_RECORD_BYTES):
                if raw is None:
                    problems.add(
                        "unreadable_record",
                        f"{path.name}:{number}: over {MAX_RECORD_BYTES:,} bytes once "
                        "decompressed (a run or job record is far smaller)",
                    )
                    continue
                if not raw.strip():
                    continue
                try:
                    doc = json.loads(raw)
                except RecursionError:
                    problems.add("unreadable_record", f"{path.name}:{number}: nested too deeply")
                    continue
                except ValueError as exc:
                    problems.add("unreadable_record", f"{path.name}:{number}: {exc}")
                    continue
                if not isinstance(doc, dict):
                    problems.add("unreadable_record", f"{path.name}:{number}: not a JSON object")
                    continue
                if lone_surrogate(raw, doc):
                    problems.add(
                        "unreadable_record",
                        f"{path.name}:{number}: a text holds a lone surrogate (not UTF-8)",
                    )
                    continue
                yield number, doc
    except (OSError, EOFError, zlib.error) as exc:
        problems.add("truncated_shard", f"{path.name} after line {number}: {exc}")
    if what == "runs" and number == 0:
        problems.add("empty_file", f"{path.name}: no runs")


def _repositories(path: Path, problems: Problems) -> pl.DataFrame:
    buf = ColumnBuffer(REPO_SCHEMA, 50_000)
    for number, doc in _lines(path, "repositories", problems):
        found = doc.get("repo")
        repo: dict[str, Any] = found if isinstance(found, dict) else {}
        key = doc.get("_id") or repo.get("name")
        if not key:
            problems.add("malformed_repository_record", f"{path.name}:{number}: no _id")
            continue
        try:
            topics = repo.get("topics")
            buf.append(
                (
                    str(key).lower(),
                    api_int(repo.get("id"), "repo.id"),
                    repo.get("mainLanguage"),
                    api_int(repo.get("stargazers"), "repo.stargazers"),
                    api_int(repo.get("size"), "repo.size"),
                    pack_list(topics),
                    bool(repo["isFork"]) if repo.get("isFork") is not None else None,
                    epoch_us(repo.get("createdAt")),
                    repo.get("defaultBranch"),
                )
            )
        except (TypeError, ValueError, OverflowError) as exc:
            problems.add("malformed_repository_record", f"{path.name}:{number}: {exc}")
    return buf.frame().unique("repo_key", keep="last", maintain_order=True)


def _archive(logs: Path | None, doc: dict[str, Any]) -> Path | None:
    """The run's log archive under `logs`, matched by the trailing parts of logs_archive.path."""
    if logs is None:
        return None
    archive = doc.get("logs_archive")
    raw = archive.get("path") if isinstance(archive, dict) else None
    if not raw:
        return None
    parts = [p for p in PurePosixPath(str(raw)).parts if p != "/"]
    if ".." in parts or any("\x00" in p for p in parts):
        return None  # a path that climbs is never followed, even below --logs
    for k in range(max(0, len(parts) - 5), len(parts)):
        candidate = contained(logs, "/".join(parts[k:]))
        if candidate is not None and candidate.is_file():
            return candidate
    return None


class _LogArchive:
    """Times and runner labels of each job log in one run's archive."""

    def __init__(self, path: Path) -> None:
        self.times: dict[str, tuple[int | None, int | None]] = {}
        self.labels: dict[str, list[str] | None] = {}
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                name = member.name.lstrip("./")
                if "/" in name:  # one file per step that ran: see step_names above
                    continue
                fh = tar.extractfile(member)
                if fh is None:
                    continue
                data = fh.read()
                text = data[:20_000].decode("utf-8", "replace")
                tail = data[-4_000:].decode("utf-8", "replace")
                last = _TS_LINE_TEXT.findall(tail)
                self.times[name] = (
                    runner_start(text),
                    epoch_us(last[-1]) if last else None,
                )
                self.labels[name] = runner_from_log(text)[1]


def runner_start(text: str) -> int | None:
    """Epoch µs of the first line of a job log the runner wrote, past the wait for a runner."""
    for m in _TS_LINE.finditer(text):
        if not m.group(2).startswith(_WAITING):
            return epoch_us(m.group(1))
    return None


def _steps_window(steps: Any) -> tuple[int | None, int | None]:
    starts: list[int] = []
    ends: list[int] = []
    if isinstance(steps, list):
        for s in steps:
            if not isinstance(s, dict):
                continue
            t = epoch_us(s.get("start_date"))
            if t is None:
                continue
            starts.append(t)
            ends.append(t + int(float(s.get("duration_sec") or 0) * 1_000_000))
    return (min(starts) if starts else None, max(ends) if ends else None)


def _run_rows(doc: dict[str, Any], buf: ColumnBuffer, logs: Path | None, problems: Problems) -> int:
    meta = doc["metadata"]
    repo_obj = meta.get("repository") if isinstance(meta.get("repository"), dict) else {}
    repo_name = str(repo_obj.get("full_name") or doc["repository_name"])
    repo_id = api_int(repo_obj.get("id"), "repository.id")
    run_id = api_id(meta["id"], "metadata.id")
    attempt = (
        api_int(doc.get("run_attempt") or meta.get("run_attempt"), "run_attempt", 2**31 - 1) or 1
    )
    created = epoch_us(meta.get("run_started_at") or meta.get("created_at"))
    commit = meta.get("head_commit") if isinstance(meta.get("head_commit"), dict) else {}
    conclusion = "success" if meta.get("conclusion") == "success" else "unknown"
    path = strip_ref(str(doc.get("workflow_path") or meta.get("path") or ""))[0]
    archive_path = _archive(logs, doc)
    archive = None
    if archive_path is not None:
        try:
            archive = _LogArchive(archive_path)
        except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
            problems.add("unreadable_log_archive", f"{archive_path.name}: {exc}")
    elif logs is not None:
        problems.add("log_archive_not_found", str(doc.get("_id")))
    insights = doc.get("log_insights") or []
    n = 0
    for entry in insights:
        if not isinstance(entry, dict) or not entry.get("file"):
            problems.add("malformed_log_insight", str(doc.get("_id")))
            continue
        file = str(entry["file"])
        job_name = job_name_from_log_file(file)
        started, completed = _steps_window(entry.get("steps"))
        labels = None
        if archive is not None:
            a_start, a_end = archive.times.get(file, (None, None))
            started, completed = a_start or started, a_end or completed
            labels = archive.labels.get(file)
        image = entry.get("image")
        version = entry.get("image_version")
        buf.append(
            (
                stable_id(repo_id or 0, run_id, attempt, file),
                repo_name,
                repo_id,
                run_id,
                attempt,
                api_int(doc.get("run_number") or meta.get("run_number"), "run_number"),
                meta.get("event"),
                meta.get("head_branch"),
                meta.get("head_sha"),
                first_line(commit.get("message")),
                api_int(meta.get("workflow_id"), "workflow_id"),
                path,
                meta.get("name"),
                job_name,
                pack_list(labels),
                f"{image} {version}" if image and version else image,
                None,  # step_names: see the module docstring
                created,
                started,
                completed,
                conclusion,
                api_int(entry.get("log_size"), "log_size"),
            )
        )
        n += 1
    return n


def read_ghalogs(
    dump: Path,
    *,
    logs: Path | None = None,
    progress: Progress | None = None,
    every: int = 10_000,
) -> tuple[pl.DataFrame, Problems, dict[str, Any]]:
    """Candidate job rows, the problems met, and provenance for the manifest."""
    runs_path = dump / GHALOGS_FILES["runs"]
    repos_path = dump / GHALOGS_FILES["repositories"]
    missing = [p.name for p in (runs_path, repos_path) if not p.is_file()]
    if missing:
        raise SourceError(
            f"{dump}: not a GHALogs dump (missing {', '.join(missing)}); pass the folder that "
            "holds runs.json.gz and repositories.json.gz"
        )
    problems = Problems()
    repos = _repositories(repos_path, problems)
    buf = ColumnBuffer(ROW_SCHEMA)
    runs = 0
    with gc_paused():
        for number, doc in _lines(runs_path, "runs", problems):
            try:
                _run_rows(doc, buf, logs, problems)
                runs += 1
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                problems.add(
                    "unreadable_run", f"runs.json.gz:{number}: {type(exc).__name__}: {exc}"
                )
            if progress is not None and number % every == 0:
                progress("reading GHALogs runs", number, None)
    if progress is not None:
        progress("reading GHALogs runs", runs, runs)
    rows = buf.frame()
    rows = rows.with_columns(pl.col("repo").str.to_lowercase().alias("repo_key")).join(
        repos, on="repo_key", how="left", maintain_order="left"
    )
    no_repo = rows.filter(pl.col("repo_record_id").is_null()).height
    if no_repo:
        problems.add("job_without_repository_record", n=no_repo)
    null = pl.lit(None)
    rows = rows.select(
        "id",
        "repo",
        pl.coalesce("repo_id", "repo_record_id").alias("repo_id"),
        "repo_language",
        "repo_stars",
        "repo_size_kb",
        "repo_topics",
        "repo_fork",
        *to_datetime("repo_created_at"),
        "run_id",
        "run_attempt",
        "run_number",
        "event",
        "head_branch",
        (pl.col("head_branch") == pl.col("default_branch")).alias("is_default_branch"),
        "head_sha",
        "head_commit_message",
        "workflow_id",
        "workflow_path",
        "workflow_name",
        null.cast(pl.String).alias("workflow_yaml"),
        null.cast(pl.String).alias("workflow_sha256"),
        null.cast(pl.Int64).alias("job_id"),
        "job_name",
        null.cast(pl.String).alias("job_key"),
        null.cast(pl.String).alias("job_yaml"),
        null.cast(pl.String).alias("matrix"),
        "runner_labels",
        "runner_image",
        null.cast(_STRS).alias("needs"),
        "step_names",
        *to_datetime("created_at", "started_at", "completed_at"),
        "conclusion",
        ((pl.col("completed_at") - pl.col("started_at")) / 1e6).alias("duration_s"),
        ((pl.col("started_at") - pl.col("created_at")) / 1e6).alias("queue_s"),
        "log_bytes",
        pl.lit("completed").alias("status"),
        pl.lit("no_yaml").alias("job_key_how"),
    )
    no_id = rows.filter(pl.col("repo_id").is_null()).height
    if no_id:
        problems.add("job_without_repository_id", n=no_id)
        rows = rows.filter(pl.col("repo_id").is_not_null())
    info = {
        "files": [GHALOGS_FILES["runs"], GHALOGS_FILES["repositories"]],
        "log_archive": logs is not None,
        "runs_read": runs,
        "null_columns": [
            "job_id",
            "workflow_yaml",
            "workflow_sha256",
            "job_key",
            "job_yaml",
            "matrix",
            "needs",
            "step_names",
        ],
        "id_rule": "ghalogs-<first 24 hex of sha256('ghalogs:{repo_id}:{run_id}:{attempt}:{log file}')>",
    }
    return with_runner_os(rows), problems, info
