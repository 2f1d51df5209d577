"""The one progress callback (gharuntime.progress) and the one CLI adapter that draws it
(gharuntime.cli.progress.ProgressView)."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from gharuntime.cli.progress import ProgressView
from gharuntime.progress import Progress, say


def _console(terminal: bool) -> tuple[Console, StringIO]:
    buffer = StringIO()
    console = Console(
        file=buffer,
        force_terminal=terminal,
        width=100,
        markup=False,
        emoji=False,
        color_system=None,
    )
    return console, buffer


def test_say_sends_a_plain_message_and_tolerates_no_callback() -> None:
    heard: list[tuple[str, int, int | None]] = []
    progress: Progress = lambda what, done, total: heard.append((what, done, total))  # noqa: E731
    say(progress, "fitting lightgbm on 31 rows")
    say(None, "nobody listens")
    assert heard == [("fitting lightgbm on 31 rows", 0, None)]


def test_a_message_is_drawn_verbatim_on_a_terminal() -> None:
    console, buffer = _console(terminal=True)
    with ProgressView(console, first="validating…", prefix="median: ") as progress:
        assert progress is not None
        say(progress, "checking data/[x].parquet")
    drawn = buffer.getvalue()  # starting draws the first line; stopping draws the last state
    assert "validating…" in drawn
    assert "median: checking data/[x].parquet" in drawn  # [...] is text, never markup


def test_a_counted_stage_is_a_bar_with_its_percentage() -> None:
    console, buffer = _console(terminal=True)
    with ProgressView(console) as progress:
        assert progress is not None
        progress("uploading", 0, 4)
        progress("uploading", 2, 4)
    drawn = buffer.getvalue()
    assert "uploading" in drawn and " 50%" in drawn and "━" in drawn


def test_a_count_without_a_total_shows_the_count() -> None:
    console, buffer = _console(terminal=True)
    with ProgressView(console) as progress:
        assert progress is not None
        progress("reading API records", 12_000, None)
    assert "reading API records (12,000)" in buffer.getvalue()


def test_off_a_terminal_nothing_is_drawn_and_the_library_hears_no_callback() -> None:
    console, buffer = _console(terminal=False)
    with ProgressView(console, first="publishing…") as progress:
        assert progress is None
    assert buffer.getvalue() == ""


def test_lines_are_printed_as_they_come_even_off_a_terminal() -> None:
    console, buffer = _console(terminal=False)
    with ProgressView(console, lines=True) as progress:
        assert progress is not None
        say(progress, "512 tokens: warming up [cuda]")
        progress("uploading", 1, 2)  # counted work is drawn on a terminal only
    assert buffer.getvalue() == "512 tokens: warming up [cuda]\n"
