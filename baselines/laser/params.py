"""Every LASER parameter typed and bounded in one table, checked when the method is made: a
bad value (`lr=abc`, `lr=Infinity`, `samples=0`, `temperature=NaN`) is refused before any data
is read or any step is trained, with the parameter's name and what it takes. `--param` values
arrive as JSON (`lr=1e-3`) or as text (`model=tiny`), so the types are checked, not assumed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from gharuntime.baselines.method import MethodError

__all__ = ["SPECS", "check_params"]


@dataclass(frozen=True)
class Spec:
    """What one parameter takes: a kind (int, float, text or a choice), bounds, and None."""

    kind: str  # "int" | "float" | "text" | "choice"
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # low itself not allowed (lr > 0)
    choices: tuple[str, ...] = ()
    optional: bool = False  # None allowed (the default decides)

    def problem(self, value: Any) -> str | None:
        if value is None:
            return None if self.optional else "must be given"
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


_BIG: Final = 10**9
SPECS: Final[dict[str, Spec]] = {
    "model": Spec("text"),
    "max_steps": Spec("int", 1, _BIG),
    "batch_size": Spec("int", 1, 65_536),
    "grad_accum": Spec("int", 1, 65_536),
    "lr": Spec("float", 0, 1, low_open=True, optional=True),
    "warmup_steps": Spec("int", 0, _BIG),
    "lr_schedule": Spec("choice", choices=("cosine", "constant")),
    "weight_decay": Spec("float", 0, 10),
    "budget": Spec("int", 1, 1_000_000),
    "encoding": Spec("choice", choices=("sci", "decimal")),
    "attention": Spec("choice", choices=("full", "sliding")),
    "sliding_window": Spec("int", 1, 1_000_000),
    "lora_r": Spec("int", 0, 4096),
    "lora_alpha": Spec("float", 0, 1e6, low_open=True, optional=True),
    "vocab_size": Spec("int", 300, 1_000_000),
    "samples": Spec("int", 1, 10_000),
    "temperature": Spec("float", 0, 100, low_open=True),
    "decode_batch_size": Spec("int", 1, 65_536),
    "precision": Spec("choice", choices=("auto", "fp32", "bf16")),
    "threads": Spec("int", 0, 4096),
    "train_fraction": Spec("float", 0, 1, low_open=True),
    "checkpoint_dir": Spec("text", optional=True),
    "checkpoint_every": Spec("int", 1, _BIG),
    "stop_after": Spec("int", 1, _BIG, optional=True),
    "validate_every": Spec("int", 0, _BIG),
    "validation_rows": Spec("int", 1, 1_000_000),
}
"""Every parameter but the codec's (checked by the codec itself when it is made)."""


def check_params(params: dict[str, Any]) -> None:
    """Raise MethodError naming every parameter whose value its Spec refuses."""
    problems = []
    for key, spec in SPECS.items():
        problem = spec.problem(params.get(key))
        if problem:
            problems.append(f"{key} {problem} (got {ascii(params.get(key))[:60]})")
    if problems:
        raise MethodError("laser: bad --param: " + "; ".join(problems))
