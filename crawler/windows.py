"""The `created` time windows a crawl lists runs in: parsing, formatting, defaults, halving."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

__all__ = ["LISTING_CAP", "default_window", "format_time", "parse_time", "split_window"]

LISTING_CAP = 1000  # GitHub returns at most this many results for a filtered listing


def format_time(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """An ISO date or date-time (a bare date means midnight UTC) as an aware UTC datetime."""
    t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc)


def default_window(days: int = 90, now: datetime | None = None) -> tuple[str, str]:
    """The last `days` days up to now (GitHub deletes logs after 90)."""
    end = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    return format_time(end - timedelta(days=days)), format_time(end)


def split_window(since: str, until: str) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """Two halves of an inclusive `created` window, or None if it is too short to split.

    The halves share their middle second (`a..m` and `m..b`): a listing's bounds are inclusive
    and times may carry fractions of a second, so abutting halves (`m+1..b`) could drop a run
    created between m and m+1. A run listed twice is stored once (runs dedup on id and attempt).
    """
    a, b = parse_time(since), parse_time(until)
    span = int((b - a).total_seconds())
    if span < 2:
        return None
    mid = format_time(a + timedelta(seconds=span // 2))
    return (since, mid), (mid, until)
