"""Method parameters declared once, typed and bounded, and checked when the method is made:
a bad value (`n_estimators=-5`, `learning_rate=NaN`, `identity=yes`, a list, `trials=1e9`) is
refused before any data is read, with the parameter's name and what it takes. `--param` values
arrive as JSON (`learning_rate=0.1`, `identity=false`) or as text, so types are checked, never
assumed. Each method with parameters declares `specs` beside its `defaults`; a test keeps the
two equal and the defaults valid."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gharuntime.baselines.method import MethodError

__all__ = ["Spec", "check_specs"]


@dataclass(frozen=True)
class Spec:
    """What one parameter takes: a kind (int, float, text or a choice), bounds, and None."""

    kind: str  # "int" | "float" | "bool" | "text" | "choice"
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # low itself not allowed (lr > 0)
    choices: tuple[str, ...] = ()
    optional: bool = False  # None allowed (the default decides)

    def problem(self, value: Any) -> str | None:
        if value is None:
            return None if self.optional else "must be given"
        if self.kind == "bool":
            return None if isinstance(value, bool) else "must be true or false"
        if self.kind == "choice":
            return None if value in self.choices else f"must be one of {', '.join(self.choices)}"
        if self.kind == "text":
            if not isinstance(value, str) or not value or len(value) > 4096:
                return "must be non-empty text (at most 4,096 characters)"
            if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
                return "must not hold control characters"
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be {'an integer' if self.kind == 'int' else 'a number'}"
        if self.kind == "int" and not isinstance(value, int):
            return "must be an integer"
        if not math.isfinite(value):
            return "must be a finite number"
        return self._range(value)

    def _range(self, value: float) -> str | None:
        low_ok = self.low is None or (value > self.low if self.low_open else value >= self.low)
        high_ok = self.high is None or value <= self.high
        if low_ok and high_ok:
            return None
        low = "" if self.low is None else f"{'>' if self.low_open else '≥'} {self.low:g}"
        high = "" if self.high is None else f"≤ {self.high:g}"
        return f"must be {' and '.join(p for p in (low, high) if p)}"


def check_specs(method: str, specs: Mapping[str, Spec], params: Mapping[str, Any]) -> None:
    """Raise MethodError naming every parameter whose value its Spec refuses."""
    problems = []
    for key, spec in specs.items():
        problem = spec.problem(params.get(key))
        if problem:
            problems.append(f"{key} {problem} (got {ascii(params.get(key))[:60]})")
    if problems:
        raise MethodError(f"{method}: bad --param: " + "; ".join(problems))
