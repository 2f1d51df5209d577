"""Sources that crawl first: a crawl into a raw store with the real crawler, over real HTTP,
then that store built like any other (`CrawledSource`). GitHub itself is `GitHubSource`; the
simulated GitHub (served on 127.0.0.1) is `gharuntime.source_kinds.simulated`, so nothing here
imports the simulator.

The raw store is kept (a second call with the same folder continues the crawl instead of
starting again), so an interrupted build loses no requests. A crawl folder holding something
else is refused, never removed (`claim_crawl_dir`, the one rule for crawl folders).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gharuntime.builder.build import BuildError, BuildOptions, BuildResult, RawSource, build
from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir
from gharuntime.builder.filters import DEFAULT_CONCLUSIONS
from gharuntime.crawler.client import CrawlError, GitHubClient
from gharuntime.crawler.crawl import CrawlOptions, CrawlResult, crawl
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.progress import Progress
from gharuntime.release_diff import DatasetSide
from gharuntime.sources.base import Candidates

__all__ = [
    "CrawledSource",
    "GitHubSource",
    "build_from_crawl",
    "crawl_into",
]


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


@dataclass(frozen=True)
class GitHubSource:
    """A crawl of GitHub (or any API at `client`'s URL, named `api_url` in the crawl folder's
    record) into `raw`, then built; `raw` must be new, empty or a crawl of that same API."""

    raw: Path
    opts: CrawlOptions
    client: GitHubClient
    api_url: str
    workers: int = 1

    def _crawl(self, progress: Progress | None) -> dict[str, Any]:
        try:
            claim_crawl_dir(self.raw, f"the API at {self.api_url}")
        except CrawlDirError as exc:
            raise BuildError(str(exc)) from None
        result = crawl_into(self.raw, self.opts, self.client, progress, "crawling GitHub")
        return {
            "kind": "github",
            "synthetic": False,
            "since": result.since,
            "until": result.until,
            "crawl_failures": len(result.failures),
        }

    def read(self, progress: Progress | None = None) -> Candidates:
        """Crawl, then the store's candidate rows."""
        return CrawledSource(self.raw, self._crawl, self.workers).read(progress)


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
    """Deprecated: `build(GitHubSource(raw, opts, client, client.api_url, workers), out,
    BuildOptions(conclusions=conclusions, previous=previous, progress=progress))`."""
    warnings.warn(
        "build_from_crawl is deprecated and will be removed; use "
        "build(GitHubSource(...), out, BuildOptions(...))",
        DeprecationWarning,
        stacklevel=2,
    )
    return build(
        GitHubSource(raw, opts, client, client.api_url, workers),
        out,
        BuildOptions(conclusions=conclusions, previous=previous, progress=progress),
    )
