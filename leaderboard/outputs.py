"""Check every result and write `README.md` and `index.html`, or nothing at all."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gharuntime.leaderboard.markdown import render_markdown
from gharuntime.leaderboard.page import render_page
from gharuntime.leaderboard.registry import LeaderboardError, scan, write_atomic
from gharuntime.leaderboard.view import TableView, table_views

__all__ = ["Leaderboard", "build_leaderboard"]


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
    views = table_views(scan(results))
    label = Path(os.path.relpath(results.resolve(), out.resolve())).as_posix()
    markdown = render_markdown(views, label)
    page = render_page(views, label)
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
    write_atomic(md_path, markdown)
    write_atomic(page_path, page)
    return Leaderboard(md_path, page_path, views)
