"""The one base of every exception gharuntime raises, so a caller (the command line above all)
can tell "the library refused this input" from a bug with a single `except GharuntimeError`.

An error says what is wrong, and where and how to fix it when it knows: `where` goes before the
message as `WHERE: WHAT` and `fix` after it on its own line as `  fix: FIX`, the layout the
price and workflow errors already used. Given neither, str() is the message alone, so an error
reads as it did before it derived from here. A class that callers catch as a builtin keeps that
builtin as a second base (`class PriceError(GharuntimeError, ValueError)`). Imports only
gharuntime.redact (which imports nothing of gharuntime's), so every module can derive from it
without an import circle. str() has every credential a URL in it carries masked
(gharuntime.redact): a message naming a location the user gave can never show its password."""

from __future__ import annotations

from gharuntime.redact import redact

__all__ = ["GharuntimeError", "OptionError"]


class GharuntimeError(Exception):
    """What went wrong (the message), with optional `where` (a file, file:line, a field) and
    `fix` (what to do instead). Messages never carry a secret: they are shown as they are."""

    # Class defaults: a subclass that sets its own fields without calling this __init__ (a
    # control-flow signal, a builtin's __init__ first in line) still renders.
    where: str | None = None
    fix: str | None = None

    def __init__(self, *args: object, where: str | None = None, fix: str | None = None) -> None:
        super().__init__(*args)
        self.where = where
        self.fix = fix

    @property
    def what(self) -> str:
        """The message without `where` and `fix`."""
        return super().__str__()

    def __str__(self) -> str:
        text = self.what
        if self.where:
            text = f"{self.where}: {text}"
        if self.fix:
            text = f"{text}\n  fix: {self.fix}"
        return redact(text)


class OptionError(GharuntimeError, ValueError):
    """A value given for a command-line option that the library cannot use; `option` names it
    and is shown first (`--repos: repos.txt:2: 'x' is not owner/name`), so the message says
    what to fix even though the library, not click, found the problem."""

    def __init__(self, message: str, *, option: str) -> None:
        super().__init__(message, where=option)
        self.option = option
