"""`--source simulated`: serve the seeded simulated GitHub on 127.0.0.1, crawl it with the real
crawler over real HTTP into a raw store, and build from that (a synthetic dataset; says so:
the raw kind's card tells a store of the simulated GitHub). The kind whole: its options
(--seed, --scale, --crawl-dir, --crawl-logs, --workers), its config and its Source (a
CrawledSource of the world's crawl). The one source module that uses the simulator, so the
builder never imports it.

Same parameters, same bytes: `prepare_simulated_store` continues only a store of the same
world (seed, scale, logs); any other store is refused, never removed (`claim_crawl_dir`)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import click

from gharuntime.builder.build import BuildError
from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir, simulated_world
from gharuntime.crawler.client import EtagCache, GitHubClient, Token
from gharuntime.crawler.crawl import CrawlOptions, CrawlResult
from gharuntime.paramtypes import SEED as SEED_TYPE
from gharuntime.progress import Progress
from gharuntime.sim.world import SCALES
from gharuntime.source_kinds.base import (
    CRAWL_DIR,
    CRAWL_LOGS,
    WORKERS,
    SourceConfig,
    SourceOption,
    crawl_dir_of,
)
from gharuntime.source_kinds.crawled import CrawledSource, crawl_into
from gharuntime.sources.base import Source
from gharuntime.sources.raw import count_records

__all__ = [
    "SCALE",
    "SEED",
    "SimulatedConfig",
    "crawl_simulated",
    "prepare_simulated_store",
    "simulated_store_identity",
]

SEED = SourceOption(
    click.Option(
        ["--seed"], type=SEED_TYPE, default=0, show_default=True, help="simulated: world seed."
    ),
    rank=70,
)
SCALE = SourceOption(
    click.Option(
        ["--scale"],
        type=click.Choice(sorted(SCALES)),
        default="tiny",
        show_default=True,
        help="simulated: world size (tiny 12 repositories ... paper 27,000).",
    ),
    rank=80,
)


def simulated_store_identity(seed: int, scale: str, logs: bool) -> dict[str, str]:
    """What a crawl of the simulated GitHub records in its store's meta: the world (seed, scale,
    the scale's sizes) and whether logs were crawled. Two stores with the same identity hold the
    same records once complete."""
    sc = SCALES[scale]
    return {
        "sim_seed": str(seed),
        "sim_scale": f"{scale} ({sc.repos}/{sc.workflows_per_repo}/{sc.runs_per_workflow}/{sc.days})",
        "sim_logs": "1" if logs else "0",
    }


def prepare_simulated_store(raw: Path, seed: int, scale: str, logs: bool) -> None:
    """Make `raw` ready for a crawl of the simulated world (seed, scale, logs), by the one rule
    for crawl folders (`claim_crawl_dir`): a new or empty folder is used, a store recorded as a
    crawl of this very world is continued (a resumed crawl stores what a fresh one would), and
    anything else, a store of another seed, scale or --crawl-logs included, is refused with a
    BuildError that says how to go on; nothing there is touched."""
    try:
        claim_crawl_dir(
            raw, simulated_world(seed, scale), simulated_store_identity(seed, scale, logs)
        )
    except CrawlDirError as exc:
        raise BuildError(str(exc)) from None


def crawl_simulated(
    raw: Path,
    *,
    seed: int,
    scale: str,
    logs: bool = False,
    progress: Progress | None = None,
) -> tuple[CrawlResult, dict[str, Any]]:
    """Serve the seeded simulated world on 127.0.0.1 and crawl all of its history into `raw`.

    The crawl window is the world's own: its `days` up to its fixed END, never the wall clock.
    A store at `raw` of another world is refused (BuildError), never removed."""
    from gharuntime.sim import END, ServerConfig, World, serve
    from gharuntime.sim.world import DAY, iso

    if scale not in SCALES:
        raise BuildError(f"unknown scale {scale!r}; choose one of {', '.join(sorted(SCALES))}")
    prepare_simulated_store(raw, seed, scale, logs)
    world = World(seed, scale)
    token = "ghp_" + secrets.token_hex(18)  # a throwaway token for this one local server
    # No quota worth waiting for: the simulated GitHub only serves this crawl.
    config = ServerConfig(
        tokens={token: "gharuntime-build"},
        rate_limit=10**9,
        graphql_limit=10**9,
        search_limit=10**9,
    )
    repos = [m.full_name for m in world.metas() if not m.private]
    opts = CrawlOptions(
        repos=repos,
        since=iso(END - world.scale.days * DAY),
        until=iso(END),
        logs=logs,
    )
    with serve(world, config) as server:
        client = GitHubClient(server.url, [Token(token, "simulated")], etags=EtagCache(), seed=0)
        result = crawl_into(raw, opts, client, progress, "crawling the simulated GitHub")
    info = {
        "kind": "simulated",
        "synthetic": True,
        "seed": seed,
        "scale": scale,
        "crawled": "the simulated GitHub over HTTP on 127.0.0.1, by gharuntime's crawler",
    }
    return result, info


@dataclass(frozen=True)
class SimulatedConfig(SourceConfig):
    """The world (seed, scale), whether logs are crawled, the crawl's raw store, YAML workers."""

    kind: ClassVar[str] = "simulated"
    options: ClassVar[tuple[SourceOption, ...]] = (CRAWL_DIR, SEED, SCALE, CRAWL_LOGS, WORKERS)
    summary: ClassVar[str] = "a crawl of the seeded simulated GitHub on 127.0.0.1 (synthetic)"

    crawl_dir: Path
    seed: int = 0
    scale: str = "tiny"
    logs: bool = False
    workers: int = 1

    @classmethod
    def from_options(cls, out: Path, values: Mapping[str, Any]) -> SimulatedConfig:
        """--seed, --scale, --crawl-logs; --crawl-dir (default: OUT.raw beside --out)."""
        return cls(
            crawl_dir_of(out, values),
            values[SEED.name],
            values[SCALE.name],
            values[CRAWL_LOGS.name],
            values[WORKERS.name],
        )

    def _crawl(self, progress: Progress | None) -> dict[str, Any]:
        result, info = crawl_simulated(
            self.crawl_dir, seed=self.seed, scale=self.scale, logs=self.logs, progress=progress
        )
        info["crawl_failures"] = len(result.failures)
        # The server's port and the crawl's shard boundaries change from call to call; the
        # world (seed, scale) and the record count do not, so only they describe the store.
        info["stores"] = [
            {"name": "crawl of the simulated GitHub", "records": count_records([self.crawl_dir])}
        ]
        return info

    def source(self) -> Source:
        return CrawledSource(self.crawl_dir, self._crawl, self.workers)

    def reads(self) -> list[Path]:
        return [self.crawl_dir]
