"""Check every result and write `README.md`, `index.html`, each dataset folder's `summary.md`
and the table regions of other Markdown files, or nothing at all; or say which of them the
results would change (`stale_files`, the CI check)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gharuntime.leaderboard.markdown import render_markdown
from gharuntime.leaderboard.page import render_page
from gharuntime.leaderboard.regions import MAX_MARKDOWN_BYTES, fill_regions
from gharuntime.leaderboard.registry import REPRODUCED_TABLE, Entry, LeaderboardError, scan
from gharuntime.leaderboard.reproduce_table import read_table
from gharuntime.leaderboard.summary import SUMMARY, render_summary
from gharuntime.leaderboard.view import Reproduced, TableView, table_views
from gharuntime.paths import write_atomic
from gharuntime.readfile import InputFileError, read_bytes

__all__ = [
    "Leaderboard",
    "Rendered",
    "build_leaderboard",
    "render_leaderboard",
    "reproductions",
    "stale_files",
]


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
    """What `build_leaderboard` wrote: the Markdown and the page, each dataset folder's
    summary, and the Markdown files whose table regions it rendered."""

    markdown: Path
    page: Path
    views: list[TableView]
    summaries: tuple[Path, ...] = ()
    readmes: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Rendered:
    """Every file the leaderboard is made of, rendered and not yet written: path → text."""

    files: dict[Path, str]
    views: list[TableView]
    markdown: Path
    page: Path
    summaries: tuple[Path, ...]
    readmes: tuple[Path, ...]


def _read_markdown(path: Path) -> str:
    """A Markdown file whose regions are rendered, as text (a byte-order mark kept)."""
    try:
        data = read_bytes(path, MAX_MARKDOWN_BYTES)
    except InputFileError as exc:
        raise LeaderboardError(
            [f"{exc}; --readme takes a Markdown file with table regions"]
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise LeaderboardError(
            [f"{path} line {line} is not UTF-8 text; save it as UTF-8"]
        ) from None


def render_leaderboard(
    results: Path, out: Path, *, summaries: bool = True, readmes: Sequence[Path] = ()
) -> Rendered:
    """Validate every result under `results` and render, without writing anything:
    `out/README.md`, `out/index.html`, `results/<dataset>/summary.md` of each dataset folder
    (unless `summaries` is False), and each of `readmes` with its table regions filled
    (`regions.fill_regions`). The same result files give the same bytes. Raises
    LeaderboardError naming every bad file."""
    tables = scan(results)
    views = table_views(tables)
    label = Path(os.path.relpath(results.resolve(), out.resolve())).as_posix()
    reproduced = reproductions(results, out, [e for table in tables for e in table.entries])
    if out.exists() and not out.is_dir():
        raise LeaderboardError([f"{out}: not a folder; --out takes the folder to write into"])
    md_path, page_path = out / "README.md", out / "index.html"
    files = {
        md_path: render_markdown(views, label, reproduced),
        page_path: render_page(views, label, reproduced),
    }
    summary_paths: list[Path] = []
    if summaries:
        by_dataset: dict[str, list[Entry]] = {}
        for table in tables:
            by_dataset.setdefault(table.dataset, []).extend(table.entries)
        for dataset in sorted(by_dataset):
            path = results / dataset / SUMMARY
            files[path] = render_summary(dataset, by_dataset[dataset])
            summary_paths.append(path)
    for readme in dict.fromkeys(readmes):
        if readme in files:
            raise LeaderboardError(
                [f"{readme}: the leaderboard writes this file itself; give another --readme"]
            )
        files[readme] = fill_regions(_read_markdown(readme), views, results, readme)
    blocked = [
        f"{path}: exists and is not a regular file; remove it"
        + (" or give another --out" if path in (md_path, page_path) else "")
        for path in files
        if (path.exists() or path.is_symlink()) and not path.is_file()
    ]
    if blocked:  # checked before anything is written: all or nothing
        raise LeaderboardError(blocked)
    return Rendered(
        files, views, md_path, page_path, tuple(summary_paths), tuple(dict.fromkeys(readmes))
    )


def build_leaderboard(
    results: Path, out: Path, *, summaries: bool = True, readmes: Sequence[Path] = ()
) -> Leaderboard:
    """Validate every result under `results`, rank each table, and write `out/README.md`,
    `out/index.html`, each dataset folder's `summary.md` (unless `summaries` is False) and
    the table regions of `readmes` (each file atomically, only after every check passed).
    The same result files give the same bytes. Raises LeaderboardError naming every bad
    file."""
    rendered = render_leaderboard(results, out, summaries=summaries, readmes=readmes)
    for path, text in rendered.files.items():
        write_atomic(path.resolve() if path.is_symlink() else path, text, mode=0o644)
    return Leaderboard(
        rendered.markdown, rendered.page, rendered.views, rendered.summaries, rendered.readmes
    )


def stale_files(
    results: Path, out: Path, *, summaries: bool = True, readmes: Sequence[Path] = ()
) -> list[str]:
    """What `build_leaderboard` would change, written nowhere: one line per file that is
    missing or differs from what the results give ([] when every file is up to date)."""
    rendered = render_leaderboard(results, out, summaries=summaries, readmes=readmes)
    stale = []
    for path, text in rendered.files.items():
        want = text.encode("utf-8")
        if not path.exists():
            stale.append(f"{path}: missing")
            continue
        try:
            have = read_bytes(path, len(want) + 1)
        except InputFileError:
            have = None  # larger than it should be, or unreadable: stale either way
        if have != want:
            stale.append(f"{path}: differs from what the results give")
    return stale
