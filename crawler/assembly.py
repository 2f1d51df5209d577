"""Everything a crawl needs before it starts, assembled from what a person gives: the options
that select what to crawl (`selection_options`, one declaration for both commands), tokens (a
file or GITHUB_TOKEN), a list of repositories, a time window, the CrawlOptions
(`crawl_options`) and a ready client; `plan_crawl` turns a whole `gharuntime crawl` request into
a checked CrawlPlan. `gharuntime crawl` and `gharuntime build --source github` both start a
crawl, so both take these from here and read their options the same way. A bad value raises
CrawlSetupError naming the option to fix."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from gharuntime.crawler.client import (
    EtagCache,
    GitHubClient,
    RetryPolicy,
    Token,
    api_url_problem,
    token_problem,
)
from gharuntime.crawler.crawl import CrawlOptions, CrawlResult, crawl, format_time, parse_time
from gharuntime.crawler.progress import CrawlStats, EventSink
from gharuntime.errors import OptionError
from gharuntime.paramtypes import Text
from gharuntime.readfile import InputFileError, read_text

__all__ = [
    "CrawlPlan",
    "CrawlRequest",
    "CrawlSetupError",
    "check_out_folder",
    "crawl_options",
    "crawl_selection_options",
    "crawl_window",
    "load_tokens",
    "make_client",
    "parse_shard",
    "plan_crawl",
    "read_repos",
    "selection_options",
]

TOKEN_FILE_MAX_BYTES = 2**20
REPOS_FILE_MAX_BYTES = 16 * 2**20

F = TypeVar("F", bound=Callable[..., Any])


class CrawlSetupError(OptionError):
    """A crawl input that cannot be used; `option` names the option that gave it."""


def _api_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    problem = api_url_problem(value)
    if problem:
        raise click.BadParameter(problem, ctx, param)
    return value


def _selection(scope: str) -> list[tuple[list[str], dict[str, Any]]]:
    """(declarations, attributes) of each selection option, as click.option takes them."""
    pre = f"{scope}: " if scope else ""
    return [
        (
            ["--repos", "repos_file"],
            dict(
                type=click.Path(path_type=Path, dir_okay=False, exists=True),
                help=pre + "File of repositories, owner/name one a line (# comments allowed).",
            ),
        ),
        (
            ["--search", "search"],
            dict(
                type=Text(1000),
                help=pre + "GitHub repository search, e.g. 'stars:>100 pushed:>2025-06-01'.",
            ),
        ),
        (
            ["--max-repos"],
            dict(
                type=click.IntRange(1, 10_000_000),
                help=pre + "Crawl at most this many repositories.",
            ),
        ),
        (
            ["--since"],
            dict(
                type=Text(40),
                help=pre
                + "Runs created from this date (default: 90 days before the crawl's first run).",
            ),
        ),
        (
            ["--until"],
            dict(
                type=Text(40),
                help=pre
                + "Runs created up to this date (default: now, fixed when the crawl starts).",
            ),
        ),
        (
            ["--max-runs-per-workflow"],
            dict(
                type=click.IntRange(1, 1000),
                help=pre
                + "Only the N most recent completed runs of each workflow (GHALogs used 5).",
            ),
        ),
        (
            ["--token-file"],
            dict(
                type=click.Path(path_type=Path, dir_okay=False),
                help=pre
                + "File of tokens, one a line (default: $GITHUB_TOKEN). Tokens of one account "
                "share a quota.",
            ),
        ),
        (
            ["--api-url"],
            dict(
                default="https://api.github.com",
                show_default=True,
                envvar="GITHUB_API_URL",
                type=Text(2000),
                callback=_api_url,
                help=pre
                + "API root: GitHub Enterprise Server (https://HOST/api/v3) or a simulated GitHub.",
            ),
        ),
        (
            ["--max-retries"],
            dict(
                type=click.IntRange(0, 50),
                default=6,
                show_default=True,
                help=pre + "Retries of one request on 5xx, resets, truncated or malformed bodies.",
            ),
        ),
    ]


def selection_options(scope: str = "") -> list[click.Option]:
    """Which repositories and runs to crawl, and how to reach the API, as click options (named
    as CrawlRequest's fields). `scope` prefixes each help text (e.g. "github" in `build`, where
    they apply to one source only)."""
    return [click.Option(decls, **attrs) for decls, attrs in _selection(scope)]


def crawl_selection_options(scope: str = "") -> Callable[[F], F]:
    """The same options as a decorator, for a command that declares its options by decorators
    (`gharuntime crawl`)."""

    def decorate(command: F) -> F:
        for decls, attrs in reversed(_selection(scope)):
            command = click.option(*decls, **attrs)(command)
        return command

    return decorate


def _read(path: Path, option: str, max_bytes: int) -> str:
    try:
        return read_text(path, max_bytes)
    except InputFileError as exc:
        raise CrawlSetupError(str(exc), option=option) from None


def load_tokens(token_file: Path | None) -> list[Token]:
    """Tokens from a file (one a line; blank lines and # comments skipped) or GITHUB_TOKEN;
    none when neither gives one. A token a header cannot carry is refused here, by its line,
    without showing it."""
    tokens: list[Token] = []
    if token_file is not None:
        lines = _read(token_file, "--token-file", TOKEN_FILE_MAX_BYTES).splitlines()
        for number, line in enumerate(lines, start=1):
            secret = line.strip()
            if secret and not secret.startswith("#"):
                problem = token_problem(secret)
                if problem:
                    raise CrawlSetupError(
                        f"{token_file} line {number}: the token {problem}", option="--token-file"
                    )
                tokens.append(
                    Token(secret, f"token {len(tokens) + 1} (--token-file line {number})")
                )
        if not tokens:
            raise CrawlSetupError(f"{token_file} holds no token", option="--token-file")
    elif os.environ.get("GITHUB_TOKEN", "").strip():
        secret = os.environ["GITHUB_TOKEN"].strip()
        problem = token_problem(secret)
        if problem:
            raise CrawlSetupError(f"the token {problem}", option="GITHUB_TOKEN")
        tokens.append(Token(secret, "GITHUB_TOKEN"))
    return tokens


def _not_a_name(name: str) -> bool:
    owner, sep, repo = name.partition("/")
    return (
        not sep
        or not owner
        or not repo
        or "/" in repo
        or len(name) > 200
        or any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name)
    )


def read_repos(repos_file: Path) -> list[str]:
    """The owner/name lines of a --repos file (# comments and blank lines skipped)."""
    repos: list[str] = []
    text = _read(repos_file, "--repos", REPOS_FILE_MAX_BYTES)
    for number, line in enumerate(text.splitlines(), 1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if _not_a_name(name):
            raise CrawlSetupError(
                f"{repos_file}:{number}: {name[:100]!a} is not owner/name", option="--repos"
            )
        repos.append(name)
    return repos


def _time(value: str | None, option: str) -> str | None:
    if value is None:
        return None
    try:
        return format_time(parse_time(value))
    except (ValueError, OverflowError):
        raise CrawlSetupError(
            f"{value[:100]!a} is not a date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM:SSZ)",
            option=option,
        ) from None


def crawl_window(since: str | None, until: str | None) -> tuple[str | None, str | None]:
    """--since and --until as the crawler's times; --since after --until is refused."""
    a, b = _time(since, "--since"), _time(until, "--until")
    if a is not None and b is not None and a > b:
        raise CrawlSetupError(f"{since} is after --until {until}", option="--since")
    return a, b


def make_client(
    api_url: str,
    tokens: list[Token],
    *,
    max_retries: int,
    stats: CrawlStats | None = None,
    **policy_kwargs: Any,
) -> GitHubClient:
    """A client for `api_url` with these tokens, a fresh ETag cache and a RetryPolicy of
    `max_retries` and any other RetryPolicy field (backoff_base, backoff_cap, secondary_wait);
    a backoff base above its cap is refused, naming --backoff."""
    policy = RetryPolicy(max_retries=max_retries, **policy_kwargs)
    if policy.backoff_base > policy.backoff_cap:
        raise CrawlSetupError(
            f"the first delay {policy.backoff_base} is above the cap {policy.backoff_cap}",
            option="--backoff",
        )
    return GitHubClient(api_url, tokens, policy=policy, stats=stats, etags=EtagCache())


def parse_shard(value: str | None) -> tuple[int, int] | None:
    """--shard K/N as (k, n), 1 <= k <= n <= 100,000."""
    if value is None:
        return None
    try:
        k, n = (int(x) for x in value.split("/"))
    except ValueError:
        raise CrawlSetupError(f"{value[:100]!a} is not K/N (e.g. 1/4)", option="--shard") from None
    if not 1 <= k <= n <= 100_000:
        raise CrawlSetupError(
            f"{value}: K must be between 1 and N, and N at most 100,000", option="--shard"
        )
    return k, n


def check_out_folder(out: Path) -> None:
    """Refuse a folder that is not (yet) a crawl's raw store: never write into someone's data."""
    try:
        _check_out_folder(out)
    except OSError as exc:  # a name the OS refuses (too long, a component not a folder)
        raise CrawlSetupError(f"{out}: {exc.strerror or exc}", option="--out") from None


def _check_out_folder(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise CrawlSetupError(f"{out} is a file; give a folder", option="--out")
    if not out.is_dir() or not any(out.iterdir()):
        return
    state = out / "state.sqlite"
    if not state.is_file():
        raise CrawlSetupError(
            f"{out} is not empty and holds no raw store (no state.sqlite); give an empty or new "
            "folder, or one an earlier crawl wrote",
            option="--out",
        )
    try:
        con = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key='source'").fetchone()
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise CrawlSetupError(
            f"{state}: not a readable raw store state ({exc})", option="--out"
        ) from None
    if row is not None and row[0] != "crawl":
        raise CrawlSetupError(
            f"{out} is a raw store written by {row[0]!r}, not by a crawl; give another folder",
            option="--out",
        )


@dataclass(frozen=True)
class CrawlRequest:
    """`gharuntime crawl`'s options, typed: where to write, what to crawl and how."""

    out: Path
    repos_file: Path | None = None
    search: str | None = None
    max_repos: int | None = None
    since: str | None = None
    until: str | None = None
    max_runs_per_workflow: int | None = None
    logs: bool = False
    log_cap_mb: float = 20.0
    shard: str | None = None
    token_file: Path | None = None
    api_url: str = "https://api.github.com"
    concurrency: int = 4
    max_retries: int = 6
    backoff: tuple[float, float] = (1.0, 60.0)
    secondary_wait: float = 60.0
    yaml_strategy: str = "blob-oid"
    log_route: str = "attempt"
    flush_records: int = 2000


@dataclass
class CrawlPlan:
    """A checked crawl, ready to run: its options, its client (tokens, policy, counters)."""

    out: Path
    options: CrawlOptions
    client: GitHubClient
    tokens: int

    def run(self, on_event: EventSink) -> CrawlResult:
        """Identify the tokens' accounts, then crawl into `out` (the client's errors raise)."""
        self.client.identify()
        return crawl(self.out, self.options, self.client, on_event=on_event)


def crawl_options(request: CrawlRequest) -> CrawlOptions:
    """What to crawl, from a request: exactly one of its repositories file or search, the
    window, the shard and how to fetch (the one way both commands make CrawlOptions)."""
    if (request.repos_file is None) == (request.search is None):
        raise CrawlSetupError(
            "give exactly one of --repos FILE or --search QUERY", option="--repos"
        )
    repos = read_repos(request.repos_file) if request.repos_file is not None else None
    since, until = crawl_window(request.since, request.until)
    return CrawlOptions(
        repos=repos,
        search=request.search,
        max_repos=request.max_repos,
        since=since,
        until=until,
        max_runs_per_workflow=request.max_runs_per_workflow,
        logs=request.logs,
        log_cap_bytes=int(request.log_cap_mb * 1_000_000),
        shard=parse_shard(request.shard),
        concurrency=request.concurrency,
        yaml_strategy=request.yaml_strategy,
        log_route=request.log_route,
        flush_records=request.flush_records,
    )


def plan_crawl(request: CrawlRequest) -> CrawlPlan:
    """Every check a crawl makes before its first request (the folder, the selection, the
    window, the shard, the tokens, the retry policy), then the client; CrawlSetupError names
    the option to fix."""
    check_out_folder(request.out)
    base, cap = request.backoff  # a base above its cap is refused by make_client
    options = crawl_options(request)
    tokens = load_tokens(request.token_file)
    client = make_client(
        request.api_url,
        tokens,
        max_retries=request.max_retries,
        stats=CrawlStats(),
        backoff_base=base,
        backoff_cap=cap,
        secondary_wait=request.secondary_wait,
    )
    return CrawlPlan(request.out, options, client, len(tokens))
