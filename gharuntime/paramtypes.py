"""Click parameter types that refuse, at the command line, values a command cannot use: text
with control characters or bytes in another encoding, numbers that are not finite or beyond
what the command can hold, and files that cannot be read as UTF-8 text.

Every command declares its options with these, so a bad value is a usage error (exit 2) that
names the option, never a traceback deep inside the library. They sit below the commands, so
what declares options of its own (a source kind of `gharuntime build`, the crawl's selection in
gharuntime.crawler.assembly) uses them without importing the command line."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from gharuntime.hub.spec import endpoint_problem
from gharuntime.readfile import InputFileError, read_text

__all__ = [
    "INT64_MAX",
    "SEED",
    "UINT64_MAX",
    "FiniteFloatRange",
    "Text",
    "check_endpoint",
    "check_text",
    "read_text_file",
]

INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


def check_text(value: str, *, max_len: int, newlines: bool = False) -> str | None:
    """Why `value` is not usable text (None when it is)."""
    if len(value) > max_len:
        return f"is {len(value):,} characters long; at most {max_len:,} are accepted"
    for ch in value:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            return "is not valid UTF-8 (bytes in another encoding)"
        if (code < 0x20 and not (newlines and ch in "\n\t")) or code == 0x7F:
            return f"holds a control character ({ch!r})"
    return None


class Text(click.ParamType):  # type: ignore[type-arg]
    """A line of UTF-8 text without control characters, of bounded length."""

    name = "text"

    def __init__(self, max_len: int = 1000) -> None:
        self.max_len = max_len

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        problem = check_text(value, max_len=self.max_len)
        if problem:
            self.fail(f"{value[:80]!a} {problem}", param, ctx)
        return value


class FiniteFloatRange(click.FloatRange):
    """A FloatRange that also refuses NaN and infinities (which compare false to any bound)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


# A seed every random generator here accepts (numpy wants 0 <= seed; Python any int).
SEED = click.IntRange(0, UINT64_MAX)


def read_text_file(path: Path, option: str, *, max_bytes: int = 16 * 2**20) -> str:
    """A small UTF-8 text file given on the command line (a list of repositories, of tokens),
    or a usage error that says what is wrong with it. Never echoes the file's content."""
    try:
        return read_text(path, max_bytes)
    except InputFileError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None


def check_endpoint(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """The --endpoint callback of every Hub command: no credentials, http(s) only."""
    problem = endpoint_problem(value.rstrip("/")) if value else None
    if problem:
        from_env = ctx.get_parameter_source("endpoint") == click.core.ParameterSource.ENVIRONMENT
        raise click.BadParameter(problem, ctx, param, "$HF_ENDPOINT" if from_env else None)
    return value
