"""Every scored number of a result beside the same number of its re-run.

A result carries more than its `metrics` block: the per-resample values the rank groups are
drawn from, the quantile sidecar's calibration, coverage and pinball numbers with their own
per-resample values, the per-group breakdowns, the counts, and the plot data. A re-run that
matches the metrics but not these is not the same result (forged per-resample values move a
method into another rank group), so every number of the scored sections is compared, whatever
targets, breakdowns or levels the result holds. Integers (counts) must be equal; other numbers
within the method's stated tolerance. Two identities are compared too: the records scored and
the repositories resampled (their sha256)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "ADDED_LATER",
    "IDENTITIES",
    "SCORED_SECTIONS",
    "Comparison",
    "Section",
    "Status",
    "allowed_difference",
    "beyond",
    "compare",
    "identity_mismatches",
    "scored_numbers",
    "sections",
    "status_of",
]

Status = Literal["exact", "within", "differs"]

SCORED_SECTIONS: Final = (
    "metrics",
    "bootstrap",
    "intervals",
    "breakdowns",
    "counts",
    "plot_data",
    "dataset",
    "submission",
)
"""The parts of a result whose numbers `gharuntime eval` computed from the predictions and the
dataset (not `meta`, whose timings vary by machine, nor `provenance`)."""

ADDED_LATER: Final = ("dataset.split_shift",)
"""Blocks a later eval added to its results (gharuntime.eval.shift: how far each target moved
from the validation split). A result made before one is compared on the numbers it holds: the
re-run's block is not a difference there. A result that holds the block has it compared like
every other number, so a forged or dropped one still differs."""

IDENTITIES: Final = (("dataset", "record_ids_sha256"), ("bootstrap", "repo_ids_sha256"))
"""Texts a re-run must give exactly: which records were scored, which repositories resampled."""

Number = int | float


@dataclass(frozen=True)
class Comparison:
    """One recorded number beside the reproduced one."""

    metric: str  # duration_s.rmsle.value for the metrics block; SECTION.path[i] for the others
    committed: float | None
    reproduced: float | None

    @property
    def difference(self) -> float | None:
        if self.committed is None or self.reproduced is None:
            return None
        return self.reproduced - self.committed

    @property
    def section(self) -> str:
        """The section of the result it comes from (`metrics`, `bootstrap`, ...)."""
        first = self.metric.split("[", 1)[0].split(".", 1)[0]
        return first if first in SCORED_SECTIONS and first != "metrics" else "metrics"


def _walk(value: Any, at: str) -> Iterator[tuple[str, Number | None]]:
    """(path, number) of every number and null under `value`; texts and booleans are not
    numbers (names, hashes, paths and flags)."""
    stack: list[tuple[str, Any]] = [(at, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            stack.extend((f"{path}.{key}", child) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in enumerate(item))
        elif item is None or (isinstance(item, int | float) and not isinstance(item, bool)):
            yield path, item


def scored_numbers(result: dict[str, Any]) -> dict[str, Number | None]:
    """Every number of the scored sections, by path: the metrics block as TARGET.METRIC.FIELD
    (the names `reproduce` has always printed), every other number as SECTION.PATH."""
    found: dict[str, Number | None] = {}
    for section in SCORED_SECTIONS:
        block = result.get(section)
        if section == "metrics" and isinstance(block, dict):
            for target, metrics in block.items():
                found.update(_walk(metrics, str(target)))
        elif block is not None:
            found.update(_walk(block, section))
    return found


def compare(committed: dict[str, Any], again: dict[str, Any]) -> list[Comparison]:
    """Every number either side holds, recorded beside reproduced (None where one side has no
    number there: a null, or nothing), leaving out an ADDED_LATER block the recorded result
    was made without."""
    old, new = scored_numbers(committed), scored_numbers(again)
    before = [b for b in ADDED_LATER if not any(_under(k, b) for k in old)]  # made before it
    keys = {k for k in new if not any(_under(k, b) for b in before)} | set(old)
    return [Comparison(key, old.get(key), new.get(key)) for key in sorted(keys)]


def _under(key: str, block: str) -> bool:
    return key == block or key.startswith((f"{block}.", f"{block}["))


def identity_mismatches(committed: dict[str, Any], again: dict[str, Any]) -> list[str]:
    """The identities (`IDENTITIES`) the re-run gave otherwise, as `section.field`."""
    out = []
    for section, key in IDENTITIES:
        a, b = committed.get(section) or {}, again.get(section) or {}
        if a.get(key) != b.get(key):
            out.append(f"{section}.{key}")
    return out


def allowed_difference(committed: float, tolerance: float) -> float:
    """The difference a value may show and still be the same result: the method's tolerance,
    absolute for values up to 1 (RMSLE, coverage, Spearman) and relative above (an MAE in
    seconds moves by seconds when a prediction moves by a digit)."""
    return tolerance * max(1.0, abs(committed))


def beyond(row: Comparison, tolerance: float) -> bool:
    """Whether the row differs by more than the tolerance allows: a number on one side only,
    a difference that is not finite, integers that differ, or a float past
    `allowed_difference`."""
    if (row.committed is None) != (row.reproduced is None):
        return True
    if row.committed is None or row.reproduced is None:
        return False
    difference = row.reproduced - row.committed
    if not math.isfinite(difference):
        return True
    if isinstance(row.committed, int) and isinstance(row.reproduced, int):
        return difference != 0
    return abs(difference) > allowed_difference(row.committed, tolerance)


def status_of(rows: list[Comparison], tolerance: float) -> Status:
    """exact (every number the same), within (each within `allowed_difference`; integers
    equal) or differs (one past it, or a number present on one side only)."""
    exact = True
    for row in rows:
        if beyond(row, tolerance):
            return "differs"
        exact = exact and row.difference in (None, 0.0)
    return "exact" if exact else "within"


@dataclass(frozen=True)
class Section:
    """The numbers of one section compared: how many, the largest difference, how many past
    the tolerance."""

    name: str
    numbers: int
    largest: float
    beyond: int


def sections(rows: list[Comparison], tolerance: float) -> list[Section]:
    """One summary per section, in the order of SCORED_SECTIONS."""
    by: dict[str, list[Comparison]] = {}
    for row in rows:
        by.setdefault(row.section, []).append(row)
    order = {name: i for i, name in enumerate(SCORED_SECTIONS)}
    out = []
    for name in sorted(by, key=lambda n: order.get(n, len(order))):
        group = by[name]
        largest = max(
            (abs(d) for r in group if (d := r.difference) is not None and math.isfinite(d)),
            default=0.0,
        )
        out.append(Section(name, len(group), largest, sum(beyond(r, tolerance) for r in group)))
    return out
