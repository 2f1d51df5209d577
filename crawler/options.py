"""What a crawl is asked to do and what it reports back: the crawl's inputs and outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gharuntime.crawler.progress import CrawlStats

__all__ = ["PER_PAGE", "CrawlOptions", "CrawlResult"]

PER_PAGE = 100


@dataclass
class CrawlOptions:
    """What to crawl. `yaml_strategy="per-run"` is the naive reference used by the benchmark."""

    repos: list[str] | None = None
    search: str | None = None
    max_repos: int | None = None
    since: str | None = None  # "YYYY-MM-DDTHH:MM:SSZ"; None: the stored or default window
    until: str | None = None
    max_runs_per_workflow: int | None = None
    logs: bool = False
    log_cap_bytes: int = 20_000_000
    log_route: str = "attempt"  # attempt: one archive per run attempt; job: one log per job
    shard: tuple[int, int] | None = None  # (k, n), k in 1..n
    concurrency: int = 4
    yaml_strategy: str = "blob-oid"
    flush_records: int = 2000
    flush_seconds: float = 5.0
    window_days: int = 90
    per_page: int = PER_PAGE  # listing page size (GitHub's maximum, 100, costs fewest requests)


@dataclass
class CrawlResult:
    """What a crawl did."""

    crawl_id: int
    since: str
    until: str
    repositories: int
    stats: CrawlStats
    failures: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False
