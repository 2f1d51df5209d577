"""The crawl options `gharuntime crawl` and `gharuntime build --source github` share, declared
once so the two commands cannot drift apart in names, types or defaults."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gharuntime.cli.types import Text
from gharuntime.crawler.client import api_url_problem

__all__ = ["crawl_selection_options"]

F = TypeVar("F", bound=Callable[..., Any])


def _api_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    problem = api_url_problem(value)
    if problem:
        raise click.BadParameter(problem, ctx, param)
    return value


def crawl_selection_options(scope: str = "") -> Callable[[F], F]:
    """Which repositories and runs to crawl, and how to reach the API. `scope` prefixes each
    help text (e.g. "github" in `build`, where the options apply to one source only)."""
    pre = f"{scope}: " if scope else ""
    options = [
        click.option(
            "--repos",
            "repos_file",
            type=click.Path(path_type=Path, dir_okay=False, exists=True),
            help=pre + "File of repositories, owner/name one a line (# comments allowed).",
        ),
        click.option(
            "--search",
            "search",
            type=Text(1000),
            help=pre + "GitHub repository search, e.g. 'stars:>100 pushed:>2025-06-01'.",
        ),
        click.option(
            "--max-repos",
            type=click.IntRange(1, 10_000_000),
            help=pre + "Crawl at most this many repositories.",
        ),
        click.option(
            "--since",
            type=Text(40),
            help=pre
            + "Runs created from this date (default: 90 days before the crawl's first run).",
        ),
        click.option(
            "--until",
            type=Text(40),
            help=pre + "Runs created up to this date (default: now, fixed when the crawl starts).",
        ),
        click.option(
            "--max-runs-per-workflow",
            type=click.IntRange(1, 1000),
            help=pre + "Only the N most recent completed runs of each workflow (GHALogs used 5).",
        ),
        click.option(
            "--token-file",
            type=click.Path(path_type=Path, dir_okay=False),
            help=pre
            + "File of tokens, one a line (default: $GITHUB_TOKEN). Tokens of one account share a quota.",
        ),
        click.option(
            "--api-url",
            default="https://api.github.com",
            show_default=True,
            envvar="GITHUB_API_URL",
            type=Text(2000),
            callback=_api_url,
            help=pre
            + "API root: GitHub Enterprise Server (https://HOST/api/v3) or a simulated GitHub.",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(0, 50),
            default=6,
            show_default=True,
            help=pre + "Retries of one request on 5xx, resets, truncated or malformed bodies.",
        ),
    ]

    def decorate(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate
