"""What every command shares for talking to a person: a console on stderr for progress and
problems, so stdout stays clean for machine-readable output."""

from __future__ import annotations

import io
import sys

from rich.console import Console

__all__ = ["err_console", "out_console", "safe_streams"]


def safe_streams() -> None:
    """Print what cannot be encoded as escapes instead of failing: a path or value given on the
    command line in another encoding arrives as lone surrogates, and echoing it in an error
    message must not turn a clear refusal into a traceback."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


err_console = Console(stderr=True, highlight=False, soft_wrap=True)
out_console = Console(highlight=False, soft_wrap=True)
