"""gharuntime.crawler: collect GitHub Actions runs, jobs, workflow YAML and logs into a raw store.

    from gharuntime.crawler import CrawlOptions, GitHubClient, Token, crawl
    client = GitHubClient("https://api.github.com", [Token(secret, "token 1")])
    client.identify()                     # which tokens share an account's quota
    result = crawl(Path("raw"), CrawlOptions(repos=["octo/repo"], max_runs_per_workflow=5), client)

Modules: `client` (HTTP, token pool, rate limits, retries, ETags), `endpoints` (paths),
`crawl` (what to fetch in what order), `store` (crawl state beside the raw store), `redact`
(secrets out of logs and messages), `progress` (events and counters for a display).
"""

from gharuntime.crawler.client import (
    BadCredentials,
    CrawlError,
    EtagCache,
    GitHubClient,
    RequestFailed,
    RetryPolicy,
    Token,
)
from gharuntime.crawler.crawl import CrawlOptions, CrawlResult, crawl, in_shard
from gharuntime.crawler.progress import CrawlEvent, CrawlStats
from gharuntime.crawler.redact import redact

__all__ = [
    "BadCredentials",
    "CrawlError",
    "CrawlEvent",
    "CrawlOptions",
    "CrawlResult",
    "CrawlStats",
    "EtagCache",
    "GitHubClient",
    "RequestFailed",
    "RetryPolicy",
    "Token",
    "crawl",
    "in_shard",
    "redact",
]
