"""What the kinds that crawl first share (not a kind itself): a crawl into a raw store with the
real crawler, over real HTTP (`crawl_into`), then that store read like any other
(`CrawledSource`, through the raw kind's RawSource). GitHub itself is
`gharuntime.source_kinds.github`; the simulated GitHub (served on 127.0.0.1) is
`gharuntime.source_kinds.simulated`, so nothing here imports the simulator.

The raw store is kept (a second call with the same folder continues the crawl instead of
starting again), so an interrupted build loses no requests. A crawl folder holding something
else is refused, never removed (`claim_crawl_dir`, the one rule for crawl folders).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gharuntime.builder.build import BuildError
from gharuntime.crawler.client import CrawlError, GitHubClient
from gharuntime.crawler.crawl import CrawlOptions, CrawlResult, crawl
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.progress import Progress
from gharuntime.source_kinds.raw import RawSource
from gharuntime.sources.base import Candidates

__all__ = ["CrawledSource", "crawl_into"]


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


def crawl_into(
    raw: Path, opts: CrawlOptions, client: GitHubClient, progress: Progress | None, stage: str
) -> CrawlResult:
    """Crawl into `raw`, reporting repositories done as `stage`; a crawl that stops is a
    BuildError that says the same command continues it."""
    try:
        client.identify()
        result = crawl(raw, opts, client, on_event=_events(progress, stage))
    except CrawlError as exc:
        raise BuildError(
            f"crawl into {raw} stopped: {client.scrub(str(exc))}; run the same command again to "
            "continue it"
        ) from exc
    # Things that could not be fetched are stored as error records; the build counts them
    # (manifest build.fetch_errors) and a rerun of the same command retries them.
    return result


@dataclass(frozen=True)
class CrawledSource:
    """`crawl(progress)` fills the raw store `raw` and answers the provenance it adds; the
    store is then read as a RawSource (`workers` processes parse the YAML)."""

    raw: Path
    crawl: Callable[[Progress | None], dict[str, Any]]
    workers: int = 1

    def read(self, progress: Progress | None = None) -> Candidates:
        """Crawl, then the store's candidate rows."""
        info = self.crawl(progress)
        return RawSource([self.raw], provenance=info, workers=self.workers).read(progress)
