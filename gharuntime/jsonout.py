"""Strict JSON for everything a command prints or writes: RFC 8259 has no NaN or Infinity,
and `json.dumps` writes both by default, so a reader in another language (or `jq`) fails on
our output. Every non-finite float becomes null, and the dump itself refuses any left over."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["finite", "strict_dumps"]


def finite(value: Any) -> Any:
    """`value` with every NaN and ±Infinity (numpy's too) replaced by None, recursively;
    tuples become lists, as JSON writes them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return finite(item())
    return value


def strict_dumps(value: Any, **kwargs: Any) -> str:
    """json.dumps of `value` with non-finite numbers as null (never `NaN`), allow_nan off."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)
