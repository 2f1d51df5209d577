"""What every command shares for talking to a person: a console on stderr for progress and
problems, so stdout stays clean for machine-readable output.

The one place that decides how text is shown: both consoles print every string verbatim (no
rich markup, no `:emoji:` codes), so a path, id, job name or hint holding `[...]` shows as it
is and can never raise a MarkupError. Our own styling is explicit: `styled(("error", "red"),
": ", message)` colours only the parts given with a style; progress columns take their text
through `plain_column`, which rich would otherwise parse. Progress itself is drawn by the one
adapter, `gharuntime.cli.progress.ProgressView`."""

from __future__ import annotations

import io
import sys
from typing import Any

from rich.console import Console
from rich.progress import TextColumn
from rich.text import Text

__all__ = [
    "err_console",
    "out_console",
    "plain_column",
    "safe_streams",
    "styled",
]


def safe_streams() -> None:
    """Print what cannot be encoded as escapes instead of failing: a path or value given on the
    command line in another encoding arrives as lone surrogates, and echoing it in an error
    message must not turn a clear refusal into a traceback."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def styled(*parts: str | tuple[str, str]) -> Text:
    """A line whose plain parts show verbatim and whose (text, style) parts carry our style."""
    return Text.assemble(*[(str(p[0]), p[1]) if isinstance(p, tuple) else str(p) for p in parts])


def plain_column(template: str = "{task.description}", **kwargs: Any) -> TextColumn:
    """A progress column whose text (a stage, a repository, a path) is shown verbatim."""
    return TextColumn(template, markup=False, **kwargs)


err_console = Console(stderr=True, markup=False, emoji=False, highlight=False, soft_wrap=True)
out_console = Console(markup=False, emoji=False, highlight=False, soft_wrap=True)
