"""`--source github`: crawl GitHub (or the API at --api-url) for the repositories of --repos
or --search into a raw store, then build from it (gharuntime.builder.crawled.GitHubSource).
Tokens, repositories and window are read as `gharuntime crawl` reads them
(gharuntime.crawler.assembly)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from gharuntime.crawler.assembly import crawl_window, load_tokens, make_client, read_repos
from gharuntime.crawler.client import Token
from gharuntime.crawler.crawl import CrawlOptions
from gharuntime.source_kinds.base import SourceConfig, SourceOptionError, SourceOptions
from gharuntime.sources.base import Source

__all__ = ["GitHubConfig"]

NO_TOKEN = "unauthenticated requests get 60 an hour; pass --token-file or set GITHUB_TOKEN"


@dataclass(frozen=True)
class GitHubConfig(SourceConfig):
    """What to crawl (CrawlOptions), from where (api_url, tokens, max_retries), into which raw
    store, and the YAML workers. A Token's repr never shows its secret."""

    kind: ClassVar[str] = "github"
    options: ClassVar[frozenset[str]] = frozenset(
        {
            "crawl_dir",
            "crawl_logs",
            "repos_file",
            "search",
            "max_repos",
            "since",
            "until",
            "max_runs_per_workflow",
            "token_file",
            "api_url",
            "max_retries",
            "workers",
        }
    )
    summary: ClassVar[str] = "a crawl of GitHub (--repos FILE or --search QUERY)"

    crawl_dir: Path
    crawl: CrawlOptions
    api_url: str
    tokens: tuple[Token, ...] = ()
    max_retries: int = 6
    workers: int = 1
    inputs: tuple[Path, ...] = ()  # the --repos and --token-file files read

    @classmethod
    def from_options(cls, opts: SourceOptions) -> GitHubConfig:
        """Exactly one of --repos FILE or --search QUERY; the window, tokens and crawl folder
        (default: OUT.raw beside --out)."""
        if (opts.repos_file is None) == (opts.search is None):
            raise SourceOptionError(
                "--source github needs exactly one of --repos FILE or --search QUERY",
                option="--repos",
            )
        repos = read_repos(opts.repos_file) if opts.repos_file is not None else None
        since, until = crawl_window(opts.since, opts.until)
        crawl = CrawlOptions(
            repos=repos,
            search=opts.search,
            max_repos=opts.max_repos,
            since=since,
            until=until,
            max_runs_per_workflow=opts.max_runs_per_workflow,
            logs=opts.crawl_logs,
        )
        return cls(
            crawl_dir=opts.crawl_dir or opts.out.with_name(opts.out.name + ".raw"),
            crawl=crawl,
            api_url=opts.api_url,
            tokens=tuple(load_tokens(opts.token_file)),
            max_retries=opts.max_retries,
            workers=opts.workers,
            inputs=tuple(p for p in (opts.repos_file, opts.token_file) if p is not None),
        )

    def source(self) -> Source:
        from gharuntime.builder.crawled import GitHubSource

        client = make_client(self.api_url, list(self.tokens), max_retries=self.max_retries)
        return GitHubSource(self.crawl_dir, self.crawl, client, self.api_url, self.workers)

    def reads(self) -> list[Path]:
        return [self.crawl_dir, *self.inputs]

    def warnings(self) -> list[str]:
        return [] if self.tokens else [NO_TOKEN]
