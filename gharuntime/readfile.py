"""Files named from outside, read so that no name can hang or exhaust the process: only a
regular file is opened (a FIFO would block until a writer comes, /dev/zero never ends, and a
symlink to either is followed and refused the same), opened without blocking, and read up to a
cap that says what the file is for. Every input file a command reads whole goes through here."""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from gharuntime.errors import GharuntimeError

__all__ = [
    "InputFileError",
    "bounded_lines",
    "iter_lines",
    "lone_surrogate",
    "open_regular",
    "parse_json",
    "read_bytes",
    "read_json",
    "read_text",
    "require_regular",
]


class InputFileError(GharuntimeError, OSError, ValueError):
    """An input file that cannot be used; the message names it and says what to give. Both an
    OSError and a ValueError, so every handler of an unreadable or malformed file takes it."""


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{n:,} bytes"


def _not_regular(path: Path, mode: int) -> InputFileError:
    kind = "a folder" if stat.S_ISDIR(mode) else "a device, pipe or socket"
    return InputFileError(f"{path} is {kind}, not a regular file; give a file")


def _open(path: Path) -> int:
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise _not_regular(path, mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if isinstance(exc, InputFileError):
            raise
        raise InputFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _not_regular(path, info.st_mode)
    return fd


def require_regular(path: Path) -> None:
    """InputFileError unless `path` is a regular file (symlinks followed), checked by a
    non-blocking open, for readers that take a path themselves (Parquet through polars)."""
    os.close(_open(path))


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading in binary, if it is a regular file (for readers that stream a
    large file in bounded blocks themselves); InputFileError otherwise."""
    fd = _open(path)
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def iter_lines(path: Path, max_line_bytes: int) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes without the newline) of each line of the regular file `path`, read
    in bounded blocks; InputFileError at a line over `max_line_bytes` (a file without newlines
    is never held whole), or for a file that is not regular."""
    with open_regular(path) as f:
        carry = b""
        lineno = 0
        while True:
            block = f.read(1 << 16)
            data = carry + block
            *lines, carry = data.split(b"\n")
            for line in lines:
                lineno += 1
                if len(line) > max_line_bytes:
                    break
                yield lineno, line
            else:
                if len(carry) <= max_line_bytes and block:
                    continue
                if len(carry) <= max_line_bytes:  # the end of the file
                    if carry:
                        yield lineno + 1, carry
                    return
                lineno += 1
            raise InputFileError(
                f"{path} line {lineno} is over {_mb(max_line_bytes)}; a line holds one short "
                "record: is it the right file?"
            )


class _Lines(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


def bounded_lines(stream: _Lines, max_line_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line with its newline) of each line of an open binary stream (a gzip file,
    whose decompressed size its name does not tell), or (line number, None) for a line over
    `max_line_bytes`, which is read past in bounded pieces and never held: a decompression bomb
    of one endless line costs time, not memory. The caller counts the None lines as it counts
    its other bad lines."""
    number = 0
    while True:
        line = stream.readline(max_line_bytes + 1)
        if not line:
            return
        number += 1
        if len(line) <= max_line_bytes or (
            line.endswith(b"\n") and len(line) == max_line_bytes + 1
        ):
            yield number, line
            continue
        while not line.endswith(b"\n"):
            line = stream.readline(1 << 20)
            if not line:
                break
        yield number, None


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def lone_surrogate(raw: bytes, doc: Any) -> bool:
    """Whether the document `doc`, parsed from the JSON bytes `raw`, holds a lone surrogate in
    any string (key or value), for readers that take values from a record without `api_text`.
    Only a line with a surrogate escape is walked, so clean lines cost one regex scan."""
    if _SURROGATE_ESCAPE.search(raw) is None:
        return False
    try:
        json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (ValueError, RecursionError):
        return False
    return False


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file `path`, at most `max_bytes` of them (InputFileError for
    a file that is not regular, cannot be opened, or is larger). A FIFO or device is refused
    before it is opened; the open does not block either way, in case the name changed since."""
    fd = _open(path)
    try:
        info = os.fstat(fd)
        if info.st_size > max_bytes:
            raise InputFileError(
                f"{path} is {_mb(info.st_size)}; at most {_mb(max_bytes)} are read: is it "
                "the right file?"
            )
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # it grew while read
            raise InputFileError(f"{path} holds more than {_mb(max_bytes)}; is it the right file?")
        return b"".join(chunks)
    except InputFileError:
        raise
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_text(path: Path, max_bytes: int) -> str:
    """`read_bytes` decoded as UTF-8 (a BOM dropped); InputFileError names the line that is not."""
    data = read_bytes(path, max_bytes)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(f"{path} line {line} is not UTF-8 text; save it as UTF-8") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _depth(value: Any, limit: int) -> bool:
    """Whether `value` nests deeper than `limit` (iteratively: no recursion to exhaust)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def parse_json(text: str, where: object, *, max_depth: int = 64) -> Any:
    """A JSON document, refusing NaN and Infinity (not JSON) and nesting deeper than
    `max_depth`; InputFileError says which, naming `where`."""
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise InputFileError(f"{where}: JSON nested too deeply (over {max_depth} levels)") from None
    except ValueError as exc:
        raise InputFileError(f"{where}: not JSON: {exc}") from None
    if _depth(doc, max_depth):
        raise InputFileError(f"{where}: JSON nested too deeply (over {max_depth} levels)")
    return doc


def read_json(path: Path, max_bytes: int, *, max_depth: int = 64) -> Any:
    """A JSON document from `read_text`, checked by `parse_json`."""
    return parse_json(read_text(path, max_bytes), path, max_depth=max_depth)
