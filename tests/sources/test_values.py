"""The one rule every source reader applies to an integer from JSON (gharuntime/sources/values)."""

from __future__ import annotations

from typing import Any

import pytest

from gharuntime.sources.values import api_id, api_int


@pytest.mark.parametrize(
    ("value", "want"), [(12, 12), (12.0, 12), ("12", 12), (None, None), ("", None)]
)
def test_whole_numbers_and_absence_are_read(value: Any, want: int | None) -> None:
    assert api_int(value, "x") == want


@pytest.mark.parametrize(
    "value", [True, False, 1.5, "1.5", -1, "-1", float("nan"), 1e999, 2**63, "abc", [], {}]
)
def test_everything_else_is_a_value_error_the_reader_counts(value: Any) -> None:
    with pytest.raises(ValueError, match="x"):
        api_int(value, "x")


def test_a_limit_and_a_required_id() -> None:
    with pytest.raises(ValueError, match="out of range"):
        api_int(2**31, "run_attempt", 2**31 - 1)
    with pytest.raises(ValueError):
        api_id(None, "id")
