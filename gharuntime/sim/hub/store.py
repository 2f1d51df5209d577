"""The test Hub's storage: objects by sha256 (written to a temporary name, renamed once the hash
checks), commit records, and each repository's refs file (replaced by one rename)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from gharuntime.errors import GharuntimeError
from gharuntime.paths import write_atomic

__all__ = [
    "COMMIT_RE",
    "GITATTRIBUTES",
    "HubHTTPError",
    "Store",
    "file_entry",
    "git_blob_oid",
    "lfs_pointer",
]

COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
GITATTRIBUTES = (
    b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.png filter=lfs diff=lfs merge=lfs -text\n"
)


class HubHTTPError(GharuntimeError):
    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def git_blob_oid(data: bytes) -> str:
    """Git's object id of a blob: sha1 of `blob SIZE\\0` + content."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    return (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()
    )


class Store:
    """Objects by sha256, commit records, and each repository's refs, under one folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for sub in ("objects", "commits", "repos", "tmp"):
            (root / sub).mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()

    def object_path(self, sha256: str) -> Path:
        return self.root / "objects" / sha256

    def has_object(self, sha256: str, size: int | None = None) -> bool:
        path = self.object_path(sha256)
        return path.is_file() and (size is None or path.stat().st_size == size)

    def put_bytes(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        if not self.has_object(sha):
            self._write_atomic(self.object_path(sha), data)
        return sha

    def _write_atomic(self, path: Path, data: bytes | Callable[[IO[Any]], object]) -> None:
        """paths.write_atomic with the temporary file in the store's tmp/ (so objects/ holds
        only complete objects), private to this user as the store's files always were."""
        write_atomic(path, data, binary=True, mode=0o600, temp_dir=self.root / "tmp")

    def receive_object(self, expected: str, stream: Iterator[bytes]) -> None:
        """Stream an upload into a temporary file; keep it only if its sha256 is `expected`."""

        def checked(f: IO[bytes]) -> None:
            h = hashlib.sha256()
            for block in stream:
                h.update(block)
                f.write(block)
            if h.hexdigest() != expected:
                raise HubHTTPError(
                    400, f"uploaded content has sha256 {h.hexdigest()}, not {expected}"
                )

        self._write_atomic(self.object_path(expected), checked)

    def _repo_file(self, repo_id: str) -> Path:
        # percent-encoded, "/" and "%" included: one file per id (replacing "/" with "__" gave
        # org "a__b" name "c" and org "a" name "b__c" the same file), and never a path
        return self.root / "repos" / (quote(repo_id, safe="") + ".json")

    def repo(self, repo_id: str) -> dict[str, Any] | None:
        path = self._repo_file(repo_id)
        if not path.is_file():
            return None
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data

    def save_repo(self, repo_id: str, data: Mapping[str, Any]) -> None:
        self._write_atomic(self._repo_file(repo_id), json.dumps(data, indent=1).encode())

    def commit(self, oid: str) -> dict[str, Any] | None:
        path = self.root / "commits" / f"{oid}.json"
        if not COMMIT_RE.match(oid) or not path.is_file():
            return None
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data

    def write_commit(
        self, parent: str | None, files: Mapping[str, Any], summary: str, description: str
    ) -> str:
        body = {
            "parents": [parent] if parent else [],
            "summary": summary,
            "description": description,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "files": dict(sorted(files.items())),
        }
        oid = hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()
        self._write_atomic(self.root / "commits" / f"{oid}.json", json.dumps(body).encode())
        return oid


def file_entry(sha256: str, size: int, lfs: bool, data: bytes | None) -> dict[str, Any]:
    git_oid = git_blob_oid(lfs_pointer(sha256, size) if lfs else (data or b""))
    return {"sha256": sha256, "size": size, "lfs": lfs, "git_oid": git_oid}
