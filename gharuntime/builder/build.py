"""`gharuntime build` as a library call: read a source, normalize, filter, add history, split and
write a documented dataset folder through `gharuntime.dataset.write_dataset`. Every source is a
`gharuntime.sources.base.Source` whose `read()` gives Candidates; `build(source, out, options)`
is the one build. The sources a person names (`--source KIND`) are in
`gharuntime.source_kinds.SOURCES`. `build_from_raw` and `build_from_ghalogs` are deprecated
shorthands (each warns); nothing in the project calls them.

Every bad input is counted in the result's `problems` (and the manifest), never raised; what is
raised (BuildError) is a build that cannot produce a dataset at all, and then any earlier dataset
at the output path stays as it was.
"""

from __future__ import annotations

import hashlib
import sqlite3
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from gharuntime.builder.card import render_card
from gharuntime.builder.filters import DEFAULT_CONCLUSIONS, apply_filters
from gharuntime.builder.normalize import Texts, normalize_raw
from gharuntime.contract import COLUMNS, RawStoreLayout
from gharuntime.dataset import DEFAULT_ROWS_PER_FILE, DatasetError, LocalDataset, write_dataset
from gharuntime.errors import GharuntimeError
from gharuntime.history import history_durations
from gharuntime.markdown import code
from gharuntime.progress import Progress
from gharuntime.rawstore import RawStoreError, listed_shards
from gharuntime.release_diff import DatasetSide, diff_datasets, render_markdown
from gharuntime.sources._columns import Problems, SourceError
from gharuntime.sources.base import Candidates, CardRender, Source
from gharuntime.sources.ghalogs import GhalogsSource
from gharuntime.sources.raw import read_raw_stores

__all__ = [
    "BuildError",
    "BuildOptions",
    "BuildResult",
    "RawSource",
    "build",
    "build_from_ghalogs",
    "build_from_raw",
    "finish_build",
    "with_previous_release",
]

_LAYOUT = RawStoreLayout()

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


def _note(progress: Progress | None, stage: str) -> None:
    if progress is not None:
        progress(stage, 0, None)


def _store_provenance(root: Path) -> dict[str, Any]:
    """Name, meta and a digest of a raw store's listed shards (no absolute paths: output must not
    depend on where the store sits)."""
    con = sqlite3.connect(f"file:{root / _LAYOUT.state}?mode=ro", uri=True)
    try:
        meta = dict(con.execute("SELECT key, value FROM meta ORDER BY key").fetchall())
        shards = con.execute("SELECT name, records, sha256 FROM shards ORDER BY rowid").fetchall()
    finally:
        con.close()
    digest = hashlib.sha256("\n".join(f"{n}:{s}" for n, _, s in shards).encode()).hexdigest()
    return {
        "name": root.resolve().name,
        "meta": {
            k: v
            for k, v in meta.items()
            if k in ("format", "source", "api_url", "seed", "synthetic") or k.startswith("sim_")
        },
        "shards": len(shards),
        "records": sum(int(r) for _, r, _ in shards),
        "shards_sha256": digest,
    }


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
    fixes some repositories' cross_repo split; `render` replaces render_card;
    `previous` (an earlier release) adds what changed since it to the card and the manifest.

    Pass `candidates` without keeping a reference of your own: at millions of rows the build
    frees each stage's frame as soon as the next one exists."""
    _note(progress, "filtering")
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
    _note(progress, "history features")
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
    _note(progress, "writing the dataset")
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
    texts, cross_repo, render = found.texts, found.cross_repo, found.render
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


@dataclass(frozen=True)
class RawSource:
    """One or more raw stores (crawl shards or `simulate dump`), read together, as a Source.

    `provenance` adds to (and overrides) what the stores record of where they came from (the
    manifest's `source` section); `workers` > 1 parses
    workflow YAML in that many spawned processes (see resolve_job_keys)."""

    roots: Sequence[Path]
    provenance: Mapping[str, Any] | None = None
    workers: int = 1

    def read(self, progress: Progress | None = None) -> Candidates:
        """read_raw_stores, normalized to candidate rows (SourceError: not a raw store)."""
        roots = [Path(r) for r in self.roots]
        try:
            for root in roots:
                listed_shards(root)  # a clear error naming the folder when it is not a store
            stores = [_store_provenance(r) for r in roots]
            tables = read_raw_stores(roots, progress=progress)
        except (RawStoreError, sqlite3.Error) as exc:
            raise SourceError(str(exc)) from exc
        problems = tables.problems
        records, fetch_errors = tables.records, tables.fetch_errors
        _note(progress, "normalizing")
        normalized = [normalize_raw(tables, problems, workers=self.workers, progress=progress)]
        del tables  # the raw tables are no longer needed; free them before the filters run
        # Recorded, not guessed: a crawl that met the simulated GitHub's SIMULATED_HEADER, and
        # `simulate dump`, write synthetic=1 into the store's meta.
        synthetic = any(
            s["meta"].get("synthetic") == "1" or s["meta"].get("source") == "simulated"
            for s in stores
        )
        src = {
            "kind": "simulated" if synthetic else "raw",
            "synthetic": synthetic,
            "stores": stores,
            **(self.provenance or {}),
        }
        # A store's record wins over what the caller assumed (`--source github` pointed at the
        # simulated GitHub is still synthetic).
        src["synthetic"] = synthetic or bool(src.get("synthetic"))
        texts = normalized[0][1]
        return Candidates(
            frame=normalized.pop()[0],  # no reference kept here, so it can be freed early
            problems=problems,
            provenance=src,
            build={"records": records, "fetch_errors": fetch_errors},
            texts=texts,
        )


def _deprecated(name: str, instead: str) -> None:
    """Warn, at the caller's line, that shorthand `name` goes away (#38: one way to build)."""
    warnings.warn(
        f"{name} is deprecated and will be removed; use {instead} (gharuntime.builder.build)",
        DeprecationWarning,
        stacklevel=3,
    )


def build_from_raw(
    roots: Sequence[Path],
    out: Path,
    *,
    conclusions: Sequence[str] | None = DEFAULT_CONCLUSIONS,
    source: dict[str, Any] | None = None,
    progress: Progress | None = None,
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
    workers: int = 1,
    previous: DatasetSide | None = None,
) -> BuildResult:
    """Deprecated: `build(RawSource(roots, provenance=source, workers=workers), out,
    BuildOptions(conclusions, rows_per_file, previous, progress))`."""
    _deprecated("build_from_raw", "build(RawSource(roots), out, BuildOptions(...))")
    return build(
        RawSource(list(roots), provenance=source, workers=workers),
        out,
        BuildOptions(conclusions, rows_per_file, previous, progress),
    )


def build_from_ghalogs(
    dump: Path,
    out: Path,
    *,
    logs: Path | None = None,
    conclusions: Sequence[str] | None = DEFAULT_CONCLUSIONS,
    progress: Progress | None = None,
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
    previous: DatasetSide | None = None,
) -> BuildResult:
    """Deprecated: `build(GhalogsConfig(dump, logs).source(), out, BuildOptions(conclusions,
    rows_per_file, previous, progress))`."""
    _deprecated("build_from_ghalogs", "build(GhalogsConfig(dump, logs).source(), out, ...)")
    return build(
        GhalogsSource(dump, logs), out, BuildOptions(conclusions, rows_per_file, previous, progress)
    )
