"""Paths from outside, handled in one place: containment (a relative path named in a file must
stay inside its folder), output files that must not overwrite an input, a dataset or a device,
the one atomic file write (`write_atomic`) and folder swap (`replace_folder`), and the temporary
siblings they use (created with the permissions the umask gives, and cleaned up when the process
that made them is gone)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import IO, Any

__all__ = [
    "clean_stale_siblings",
    "contained",
    "is_within",
    "make_temp_dir",
    "make_temp_file",
    "output_file_problem",
    "output_folder_problem",
    "replace_folder",
    "sibling_stem",
    "umask",
    "write_atomic",
]


def umask() -> int:
    """The process umask (read without changing it where /proc allows)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def is_within(path: Path, folder: Path) -> bool:
    """Whether `path` (resolved, symlinks followed) lies inside `folder` or is it."""
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def contained(root: Path, relative: str, *, follow_links: bool = True) -> Path | None:
    """`root / relative` when `relative` is a plain relative path that stays inside `root`
    (no absolute path, drive, `..` climbing out, NUL, or, with `follow_links`, a symlink leading
    out); else None. Dataset folders pass follow_links=False: a Hugging Face cache snapshot
    holds every file as a symlink into the cache's blobs, and their bytes are checked by sha256."""
    if not relative or "\x00" in relative or "\\" in relative:
        return None
    pure = PurePosixPath(relative)
    if pure.is_absolute() or ".." in pure.parts:
        return None
    candidate = root / pure
    if not follow_links:
        return candidate
    return candidate if is_within(candidate, root) else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


_LONG_NAME = 160
"""Bytes of a name past which its temporary siblings use a shortened stem: a sibling adds
about 30 characters (`.`, `.tmp-PID-` and mkstemp's 8), and a file system allows 255."""


def sibling_stem(out: Path) -> str:
    """The NAME in `out`'s temporary siblings (`.NAME.tmp-PID-*`, `.NAME.old-PID`): the name
    itself, or for a long one its first 120 characters and a hash of the whole, so a sibling's
    name stays within the file system's 255 bytes and still belongs to `out` alone."""
    name = out.name
    if len(name.encode("utf-8", "surrogateescape")) <= _LONG_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    head = name.encode("utf-8", "surrogateescape")[:120].decode("utf-8", "ignore")
    return f"{head}~{digest}"


