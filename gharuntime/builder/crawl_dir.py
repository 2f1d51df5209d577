"""The raw store a crawling build (`--source simulated|github`) writes into: refuse a folder
that is not a crawl's store, and a store that holds another world (another seed, scale or
--crawl-logs of the simulated GitHub, another API), so a rerun can only ever continue the same
crawl. The one rule for crawl folders: the CLI and `prepare_simulated_store` both call
`claim_crawl_dir`."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from gharuntime.contract import RawStoreLayout
from gharuntime.errors import GharuntimeError
from gharuntime.rawstore import connect_state

__all__ = ["WORLD_KEY", "CrawlDirError", "claim_crawl_dir", "simulated_world"]

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


def simulated_world(seed: int, scale: str) -> str:
    """The world text a crawl of the simulated GitHub records (WORLD_KEY)."""
    return f"the simulated GitHub, seed {seed}, scale {scale}"


def _settings(values: Mapping[str, str]) -> str:
    return ", ".join(f"{k.removeprefix('sim_')} {v}" for k, v in sorted(values.items()))


def claim_crawl_dir(root: Path, world: str, identity: Mapping[str, str] | None = None) -> None:
    """Check that `root` is new, empty, or a crawl's store of this same `world` (a short text
    such as "the simulated GitHub, seed 1, scale tiny") and, when given, these same `identity`
    settings (meta keys such as sim_seed, sim_scale, sim_logs), then mark it as holding them.

    The one rule for a crawl's folder: it belongs to what made it. A store of another world or
    other settings is refused with a CrawlDirError that says what it holds and how to go on,
    never deleted or mixed: its records would end up in this dataset, and it may be a long crawl
    someone wants to keep. Nothing in a refused folder is touched."""
    want = dict(identity or {})
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
        stored = {k: meta[k] for k in want if k in meta}
        if held is not None and held != world:
            raise CrawlDirError(
                f"{root} holds a crawl of {held}, not of {world}; adding to it would mix two "
                "worlds in one dataset (nothing there was touched). Give another --crawl-dir "
                "(or --out), or delete that folder to crawl afresh"
            )
        if held is None and not stored and shards:
            raise CrawlDirError(
                f"{root} holds a crawl of unknown origin ({shards} shards); a build cannot tell "
                f"whether it is {world}. Give an empty --crawl-dir, or build it with --raw"
            )
        if stored != want and (stored or shards):
            differ = [k for k in sorted(want) if stored.get(k) != want[k]]
            was = _settings({k: stored[k] for k in differ if k in stored}) or "none recorded"
            now = _settings({k: want[k] for k in differ})
            raise CrawlDirError(
                f"{root} holds a crawl of {world} with other settings ({was}), not {now}; adding to it would mix two worlds in one dataset (nothing "
                "there was touched). Give another --crawl-dir (or --out), or delete that folder "
                "to crawl afresh"
            )
    try:
        con = connect_state(root)
        try:
            for k, v in {WORLD_KEY: world, **want}.items():
                con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, v))
        finally:
            con.close()
    except (OSError, sqlite3.Error) as exc:
        raise CrawlDirError(f"cannot write the raw store at {root}: {exc}") from None
