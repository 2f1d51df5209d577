"""The one problem log: bad input met while reading, collected rather than raised at the first
one, so a person fixes them all in one round.

Eval checks a submission into it (every problem with its file and line); the sources and the
build count bad records into it (a few examples each for the report). Counts are exact; texts
are kept up to a cap per kind, which bounds memory on garbage input.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["KEEP_PER_KIND", "KEEP_UNKNOWN_IDS", "Problem", "ProblemLog"]

KEEP_PER_KIND: Final = 10_000
"""Problems of one kind kept with their text (all are counted)."""
KEEP_UNKNOWN_IDS: Final = 20
"""Unknown ids are listed up to this many, then only counted."""
_EXAMPLES: Final = 5
"""Texts of one kind a report's `examples` shows (`as_dict`)."""


@dataclass(frozen=True)
class Problem:
    """One problem: its kind, where (file, and line when one line is at fault) and what."""

    kind: str
    where: str
    message: str = ""
    line: int | None = None

    def __str__(self) -> str:
        at = f"{self.where}:{self.line}" if self.line is not None else self.where
        return f"{at}: {self.message}" if self.message else at

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": self.where, "line": self.line, "message": self.message}


@dataclass
class ProblemLog:
    """Problems by kind, in the order found; counts are exact, texts are capped per kind."""

    counts: Counter[str] = field(default_factory=Counter)
    kept: list[Problem] = field(default_factory=list)
    _kept_per_kind: Counter[str] = field(default_factory=Counter, repr=False, compare=False)

    def add(
        self, kind: str, where: str = "", message: str = "", line: int | None = None, *, n: int = 1
    ) -> None:
        """Count `n` problems of `kind`; keep the text (`where`, `message`, `line`) when there
        is one and fewer than the cap of that kind are kept."""
        self.counts[kind] += n
        cap = KEEP_UNKNOWN_IDS if kind == "unknown_id" else KEEP_PER_KIND
        if (where or message) and self._kept_per_kind[kind] < cap:
            self._kept_per_kind[kind] += 1
            self.kept.append(Problem(kind, where, message, line))

    def add_count(self, kind: str, n: int) -> None:
        """Count `n` more problems of `kind` without their text (past what is kept)."""
        self.counts[kind] += n

    def extend(self, other: ProblemLog) -> None:
        """Add every problem of `other`: its counts and every text it kept."""
        self.kept.extend(other.kept)
        self._kept_per_kind.update(p.kind for p in other.kept)
        self.counts.update(other.counts)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __bool__(self) -> bool:
        return self.total > 0

    @property
    def examples(self) -> dict[str, list[str]]:
        """A few texts of each kind that has any, in the order found."""
        out: dict[str, list[str]] = {}
        for p in self.kept:
            shown = out.setdefault(p.kind, [])
            if len(shown) < _EXAMPLES:
                shown.append(str(p))
        return out

    def to_json(self) -> dict[str, Any]:
        """Every count, and every kept problem with its place (eval's report)."""
        return {"counts": dict(self.counts), "problems": [p.to_json() for p in self.kept]}

    def as_dict(self) -> dict[str, Any]:
        """Counts and a few examples of each kind, sorted by kind (a build's report)."""
        return {
            "counts": dict(sorted(self.counts.items())),
            "examples": dict(sorted(self.examples.items())),
        }
