"""`--source github`: crawl GitHub (or the API at --api-url) for the repositories of --repos
or --search into a raw store, then build from it. The kind whole: its options (the crawl's
selection, declared once in gharuntime.crawler.assembly for `gharuntime crawl` too, plus
--crawl-dir, --crawl-logs, --workers), its config and its Source (`GitHubSource`). Tokens,
repositories, window and CrawlOptions are made as `gharuntime crawl` makes them
(gharuntime.crawler.assembly); the card says what the raw kind says of the store it wrote."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from gharuntime.builder.build import BuildError
from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir
from gharuntime.crawler.assembly import (
    CrawlRequest,
    crawl_options,
    load_tokens,
    make_client,
    selection_options,
)
from gharuntime.crawler.client import GitHubClient, Token
from gharuntime.crawler.crawl import CrawlOptions
from gharuntime.progress import Progress
from gharuntime.source_kinds.base import (
    CRAWL_DIR,
    CRAWL_LOGS,
    WORKERS,
    SourceConfig,
    SourceOption,
    SourceOptionError,
    crawl_dir_of,
)
from gharuntime.source_kinds.crawled import CrawledSource, crawl_into
from gharuntime.sources.base import Candidates, Source

__all__ = ["SELECTION", "GitHubConfig", "GitHubSource"]

NO_TOKEN = "unauthenticated requests get 60 an hour; pass --token-file or set GITHUB_TOKEN"

SELECTION = tuple(
    SourceOption(option, rank=100 + i) for i, option in enumerate(selection_options("github"))
)
"""--repos, --search, --max-repos, --since, --until, --max-runs-per-workflow, --token-file,
--api-url, --max-retries: what `gharuntime crawl` takes, the same declarations."""


@dataclass(frozen=True)
class GitHubConfig(SourceConfig):
    """What to crawl (CrawlOptions), from where (api_url, tokens, max_retries), into which raw
    store, and the YAML workers. A Token's repr never shows its secret."""

    kind: ClassVar[str] = "github"
    options: ClassVar[tuple[SourceOption, ...]] = (CRAWL_DIR, CRAWL_LOGS, *SELECTION, WORKERS)
    summary: ClassVar[str] = "a crawl of GitHub (--repos FILE or --search QUERY)"

    crawl_dir: Path
    crawl: CrawlOptions
    api_url: str
    tokens: tuple[Token, ...] = ()
    max_retries: int = 6
    workers: int = 1
    inputs: tuple[Path, ...] = ()  # the --repos and --token-file files read

    @classmethod
    def from_options(cls, out: Path, values: Mapping[str, Any]) -> GitHubConfig:
        """Exactly one of --repos FILE or --search QUERY; the window, tokens and crawl folder
        (default: OUT.raw beside --out)."""
        crawl_dir = crawl_dir_of(out, values)
        request = CrawlRequest(
            out=crawl_dir,
            logs=values[CRAWL_LOGS.name],
            **{o.name: values[o.name] for o in SELECTION},
        )
        if (request.repos_file is None) == (request.search is None):
            raise SourceOptionError(
                "--source github needs exactly one of --repos FILE or --search QUERY",
                option="--repos",
            )
        return cls(
            crawl_dir=crawl_dir,
            crawl=crawl_options(request),
            api_url=request.api_url,
            tokens=tuple(load_tokens(request.token_file)),
            max_retries=request.max_retries,
            workers=values[WORKERS.name],
            inputs=tuple(p for p in (request.repos_file, request.token_file) if p is not None),
        )

    def source(self) -> Source:
        client = make_client(self.api_url, list(self.tokens), max_retries=self.max_retries)
        return GitHubSource(self.crawl_dir, self.crawl, client, self.api_url, self.workers)

    def reads(self) -> list[Path]:
        return [self.crawl_dir, *self.inputs]

    def warnings(self) -> list[str]:
        return [] if self.tokens else [NO_TOKEN]


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
