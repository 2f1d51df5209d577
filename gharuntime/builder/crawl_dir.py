"""The raw store a crawling build (`--source simulated|github`) writes into: refuse a folder
that is not a crawl's store, and a store that holds another world (another seed or scale of the
simulated GitHub, another API), so a rerun can only ever continue the same crawl."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from gharuntime.contract import RawStoreLayout
from gharuntime.errors import GharuntimeError
from gharuntime.rawstore import connect_state

__all__ = ["WORLD_KEY", "CrawlDirError", "claim_crawl_dir"]

WORLD_KEY = "gharuntime_world"  # state.sqlite meta key naming what the store holds
_LAYOUT = RawStoreLayout()


class CrawlDirError(GharuntimeError):
    """The crawl folder cannot be used for this build (the message says why and what to do)."""


def _read_meta(state: Path) -> tuple[dict[str, str], int]:
    try:
        con = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
        try:
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
            shards = int(con.execute("SELECT COUNT(*) FROM shards").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise CrawlDirError(f"{state}: not a readable raw store state ({exc})") from None
    return {str(k): str(v) for k, v in meta.items()}, shards


def claim_crawl_dir(root: Path, world: str) -> None:
    """Check that `root` is new, empty, or a crawl's store of this same `world` (a short text
    such as "simulated seed=1 scale=tiny"), then mark it as holding `world`."""
    if root.exists() and not root.is_dir():
        raise CrawlDirError(f"{root} is a file; give a folder for the crawl (--crawl-dir)")
    if root.is_dir() and any(root.iterdir()):
        state = root / _LAYOUT.state
        if not state.is_file():
            raise CrawlDirError(
                f"{root} is not empty and holds no raw store (no {_LAYOUT.state}); the crawl "
                "never writes into other data: give an empty or new --crawl-dir"
            )
        meta, shards = _read_meta(state)
        if meta.get("source") not in (None, "crawl"):
            raise CrawlDirError(
                f"{root} is a raw store written by {meta['source']!r}, not by a crawl; build it "
                "with `gharuntime build --raw`, or give another --crawl-dir"
            )
        held = meta.get(WORLD_KEY)
        if held is not None and held != world:
            raise CrawlDirError(
                f"{root} holds a crawl of {held}, not of {world}; adding to it would mix two "
                "worlds in one dataset. Give another --crawl-dir (or --out), or delete that folder"
            )
        if held is None and shards:
            raise CrawlDirError(
                f"{root} holds a crawl of unknown origin ({shards} shards); a build cannot tell "
                f"whether it is {world}. Give an empty --crawl-dir, or build it with --raw"
            )
    try:
        con = connect_state(root)
        try:
            con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (WORLD_KEY, world))
        finally:
            con.close()
    except (OSError, sqlite3.Error) as exc:
        raise CrawlDirError(f"cannot write the raw store at {root}: {exc}") from None
