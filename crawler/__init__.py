"""gharuntime.crawler: collect GitHub Actions runs, jobs, workflow YAML and logs into a raw store.

    from gharuntime.crawler import CrawlOptions, GitHubClient, Token, crawl
    client = GitHubClient("https://api.github.com", [Token(secret, "token 1")])
    client.identify()                     # which tokens share an account's quota
    result = crawl(Path("raw"), CrawlOptions(repos=["octo/repo"], max_runs_per_workflow=5), client)

Modules: `client` (HTTP, token pool, rate limits, retries, ETags), `endpoints` (paths),
`crawl` (what to fetch in what order), `options` (what a crawl is asked and answers),
`selection` (which repositories, sharded), `windows` (the `created` windows runs are listed in),
`units` (a unit of work and the bookkeeping all share), `fetch_repos`, `fetch_runs`,
`fetch_yaml` and `fetch_logs` (one kind of unit each), `listing` (paging), `store` (crawl state
beside the raw store), `redact` (secrets out of logs and messages), `progress` (events and
counters for a display).
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
from gharuntime.crawler.crawl import crawl
from gharuntime.crawler.options import CrawlOptions, CrawlResult
from gharuntime.crawler.progress import CrawlEvent, CrawlStats
from gharuntime.crawler.redact import redact
from gharuntime.crawler.selection import in_shard

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
