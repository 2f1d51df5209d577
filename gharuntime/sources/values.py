"""The one place a JSON value of a source record (raw store, GHALogs dump, API JSON) becomes a
column's value, so every reader agrees on what a record may hold.

The rule for integers: a whole number from 0 to the column's limit (2**63-1 unless smaller), as
a JSON integer, a float with no fraction (12.0, as some dumps write them) or a string of ASCII
digits ("12", as `json.dumps(default=str)` dumps write ids); None when absent (null or "").
Anything else raises ValueError: a bool (`true` is not job 1), a fraction (1.5 or "1.5" is not
attempt 1), a negative, NaN or infinity, a number beyond the limit, another type. Each reader
catches it per record, so the record is counted as malformed (by kind, with an example) and
skipped; never the whole build. Without this, a bool passes for 1 (job 1, 1970-01-01) and an
out-of-range number fails the whole build when the column is made, long after the record that
caused it. Times and texts follow the same pattern (`api_time_us`, `api_text`): a text holding
a lone surrogate (JSON allows the escape `"\\ud800"`, UTF-8 cannot hold it) is malformed too,
because Arrow would refuse it when the column is made and end the whole build."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any, Final

__all__ = ["MAX_TEXT", "api_id", "api_int", "api_text", "api_time_us", "api_title", "utf8_text"]

INT64_MAX: Final = 2**63 - 1
MAX_TEXT: Final = 4096
"""A job name, branch, status or sha is far shorter (GitHub caps names at a few hundred)."""
_MAX_TITLE: Final = 1000
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MAX_SECONDS: Final = 253_402_300_799  # 9999-12-31T23:59:59Z, the last time ISO 8601 writes


def _whole(value: Any, what: str, low: int, high: int) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{what} is {value!r}, not a number")
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ValueError(f"{what} is {value!r}, not a whole number")
        value = int(value)
    elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    if not isinstance(value, int):
        raise ValueError(f"{what} is {type(value).__name__} {str(value)[:40]!r}, not a number")
    if not low <= value <= high:
        raise ValueError(f"{what} {str(value)[:40]} is out of range ({low} to {high})")
    return value


def utf8_text(value: str, what: str) -> str:
    """`value` when UTF-8 can hold it; ValueError naming `what` for a lone surrogate."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = f"U+{ord(value[exc.start]):04X}"
            raise ValueError(
                f"{what} holds a lone surrogate ({bad} at character {exc.start}), not text"
            ) from None
    return value


def api_id(value: Any, what: str) -> int:
    """A required id, by the module's rule for integers (ValueError when absent too)."""
    return _whole(value, what, 0, INT64_MAX)


def api_int(value: Any, what: str, high: int = INT64_MAX) -> int | None:
    """An optional integer by the module's rule: None when absent (null or ""), else a whole
    number from 0 to `high`; ValueError for anything else. `what` names the field in it."""
    if value is None or value == "":
        return None
    return _whole(value, what, 0, high)


def api_text(value: Any, what: str, *, required: bool = False) -> str | None:
    """Text of at most MAX_TEXT characters (None when absent, unless required)."""
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{what} is {type(value).__name__}, not text")
    if len(value) > MAX_TEXT:
        raise ValueError(f"{what} is {len(value):,} characters long (at most {MAX_TEXT:,})")
    return utf8_text(value, what)


def api_title(value: Any) -> str | None:
    """The first line of a commit message, cut to 1,000 characters (it is a summary)."""
    if not isinstance(value, str):
        return None
    return utf8_text(value[: _MAX_TITLE * 4].split("\n", 1)[0][:_MAX_TITLE], "commit message")


def api_time_us(value: Any, what: str) -> int | None:
    """Microseconds since the epoch of an ISO 8601 time (UTC when it has no offset) or of a
    number of seconds; None when absent. ValueError for a bool, another type, or a time
    outside years 1970 to 9999."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"{what} is {type(value).__name__} {str(value)[:40]!r}, not a time")
    if isinstance(value, str):
        if len(value) > 64:
            raise ValueError(f"{what} is {len(value):,} characters long, not a time")
        try:
            t = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{what} {value[:40]!r} is not an ISO 8601 time") from None
        if t.tzinfo is None:
            t = t.replace(tzinfo=timezone.utc)
        delta = t - _EPOCH
        seconds: float = delta.days * 86_400 + delta.seconds + delta.microseconds / 1e6
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    else:
        seconds = float(value)
        if not math.isfinite(seconds):
            raise ValueError(f"{what} is {value!r}, not a time")
        micros = int(value * 1_000_000) if -_MAX_SECONDS <= seconds <= _MAX_SECONDS else 0
    if not 0 <= seconds <= _MAX_SECONDS:
        raise ValueError(f"{what} {str(value)[:40]} is before 1970 or after 9999")
    return micros
