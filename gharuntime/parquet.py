"""Parquet files read by path, never by pattern: polars expands a path string as a glob, so a
dataset folder named `runs[1]` (a character class) would match nothing and read as
"unreadable". Every Parquet read in the project goes through here, with globbing off, and only
regular files are read (a FIFO would block polars forever: gharuntime.readfile refuses it).

Every Parquet file a dataset holds is written here too, one row group at a time: polars keeps a
text repeated on many rows (one workflow's YAML on each of its jobs) once, as views, but Arrow
copies it per row when a table is made, so making the whole file at once would hold a 7 MB
workflow 300 times (2 GB). Row groups are 50,000 rows, cut shorter where their texts would pass
ROW_GROUP_TEXT_BYTES; every dataset whose groups stay under it is written byte for byte as a
single `pq.write_table(..., row_group_size=50_000)` would."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from gharuntime.readfile import require_regular

__all__ = [
    "ROW_GROUP_ROWS",
    "ROW_GROUP_TEXT_BYTES",
    "parquet_schema",
    "read_parquet",
    "write_parquet",
]

ROW_GROUP_ROWS = 50_000
ROW_GROUP_TEXT_BYTES = 768 * 2**20
"""The most text (bytes of String and List(String) values) one row group is made with; the
real Apache build's largest group holds about 620 MB."""


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


def _text_bytes(frame: pl.DataFrame) -> pl.Series:
    """Bytes of text each row holds, over its String and List(String) columns (views: cheap)."""
    parts = [pl.lit(0, dtype=pl.Int64)]
    for name, dtype in frame.schema.items():
        if dtype == pl.String:
            parts.append(pl.col(name).str.len_bytes().cast(pl.Int64).fill_null(0))
        elif dtype == pl.List(pl.String):
            size = pl.col(name).list.eval(pl.element().str.len_bytes().cast(pl.Int64)).list.sum()
            parts.append(size.fill_null(0))
    return frame.select(pl.sum_horizontal(parts).alias("bytes")).to_series()


def _groups(sizes: pl.Series, rows: int, budget: int) -> list[tuple[int, int]]:
    """(start, length) of each row group: `rows` rows, cut where the text passes `budget`."""
    out: list[tuple[int, int]] = []
    n = sizes.len()
    for start in range(0, n, rows):
        length = min(rows, n - start)
        block = sizes.slice(start, length)
        if int(block.sum() or 0) <= budget:
            out.append((start, length))
            continue
        first, total = start, 0
        for i, size in enumerate(block.to_list(), start=start):
            if i > first and total + size > budget:
                out.append((first, i - first))
                first, total = i, 0
            total += size
        out.append((first, start + length - first))
    return out


def write_parquet(
    frame: pl.DataFrame,
    path: Path,
    *,
    rows: int = ROW_GROUP_ROWS,
    budget: int = ROW_GROUP_TEXT_BYTES,
) -> None:
    """`frame` as a zstd Parquet file, made one row group at a time (see the module docstring),
    so memory holds at most one group's texts beside the frame."""
    groups = _groups(_text_bytes(frame), rows, budget) if frame.height else [(0, 0)]
    writer: pq.ParquetWriter | None = None
    try:
        for start, length in groups:
            table = frame.slice(start, length).to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, compression="zstd")
            writer.write_table(table, row_group_size=max(length, 1))
            del table
    finally:
        if writer is not None:
            writer.close()
