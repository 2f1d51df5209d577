"""A strategy.matrix's combinations in GitHub's order, counted before they are built.

A matrix is a product: nine axes of ten values (or a 250-byte YAML that aliases one list nine
times) are 10⁹ combinations. So the size is known before anything is expanded: the product of
the axis lengths, minus at most what each `exclude:` entry can match, plus at most one job per
`include:` entry. Work and memory stay bounded by the limits below whatever the YAML says;
`gharuntime.workflow` turns an over-limit answer into `MatrixTooLarge`.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_MATRIX_COMBINATIONS",
    "MAX_MATRIX_ENTRIES",
    "MAX_MATRIX_JOBS",
    "MAX_MATRIX_WORK",
    "MatrixOverLimit",
    "combinations",
]

MAX_MATRIX_JOBS = 256
"""GitHub's limit on the jobs one matrix may generate per workflow run."""
MAX_MATRIX_COMBINATIONS = 65_536
"""Combinations of the axes before `exclude:` that are walked to apply it; a matrix whose
excludes could bring more down to 256 is refused unwalked (no real workflow is near)."""
MAX_MATRIX_ENTRIES = 4_096
"""Entries of `include:` and of `exclude:` each (a matrix keeps at most 256 jobs)."""
MAX_MATRIX_WORK = 2**22
"""Combinations before `exclude:` times the distinct key sets its entries use: each is one set
lookup. 256 combinations with 4,096 entries of different keys stay below it."""


@dataclass(frozen=True)
class MatrixOverLimit:
    """Why a matrix is refused: `text` says how many jobs it makes and which limit it passes."""

    text: str


def _frozen(value: Any) -> Hashable:
    """A hashable stand-in equal exactly when the values compare equal (YAML data only)."""
    if isinstance(value, Mapping):
        items = sorted(((repr(k), _frozen(v)) for k, v in value.items()), key=lambda kv: kv[0])
        return ("\0map", tuple(items))
    if isinstance(value, list):
        return ("\0list", tuple(_frozen(v) for v in value))
    return value if isinstance(value, Hashable) else repr(value)


def _over(count: int, exact: bool) -> MatrixOverLimit:
    many = f"{count:,}" if exact else f"at least {count:,}"
    return MatrixOverLimit(
        f"its matrix expands to {many} jobs, over GitHub's limit of {MAX_MATRIX_JOBS} jobs per "
        "matrix (GitHub refuses such a workflow run)"
    )


def combinations(
    base: Mapping[str, list[Any]], include: list[Any], exclude: list[Any]
) -> list[dict[str, Any]] | MatrixOverLimit:
    """The combinations GitHub makes from the axes `base` and the `include`/`exclude` lists (see
    gharuntime.workflow for the rules), or why they are over a limit, decided on counts first."""
    for name, entries in (("include", include), ("exclude", exclude)):
        if len(entries) > MAX_MATRIX_ENTRIES:
            return MatrixOverLimit(
                f"its matrix has {len(entries):,} `{name}:` entries; a matrix is refused above "
                f"{MAX_MATRIX_ENTRIES:,}"
            )
    keys = list(base)
    product = math.prod(len(v) for v in base.values()) if keys else 0
    removable = 0
    if product > MAX_MATRIX_JOBS:
        counts = {k: Counter(_frozen(v) for v in values) for k, values in base.items()}
        for ex in exclude:
            if isinstance(ex, Mapping) and all(k in counts for k in ex):
                removable += math.prod(
                    counts[k][_frozen(ex[k])] if k in ex else len(base[k]) for k in keys
                )
        if product - removable > MAX_MATRIX_JOBS:
            return _over(product - removable, exact=removable == 0)
        if product > MAX_MATRIX_COMBINATIONS:
            return MatrixOverLimit(
                f"its matrix has {product:,} combinations before `exclude:`; a matrix is "
                f"refused above {MAX_MATRIX_COMBINATIONS:,} (GitHub keeps {MAX_MATRIX_JOBS})"
            )
    groups: dict[tuple[str, ...], set[tuple[Hashable, ...]]] = {}
    for ex in exclude:
        if isinstance(ex, Mapping) and all(k in base for k in ex):
            ks = tuple(k for k in keys if k in ex)
            groups.setdefault(ks, set()).add(tuple(_frozen(ex[k]) for k in ks))
    if product * len(groups) > MAX_MATRIX_WORK:
        return MatrixOverLimit(
            f"its matrix's `exclude:` needs {product * len(groups):,} checks ({product:,} "
            f"combinations x {len(groups):,} sets of keys); a matrix is refused above "
            f"{MAX_MATRIX_WORK:,}"
        )
    combos: list[dict[str, Any]] = []
    for values in itertools.product(*base.values()) if keys else ():
        frozen = dict(zip(keys, map(_frozen, values), strict=True))
        if any(tuple(frozen[k] for k in ks) in seen for ks, seen in groups.items()):
            continue
        combos.append(dict(zip(keys, values, strict=True)))
        if len(combos) > MAX_MATRIX_JOBS:  # excludes matched fewer than they could
            return _over(len(combos), exact=False)
    originals = [dict(c) for c in combos]
    extra: list[dict[str, Any]] = []
    for inc in include:
        if not isinstance(inc, Mapping):
            continue
        matched = False
        for combo, original in zip(combos, originals, strict=True):
            if all(original[k] == v for k, v in inc.items() if k in original):
                combo.update({k: v for k, v in inc.items() if k not in original})
                matched = True
        if not matched:
            extra.append(dict(inc))
            if len(combos) + len(extra) > MAX_MATRIX_JOBS:
                return _over(len(combos) + len(extra), exact=False)
    return combos + extra
