"""One run at a time over a folder a long command writes step by step (`pipeline --out`,
`learn --out`, a tuned baseline's journal): two runs over the same steps would each replace what
the other is writing, and read what the other half wrote.

The lock is the operating system's: `flock` on a lock file in the folder (`LOCK_FILE`), taken
without waiting, held for the whole run and let go by the kernel when the process ends however
it ends (a kill leaves no stale lock to clean up). The holder writes its PID, host, command and
start time into the file, so the run refused can say who holds it.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from gharuntime.errors import GharuntimeError

__all__ = ["LOCK_FILE", "FolderInUse", "FolderLockError", "exclusive_lock", "folder_lock"]

LOCK_FILE: Final = ".gharuntime.lock"
"""The lock file a folder_lock holds in the folder (left in place: the lock is on the file, not
its existence, so it is never stale)."""
_HOLDER_BYTES: Final = 4096


class FolderLockError(GharuntimeError):
    """The lock file cannot be made or held (not a regular file, not writable)."""


class FolderInUse(FolderLockError):
    """Another process holds the lock; `holder` is what it recorded (empty when unknown)."""

    def __init__(self, message: str, *, holder: dict[str, Any], where: str, fix: str) -> None:
        super().__init__(message, where=where, fix=fix)
        self.holder = holder


if sys.platform == "win32":  # pragma: no cover - the project is tested on Linux
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, 1 << 30, os.SEEK_SET)  # a byte far past the holder's record
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, 1 << 30, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def _open_lock_file(path: Path) -> int:
    """The lock file opened for writing (created when missing); never a link, FIFO or device."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise FolderLockError(
            f"cannot open the lock file: {exc.strerror or exc}",
            where=str(path),
            fix="make the folder writable, or remove that path if it is a link",
        ) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FolderLockError(
            "is not a regular file, so it cannot hold the lock",
            where=str(path),
            fix="remove it (it is only ever a lock file)",
        )
    return fd


def _holder(fd: int) -> dict[str, Any]:
    """What the holding process recorded ({} when nothing readable yet)."""
    try:
        doc = json.loads(os.pread(fd, _HOLDER_BYTES, 0).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _said(holder: dict[str, Any]) -> str:
    """The holder as a short phrase, every value bounded and shown as ASCII."""
    pid, host = holder.get("pid"), holder.get("host")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return "another process"
    said = f"process {pid}"
    if isinstance(host, str) and host:
        said += f" on {ascii(host[:100])[1:-1]}"
    command = holder.get("command")
    if isinstance(command, str) and command:
        said += f" ({ascii(command[:100])[1:-1]}"
        since = holder.get("since")
        said += f", since {ascii(since[:40])[1:-1]})" if isinstance(since, str) else ")"
    return said


@contextmanager
def exclusive_lock(path: Path, *, command: str, what: str, fix: str) -> Iterator[None]:
    """Hold the lock file `path` for the block, or raise FolderInUse at once (never wait) when
    another process holds it: `what` names what is in use, `fix` says how to go on."""
    fd = _open_lock_file(path)
    try:
        if not _try_lock(fd):
            holder = _holder(fd)
            pid = holder.get("pid")
            stop = f" (e.g. `kill {pid}` on that host)" if isinstance(pid, int) else ""
            raise FolderInUse(
                f"{what} is in use by {_said(holder)}; two runs over it would replace each "
                "other's work",
                holder=holder,
                where=str(path.parent),
                fix=f"wait until that run ends, or stop it{stop} and run again; {fix}",
            )
        try:
            record = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "command": command,
                "since": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(record) + "\n").encode("utf-8"), 0)
            yield
        finally:
            with suppress(OSError):
                os.ftruncate(fd, 0)  # no holder any more (still ours until unlocked)
            _unlock(fd)
    finally:
        os.close(fd)


@contextmanager
def folder_lock(folder: Path, *, command: str, fix: str) -> Iterator[None]:
    """Hold `folder`'s lock (LOCK_FILE in it; the folder is created) for the block. Raises
    FolderInUse when another run holds it, FolderLockError when it cannot be taken."""
    if folder.exists() and not folder.is_dir():
        raise FolderLockError("is not a folder", where=str(folder), fix="give a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FolderLockError(
            f"cannot create the folder: {exc.strerror or exc}",
            where=str(folder),
            fix="give a folder you can write",
        ) from None
    with exclusive_lock(folder / LOCK_FILE, command=command, what="this folder", fix=fix):
        yield
