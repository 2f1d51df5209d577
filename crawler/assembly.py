"""Everything a crawl needs before it starts, assembled from what a person gives: tokens (a file
or GITHUB_TOKEN), a list of repositories, a time window and a ready client. `gharuntime crawl`
and `gharuntime build --source github` both start a crawl, so both take these from here and read
their options the same way. A bad value raises CrawlSetupError naming the option to fix."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gharuntime.crawler.client import EtagCache, GitHubClient, RetryPolicy, Token, token_problem
from gharuntime.crawler.crawl import format_time, parse_time
from gharuntime.crawler.progress import CrawlStats
from gharuntime.errors import GharuntimeError
from gharuntime.readfile import InputFileError, read_text

__all__ = ["CrawlSetupError", "crawl_window", "load_tokens", "make_client", "read_repos"]

TOKEN_FILE_MAX_BYTES = 2**20
REPOS_FILE_MAX_BYTES = 16 * 2**20


class CrawlSetupError(GharuntimeError, ValueError):
    """A crawl input that cannot be used; `option` is the command-line option that gave it,
    shown first (`--repos: repos.txt:2: 'x' is not owner/name`), so the message says what to fix."""

    def __init__(self, message: str, *, option: str) -> None:
        super().__init__(message, where=option)
        self.option = option


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
