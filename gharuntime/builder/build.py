"""`gharuntime build` as a library call: read a source, filter, add history, split and write a
documented dataset folder through `gharuntime.dataset.write_dataset`. Every source is a
`gharuntime.sources.base.Source` whose `read()` gives Candidates; `build(source, out, options)`
is the one build. The sources a person names (`--source KIND`), each with its Source, are in
`gharuntime.source_kinds` (`SOURCES`), which sits above the builder: nothing here imports it.

Every bad input is counted in the result's `problems` (and the manifest), never raised; what is
raised (BuildError) is a build that cannot produce a dataset at all, and then any earlier dataset
at the output path stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from gharuntime.builder.card import render_card
from gharuntime.builder.filters import DEFAULT_CONCLUSIONS, apply_filters
from gharuntime.builder.normalize import Texts
from gharuntime.contract import COLUMNS
from gharuntime.dataset import DEFAULT_ROWS_PER_FILE, DatasetError, LocalDataset, write_dataset
from gharuntime.errors import GharuntimeError
from gharuntime.history import history_durations
from gharuntime.markdown import code
from gharuntime.progress import Progress
from gharuntime.release_diff import DatasetSide, diff_datasets, render_markdown
from gharuntime.sources._columns import Problems, SourceError
from gharuntime.sources.base import AddFiles, CardHook, CardRender, Source

__all__ = [
    "BuildError",
    "BuildOptions",
    "BuildResult",
    "build",
    "finish_build",
    "note",
    "source_card",
    "with_previous_release",
]

# Problems that mean input records were lost rather than merely left incomplete.
LOSSY_PROBLEMS = (
    "unreadable_record",
    "truncated_shard",
    "job_without_run",
    "unreadable_run",
    "job_without_repository_id",
    "unreadable_file",
    "changed_shard",
)


class BuildError(GharuntimeError):
    """The build cannot produce a dataset (say what and how to fix it)."""


@dataclass
class BuildResult:
    """What a build wrote and what it met on the way."""

    out: Path
    manifest: dict[str, Any]
    filters: dict[str, int]
    problems: Problems = field(default_factory=Problems)
    notes: list[str] = field(default_factory=list)  # things the build did that a user must hear

    @property
    def rows(self) -> int:
        return int(self.manifest["rows"])

    @property
    def lost_input(self) -> int:
        """Input records that could not be read or placed (the CLI exits 1 when > 0)."""
        return sum(
            n
            for k, n in self.problems.counts.items()
            if k in LOSSY_PROBLEMS or k.startswith("malformed_")
        )


def note(progress: Progress | None, stage: str) -> None:
    """Report that the build entered `stage` (no count to show)."""
    if progress is not None:
        progress(stage, 0, None)


def source_card(card: CardHook | None, add_files: AddFiles | None = None) -> CardRender:
    """render_card with what the source says of itself (`card`), after the files of its own
    (`add_files`) are written into the new folder."""

    def render(manifest: Mapping[str, Any], jobs: pl.DataFrame, folder: Path) -> str:
        if add_files is not None:
            add_files(manifest, jobs, folder)
        return render_card(manifest, jobs, folder, card)

    return render


PREVIOUS_HEADING = "\n## How to cite"


def with_previous_release(render: CardRender, previous: DatasetSide) -> CardRender:
    """`render`, with the card's section on what changed since `previous` (`gharuntime diff`'s
    Markdown) put before "How to cite". It runs on the new folder's files before the folder is
    renamed into place, so a release never exists without it."""

    def card(manifest: Mapping[str, Any], jobs: pl.DataFrame, folder: Path) -> str:
        text = render(manifest, jobs, folder)
        new = DatasetSide(LocalDataset(folder), "this release", manifest)
        section = (
            "\n## Changes since the previous release\n\n"
            f"Compared with {code(previous.label)} by `gharuntime diff` at build time.\n\n"
            + render_markdown(diff_datasets(previous, new), heading="###")
        )
        at = text.find(PREVIOUS_HEADING)
        return text + section if at < 0 else text[:at] + "\n" + section + text[at:]

    return card


def finish_build(
    candidates: pl.DataFrame,
    out: Path,
    *,
    provenance: dict[str, Any],
    problems: Problems,
    texts: Texts | None = None,
    conclusions: Sequence[str] | None = DEFAULT_CONCLUSIONS,
    build: dict[str, Any] | None = None,
    progress: Progress | None = None,
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
    cross_repo: Mapping[int, str] | None = None,
    render: Callable[[Mapping[str, Any], pl.DataFrame, Path], str] | None = None,
    previous: DatasetSide | None = None,
) -> BuildResult:
    """Filter candidate rows, add history and the YAML texts, and write the dataset at `out`.

    `provenance` is where the rows came from (the manifest's `source` section); `cross_repo`
    fixes some repositories' cross_repo split; `render` makes the card (default: render_card
    with the generic text of a source; `source_card` makes one from a source's hooks);
    `previous` (an earlier release) adds what changed since it to the card and the manifest.

    Pass `candidates` without keeping a reference of your own: at millions of rows the build
    frees each stage's frame as soon as the next one exists."""
    note(progress, "filtering")
    n_candidates = candidates.height
    if n_candidates == 0 and problems.counts:
        # Nothing could be read: say why, rather than blame the filters that met no row.
        raise BuildError(
            "no job could be read from the source: "
            + "; ".join(
                f"{kind} {n:,}"
                + (f" (e.g. {problems.examples[kind][0]})" if problems.examples.get(kind) else "")
                for kind, n in sorted(problems.counts.items())
            )
        )
    rows, filter_counts = apply_filters(candidates, conclusions)
    del candidates
    if rows.height == 0:
        raise BuildError(
            f"no job is left after the filters ({n_candidates} candidates; removed: "
            + ", ".join(f"{k} {v}" for k, v in filter_counts.items() if v)
            + "); nothing was written. Check the source, or keep more conclusions with "
            "--conclusions all"
        )
    job_keys = {
        str(how): int(n)
        for how, n in rows.group_by("job_key_how").len().sort("job_key_how").iter_rows()
    }
    note(progress, "history features")
    rows = rows.with_columns(history_durations(rows))
    if texts is not None:
        rows = texts.attach(rows)
    params = {
        **(build or {}),
        "conclusions": list(conclusions) if conclusions is not None else "all",
        "candidates": n_candidates,
        "job_keys": job_keys,
        "problems": problems.as_dict(),
    }
    card = render or render_card
    if previous is not None:
        card = with_previous_release(card, previous)
        params["previous"] = {
            "dataset": previous.label,
            "revision": previous.manifest.get("revision"),
            "schema_version": previous.manifest.get("schema_version"),
        }
    note(progress, "writing the dataset")
    final = [rows.select([c.name for c in COLUMNS])]
    del rows
    try:
        manifest = write_dataset(
            final.pop(),  # no reference kept here: write_dataset's sorted copy replaces it
            out,
            provenance=provenance,
            build=params,
            filters=filter_counts,
            render_card=card,
            rows_per_file=rows_per_file,
            cross_repo=cross_repo,
        )
    except DatasetError as exc:
        raise BuildError(f"could not write the dataset at {out}: {exc}") from exc
    return BuildResult(out=out, manifest=manifest, filters=filter_counts, problems=problems)


@dataclass(frozen=True)
class BuildOptions:
    """What every build takes whatever its source: the conclusions kept (None: all), the rows
    per Parquet file, the previous release the card compares with, and where progress goes."""

    conclusions: Sequence[str] | None = DEFAULT_CONCLUSIONS
    rows_per_file: int = DEFAULT_ROWS_PER_FILE
    previous: DatasetSide | None = None
    progress: Progress | None = None


def build(source: Source, out: Path, options: BuildOptions | None = None) -> BuildResult:
    """The one build: read `source`'s candidates, then filter, add history and write the
    dataset at `out` (finish_build). A source that cannot be read is a BuildError."""
    opts = options or BuildOptions()
    try:
        read = [source.read(opts.progress)]
    except SourceError as exc:
        raise BuildError(str(exc)) from exc
    found = read.pop()
    frames = [found.frame]
    problems, provenance, params = found.problems, found.provenance, found.build
    texts, cross_repo = found.texts, found.cross_repo
    render = source_card(found.card, found.add_files)
    del found  # only `frames` holds the candidates now, so the build can free them early
    return finish_build(
        frames.pop(),
        out,
        provenance=provenance,
        problems=problems,
        texts=texts,
        conclusions=opts.conclusions,
        build=params,
        progress=opts.progress,
        rows_per_file=opts.rows_per_file,
        cross_repo=cross_repo,
        render=render,
        previous=opts.previous,
    )
