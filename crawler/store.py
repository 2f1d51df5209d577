"""Crawl state on top of the raw store: which units of work are done, in the same SQLite database.

Every unit (a repository's metadata and workflows, one listing window, one run's jobs, a batch of
workflow refs, one blob, one log) is marked done by SQL that `RawStoreWriter.flush` runs in the
transaction that lists the shard holding the unit's records. After a `kill -9` the database
therefore says exactly which records exist, and a rerun redoes only what is not listed.

Test hook: `GHARUNTIME_CRAWL_KILL_AT=shard-write:K` kills the process with SIGKILL during the K-th
shard write (after the shard file is in place, before it is listed); `request:N` kills it after the
N-th HTTP response. Tests use it to prove resumability; it does nothing when unset.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from gharuntime.contract import RawKind
from gharuntime.rawstore import RawStoreWriter

__all__ = ["KILL_ENV", "CrawlStore", "KillSwitch", "Sql"]

KILL_ENV = "GHARUNTIME_CRAWL_KILL_AT"

Sql = tuple[str, tuple[Any, ...]]

SCHEMA = """
CREATE TABLE IF NOT EXISTS crawls (
  id INTEGER PRIMARY KEY, since TEXT NOT NULL, until TEXT NOT NULL, selection TEXT NOT NULL,
  options TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS repos (
  crawl_id INTEGER NOT NULL, name TEXT NOT NULL, state TEXT NOT NULL, repo_id INTEGER,
  PRIMARY KEY (crawl_id, name));
CREATE TABLE IF NOT EXISTS repo_info (
  repo_id INTEGER PRIMARY KEY, full_name TEXT NOT NULL, workflows TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS renames (old_name TEXT PRIMARY KEY, full_name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS stored (kind TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (kind, key));
CREATE TABLE IF NOT EXISTS windows (
  crawl_id INTEGER NOT NULL, repo_id INTEGER NOT NULL, workflow_id INTEGER NOT NULL,
  since TEXT NOT NULL, until TEXT NOT NULL, state TEXT NOT NULL,
  PRIMARY KEY (crawl_id, repo_id, workflow_id, since, until));
CREATE TABLE IF NOT EXISTS run_units (
  run_id INTEGER NOT NULL, attempt INTEGER NOT NULL, repo_id INTEGER NOT NULL,
  head_sha TEXT NOT NULL, path TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, attempt));
CREATE TABLE IF NOT EXISTS refs (
  repo_id INTEGER NOT NULL, path TEXT NOT NULL, head_sha TEXT NOT NULL, blob_sha TEXT,
  PRIMARY KEY (repo_id, path, head_sha));
CREATE TABLE IF NOT EXISTS blobs (
  repo_id INTEGER NOT NULL, path TEXT NOT NULL, blob_sha TEXT NOT NULL,
  PRIMARY KEY (repo_id, path, blob_sha));
CREATE TABLE IF NOT EXISTS logs (
  job_id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL, conclusion TEXT, state TEXT,
  steps INTEGER NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS etags (url TEXT PRIMARY KEY, etag TEXT NOT NULL, body TEXT NOT NULL);
"""


class KillSwitch:
    """The test hook of the module docstring."""

    def __init__(self, spec: str | None) -> None:
        self.point, self.count = "", 0
        if spec:
            point, _, n = spec.partition(":")
            self.point, self.count = point.strip(), int(n or "1")
        self._seen: dict[str, int] = {}

    def tick(self, point: str) -> None:
        if point != self.point:
            return
        self._seen[point] = self._seen.get(point, 0) + 1
        if self._seen[point] >= self.count:
            os.kill(os.getpid(), signal.SIGKILL)


class CrawlStore:
    """The raw store plus the crawl's own tables. Used from one thread only."""

    def __init__(self, root: Path, *, api_url: str, prefix: str = "crawl") -> None:
        self.root = root
        self.writer = RawStoreWriter(
            root, prefix=prefix, meta={"source": "crawl", "api_url": api_url}
        )
        self.con: sqlite3.Connection = self.writer.con
        self.con.executescript(SCHEMA)
        self.kill = KillSwitch(os.environ.get(KILL_ENV))
        self.con.create_function("crawl_kill_point", 0, self._kill_point)
        self._pending: list[Sql] = []
        self._stored: set[tuple[str, str]] = set()  # keys added since the last flush
        self.flushes = 0
        # Whether the API answering this crawl is gharuntime's simulated GitHub (the client saw
        # SIMULATED_HEADER); the next shard's transaction records it in meta as synthetic=1.
        self.synthetic: Callable[[], bool] = lambda: False
        self._synthetic_recorded = False

    def _kill_point(self) -> int:
        self.kill.tick("shard-write")
        return 0

    # -- records ------------------------------------------------------------------------------
    def has(self, kind: RawKind, key: str) -> bool:
        """Whether a record of this kind and key is stored or waiting for the next shard."""
        if (kind.value, key) in self._stored:
            return True
        row = self.con.execute(
            "SELECT 1 FROM stored WHERE kind=? AND key=?", (kind.value, key)
        ).fetchone()
        return row is not None

    def add(self, kind: RawKind, key: str, body: Any, repo_id: int | None) -> bool:
        """Store a record unless one of that kind and key exists; True if added."""
        if self.has(kind, key):
            return False
        self.writer.add(kind, key, body, repo_id)
        self._stored.add((kind.value, key))
        self._pending.append(("INSERT OR IGNORE INTO stored VALUES (?, ?)", (kind.value, key)))
        return True

    def mark(self, statements: Iterable[Sql]) -> None:
        """Queue state changes that commit with the next shard."""
        self._pending.extend(statements)

    @property
    def pending(self) -> int:
        return self.writer.pending

    def flush(self) -> None:
        """Write buffered records and commit queued state changes, atomically."""
        statements = list(self._pending)
        if not statements and not self.writer.pending:
            return
        self.flushes += 1
        if not self._synthetic_recorded and self.synthetic():
            statements.append(("INSERT OR REPLACE INTO meta VALUES ('synthetic', '1')", ()))
            self._synthetic_recorded = True
        if self.writer.pending and self.kill.point == "shard-write":
            statements.append(("SELECT crawl_kill_point()", ()))
        self.writer.flush(statements)
        self._pending.clear()
        self._stored.clear()

    def close(self) -> None:
        self.flush()
        self.writer.close()

    # -- reads --------------------------------------------------------------------------------
    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        return list(self.con.execute(sql, params))

    def crawl_for(
        self, since: str | None, until: str | None, default: tuple[str, str]
    ) -> tuple[int, str, str, list[str] | None]:
        """The crawl to continue: the one with the given window, else (no window given) the
        latest unfinished one, else a new one with the default window. Returns its id, window
        and stored repository selection (None for a new crawl)."""
        if since is not None or until is not None:
            s, u = since or default[0], until or default[1]
            row = self.con.execute(
                "SELECT id, selection FROM crawls WHERE since=? AND until=? ORDER BY id DESC LIMIT 1",
                (s, u),
            ).fetchone()
        else:
            row = self.con.execute(
                "SELECT id, selection, since, until FROM crawls WHERE finished=0 ORDER BY id DESC LIMIT 1"
            ).fetchone()
            if row is not None:
                return int(row[0]), row[2], row[3], json.loads(row[1])
            s, u = default
        if row is not None:
            return int(row[0]), s, u, json.loads(row[1])
        cur = self.con.execute(
            "INSERT INTO crawls (since, until, selection, options) VALUES (?, ?, 'null', '{}')",
            (s, u),
        )
        return int(cur.lastrowid or 0), s, u, None

    def save_selection(self, crawl_id: int, names: list[str], options: dict[str, Any]) -> None:
        """Fix the crawl's repositories (a search answers differently tomorrow) before any work."""
        self.con.execute(
            "UPDATE crawls SET selection=?, options=? WHERE id=?",
            (json.dumps(names), json.dumps(options, sort_keys=True), crawl_id),
        )

    def finish(self, crawl_id: int) -> None:
        self.mark([("UPDATE crawls SET finished=1 WHERE id=?", (crawl_id,))])
        self.flush()

    def load_etags(self) -> dict[str, tuple[str, Any]]:
        return {
            url: (etag, json.loads(body))
            for url, etag, body in self.con.execute("SELECT url, etag, body FROM etags")
        }
