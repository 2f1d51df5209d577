"""What every command shares for talking to a person: a console on stderr for progress and
problems, so stdout stays clean for machine-readable output.

The one place that decides how text is shown: both consoles print every string verbatim (no
rich markup, no `:emoji:` codes), so a path, id, job name or hint holding `[...]` shows as it
is and can never raise a MarkupError. Our own styling is explicit: `styled(("error", "red"),
": ", message)` colours only the parts given with a style; spinners and progress columns take
their text through `spinner_text` and `plain_column`, which rich would otherwise parse."""

from __future__ import annotations

import io
import sys
from typing import Any

from rich.console import Console
from rich.progress import TextColumn
from rich.status import Status
from rich.text import Text

__all__ = [
    "err_console",
    "out_console",
    "plain_column",
    "safe_streams",
    "spinner",
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


class _VerbatimStatus:
    """A rich Status whose messages are shown verbatim (Status parses a str as markup)."""

    def __init__(self, status: Status) -> None:
        self._status = status

    def update(self, message: str) -> None:
        self._status.update(Text(message))

    def __enter__(self) -> _VerbatimStatus:
        self._status.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._status.__exit__(*exc)


def spinner(console: Console, message: str) -> _VerbatimStatus:
    """`console.status(message)` with the message (and every update) shown verbatim."""
    return _VerbatimStatus(console.status(Text(message)))


def plain_column(template: str = "{task.description}", **kwargs: Any) -> TextColumn:
    """A progress column whose text (a stage, a repository, a path) is shown verbatim."""
    return TextColumn(template, markup=False, **kwargs)


err_console = Console(stderr=True, markup=False, emoji=False, highlight=False, soft_wrap=True)
out_console = Console(markup=False, emoji=False, highlight=False, soft_wrap=True)
