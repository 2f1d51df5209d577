"""Which of a track's targets a dataset holds, derived from its data and never declared.

A dataset holds a target on a config when at least one row of that config's train split has a
value of it: what a method can learn from. The rule is read off the rows (no manifest field),
so every dataset already built says what it holds without a rebuild, and its files, manifest and
revision stay as they are. A target the dataset lacks (the real Apache dataset has no
`log_bytes`: its builds collected no logs) is left out of the track, and every place that
scores it says so: a method predicts the targets held only, eval neither asks a submission for
the others nor scores them, and the result and the leaderboard name them with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import polars as pl

from gharuntime.contract import TRACKS

__all__ = ["HELD_RULE", "TargetsHeld", "count_values", "targets_held"]

HELD_RULE: Final = (
    "a target is scored where the dataset holds it: at least one row of the config's train "
    "split (where it is empty, of the scored split) has a value of it; a target without any is "
    "left out, not scored as missing"
)


_HINTS: Final = {"log_bytes": " (a build from a crawl with --logs records it)"}


@dataclass(frozen=True)
class TargetsHeld:
    """A track's targets split into those a dataset holds on a config and those left out."""

    track: str
    held: tuple[str, ...]
    left_out: dict[str, str]  # target -> why it is left out, in a sentence

    def to_json(self) -> dict[str, object]:
        return {"scored": list(self.held), "left_out": dict(self.left_out), "rule": HELD_RULE}


def count_values(train: pl.DataFrame, targets: tuple[str, ...]) -> dict[str, int]:
    """Per target, the rows of `train` with a finite value of it (0 where the column is absent)."""
    present = [t for t in targets if t in train.columns]
    counts = (
        train.select(pl.col(t).cast(pl.Float64).is_finite().sum().alias(t) for t in present).row(
            0, named=True
        )
        if present and train.height
        else {}
    )
    return {t: int(counts.get(t) or 0) for t in targets}


def targets_held(
    track: str,
    values: Mapping[str, int],
    *,
    config: str,
    rows: int,
    split: str = "train",
) -> TargetsHeld:
    """The track's targets held (`values`: of the `rows` rows of the config's train split,
    those with a value of each, `count_values`; of the scored `split` where the train split is
    empty), in the
    track's order, and why each of the others is left out. Raises KeyError for an unknown
    track (callers check the track first)."""
    held = tuple(t for t in TRACKS[track].targets if values.get(t, 0) > 0)
    left_out = {
        t: (
            f"the dataset holds no value of it: none of the {rows:,} rows of its {config} "
            f"{split} split has one{_HINTS.get(t, '')}"
        )
        for t in TRACKS[track].targets
        if t not in held
    }
    return TargetsHeld(track, held, left_out)
