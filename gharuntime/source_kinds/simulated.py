"""`--source simulated`: serve the seeded simulated GitHub on 127.0.0.1, crawl it with the real
crawler over real HTTP into a raw store, and build from that (a synthetic dataset; says so).
The one source module that uses the simulator, so the builder never imports it.

Same parameters, same bytes: `prepare_simulated_store` continues only a store of the same
world (seed, scale, logs); any other store is refused, never removed (`claim_crawl_dir`)."""

from __future__ import annotations

import secrets
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from gharuntime.builder.build import BuildError, BuildOptions, BuildResult, build
from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir, simulated_world
from gharuntime.builder.crawled import CrawledSource, crawl_into
from gharuntime.builder.filters import DEFAULT_CONCLUSIONS
from gharuntime.crawler.client import EtagCache, GitHubClient, Token
from gharuntime.crawler.crawl import CrawlOptions, CrawlResult
from gharuntime.progress import Progress
from gharuntime.release_diff import DatasetSide
from gharuntime.source_kinds.base import SourceConfig, SourceOptions
from gharuntime.sources.base import Source
from gharuntime.sources.raw import count_records

__all__ = [
    "SimulatedConfig",
    "build_from_simulated",
    "crawl_simulated",
    "prepare_simulated_store",
    "simulated_store_identity",
]


def simulated_store_identity(seed: int, scale: str, logs: bool) -> dict[str, str]:
    """What a crawl of the simulated GitHub records in its store's meta: the world (seed, scale,
    the scale's sizes) and whether logs were crawled. Two stores with the same identity hold the
    same records once complete."""
    from gharuntime.sim import SCALES

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
    from gharuntime.sim import END, SCALES, ServerConfig, World, serve
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
    options: ClassVar[frozenset[str]] = frozenset(
        {"crawl_dir", "seed", "scale", "crawl_logs", "workers"}
    )
    summary: ClassVar[str] = "a crawl of the seeded simulated GitHub on 127.0.0.1 (synthetic)"

    crawl_dir: Path
    seed: int = 0
    scale: str = "tiny"
    logs: bool = False
    workers: int = 1

    @classmethod
    def from_options(cls, opts: SourceOptions) -> SimulatedConfig:
        """--seed, --scale, --crawl-logs; --crawl-dir (default: OUT.raw beside --out)."""
        crawl_dir = opts.crawl_dir or opts.out.with_name(opts.out.name + ".raw")
        return cls(crawl_dir, opts.seed, opts.scale, opts.crawl_logs, opts.workers)

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


def build_from_simulated(
    out: Path,
    raw: Path,
    *,
    seed: int,
    scale: str,
    logs: bool = False,
    conclusions: Sequence[str] | None = DEFAULT_CONCLUSIONS,
    progress: Progress | None = None,
    workers: int = 1,
    previous: DatasetSide | None = None,
) -> BuildResult:
    """Deprecated: `build(SimulatedConfig(raw, seed, scale, logs, workers).source(), out,
    BuildOptions(conclusions=conclusions, previous=previous, progress=progress))`."""
    warnings.warn(
        "build_from_simulated is deprecated and will be removed; use "
        "build(SimulatedConfig(...).source(), out, BuildOptions(...))",
        DeprecationWarning,
        stacklevel=2,
    )
    config = SimulatedConfig(crawl_dir=raw, seed=seed, scale=scale, logs=logs, workers=workers)
    return build(
        config.source(),
        out,
        BuildOptions(conclusions=conclusions, previous=previous, progress=progress),
    )