def clean_stale_siblings(out: Path) -> list[Path]:
    """Remove the temporary siblings (`.NAME.tmp-PID-*`, `.NAME.old-PID`; NAME: `sibling_stem`)
    that a killed writer of `out` left behind: only folders or files with that exact pattern,
    owned by this user, whose process no longer runs. Returns what was removed."""
    pattern = re.compile(rf"^\.{re.escape(sibling_stem(out))}\.(?:tmp|old)-(\d+)(?:-.*)?$")
    removed: list[Path] = []
    try:
        entries = list(out.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if not m or int(m.group(1)) == os.getpid() or _pid_alive(int(m.group(1))):
            continue
        try:
            info = entry.lstat()
            if info.st_uid != os.getuid():
                continue
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed.append(entry)
        except OSError:
            continue
    return removed


def make_temp_dir(out: Path) -> Path:
    """A new empty folder beside `out` to build it in, then rename over it. Its name carries
    this process id so a later writer can tell a leftover of a killed one; its mode is the
    umask's (mkdtemp alone makes it 0700, and the rename would keep that)."""
    clean_stale_siblings(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{sibling_stem(out)}.tmp-{os.getpid()}-", dir=out.parent))
    tmp.chmod(0o777 & ~umask())
    return tmp


def replace_folder(new: Path, out: Path) -> None:
    """Put the finished folder `new` (a temporary sibling of `out`) at `out`: renamed into
    place, the old folder moved aside first and removed only once the new one is there, so a
    kill at any moment leaves either the old folder or the new one at `out` (and a leftover
    `.NAME.old-PID` that clean_stale_siblings removes)."""
    if not out.exists():
        os.replace(new, out)
        return
    old = out.with_name(f".{sibling_stem(out)}.old-{os.getpid()}")
    os.replace(out, old)
    os.replace(new, out)
    shutil.rmtree(old, ignore_errors=True)


def make_temp_file(out: Path) -> tuple[int, Path]:
    """(fd, path) of a new file beside `out`, with the umask's mode (mkstemp gives 0600)."""
    clean_stale_siblings(out)
    fd, name = tempfile.mkstemp(prefix=f".{sibling_stem(out)}.tmp-{os.getpid()}-", dir=out.parent)
    os.fchmod(fd, 0o666 & ~umask())
    return fd, Path(name)


def _fill(f: IO[Any], data: str | bytes | Callable[[IO[Any]], object], fsync: bool) -> None:
    if callable(data):
        data(f)
    else:
        f.write(data)
    if fsync:
        f.flush()
        os.fsync(f.fileno())


def write_atomic(
    path: Path,
    data: str | bytes | Callable[[IO[Any]], object],
    *,
    binary: bool = False,
    mode: int | None = None,
    fsync: bool = False,
    temp_dir: Path | None = None,
) -> None:
    """Write `path` whole or not at all: into a new temporary file, renamed over `path` once
    complete, so a reader (or a writer killed at any moment) sees the old file or the new one,
    never half of one; on any error the temporary file is removed and `path` is as it was.

    `data` is text (UTF-8, `\\n` line ends), bytes, or a function that writes into the open
    file (text, or bytes with `binary`), e.g. to stream lines or to check what it wrote and
    raise. `mode` sets the file's permissions (default: what the umask gives a new file);
    `fsync` puts the bytes on disk before the rename (a store whose index lists the file
    next); `temp_dir` makes the temporary file there instead of beside `path` (a folder of
    the same file system whose listing must show only complete files). The parent folder is
    created when missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if temp_dir is None:
        fd, tmp = make_temp_file(path)
    else:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-{os.getpid()}-", dir=temp_dir)
        os.fchmod(fd, 0o666 & ~umask())
        tmp = Path(name)
    try:
        if isinstance(data, bytes) or (binary and callable(data)):
            with os.fdopen(fd, "wb") as out:
                _fill(out, data, fsync)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as text:
                _fill(text, data, fsync)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _dataset_root(path: Path) -> Path | None:
    for folder in [path, *path.parents]:
        if (folder / "manifest.json").is_file() and (folder / "data").is_dir():
            return folder
    return None


def output_file_problem(out: Path, inputs: Iterable[Path | None] = ()) -> str | None:
    """Why `out` must not be written as a result file (None when it may): it names one of the
    command's inputs, lies inside a dataset folder, or exists and is not a regular file (a
    folder, a device, a pipe)."""
    try:
        if out.exists() or out.is_symlink():
            info = out.stat()
            if not stat.S_ISREG(info.st_mode):
                return f"{out} exists and is not a regular file; give a file path"
            for given in inputs:
                if given is not None and given.exists() and os.path.samefile(out, given):
                    return f"{out} is an input of this command; give another output path"
        resolved = out.resolve()
        for given in inputs:
            if given is not None and given.resolve() == resolved:
                return f"{out} is an input of this command; give another output path"
        root = _dataset_root(resolved.parent)
    except OSError as exc:
        return f"{out}: {exc.strerror or exc}"
    if root is not None:
        return f"{out} is inside the dataset folder {root}; write results outside it"
    if str(resolved).startswith(("/proc/", "/sys/", "/dev/")):
        return f"{out} is not a place for a result file"
    return None


def output_folder_problem(out: Path, inputs: Iterable[Path | None]) -> str | None:
    """Why the folder `out`, which a command replaces whole, must not be written (None when it
    may): it is one of the command's inputs, files or folders (resolved, links followed), or
    holds one, which the replacement would destroy."""
    try:
        target = out.resolve()
        for given in inputs:
            if given is None:
                continue
            real = given.resolve()
            if real == target:
                return f"{out} is an input of this command ({given}); give another output folder"
            if real.is_relative_to(target):
                return (
                    f"{out} holds {given}, an input of this command, which replacing it would "
                    "destroy; give another output folder"
                )
    except (OSError, RuntimeError) as exc:  # a name the OS refuses, a symlink loop
        return f"{out}: {getattr(exc, 'strerror', None) or exc}"
    return None
