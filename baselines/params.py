"""Method parameters declared once: each method class holds one `ParamTable` of `ParamSpec`s
(name, kind, default, bounds or choices, help), in the order `config()` records them.
`Method.__init__` checks what it is given against it (`gharuntime.baselines.method`): an
unknown name is refused with the closest known one, a bad value (`n_estimators=-5`,
`learning_rate=NaN`, `identity=yes`, a list, `trials=1e9`) with the parameter's name and what
it takes, before any data is read. `gharuntime baseline --help` and the Baselines page list the
tables.

`--param KEY=VALUE` values arrive as text: `parse_param` reads VALUE as JSON (`300`, `0.1`,
`true`, `null`, `"text"`) and otherwise keeps it as text (`tiny`), so a value's type is then
checked against its spec, never assumed; nothing is converted further, so the recorded
parameters are what was given."""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any

__all__ = ["KINDS", "ParamSpec", "ParamTable", "parse_param"]

KINDS = ("int", "float", "bool", "text", "choice")
"""What a parameter may take: an integer, a finite number, true/false, a line of text, one of
its choices."""


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its name, kind (KINDS), default, what it means, and the values it takes
    (`low`..`high`, `low` itself excluded when `low_open`; `choices`; None when `optional`)."""

    name: str
    kind: str
    default: Any
    _: KW_ONLY
    help: str = ""
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # low itself not allowed (lr > 0)
    choices: tuple[str, ...] = ()
    optional: bool = False  # None allowed (the method then decides)
    recorded_at_default: bool = True  # False: config() names it only when set (added later)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"parameter {self.name!r}: kind {self.kind!r} is none of {KINDS}")
        if (self.kind == "choice") != bool(self.choices):
            raise ValueError(f"parameter {self.name!r}: choices go with kind 'choice' only")
        problem = self.problem(self.default)
        if problem:
            raise ValueError(f"parameter {self.name!r}: its default {problem}")

    def problem(self, value: Any) -> str | None:
        """Why `value` is not one this parameter takes (None when it is)."""
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
        return f"must be {self._bounds()}"

    def _bounds(self) -> str:
        low = "" if self.low is None else f"{'>' if self.low_open else '≥'} {self.low:g}"
        high = "" if self.high is None else f"≤ {self.high:g}"
        return " and ".join(p for p in (low, high) if p)

    def takes(self) -> str:
        """What it takes, in words: "an integer ≥ 1 and ≤ 100000", "cosine | constant"."""
        if self.kind == "bool":
            text = "true | false"
        elif self.kind == "choice":
            text = " | ".join(self.choices)
        elif self.kind == "text":
            text = "text"
        else:
            noun = "an integer" if self.kind == "int" else "a number"
            text = f"{noun} {self._bounds()}".strip()
        return f"{text} | null" if self.optional else text

    def shown_default(self) -> str:
        """The default as `--param` writes it (JSON: `true`, `null`, `0.05`; text as it is)."""
        if isinstance(self.default, str):
            return self.default
        return json.dumps(self.default)


class ParamTable(Mapping[str, ParamSpec]):
    """A method's parameters by name, in declaration order (the order `config()` records)."""

    def __init__(self, *specs: ParamSpec) -> None:
        self._specs: dict[str, ParamSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"parameter {spec.name!r} declared twice")
            self._specs[spec.name] = spec

    def __getitem__(self, name: str) -> ParamSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"ParamTable({', '.join(self._specs)})"

    def extended(self, *specs: ParamSpec) -> ParamTable:
        """This table with `specs` added at the end (a derived method's own parameters)."""
        return ParamTable(*self._specs.values(), *specs)

    @property
    def defaults(self) -> dict[str, Any]:
        """Every parameter's default, in order."""
        return {name: spec.default for name, spec in self._specs.items()}

    def unknown(self, names: Iterable[str]) -> str | None:
        """What to say of the `names` this table does not declare, each with the closest
        declared name when there is one (None when every name is declared)."""
        unknown = sorted(set(names) - set(self._specs))
        if not unknown:
            return None
        said = []
        for name in unknown:
            close = difflib.get_close_matches(name, list(self._specs), n=1)
            said.append(f"{name} (did you mean {close[0]}?)" if close else name)
        return f"unknown parameter(s) {', '.join(said)}; known: {', '.join(sorted(self._specs))}"

    def problems(self, values: Mapping[str, Any]) -> str | None:
        """What to say of every value in `values` its spec refuses (None when all pass)."""
        problems = []
        for name, spec in self._specs.items():
            problem = spec.problem(values.get(name))
            if problem:
                problems.append(f"{name} {problem} (got {ascii(values.get(name))[:60]})")
        return "; ".join(problems) or None

    def listing(self) -> str:
        """`name=default` of every parameter, space-separated (the help's one-line form)."""
        return " ".join(f"{name}={spec.shown_default()}" for name, spec in self._specs.items())


def parse_param(item: str) -> tuple[str, Any]:
    """`KEY=VALUE` as given to `--param`: VALUE read as JSON, else kept as text. ValueError
    when there is no `=` or no key."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise ValueError(f"{item!r} is not KEY=VALUE")
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw
