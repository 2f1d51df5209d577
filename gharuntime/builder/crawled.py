"""Sources that crawl first: the simulated GitHub (served on 127.0.0.1 and crawled with the real
crawler, over real HTTP) or GitHub itself; the crawl's raw store is then built like any other.

The raw store is kept (a second call with the same folder continues the crawl instead of
starting again), so an interrupted build loses no requests. Same parameters, same bytes:
`prepare_simulated_store` continues only a store of the same world (seed, scale, logs); any
other store is refused, never removed (`claim_crawl_dir`, the one rule for crawl folders).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gharuntime.builder.build import BuildError, BuildResult, RawSource, build
from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir, simulated_world
from gharuntime.builder.filters import DEFAULT_CONCLUSIONS
from gharuntime.crawler.client import CrawlError, EtagCache, GitHubClient, Token
from gharuntime.crawler.crawl import CrawlOptions, CrawlResult, crawl
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.progress import Progress
from gharuntime.release_diff import DatasetSide
from gharuntime.sources.raw import count_records

__all__ = [
    "build_from_crawl",
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


def _events(progress: Progress | None, stage: str) -> Any:
    """Crawl events → progress(stage, repositories done, repositories planned)."""
    state = {"done": 0, "total": None}

    def on_event(event: CrawlEvent) -> None:
        if progress is None:
            return
        if event.kind == "plan":
            state["total"] = int(event.data["repositories"])
        elif event.kind == "repository" and event.data.get("state") in ("done", "skipped"):
            state["done"] = int(state["done"] or 0) + 1
        else:
            return
        progress(stage, int(state["done"] or 0), state["total"])

    return on_event


def _crawl(raw: Path, opts: CrawlOptions, client: GitHubClient, on_event: Any) -> CrawlResult:
    try:
        client.identify()
        result = crawl(raw, opts, client, on_event=on_event)
    except CrawlError as exc:
        raise BuildError(
            f"crawl into {raw} stopped: {client.scrub(str(exc))}; run the same command again to "
            "continue it"
        ) from exc
    # Things that could not be fetched are stored as error records; the build counts them
    # (manifest build.fetch_errors) and a rerun of the same command retries them.
    return result


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
        result = _crawl(raw, opts, client, _events(progress, "crawling the simulated GitHub"))
    info = {
        "kind": "simulated",
        "synthetic": True,
        "seed": seed,
        "scale": scale,
        "crawled": "the simulated GitHub over HTTP on 127.0.0.1, by gharuntime's crawler",
        "notes": [],
    }
    return result, info


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
    """Crawl the simulated GitHub into `raw`, then build the dataset at `out` from it."""
    result, info = crawl_simulated(raw, seed=seed, scale=scale, logs=logs, progress=progress)
    notes = info.pop("notes")
    info["crawl_failures"] = len(result.failures)
    # The server's port and the crawl's shard boundaries change from call to call; the world
    # (seed, scale) and the record count do not, so only they describe the store.
    info["stores"] = [{"name": "crawl of the simulated GitHub", "records": count_records([raw])}]
    built = build(
        RawSource([raw], source=info, workers=workers),
        out,
        conclusions=conclusions,
        progress=progress,
        previous=previous,
    )
    built.notes.extend(notes)
    return built


def build_from_crawl(
    out: Path,
    raw: Path,
    opts: CrawlOptions,
    client: GitHubClient,
    *,
    conclusions: Sequence[str] | None = DEFAULT_CONCLUSIONS,
    progress: Progress | None = None,
    workers: int = 1,
    previous: DatasetSide | None = None,
) -> BuildResult:
    """Crawl GitHub (or any API at the client's URL) into `raw`, then build from it."""
    result = _crawl(raw, opts, client, _events(progress, "crawling GitHub"))
    source = {
        "kind": "github",
        "synthetic": False,
        "since": result.since,
        "until": result.until,
        "crawl_failures": len(result.failures),
    }
    return build(
        RawSource([raw], source=source, workers=workers),
        out,
        conclusions=conclusions,
        progress=progress,
        previous=previous,
    )
