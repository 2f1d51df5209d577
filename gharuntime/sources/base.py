"""What every source reader gives the build: candidate job rows in the contract's columns. The
column helpers the readers share live here, below the builder, so no reader imports from
`gharuntime.builder` (the builder imports the readers, never the other way round)."""

from __future__ import annotations

import polars as pl

from gharuntime.workflow import runner_os

__all__ = ["to_datetime", "with_runner_os"]

_TS = pl.Datetime("us", "UTC")


def to_datetime(*names: str) -> list[pl.Expr]:
    """Epoch-microsecond integer columns as UTC datetimes."""
    return [pl.col(n).cast(pl.Int64).cast(_TS) for n in names]


def with_runner_os(rows: pl.DataFrame, image_col: str = "runner_image") -> pl.DataFrame:
    """runner_os from the runner labels, else from the runner image read in the log; computed
    once per distinct (labels, image)."""
    key = pl.concat_str(
        pl.col("runner_labels").list.join("\x1f").fill_null(""),
        pl.lit("\x1e"),
        pl.col(image_col).fill_null(""),
    ).alias("_os_key")
    rows = rows.with_columns(key)
    combos = rows.select("_os_key", "runner_labels", image_col).unique(
        "_os_key", maintain_order=True
    )
    values = []
    for _, labels, image in combos.iter_rows():
        found = runner_os(labels) if labels else None
        if found is None and image:
            found = runner_os([image])
        values.append(found)
    table = pl.DataFrame(
        {"_os_key": combos["_os_key"], "runner_os": values},
        schema={"_os_key": pl.String, "runner_os": pl.String},
    )
    return rows.join(table, on="_os_key", how="left", maintain_order="left").drop("_os_key")
