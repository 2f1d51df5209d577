"""Check every result and write `README.md` and `index.html`, or nothing at all."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gharuntime.leaderboard.markdown import render_markdown
from gharuntime.leaderboard.page import render_page
from gharuntime.leaderboard.registry import REPRODUCED_TABLE, LeaderboardError, scan
from gharuntime.leaderboard.view import Reproduced, TableView, table_views
from gharuntime.paths import write_atomic
from gharuntime.readfile import InputFileError, read_json

__all__ = ["Leaderboard", "build_leaderboard", "reproductions"]


def reproductions(results: Path, out: Path) -> list[Reproduced]:
    """Each table `leaderboard reproduce --all` wrote under `results` (in it, or in one dataset
    folder), summed up, with its Markdown's path relative to `out` for a link. A table that
    cannot be read is a problem like a bad result: the page never links what it cannot vouch
    for."""
    found: list[Reproduced] = []
    problems: list[str] = []
    for path in sorted([*results.glob(REPRODUCED_TABLE), *results.glob(f"*/{REPRODUCED_TABLE}")]):
        try:
            doc = read_json(path, 16 * 2**20)
            done = doc["reproduced"]
            statuses = [str(item["status"]) for item in done]
            not_run = len(doc["not_run"])
        except (InputFileError, KeyError, TypeError) as exc:
            problems.append(
                f"{path}: not a reproduce table ({exc}); run `gharuntime leaderboard "
                "reproduce --all` again"
            )
            continue
        md = path.with_suffix(".md")
        link = Path(os.path.relpath(md.resolve(), out.resolve())).as_posix()
        scope = path.parent.relative_to(results).as_posix()
        found.append(
            Reproduced(
                scope="every dataset" if scope == "." else scope,
                link=link,
                exact=statuses.count("exact"),
                within=statuses.count("within"),
                differs=statuses.count("differs"),
                not_run=not_run,
                version=str(doc.get("gharuntime_version", "")),
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
    views = table_views(scan(results))
    label = Path(os.path.relpath(results.resolve(), out.resolve())).as_posix()
    reproduced = reproductions(results, out)
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
