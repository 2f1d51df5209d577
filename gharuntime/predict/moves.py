"""Renamed and moved jobs in a review: a job the change removes and a job it adds that run the
same steps are one job under a new name (a rename, or a move into a called workflow such as
`build` → `CI / build`), so the new one keeps the old one's history and the review shows it as
`moved`, not as one job removed and one added.

**Same steps**: the same `gharuntime.predict.steps.step_fingerprint` (what the steps run, in
order, names and expressions aside). A job whose steps cannot be read (a reusable workflow not
followed) or has none is never paired.

**Pairing** (`move_pairs`): only jobs whose job key and matrix values are gone from the other
side entirely; a removed and an added job pair when their steps and their matrix values are the
same. When several could pair, the names most alike pair first (difflib's ratio of the job
keys), then file order. A matrix given by an expression pairs as one job, and its members from
history pair by what tells them apart (` (unit)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

from gharuntime.predict.history_jobs import HistoryAlias, JobUnit, unit_of
from gharuntime.predict.workflow import JobPrediction

__all__ = ["move_aliases", "move_pairs"]


def _units(jobs: Sequence[JobPrediction]) -> dict[JobUnit, JobPrediction]:
    """Each job unit and its first job, in file order."""
    units: dict[JobUnit, JobPrediction] = {}
    for job in jobs:
        units.setdefault(unit_of(job.key, job.matrix), job)
    return units


def move_pairs(
    base: Sequence[JobPrediction], new: Sequence[JobPrediction]
) -> dict[JobUnit, JobUnit]:
    """Each added job unit that is a removed one moved (see the module): new unit → old unit."""
    before, after = _units(base), _units(new)
    gone = [u for u in before if u not in after and before[u].steps]
    came = [u for u in after if u not in before and after[u].steps]
    candidates = sorted(
        (
            -SequenceMatcher(None, old[0], now[0]).ratio(),
            i,
            j,
        )
        for i, old in enumerate(gone)
        for j, now in enumerate(came)
        if before[old].steps == after[now].steps and old[1] == now[1]
    )
    pairs: dict[JobUnit, JobUnit] = {}
    used: set[JobUnit] = set()
    for _, i, j in candidates:
        if gone[i] not in used and came[j] not in pairs:
            pairs[came[j]] = gone[i]
            used.add(gone[i])
    return pairs


def move_aliases(
    base: Sequence[JobPrediction], new: Sequence[JobPrediction]
) -> dict[JobUnit, HistoryAlias]:
    """Where each moved job's history is (its removed twin's), for jobs whose twin was looked
    up in the repository's history; {} when none was."""
    before = _units(base)
    aliases = {}
    for now, old in move_pairs(base, new).items():
        job = before[old]
        if job.history_key is None:
            continue
        name = job.from_history[0] if job.from_history else job.name
        aliases[now] = HistoryAlias(job.history_key[0], job.history_key[1], name)
    return aliases
