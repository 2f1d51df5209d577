"""What every command shares for talking to a person: a console on stderr for progress and
problems, so stdout stays clean for machine-readable output.

The one place that decides how text is shown: both consoles print every string verbatim (no
rich markup, no `:emoji:` codes), so a path, id, job name or hint holding `[...]` shows as it
is and can never raise a MarkupError. Our own styling is explicit: `styled(("error", "red"),
": ", message)` colours only the parts given with a style; progress columns take their text
through `plain_column`, which rich would otherwise parse. Progress itself is drawn by the one
adapter, `gharuntime.cli.progress.ProgressView`.

Nothing a user or a file brings reaches the terminal raw: every string both consoles print (a
table's cells and title included) and every part `styled` joins passes `terminal_safe`, which
masks a URL's credentials (gharuntime.redact) and shows a control character (an escape sequence
in a job name or path, a C1 control, a bidirectional override) as its `\\x1b`-style escape.
The root group (main.py) puts click's own error messages through it too."""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable
from typing import Any, Final

import click
from rich.console import Console
from rich.json import JSON
from rich.measure import Measurement
from rich.progress import TextColumn
from rich.text import Text

from gharuntime.markdown import INVISIBLE
from gharuntime.redact import redact

__all__ = [
    "echo_json",
    "err_console",
    "json_safe",
    "out_console",
    "plain_column",
    "print_wide",
    "safe_streams",
    "styled",
    "terminal_safe",
]

# C0 controls but newline and tab, DEL, C1 controls (0x9b is a one-byte CSI), and the
# invisible format characters: bidirectional overrides and isolates that reorder what a
# terminal shows, zero-width spaces and joiners (gharuntime.markdown.INVISIBLE, which the
# Markdown escapes too).
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f" + INVISIBLE + "]")


def terminal_safe(text: str) -> str:
    """`text` as it may reach a terminal: credentials masked, control characters shown as
    escapes (`\\x1b`), so no value can move the cursor, retitle the window or recolour text."""
    return _CONTROL.sub(lambda m: ascii(m[0])[1:-1], redact(text))


def json_safe(text: str) -> str:
    """JSON text as it may reach a terminal: credentials masked, and the control characters
    json.dumps leaves raw (C1, DEL, bidirectional controls, found only inside strings) written
    as `\\u009b` escapes, so the JSON still parses to the same text, less its secrets."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m[0]):04x}", redact(text))


def echo_json(text: str) -> None:
    """Print machine-readable JSON on stdout (`--json`), through `json_safe`."""
    click.echo(json_safe(text))


def _safe_text(text: Text, safe: Callable[[str], str] = terminal_safe) -> Text:
    """A Text whose plain parts pass `safe`, each keeping its style."""
    if safe(text.plain) == text.plain:
        return text
    cuts = sorted({i for span in text.spans for i in (span.start, span.end)})
    out = Text(style=text.style, end=text.end, justify=text.justify)
    for piece in text.divide(cuts):
        out.append(safe(piece.plain), style=piece.spans[0].style if piece.spans else None)
    return out


def _safe(item: Any) -> Any:
    if isinstance(item, Text):
        return _safe_text(item)
    if isinstance(item, JSON):  # print_json: highlighted JSON text
        item.text = _safe_text(item.text, json_safe)
    return item


class _SafeConsole(Console):
    """A console that shows every string through `terminal_safe`: strings rich turns into text
    (a printed string, a table's cell or title) go through render_str, Text objects and
    print_json's JSON through print."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_safe(text), **kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(_safe(o) for o in objects), **kwargs)


def safe_streams() -> None:
    """Print what cannot be encoded as escapes instead of failing: a path or value given on the
    command line in another encoding arrives as lone surrogates, and echoing it in an error
    message must not turn a clear refusal into a traceback."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


def styled(*parts: str | tuple[str, str]) -> Text:
    """A line whose plain parts show verbatim and whose (text, style) parts carry our style."""
    return Text.assemble(
        *[
            (terminal_safe(str(p[0])), p[1]) if isinstance(p, tuple) else terminal_safe(str(p))
            for p in parts
        ]
    )


def plain_column(template: str = "{task.description}", **kwargs: Any) -> TextColumn:
    """A progress column whose text (a stage, a repository, a path) is shown verbatim."""
    return TextColumn(template, markup=False, **kwargs)


err_console = _SafeConsole(stderr=True, markup=False, emoji=False, highlight=False, soft_wrap=True)
out_console = _SafeConsole(markup=False, emoji=False, highlight=False, soft_wrap=True)


def print_wide(renderable: Any) -> None:
    """Print a table on stdout at a terminal's width, or, when stdout is a pipe or a file
    (which has no width), at the table's own full width: nothing cut to 80 columns."""
    if out_console.is_terminal:
        out_console.print(renderable)
        return
    wide = out_console.options.update(max_width=100_000)
    width = max(Measurement.get(out_console, wide, renderable).maximum, out_console.width)
    console = _SafeConsole(
        markup=False, emoji=False, highlight=False, soft_wrap=True, width=width, file=sys.stdout
    )
    console.print(renderable)
