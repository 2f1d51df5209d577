"""The one adapter that shows the library's `Progress(what, done, total)` to a person.

Every command that runs something long wraps it in `with ProgressView(...) as progress:` and
hands `progress` to the library. Counted work (a known total) is a bar with its percentage and
time left; a message, or a count with no total, is a spinner line that the next report replaces;
the time since the view opened runs at the end of the line. Only the latest report is shown, and
the display is transient: when the command is done, what it prints afterwards is all that stays.

Off a terminal (a pipe, a file, a test runner) nothing is drawn and `progress` is None, so the
library skips its reports; with `lines=True` messages are printed as lasting lines instead, on a
terminal or not (`laser bench` reports what it measures that way). Text is shown verbatim: a
stage, path or job name holding `[...]` is never read as rich markup.
"""

from __future__ import annotations

import time
from datetime import timedelta
from types import TracebackType

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TimeRemainingColumn,
)
from rich.progress import Progress as Bars
from rich.text import Text

from gharuntime.cli.output import err_console, plain_column, terminal_safe
from gharuntime.progress import Progress

__all__ = ["ProgressView"]


class _Counted(ProgressColumn):
    """A column drawn only for counted work, so a message gets no empty bar or 0%."""

    def __init__(self, column: ProgressColumn) -> None:
        super().__init__()
        self._column = column

    def render(self, task: Task) -> RenderableType:
        return self._column.render(task) if task.total is not None else Text("")


class _Since(ProgressColumn):
    """Time since the view opened: one clock for the whole command, across its stages."""

    def __init__(self, started: float) -> None:
        super().__init__()
        self._started = started

    def render(self, task: Task) -> RenderableType:
        seconds = int(time.monotonic() - self._started)
        return Text(str(timedelta(seconds=seconds)), style="progress.elapsed")


class ProgressView:
    """`with ProgressView(first="publishing…") as progress:` renders Progress on stderr.

    `first` is shown until the first report; `prefix` goes before every report (a method's name);
    `lines=True` prints messages as lasting lines rather than a spinner."""

    def __init__(
        self,
        console: Console | None = None,
        *,
        first: str | None = None,
        prefix: str = "",
        lines: bool = False,
    ) -> None:
        self.console = console if console is not None else err_console
        self.first = first
        self.prefix = prefix
        self.lines = lines
        self._bars: Bars | None = None
        self._task: TaskID | None = None
        self._stage: str | None = None
        self._counted = False

    def __enter__(self) -> Progress | None:
        if not self.console.is_terminal and not self.lines:
            return None
        if self.first is not None and self.console.is_terminal:
            self._show(self.first, self.first, 0, None)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None

    def __call__(self, what: str, done: int, total: int | None) -> None:
        text = terminal_safe(self.prefix + what)
        if total is None and self.lines:
            self.console.print(Text(text))
            return
        if not self.console.is_terminal:
            return
        if total is None and done:
            text = f"{text} ({done:,})"
        self._show(what, text, done, total)

    def _show(self, stage: str, text: str, done: int, total: int | None) -> None:
        """Draw `text` as the one line: the same stage updates its bar, a new one replaces it."""
        if self._bars is None:
            self._bars = Bars(
                SpinnerColumn(),
                plain_column(),
                _Counted(BarColumn()),
                _Counted(plain_column("{task.percentage:>3.0f}%")),
                _Since(time.monotonic()),
                _Counted(TimeRemainingColumn()),
                console=self.console,
                transient=True,
            )
            self._bars.start()
        # a count that loses its total starts afresh: rich keeps a task's total once set
        same = stage == self._stage and (total is not None or not self._counted)
        if self._task is not None and same:
            self._bars.update(self._task, description=text, completed=done, total=total)
        else:
            if self._task is not None:
                self._bars.remove_task(self._task)
            self._stage = stage
            self._task = self._bars.add_task(text, total=total, completed=done)
        self._counted = total is not None
