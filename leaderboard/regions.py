"""Leaderboard tables inside another Markdown file (the project's README): a marked region

    <!-- gharuntime:table dataset=gharuntime-sim-small config=cross_repo track=config -->
    ...
    <!-- /gharuntime:table -->

is rendered from the results by the leaderboard's own table renderer (`trained_on=NAME` picks a
transfer table), so a table quoted in the docs is the committed results' and can be checked.
Everything outside the regions is kept byte for byte."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from gharuntime.leaderboard.markdown import render_table
from gharuntime.leaderboard.registry import LeaderboardError
from gharuntime.leaderboard.view import TableView

__all__ = ["MAX_MARKDOWN_BYTES", "fill_regions"]

MAX_MARKDOWN_BYTES: Final = 4 * 2**20
"""A Markdown file with regions is read whole; the project's README is about 20 kB."""

_START: Final = re.compile(r"^<!-- gharuntime:table(?P<attrs>[^\n]*?)-->[ \t]*$", re.M)
_END: Final = re.compile(r"^<!-- /gharuntime:table -->[ \t]*$", re.M)
_ATTR: Final = re.compile(r"\s*([a-z_]+)=(\S+)")
_REQUIRED: Final = ("dataset", "config", "track")
_KNOWN: Final = (*_REQUIRED, "trained_on")
_EXAMPLE: Final = (
    "<!-- gharuntime:table dataset=NAME config=CONFIG track=TRACK --> ... "
    "<!-- /gharuntime:table -->"
)


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _attrs(raw: str, where: str) -> dict[str, str]:
    found: dict[str, str] = {}
    rest = raw
    while rest.strip():
        m = _ATTR.match(rest)
        if m is None:
            raise LeaderboardError(
                [f"{where}: cannot read {raw.strip()!r}; a region opens with {_EXAMPLE}"]
            )
        key, value = m.groups()
        if key not in _KNOWN:
            raise LeaderboardError(
                [
                    f"{where}: unknown {key}=; a region names {', '.join(_KNOWN)} (trained_on: "
                    "only for a transfer table)"
                ]
            )
        if key in found:
            raise LeaderboardError([f"{where}: {key}= given twice"])
        found[key] = value
        rest = rest[m.end() :]
    missing = [k for k in _REQUIRED if k not in found]
    if missing:
        raise LeaderboardError(
            [f"{where}: the region names no {', '.join(missing)}; it opens with {_EXAMPLE}"]
        )
    return found


def _source(view: TableView, results: Path, target: Path) -> str:
    folder = Path(
        os.path.relpath((results / view.table.dataset).resolve(), target.parent.resolve())
    )
    title = view.title.replace("`", "'")
    return (
        f"*Rendered by `gharuntime leaderboard` from the committed results in "
        f"`{folder.as_posix()}` ({title}); do not edit by hand.*"
    )


def fill_regions(text: str, views: Sequence[TableView], results: Path, target: Path) -> str:
    """`text` (the Markdown file `target`) with each marked region's body rendered from the
    view it names. LeaderboardError, naming the file and line, for a region that is not
    closed, is nested, names a table the results do not hold, or says something else, and
    for a file with no region at all."""
    by_key = {
        (v.table.dataset, v.table.config, v.table.track, v.table.trained_on): v for v in views
    }
    marks = sorted(
        [(m.start(), True, m) for m in _START.finditer(text)]
        + [(m.start(), False, m) for m in _END.finditer(text)],
        key=lambda mark: mark[0],
    )
    out: list[str] = []
    pos = 0
    opened: re.Match[str] | None = None
    for at, is_start, mark in marks:
        if is_start and opened is not None:
            raise LeaderboardError(
                [
                    f"{target} line {_line(text, at)}: a region opens inside the region of "
                    f"line {_line(text, opened.start())}; close that one first"
                ]
            )
        if is_start:
            opened = mark
            continue
        if opened is None:
            raise LeaderboardError(
                [
                    f"{target} line {_line(text, at)}: <!-- /gharuntime:table --> closes no "
                    "region; remove it or open the region before it"
                ]
            )
        view = _view(
            by_key,
            _attrs(opened["attrs"], _where(target, text, opened)),
            views,
            _where(target, text, opened),
        )
        body = f"\n{_source(view, results, target)}\n\n{render_table(view)}\n"
        out += [text[pos : opened.end()], body]
        pos = at
        opened = None
    if opened is not None:
        raise LeaderboardError(
            [
                f"{_where(target, text, opened)}: the region is not closed; end it with "
                "<!-- /gharuntime:table -->"
            ]
        )
    if not out:
        raise LeaderboardError(
            [f"{target}: holds no table region; add one ({_EXAMPLE}) or leave the file out"]
        )
    out.append(text[pos:])
    return "".join(out)


def _where(target: Path, text: str, mark: re.Match[str]) -> str:
    return f"{target} line {_line(text, mark.start())}"


def _view(
    by_key: dict[tuple[str, str, str, str], TableView],
    attrs: dict[str, str],
    views: Sequence[TableView],
    where: str,
) -> TableView:
    key = (attrs["dataset"], attrs["config"], attrs["track"], attrs.get("trained_on", ""))
    view = by_key.get(key)
    if view is None:
        held = ", ".join(sorted(v.table.name for v in views))
        raise LeaderboardError(
            [
                f"{where}: the results hold no table {key[0]}/{key[1]}/{key[2]}"
                + (f" trained on {key[3]}" if key[3] else "")
                + f"; they hold: {held}"
            ]
        )
    return view
