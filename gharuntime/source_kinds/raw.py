"""`--source raw` (the default): one or more raw stores (crawl shards, `simulate dump`), read
together. The kind whole: its options (PATHS, --raw, --workers), its config, its Source
(`RawSource`: the stores read by gharuntime.sources.raw, normalized by the builder) and what the
card says of it: a store that a crawl of the simulated GitHub or `simulate dump` wrote says it is
synthetic, and so does the dataset. The kinds that crawl first (simulated, github) read their
store through RawSource too."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import click

from gharuntime.builder.build import note
from gharuntime.builder.normalize import normalize_raw
from gharuntime.contract import RawStoreLayout
from gharuntime.progress import Progress
from gharuntime.rawstore import RawStoreError, listed_shards
from gharuntime.source_kinds.base import (
    PATHS,
    WORKERS,
    SourceConfig,
    SourceOption,
    SourceOptionError,
)
from gharuntime.sources._columns import SourceError
from gharuntime.sources.base import Candidates, CardText, Source
from gharuntime.sources.raw import read_raw_stores

__all__ = ["RAW", "RawConfig", "RawSource", "folders_only", "raw_card"]

_LAYOUT = RawStoreLayout()

RAW = SourceOption(
    click.Option(
        ["--raw", "raw"],
        multiple=True,
        type=click.Path(path_type=Path, exists=True, file_okay=False),
        help="A raw store (crawl output or `simulate dump`); more stores may follow: --raw A B C.",
    ),
    rank=20,
)


def folders_only(kind: str, paths: tuple[Path, ...]) -> None:
    """Refuse a file among PATHS for a kind that reads folders."""
    for path in paths:
        if not path.is_dir():
            raise SourceOptionError(
                f"{path} is a file; --source {kind} reads a folder (only --source api-json "
                "takes files)",
                option="PATHS",
            )


@dataclass(frozen=True)
class RawConfig(SourceConfig):
    """Raw store folders; `workers` processes parse the workflow YAML."""

    kind: ClassVar[str] = "raw"
    options: ClassVar[tuple[SourceOption, ...]] = (PATHS, RAW, WORKERS)
    summary: ClassVar[str] = "raw stores (crawl shards, `simulate dump`), read together"

    roots: tuple[Path, ...]
    workers: int = 1

    @classmethod
    def from_options(cls, out: Path, values: Mapping[str, Any]) -> RawConfig:
        """--raw DIR [DIR ...] and PATHS, at least one."""
        paths = tuple(values[PATHS.name])
        roots = (*values[RAW.name], *paths)
        if not roots:
            raise SourceOptionError(
                "give a source: --raw DIR [DIR ...] or --source ghalogs DIR (see --help)",
                option="--raw",
            )
        folders_only(cls.kind, paths)
        return cls(roots, values[WORKERS.name])

    def source(self) -> Source:
        return RawSource(list(self.roots), workers=self.workers)

    def reads(self) -> list[Path]:
        return list(self.roots)


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
        note(progress, "normalizing")
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
            card=raw_card,
        )


def raw_card(provenance: Mapping[str, Any]) -> CardText:
    """What the card says of raw stores: synthetic ones (the simulated GitHub, crawled or
    dumped) say so, in the front matter and the limitations too; others name each store."""
    stores = provenance.get("stores") or []
    if provenance.get("synthetic"):
        details = "; ".join(
            ", ".join(
                f"{k.removeprefix('sim_')} {v}"
                for k, v in sorted(s.get("meta", {}).items())
                if k.startswith("sim_") or k == "seed"
            )
            for s in stores
        )
        if provenance.get("seed") is not None:
            details = (
                f"seed {provenance['seed']}, scale {provenance.get('scale')}, crawled over HTTP"
            )
        return CardText(
            "**This dataset is synthetic.** Every repository, workflow, run and job timing comes "
            "from the project's simulated GitHub (a seeded generator with a hidden cost model, "
            "serving the GitHub REST API's shapes), not from github.com"
            f"{f' ({details})' if details.strip('; ') else ''}. Use it to try the toolkit end to "
            "end and to test methods; its numbers say nothing about real GitHub Actions jobs.",
            tags=("synthetic",),
            pretty_name="GHARuntime (synthetic)",
            limitations=(
                "- Synthetic: job timings come from the simulator's hidden cost model; do not "
                "report results on it as results about GitHub Actions.",
            ),
        )
    names = ", ".join(
        f"`{s.get('name')}` ({s.get('records', 0):,} records"
        f"{', from ' + str(s['meta']['api_url']) if s.get('meta', {}).get('api_url') else ''})"
        for s in stores
    )
    return CardText(
        "Built from raw stores of GitHub REST API responses collected by the gharuntime crawler: "
        f"{names or 'none listed'}. Each raw store's shard digest is in manifest.json."
    )
