"""Problems found while checking a submission: every one is collected (with its line number)
before eval gives up, so a submitter fixes them all in one round."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["KEEP_PER_KIND", "KEEP_UNKNOWN_IDS", "ProblemLog", "SubmissionProblem"]

KEEP_PER_KIND: Final = 10_000
"""Problems of one kind kept with their text (all are counted); bounds memory on garbage input."""
KEEP_UNKNOWN_IDS: Final = 20
"""Unknown ids are listed up to this many, then only counted."""


@dataclass(frozen=True)
class SubmissionProblem:
    """One problem: its kind, where (file, and line when one line is at fault) and what."""

    kind: str
    where: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        at = f"{self.where}:{self.line}" if self.line is not None else self.where
        return f"{at}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "where": self.where, "line": self.line, "message": self.message}


@dataclass
class ProblemLog:
    """Problems by kind, in the order found; counts are exact, texts are capped per kind."""

    counts: dict[str, int] = field(default_factory=dict)
    kept: list[SubmissionProblem] = field(default_factory=list)

    def add(self, kind: str, where: str, message: str, line: int | None = None) -> None:
        n = self.counts.get(kind, 0) + 1
        self.counts[kind] = n
        cap = KEEP_UNKNOWN_IDS if kind == "unknown_id" else KEEP_PER_KIND
        if n <= cap:
            self.kept.append(SubmissionProblem(kind, where, message, line))

    def add_count(self, kind: str, n: int) -> None:
        """Count `n` more problems of `kind` without their text (past what is kept)."""
        self.counts[kind] = self.counts.get(kind, 0) + n

    def extend(self, other: ProblemLog) -> None:
        for p in other.kept:
            self.kept.append(p)
        for kind, n in other.counts.items():
            self.counts[kind] = self.counts.get(kind, 0) + n

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __bool__(self) -> bool:
        return self.total > 0

    def to_json(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "problems": [p.to_json() for p in self.kept]}
