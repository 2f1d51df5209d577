"""How a refusal reaches a person: a command raises (a library error, a UsageProblem of its own,
or a Refusal laid out line by line) and the root group (main.py) prints it on stderr and exits 2,
the one place that does. Exit 1 (the input was used but something was lost, the crawl may
continue) and 130 (interrupted) stay with their commands: they are not refusals."""

from __future__ import annotations

from typing import Final

from rich.text import Text

from gharuntime.cli.output import err_console, styled
from gharuntime.errors import GharuntimeError

__all__ = ["EXIT_REFUSED", "Refusal", "UsageProblem", "error_line", "report"]

EXIT_REFUSED: Final = 2
"""The exit code of a refused input, the same as click's for a bad option."""


class UsageProblem(GharuntimeError):
    """A check the command line makes itself (an option's value, a missing extra), shown as
    `error: MESSAGE` like any library error."""


class Refusal(GharuntimeError):
    """A refusal whose lines the command lays out itself (its own label, a note after the
    message, several problems), printed as given; str() is their plain text."""

    def __init__(self, *lines: str | Text) -> None:
        super().__init__(
            "\n".join(line.plain if isinstance(line, Text) else line for line in lines)
        )
        self.lines = lines


def error_line(message: object, label: str = "error") -> Text:
    """`LABEL: MESSAGE` with the label in red: `error: ...` is how every refusal without its own
    layout reads; a command names its own stage (`build failed: ...`)."""
    return styled((label, "red"), f": {message}")


def report(exc: GharuntimeError) -> None:
    """Print a refusal on stderr, verbatim (a `[...]` in a path or message is not markup)."""
    for line in exc.lines if isinstance(exc, Refusal) else (error_line(str(exc)),):
        err_console.print(line)
