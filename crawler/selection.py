"""Which repositories a crawl covers: those listed or searched for, sharded across machines."""

from __future__ import annotations

import hashlib

from gharuntime.crawler.client import GitHubClient, RequestFailed
from gharuntime.crawler.listing import pages, response_message
from gharuntime.crawler.options import CrawlOptions

__all__ = ["in_shard", "select_repositories"]


def in_shard(full_name: str, shard: tuple[int, int] | None) -> bool:
    """Whether a repository belongs to shard k of n (a stable hash of the lowercased name)."""
    if shard is None:
        return True
    k, n = shard
    digest = hashlib.sha256(full_name.strip().lower().encode()).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


def select_repositories(client: GitHubClient, opts: CrawlOptions) -> list[str]:
    """The repositories to crawl: `--repos` or `--search`, capped by `--max-repos`, then sharded."""
    names: list[str] = []
    if opts.repos is not None:
        for name in opts.repos:
            if name not in names:
                names.append(name)
    elif opts.search:
        for resp in pages(client, "/search/repositories", {"q": opts.search, "per_page": 100}):
            if resp.status != 200 or not isinstance(resp.body, dict):
                raise RequestFailed(
                    f"search failed with HTTP {resp.status}: {response_message(resp)}",
                    where="/search/repositories",
                    status=resp.status,
                    reason="search",
                )
            for item in resp.body.get("items", []):
                if item["full_name"] not in names:
                    names.append(item["full_name"])
            if opts.max_repos is not None and len(names) >= opts.max_repos:
                break
    if opts.max_repos is not None:
        names = names[: opts.max_repos]
    return [n for n in names if in_shard(n, opts.shard)]
