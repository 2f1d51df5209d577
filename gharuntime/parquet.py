"""Parquet files read by path, never by pattern: polars expands a path string as a glob, so a
dataset folder named `runs[1]` (a character class) would match nothing and read as
"unreadable". Every Parquet read in the project goes through here, with globbing off, and only
regular files are read (a FIFO would block polars forever: gharuntime.readfile refuses it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from gharuntime.readfile import require_regular

__all__ = ["parquet_schema", "read_parquet"]


def read_parquet(paths: Path | Sequence[Path], columns: list[str] | None = None) -> pl.DataFrame:
    """The rows of one file, or of several files concatenated, each named exactly."""
    source: Path | list[Path] = paths if isinstance(paths, Path) else list(paths)
    for path in [source] if isinstance(source, Path) else source:
        require_regular(path)
    return pl.read_parquet(source, columns=columns, glob=False)


def parquet_schema(path: Path) -> pl.Schema:
    """The column names and types of one file (polars' read_parquet_schema always globs)."""
    require_regular(path)
    return pl.scan_parquet(path, glob=False).collect_schema()
