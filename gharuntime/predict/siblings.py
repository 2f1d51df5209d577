"""A new combination of a matrix, predicted from its siblings' runs.

A pull request that adds a value to a matrix (`java: [8, 11, 17, 21, 25]`) adds a job with no run
of its own while the job's other combinations have many. The config-track model alone predicts
it as it would in any repository (on apache/ratis, `compile (25)` at 171 s where its siblings
take about a minute); the siblings say how far this repository's runs of that very job sit from
what the config-track model expects. So a job with no history whose job key has combinations
with history in the same workflow is predicted by the config-track model, scaled by the ratio
of the siblings' recent runs (each one's median) to the config-track model's prediction for
them (in log): the median ratio over the siblings the model predicts most like the new
combination (those whose log prediction is within NEAR of the closest one's), since the model
errs alike where it sees alike. On apache/ratis the model predicts `compile (25)` exactly as
`compile (8)` (171 s; they ran 55 s) and `compile (17)`, `(21)` at 65-67 s (they ran 67-70 s):
the ratio is compile (8)'s. The range is the config-track model's, moved by that ratio and
widened on each side by the largest distance of any sibling's ratio from it: siblings that
disagree give a wider range, one sibling none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["MATRIX_SIBLINGS", "SiblingAnchor", "anchor_on_siblings"]

MATRIX_SIBLINGS = "matrix siblings"
"""The basis of a job anchored on its siblings."""

_FLOOR_S = 1.0  # durations are floored at 1 s before the log, as eval's ratio metrics do
NEAR = 0.1
"""Siblings whose log config-track prediction is within this of the closest one's (10%) count
as predicted alike with the new combination."""


@dataclass(frozen=True)
class SiblingAnchor:
    """How one job was moved: the rows it was anchored on, the log ratio and its spread."""

    row: int
    siblings: tuple[int, ...]
    log_ratio: float
    spread: float


def _log(values: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(np.asarray(values, dtype=np.float64), _FLOOR_S))


def anchor_on_siblings(
    keys: Sequence[str],
    new: np.ndarray,
    known: np.ndarray,
    observed: np.ndarray,
    predicted: np.ndarray,
    levels: dict[str, np.ndarray],
    config_of: Callable[[np.ndarray], np.ndarray],
) -> list[SiblingAnchor]:
    """Move, in place, each `new` row (a matrix job predicted by the config-track model for want
    of history) that has `known` rows of the same job key (with runs of their own, the median
    of their recent durations in `observed`): `predicted` (duration_s, the config-track
    model's) by the median log ratio of `observed` to `config_of(sibling rows)` (the
    config-track model's duration for them) over the siblings it predicts most alike (NEAR),
    and `levels` (duration quantiles by name: p10, p50, ...) likewise, those under p50 lowered
    and those over it raised by the largest distance of any sibling's ratio from that one.
    Returns what was done, row by row."""
    by_key: dict[str, list[int]] = {}
    for j in np.flatnonzero(known).tolist():
        by_key.setdefault(keys[j], []).append(j)
    targets = [i for i in np.flatnonzero(new).tolist() if keys[i] in by_key]
    if not targets:
        return []
    wanted = np.array(sorted({j for i in targets for j in by_key[keys[i]]}), dtype=np.int64)
    config = dict(zip(wanted.tolist(), _log(config_of(wanted)).tolist(), strict=True))
    own = _log(observed)
    mine = _log(predicted)  # the config-track model's own prediction for each new row
    out = []
    for i in targets:
        siblings = by_key[keys[i]]
        ratios = np.array([own[j] - config[j] for j in siblings])
        distance = np.array([abs(config[j] - mine[i]) for j in siblings])
        finite = np.isfinite(ratios) & np.isfinite(distance)
        if not finite.any():  # a model that gave no number: the row stays the model's
            continue
        alike = finite & (distance <= distance[finite].min() + NEAR)
        shift = float(np.median(ratios[alike]))
        spread = float(np.max(np.abs(ratios[finite] - shift)))
        predicted[i] = predicted[i] * np.exp(shift)
        for name, values in levels.items():
            side = _side(name)
            values[i] = values[i] * np.exp(shift + side * spread)
        out.append(SiblingAnchor(i, tuple(siblings), shift, spread))
    return out


def _side(level: str) -> int:
    """-1 for a level under the median (p10), +1 over it (p90, p99), 0 for p50 or a name that
    is not a percentile."""
    digits = level[1:] if level[:1] == "p" else ""
    if not digits.isdigit():
        return 0
    return (int(digits) > 50) - (int(digits) < 50)
