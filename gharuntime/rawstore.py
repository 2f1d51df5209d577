"""Read and write raw stores (see contract.RawStoreLayout).

Writers (the crawler, `simulate dump`) append records through `RawStoreWriter`; the build reads
them back through `iter_records`. A shard becomes visible only once it is complete and listed in
the state database, so a writer killed at any moment never leaves a half-written shard behind.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import sqlite3
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gharuntime.contract import RAW_STORE_FORMAT, RawKind, RawStoreLayout
from gharuntime.errors import GharuntimeError
from gharuntime.paths import write_atomic
from gharuntime.readfile import bounded_lines, lone_surrogate

__all__ = [
    "RawRecord",
    "RawStoreError",
    "RawStoreWriter",
    "connect_state",
    "iter_records",
    "listed_shards",
    "shard_listing",
]

LAYOUT = RawStoreLayout()
MAX_RECORD_BYTES = 1 << 30
"""A shard line (one envelope, JSON) over this, decompressed, is reported and read past, never
held; the largest record the crawler writes is a log under `--log-cap-mb` (at most 1,000 MB)."""


class RawStoreError(GharuntimeError):
    """A raw store that cannot be read or written as the contract says."""


@dataclass(frozen=True)
class RawRecord:
    """One envelope from a shard."""

    kind: RawKind
    repo_id: int | None
    key: str
    body: Any
    shard: str
    line: int


def connect_state(root: Path) -> sqlite3.Connection:
    """Open (creating if needed) the store's state database."""
    root.mkdir(parents=True, exist_ok=True)
    (root / LAYOUT.shards).mkdir(exist_ok=True)
    con = sqlite3.connect(root / LAYOUT.state, isolation_level=None, timeout=60)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute(
        "CREATE TABLE IF NOT EXISTS shards (name TEXT PRIMARY KEY, records INTEGER NOT NULL, sha256 TEXT NOT NULL)"
    )
    con.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (RAW_STORE_FORMAT,))
    return con


def listed_shards(root: Path) -> list[str]:
    """Names of the complete shards of a store, in write order."""
    path = root / LAYOUT.state
    if not path.is_file():
        raise RawStoreError(
            f"{root}: not a raw store (no {LAYOUT.state}); pass the folder a crawl or `simulate dump` wrote"
        )
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        fmt = con.execute("SELECT value FROM meta WHERE key='format'").fetchone()
        if fmt is None or fmt[0] != RAW_STORE_FORMAT:
            raise RawStoreError(
                f"{root}: raw store format {fmt[0] if fmt else 'unknown'}, expected {RAW_STORE_FORMAT}"
            )
        return [r[0] for r in con.execute("SELECT name FROM shards ORDER BY rowid")]
    except sqlite3.DatabaseError as exc:
        raise RawStoreError(f"{root / LAYOUT.state}: cannot read state database: {exc}") from exc
    finally:
        con.close()


class RawStoreWriter:
    """Buffers records and writes them as complete, listed shards.

    `flush(extra_sql)` writes the buffered records as one shard and, in the same transaction that
    lists it, runs the caller's own statements (e.g. marking crawl units done), so stored data and
    progress never disagree after a kill.
    """

    def __init__(
        self, root: Path, *, prefix: str = "shard", meta: dict[str, str] | None = None
    ) -> None:
        self.root = root
        self.prefix = prefix
        self.con = connect_state(root)
        for k, v in (meta or {}).items():
            self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, v))
        self._buffer: list[bytes] = []
        self._remove_leftovers()

    def _remove_leftovers(self) -> None:
        listed = {r[0] for r in self.con.execute("SELECT name FROM shards")}
        for path in (self.root / LAYOUT.shards).iterdir():
            # a shard a killed writer left unlisted, or its temporary file (.NAME.tmp-PID-*)
            if path.name not in listed and path.name.lstrip(".").startswith(self.prefix + "-"):
                path.unlink()

    @property
    def pending(self) -> int:
        """Records buffered and not yet in a shard."""
        return len(self._buffer)

    def add(self, kind: RawKind, key: str, body: Any, repo_id: int | None = None) -> None:
        """Buffer one record."""
        line = json.dumps(
            {"kind": kind.value, "repo_id": repo_id, "key": key, "body": body},
            separators=(",", ":"),
            ensure_ascii=False,
        )
        try:
            data = line.encode()
        except UnicodeEncodeError:  # a lone surrogate ("\\ud800" in a response): keep it escaped
            data = json.dumps(
                {"kind": kind.value, "repo_id": repo_id, "key": key, "body": body},
                separators=(",", ":"),
            ).encode()
        self._buffer.append(data + b"\n")

    def _next_name(self) -> str:
        row = self.con.execute(
            "SELECT COUNT(*) FROM shards WHERE name LIKE ?", (self.prefix + "-%",)
        ).fetchone()
        return f"{self.prefix}-{row[0]:06d}{LAYOUT.shard_suffix}"

    def flush(self, extra_sql: Iterable[tuple[str, tuple[Any, ...]]] = ()) -> str | None:
        """Write buffered records as one shard and list it; returns its name (None if empty and
        there was nothing else to commit)."""
        statements = list(extra_sql)
        if not self._buffer and not statements:
            return None
        name: str | None = None
        sha = ""
        if self._buffer:
            name = self._next_name()
            final = self.root / LAYOUT.shards / name
            packed = io.BytesIO()
            # The gzip header names the file the shard was first written as (NAME.tmp): kept,
            # so a shard's bytes, and the revision of every dataset built from it, stay the same.
            with gzip.GzipFile(
                final.name + ".tmp", mode="wb", fileobj=packed, mtime=0, compresslevel=6
            ) as gz:
                gz.write(b"".join(self._buffer))
                gz.flush()  # a sync flush the shard format has always had, before the end
            blob = packed.getvalue()
            sha = hashlib.sha256(blob).hexdigest()
            write_atomic(final, blob, fsync=True)
        self.con.execute("BEGIN IMMEDIATE")
        try:
            if name is not None:
                self.con.execute(
                    "INSERT INTO shards VALUES (?, ?, ?)", (name, len(self._buffer), sha)
                )
            for sql, params in statements:
                self.con.execute(sql, params)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self._buffer.clear()
        return name

    def close(self) -> None:
        """Flush what is buffered and close the database."""
        self.flush()
        self.con.close()


