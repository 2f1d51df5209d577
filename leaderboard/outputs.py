"""Check every result and write `README.md` and `index.html`, or nothing at all."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gharuntime.leaderboard.markdown import render_markdown
from gharuntime.leaderboard.page import render_page
from gharuntime.leaderboard.registry import REPRODUCED_TABLE, Entry, LeaderboardError, scan
from gharuntime.leaderboard.reproduce_table import read_table
from gharuntime.leaderboard.view import Reproduced, TableView, table_views
from gharuntime.paths import write_atomic
from gharuntime.readfile import InputFileError

__all__ = ["Leaderboard", "build_leaderboard", "reproductions"]


def reproductions(results: Path, out: Path, entries: Iterable[Entry] = ()) -> list[Reproduced]:
    """Each table `leaderboard reproduce --all` wrote under `results` (in it, or in one dataset
    folder), counted against the results filed now (`entries`): a row vouches only for the
    exact text it re-ran (its sha256), so a result replaced or added since counts as changed,
    never as reproduced. Its Markdown's path is relative to `out` for a link. A table that
    cannot be read is a problem like a bad result: the page never links what it cannot vouch
    for."""
    filed = list(entries)
    found: list[Reproduced] = []
    problems: list[str] = []
    for path in sorted([*results.glob(REPRODUCED_TABLE), *results.glob(f"*/{REPRODUCED_TABLE}")]):
        try:
            counts = read_table(path, filed)
        except InputFileError as exc:
            problems.append(
                f"{path}: not a reproduce table of this version ({exc}); run `gharuntime "
                "leaderboard reproduce --all` again"
            )
            continue
        md = path.with_suffix(".md")
        link = Path(os.path.relpath(md.resolve(), out.resolve())).as_posix()
        scope = path.parent.relative_to(results).as_posix()
        found.append(
            Reproduced(
                scope="every dataset" if scope == "." else scope,
                link=link,
                exact=counts.exact,
                within=counts.within,
                differs=counts.differs,
                not_run=counts.not_run,
                version=counts.version,
                refused=counts.refused,
                changed=counts.changed,
            )
        )
    if problems:
        raise LeaderboardError(problems)
    return found


@dataclass(frozen=True)
class Leaderboard:
    """What `build_leaderboard` wrote."""

    markdown: Path
    page: Path
    views: list[TableView]


def build_leaderboard(results: Path, out: Path) -> Leaderboard:
    """Validate every result under `results`, rank each table, and write `out/README.md` and
    `out/index.html` (each atomically, only after every check passed). The same result files
    give the same bytes. Raises LeaderboardError naming every bad file."""
    tables = scan(results)
    views = table_views(tables)
    label = Path(os.path.relpath(results.resolve(), out.resolve())).as_posix()
    reproduced = reproductions(results, out, [e for table in tables for e in table.entries])
    markdown = render_markdown(views, label, reproduced)
    page = render_page(views, label, reproduced)
    if out.exists() and not out.is_dir():
        raise LeaderboardError([f"{out}: not a folder; --out takes the folder to write into"])
    md_path, page_path = out / "README.md", out / "index.html"
    blocked = [
        f"{path}: exists and is not a regular file; remove it or give another --out"
        for path in (md_path, page_path)
        if (path.exists() or path.is_symlink()) and not path.is_file()
    ]
    if blocked:  # checked before either is written: all or nothing
        raise LeaderboardError(blocked)
    write_atomic(md_path, markdown, mode=0o644)
    write_atomic(page_path, page, mode=0o644)
    return Leaderboard(md_path, page_path, views)
