"""What every source gives the build: `Candidates`, the candidate job rows in the contract's
columns with the problems met reading them and the provenance for the manifest, from a `Source`
whose `read()` makes them, and what the dataset card says of the source (`CardText`, made by the
Candidates' `card` hook). One shape for every source (raw stores, the GHALogs dump, API JSON),
so one build (`gharuntime.builder.build.build`) serves them all; the Source of each kind a
person names is in its module of `gharuntime.source_kinds`.

The column helpers the readers share live here too, below the builder, so no reader imports
from `gharuntime.builder` (the builder imports the readers, never the other way round)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from gharuntime.progress import Progress
from gharuntime.sources._columns import Problems
from gharuntime.workflow import MAX_YAML_BYTES, runner_os

__all__ = [
    "AddFiles",
    "Candidates",
    "CardHook",
    "CardRender",
    "CardText",
    "Source",
    "Texts",
    "to_datetime",
    "with_runner_os",
]

CardRender = Callable[[Mapping[str, Any], pl.DataFrame, Path], str]
"""render(manifest, jobs, folder) -> the dataset card's Markdown."""


@dataclass(frozen=True)
class CardText:
    """What the dataset card says of its source: the provenance paragraph, the Hub front
    matter's `source_datasets` (and any tags and pretty name it adds), the limitations that
    follow from the source (Markdown list items) and what else to cite."""

    provenance: str
    source_datasets: tuple[str, ...] = ("original",)
    tags: tuple[str, ...] = ()
    pretty_name: str | None = None
    limitations: tuple[str, ...] = ()
    citation: str = ""


CardHook = Callable[[Mapping[str, Any]], CardText]
"""card(the manifest's `source` section, as written) -> what the card says of the source."""

AddFiles = Callable[[Mapping[str, Any], pl.DataFrame, Path], None]
"""add_files(manifest, jobs kept, new folder): files a source writes beside `data/` (and their
entries in the manifest's `source` section), before the card is rendered."""


@dataclass(frozen=True)
class Texts:
    """The YAML texts, one row per distinct file and per resolved job: joined onto the rows only
    at the end, so filters and sorts never move millions of long strings."""

    workflows: pl.DataFrame  # workflow_sha256, workflow_yaml
    jobs: pl.DataFrame  # workflow_sha256 (or resolve_unit), job_name, job_yaml

    def attach(self, rows: pl.DataFrame) -> pl.DataFrame:
        """`rows` with workflow_yaml and job_yaml filled from their workflow_sha256 / job_name
        (or, when both carry it, the resolve_unit: the file with the workflows it calls)."""
        rows = rows.drop("workflow_yaml", "job_yaml", strict=False)
        key = "resolve_unit" if "resolve_unit" in self.jobs.columns else "workflow_sha256"
        # A workflow over the parser's size cap was refused (and counted) when job keys were
        # resolved: its text is not kept on every job of it, and no sha256 names a text the row
        # does not hold (the contract: the sha256 of workflow_yaml, or null).
        big = pl.col("workflow_yaml").str.len_bytes() > MAX_YAML_BYTES
        refused = self.workflows.filter(big)["workflow_sha256"]
        rows = rows.join(
            self.workflows.filter(~big), on="workflow_sha256", how="left", maintain_order="left"
        ).join(self.jobs, on=[key, "job_name"], how="left", maintain_order="left")
        if refused.len():
            gone = pl.col("workflow_sha256").is_in(refused.implode())
            rows = rows.with_columns(
                pl.when(gone).then(None).otherwise(pl.col(c)).alias(c)
                for c in ("workflow_sha256", "job_yaml")
            )
        return rows


@dataclass(frozen=True)
class Candidates:
    """What a source read: the rows the build filters, and what the manifest says of them.

    `frame` holds the contract's columns (history aside) plus `status` and `job_key_how`, before
    any filter; `problems` counts the bad input met; `provenance` is the manifest's `source`.
    The rest is optional: `build` adds to the manifest's build parameters (records read, fetch
    errors), `texts` holds the YAML texts joined on at the end, `cross_repo` fixes some
    repositories' cross_repo split, `card` says what the card tells of the source (a generic
    paragraph without it), `add_files` writes files of the source's own into the dataset."""

    frame: pl.DataFrame
    problems: Problems
    provenance: dict[str, Any]
    build: dict[str, Any] = field(default_factory=dict)
    texts: Texts | None = None
    cross_repo: Mapping[int, str] | None = None
    card: CardHook | None = None
    add_files: AddFiles | None = None


class Source(Protocol):
    """A source the build reads. `read` raises SourceError (or the builder's BuildError) when
    the source cannot be read at all; bad records are counted in the Candidates' problems."""

    def read(self, progress: Progress | None = None) -> Candidates:
        """The candidate rows of this source."""
        ...


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