def shard_listing(root: Path) -> list[tuple[str, int, str]]:
    """(name, records, sha256) of each complete shard of a store, in write order."""
    names = listed_shards(root)  # checks the format and names the folder when it is not a store
    con = sqlite3.connect(f"file:{root / LAYOUT.state}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT name, records, sha256 FROM shards ORDER BY rowid").fetchall()
    except sqlite3.DatabaseError as exc:
        raise RawStoreError(f"{root / LAYOUT.state}: cannot read state database: {exc}") from exc
    finally:
        con.close()
    listing = [(str(n), int(r), str(h or "")) for n, r, h in rows]
    if [n for n, _, _ in listing] != names:
        raise RawStoreError(f"{root / LAYOUT.state}: shard list changed while reading")
    return listing


class _HashingReader:
    """A read-only file object that hashes every byte read through it."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.sha = hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data: bytes = self.raw.read(n)
        self.sha.update(data)
        return data

    def finish(self) -> str:
        while self.read(1 << 20):
            pass
        return self.sha.hexdigest()


LostSink = Any  # Callable[[str, str, int], None]: where, message, records lost


def iter_records(
    roots: Iterable[Path], *, on_error: Any = None, on_lost: LostSink = None
) -> Iterator[RawRecord]:
    """Yield every record of the listed shards of one or more stores.

    Each shard is checked against the record count and sha256 the state database lists for it.
    A line that is not a valid envelope is passed to `on_error(where, message)` and skipped; a
    shard that is missing, truncated, holds fewer records than listed or whose bytes changed is
    passed to `on_lost(where, message, records lost)` (to `on_error` without it). With neither,
    either raises RawStoreError.
    """

    def fail(where: str, message: str) -> None:
        if on_error is None:
            raise RawStoreError(f"{where}: {message}")
        on_error(where, message)

    def lose(where: str, message: str, lost: int) -> None:
        if on_lost is not None:
            on_lost(where, message, lost)
        else:
            fail(where, message)

    for root in roots:
        for name, expected, sha in shard_listing(root):
            path = root / LAYOUT.shards / name
            good = bad = 0
            try:
                with open(path, "rb") as raw_file:
                    hashing = _HashingReader(raw_file)
                    with gzip.GzipFile(fileobj=hashing, mode="rb") as fh:  # type: ignore[call-overload]
                        for number, raw in bounded_lines(fh, MAX_RECORD_BYTES):
                            where = f"{path}:{number}"
                            if raw is None:
                                bad += 1
                                fail(where, f"a record over {MAX_RECORD_BYTES:,} bytes, not read")
                                continue
                            try:
                                env = json.loads(raw)
                                if lone_surrogate(raw, env):
                                    raise ValueError("a text holds a lone surrogate (not UTF-8)")
                                kind = RawKind(env["kind"])
                                rid = env.get("repo_id")
                                record = RawRecord(
                                    kind,
                                    rid if isinstance(rid, int) else None,
                                    str(env["key"]),
                                    env["body"],
                                    name,
                                    number,
                                )
                            except (ValueError, KeyError, TypeError, RecursionError) as exc:
                                bad += 1
                                fail(where, f"unreadable record ({type(exc).__name__}: {exc})")
                                continue
                            good += 1
                            yield record
                    digest = hashing.finish()
            except FileNotFoundError:
                lose(
                    str(path),
                    f"listed in the state database but missing ({expected} records)",
                    expected,
                )
                continue
            except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as exc:
                lost = max(expected - good - bad, 1)
                lose(
                    str(path),
                    f"truncated or corrupt shard ({exc}); {lost} of {expected} records lost",
                    lost,
                )
                continue
            if good + bad < expected:
                lost = expected - good - bad
                lose(
                    str(path),
                    f"shard holds {good + bad} records, the state database lists {expected}: "
                    f"{lost} lost (truncated or emptied after it was written)",
                    lost,
                )
            elif sha and digest != sha:
                lose(
                    str(path),
                    "shard bytes changed since it was written (sha256 differs from the state "
                    "database); its records may be altered",
                    0,
                )
