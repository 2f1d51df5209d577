"""A simulated repository's metadata, drawn from its own seed so any one can be built alone."""

from __future__ import annotations

import math
import random

from gharuntime.sim.costs import RepoProfile
from gharuntime.sim.model import DAY, END, REPO_ID_BASE, Scale, SimRepo
from gharuntime.sim.vocabulary import (
    ADJECTIVES,
    LANGUAGE_WEIGHTS,
    NAME_SUFFIXES,
    NOUNS,
    SECOND_LANGUAGE,
    STEP_TZ_OFFSETS,
    TOPICS,
)

__all__ = ["build_meta"]


def build_meta(seed: int, scale: Scale, index: int) -> SimRepo:
    """Repository `index` of a world: what GitHub serves about it and its hidden cost profile."""
    if not 0 <= index < scale.repos:
        raise IndexError(index)
    rng = random.Random(f"{seed}:meta:{index}")
    # an owner holds three repositories; disjoint suffixes keep their names apart
    group = random.Random(f"{seed}:owner:{index // 3}")
    owner = f"{group.choice(ADJECTIVES)}-{group.choice(NOUNS)}{index // 3}"
    name = f"{rng.choice(NOUNS)}-{NAME_SUFFIXES[index % 3 * 4 + rng.randrange(4)]}"
    language = rng.choices([x for x, _ in LANGUAGE_WEIGHTS], [w for _, w in LANGUAGE_WEIGHTS])[0]
    stars = int(min(400_000, 10 ** rng.uniform(1.3, 4.6) * rng.lognormvariate(0, 0.3)))
    # The cost model reads the hidden size of the code and the languages it is built from;
    # GitHub's `size` also counts git history and assets, and `language` names only the
    # largest language, so the served fields merely correlate with what costs time.
    code_kb = int(min(1_000_000, max(30, rng.lognormvariate(math.log(12000), 1.1))))
    history = rng.lognormvariate(0.5, 1.3)
    size_kb = int(min(4_000_000, max(40, code_kb * history)))
    share = 1.0 if rng.random() < 0.45 else rng.uniform(0.5, 0.95)
    second = rng.choice(SECOND_LANGUAGE[language])
    stack = ((language, share),) if share == 1.0 else ((language, share), (second, 1 - share))
    created = END - int(rng.uniform(200, 4500) * DAY)
    # rarer kinds of repository; the first few indices always show one of each, so even a
    # tiny world has a renamed, a private, an archived and an Actions-disabled repository
    k = (index + seed) % 1000
    archived = index == 6 or k % 23 == 5
    pushed = (
        END - int(rng.uniform(0, 30) * DAY)
        if not archived
        else END - int(rng.uniform(40, 80) * DAY)
    )
    old_name = f"{owner}/{name}-old" if index == 4 or k % 97 == 4 else None
    profile = RepoProfile(
        stack=stack,
        code_kb=code_kb,
        speed=rng.lognormvariate(0.0, 0.8),  # test-suite size, machine luck: not served
        drift=rng.gauss(0.1, 0.15),
        flaky=min(0.4, rng.betavariate(1.2, 14)),
        cache_hit=rng.uniform(0.6, 0.97),
    )
    return SimRepo(
        index=index,
        id=REPO_ID_BASE + index,
        owner=owner,
        name=name,
        language=language,
        stars=stars,
        size_kb=size_kb,
        forks=int(stars * rng.uniform(0.02, 0.2)),
        open_issues=rng.randrange(0, 300),
        topics=tuple(sorted(rng.sample(TOPICS, rng.randrange(0, 4)))),
        default_branch="main" if rng.random() < 0.8 else "master",
        created_at=created,
        pushed_at=pushed,
        fork=rng.random() < 0.03,
        archived=archived,
        actions_disabled=index == 8 or k % 41 == 9,
        private=(index == 5 or k % 193 == 11) and old_name is None,
        old_name=old_name,
        license=rng.choice(("mit", "apache-2.0", "bsd-3-clause", "gpl-3.0", None)),
        description=f"A {rng.choice(ADJECTIVES)} {language} {rng.choice(TOPICS)} project",
        path_ref=k % 6 == 1,
        step_tz=STEP_TZ_OFFSETS[k % 4] if k % 7 == 3 else 0,
        profile=profile,
    )
