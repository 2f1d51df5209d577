"""gharuntime.matrix: the combinations match GitHub's include/exclude rules as the reference
below spells them out (one obvious loop, no counting), and over-limit matrices are refused on
counts, before anything is built."""

from __future__ import annotations

import itertools
import time
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gharuntime.matrix import (
    MAX_MATRIX_COMBINATIONS,
    MAX_MATRIX_ENTRIES,
    MAX_MATRIX_JOBS,
    MatrixOverLimit,
    combinations,
)


def reference(
    base: dict[str, list[Any]], include: list[Any], exclude: list[Any]
) -> list[dict[str, Any]]:
    """GitHub's rules, naively: build every combination, drop excluded, apply includes."""
    keys = list(base)
    combos = [dict(zip(keys, v, strict=True)) for v in itertools.product(*base.values())]
    combos = combos if keys else []
    for ex in exclude:
        if isinstance(ex, dict):
            combos = [c for c in combos if not all(k in c and c[k] == v for k, v in ex.items())]
    originals = [dict(c) for c in combos]
    extra = []
    for inc in include:
        if not isinstance(inc, dict):
            continue
        matched = False
        for combo, original in zip(combos, originals, strict=True):
            if all(original[k] == v for k, v in inc.items() if k in original):
                combo.update({k: v for k, v in inc.items() if k not in original})
                matched = True
        if not matched:
            extra.append(dict(inc))
    return combos + extra


VALUES = st.one_of(
    st.integers(0, 3),
    st.sampled_from(["a", "b", True, False, None, 1.0]),
    st.lists(st.integers(0, 2), max_size=2),
    st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2), max_size=2),
)
KEYS = st.sampled_from(["os", "py", "z", "extra"])


@given(
    base=st.dictionaries(st.sampled_from(["os", "py", "z"]), st.lists(VALUES, max_size=4)),
    include=st.lists(st.dictionaries(KEYS, VALUES, max_size=3), max_size=4),
    exclude=st.lists(st.dictionaries(KEYS, VALUES, max_size=3), max_size=4),
)
def test_the_combinations_follow_githubs_rules(
    base: dict[str, list[Any]], include: list[Any], exclude: list[Any]
) -> None:
    want = reference(base, include, exclude)
    got = combinations(base, include, exclude)
    if len(want) > MAX_MATRIX_JOBS:
        assert isinstance(got, MatrixOverLimit)
    else:
        assert got == want


def test_a_matrix_of_a_billion_is_refused_on_its_count_at_once() -> None:
    base = {f"a{i}": list(range(10)) for i in range(9)}
    start = time.perf_counter()
    got = combinations(base, [], [])
    assert isinstance(got, MatrixOverLimit)
    assert "1,000,000,000 jobs" in got.text and "256" in got.text
    assert time.perf_counter() - start < 0.5


def test_excludes_are_counted_before_the_product_is_walked() -> None:
    # 100,000 combinations; excluding one value of `a` could leave at most 90,000: refused unwalked
    base = {"a": list(range(10)), "b": list(range(10_000))}
    got = combinations(base, [], [{"a": 0}])
    assert isinstance(got, MatrixOverLimit) and "at least 90,000" in got.text
    # excludes that could bring it to 256 still do not make 100,000 combinations walked
    base = {"a": list(range(1000)), "b": list(range(100))}
    got = combinations(base, [], [{"a": i} for i in range(2, 1000)])
    assert isinstance(got, MatrixOverLimit)
    assert f"{MAX_MATRIX_COMBINATIONS:,}" in got.text


def test_long_include_and_exclude_lists_are_refused_by_their_length() -> None:
    many = [{"a": i} for i in range(MAX_MATRIX_ENTRIES + 1)]
    for include, exclude in ((many, []), ([], many)):
        got = combinations({"a": [1, 2]}, include, exclude)
        assert isinstance(got, MatrixOverLimit) and f"{MAX_MATRIX_ENTRIES:,}" in got.text


def test_the_largest_allowed_lists_stay_fast() -> None:
    base = {"a": list(range(MAX_MATRIX_JOBS))}
    include = [{"a": i % MAX_MATRIX_JOBS, "k": i} for i in range(MAX_MATRIX_ENTRIES)]
    exclude = [{"a": -1 - i} for i in range(MAX_MATRIX_ENTRIES)]
    start = time.perf_counter()
    got = combinations(base, include, exclude)
    assert not isinstance(got, MatrixOverLimit) and len(got) == MAX_MATRIX_JOBS
    assert time.perf_counter() - start < 10
