"""LASER's output encoding: a job's targets as one line of text in a fixed layout.

`ScientificCodec` writes every target in scientific notation with a configurable number of
significant digits and a configurable exponent range::

    duration_s=1.23e+02;queue_s=5.00e+00;log_bytes=3.10e+04

`DecimalCodec` writes the same targets as zero-padded fixed-point decimals
(`duration_s=0000123.4`), the plain-decimal ablation. Both lay their text out as a fixed sequence
of `Fixed` parts (names, `=`, `;`, `.`, `e`, signs that cannot vary) and `Free` slots: fixed-length
character languages given as small automata. Constrained decoding prefills the fixed parts and
lets the model choose only inside the free slots, so every string it can produce decodes.

Values a layout cannot hold are clamped to the nearest value it can (negative → 0, above the
largest → the largest) and counted in `codec.clamped`; values below the smallest normal number
are written denormalised (`0.50e-02`) rather than clamped. A missing value (NaN, None) is not
clamped: `encode` refuses it with `EncodingError`, since a fixed layout has no place for it.

This module imports no torch: the codec is pure text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from gharuntime.errors import GharuntimeError

__all__ = [
    "CODECS",
    "TARGET_SEPARATOR",
    "CharDFA",
    "Codec",
    "DecimalCodec",
    "EncodingError",
    "Fixed",
    "Free",
    "ScientificCodec",
    "Segment",
    "codec_for",
    "median_and_quantiles",
]

TARGET_SEPARATOR = "\n"
"""Between a serialized prompt and its encoded targets: the model sees
`prompt + TARGET_SEPARATOR + codec.encode(targets) + eos`, and decoding starts right after it."""

PAIR_SEPARATOR = ";"
NAME_SEPARATOR = "="
DIGITS = "0123456789"


class EncodingError(GharuntimeError, ValueError):
    """Text that is not a valid encoding, a value that cannot be encoded, or bad codec settings."""


@dataclass(frozen=True)
class CharDFA:
    """A deterministic automaton over characters whose accepted strings all have one length.

    States are 0..n-1, 0 is the start; `transitions[s]` maps a character to the next state; the
    accepting states are exactly those with no outgoing transition (the layout's strings have a
    fixed length, so a slot ends when its automaton cannot go on). Every state reaches acceptance.
    """

    transitions: tuple[Mapping[str, int], ...]
    length: int

    @property
    def states(self) -> int:
        return len(self.transitions)

    def accepting(self, state: int) -> bool:
        return not self.transitions[state]

    def run(self, state: int, text: str) -> int | None:
        """The state after reading `text` from `state`, or None when `text` leaves the language."""
        for ch in text:
            nxt = self.transitions[state].get(ch)
            if nxt is None:
                return None
            state = nxt
        return state

    def accepts(self, text: str) -> bool:
        end = self.run(0, text)
        return end is not None and self.accepting(end)

    @property
    def alphabet(self) -> frozenset[str]:
        return frozenset(ch for t in self.transitions for ch in t)

    @classmethod
    def positions(cls, charsets: Sequence[str]) -> CharDFA:
        """Strings of len(charsets) characters, the i-th one from charsets[i]."""
        if any(not cs for cs in charsets):
            raise EncodingError("an empty character set makes an empty language")
        trans = tuple({ch: i + 1 for ch in cs} for i, cs in enumerate(charsets))
        return cls((*trans, {}), len(charsets))

    @classmethod
    def strings(cls, words: Sequence[str]) -> CharDFA:
        """Exactly `words` (all of one length), as a trie; shared suffixes are not merged."""
        if not words:
            raise EncodingError("an empty word list makes an empty language")
        lengths = {len(w) for w in words}
        if len(lengths) != 1:
            raise EncodingError(f"words of different lengths {sorted(lengths)}")
        trans: list[dict[str, int]] = [{}]
        for word in sorted(set(words)):
            state = 0
            for ch in word:
                nxt = trans[state].get(ch)
                if nxt is None:
                    trans.append({})
                    nxt = len(trans) - 1
                    trans[state][ch] = nxt
                state = nxt
        return cls(tuple(trans), lengths.pop())


@dataclass(frozen=True)
class Fixed:
    """Text every encoding has at this place: prefilled by constrained decoding, never generated."""

    text: str


@dataclass(frozen=True)
class Free:
    """A slot the model fills: `dfa.length` characters from the language of `dfa`."""

    dfa: CharDFA
    target: str
    role: str  # "mantissa_lead", "mantissa", "exponent", "integer", "fraction" — for readers


Segment = Fixed | Free


@runtime_checkable
class Codec(Protocol):
    """Targets ↔ one line of text in a fixed layout."""

    targets: tuple[str, ...]
    clamped: int

    def encode(self, values: Mapping[str, float]) -> str: ...

    def decode(self, text: str) -> dict[str, float]: ...

    def segments(self) -> list[Segment]: ...

    def config(self) -> dict[str, Any]: ...


def _check_targets(targets: Sequence[str]) -> tuple[str, ...]:
    ts = tuple(targets)
    if not ts:
        raise EncodingError("a codec needs at least one target")
    if len(set(ts)) != len(ts):
        raise EncodingError(f"repeated target names in {ts}")
    for t in ts:
        if not t or any(ch in t for ch in (PAIR_SEPARATOR, NAME_SEPARATOR, "\n")) or t != t.strip():
            raise EncodingError(f"target name {t!r} cannot appear in the layout")
    return ts


def _value(values: Mapping[str, float], target: str) -> float:
    if target not in values:
        raise EncodingError(f"no value for target {target!r}")
    raw = values[target]
    if raw is None:
        raise EncodingError(f"target {target!r} is missing (None); a fixed layout cannot hold it")
    v = float(raw)
    if math.isnan(v):
        raise EncodingError(f"target {target!r} is NaN; a fixed layout cannot hold it")
    return v + 0.0  # -0.0 becomes 0.0: a sign would break the fixed layout


def _merge(segments: list[Segment]) -> list[Segment]:
    """Adjacent Fixed parts joined, so a decoder prefills them in one go."""
    out: list[Segment] = []
    for seg in segments:
        if isinstance(seg, Fixed) and out and isinstance(out[-1], Fixed):
            out[-1] = Fixed(out[-1].text + seg.text)
        elif not (isinstance(seg, Fixed) and not seg.text):
            out.append(seg)
    return out


def _split_fields(text: str, targets: tuple[str, ...]) -> list[str]:
    parts = text.split(PAIR_SEPARATOR)
    if len(parts) != len(targets):
        raise EncodingError(
            f"expected {len(targets)} field(s) {', '.join(targets)} separated by "
            f"{PAIR_SEPARATOR!r}, got {len(parts)} in {text!r}"
        )
    out = []
    for part, target in zip(parts, targets, strict=True):
        name, sep, body = part.partition(NAME_SEPARATOR)
        if not sep or name != target:
            raise EncodingError(f"expected field {target!r} as '{target}=...', got {part!r}")
        out.append(body)
    return out


@dataclass
class ScientificCodec:
    """`name=D.DDe±XX` per target: `mantissa_digits` significant digits, exponents in
    [exp_min, exp_max] written with `exp_width` digits and always a sign."""

    targets: tuple[str, ...] = ("duration_s",)
    mantissa_digits: int = 3
    exp_min: int = -2
    exp_max: int = 9
    exp_width: int = 2
    clamped: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        self.targets = _check_targets(self.targets)
        if not 1 <= self.mantissa_digits <= 17:
            raise EncodingError(f"mantissa_digits must be 1..17, got {self.mantissa_digits}")
        if self.exp_min > self.exp_max:
            raise EncodingError(f"exp_min {self.exp_min} > exp_max {self.exp_max}")
        if not 1 <= self.exp_width <= 3:
            raise EncodingError(f"exp_width must be 1..3, got {self.exp_width}")
        limit = 10**self.exp_width - 1
        if max(abs(self.exp_min), abs(self.exp_max)) > limit:
            raise EncodingError(
                f"exponent range [{self.exp_min}, {self.exp_max}] needs more than "
                f"{self.exp_width} exponent digit(s)"
            )
        if self.exp_max + 1 > 300 or self.exp_min - self.mantissa_digits < -300:
            raise EncodingError("exponent range beyond what a float holds")

    @property
    def max_value(self) -> float:
        return float(f"{'9' * self.mantissa_digits}e{self.exp_max - self.mantissa_digits + 1}")

    def config(self) -> dict[str, Any]:
        return {
            "name": "sci",
            "targets": list(self.targets),
            "mantissa_digits": self.mantissa_digits,
            "exp_min": self.exp_min,
            "exp_max": self.exp_max,
            "exp_width": self.exp_width,
        }

    def _exponent(self, e: int) -> str:
        return f"{'-' if e < 0 else '+'}{abs(e):0{self.exp_width}d}"

    def _one(self, v: float) -> str:
        d = self.mantissa_digits
        if v < 0 or math.isinf(v) or v > self.max_value:
            self.clamped += 1
            v = 0.0 if v < 0 else self.max_value
        if v == 0:
            return self._join("0" * d, self.exp_min)
        mant, _, exp_text = f"{v:.{d - 1}e}".partition("e")
        e = int(exp_text)
        if e > self.exp_max:  # rounding up past the largest value (only at the very top)
            self.clamped += 1
            return self._join("9" * d, self.exp_max)
        if e < self.exp_min:  # denormalised: 0.05e-02, down to zero
            scaled = f"{v / 10.0**self.exp_min:.{d - 1}f}"
            return self._join(scaled.replace(".", ""), self.exp_min)
        return self._join(mant.replace(".", ""), e)

    def _join(self, digits: str, e: int) -> str:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{mant}e{self._exponent(e)}"

    def encode(self, values: Mapping[str, float]) -> str:
        return PAIR_SEPARATOR.join(
            f"{t}{NAME_SEPARATOR}{self._one(_value(values, t))}" for t in self.targets
        )

    def decode(self, text: str) -> dict[str, float]:
        out: dict[str, float] = {}
        lead, rest, exp = self._languages()
        for target, body in zip(self.targets, _split_fields(text, self.targets), strict=True):
            mant, sep, exp_text = body.partition("e")
            digits = mant.replace(".", "", 1)
            well_formed = (
                sep
                and lead.accepts(digits[:1])
                and rest.accepts(digits[1:])
                and (len(digits) == 1 or mant[1:2] == ".")
                and exp.accepts(exp_text)
            )
            if not well_formed:
                raise EncodingError(
                    f"{target}: {body!r} is not {self.mantissa_digits}-digit scientific notation "
                    f"with an exponent in [{self.exp_min}, {self.exp_max}]"
                )
            out[target] = float(f"{mant}e{int(exp_text)}")
        return out

    def _languages(self) -> tuple[CharDFA, CharDFA, CharDFA]:
        lead = CharDFA.positions([DIGITS])
        rest = CharDFA.positions([DIGITS] * (self.mantissa_digits - 1))
        exps = [self._exponent(e) for e in range(self.exp_min, self.exp_max + 1)]
        return lead, rest, CharDFA.strings(exps)

    def segments(self) -> list[Segment]:
        segs: list[Segment] = []
        exps = [self._exponent(e) for e in range(self.exp_min, self.exp_max + 1)]
        for i, target in enumerate(self.targets):
            segs.append(Fixed((PAIR_SEPARATOR if i else "") + target + NAME_SEPARATOR))
            segs.append(Free(CharDFA.positions([DIGITS]), target, "mantissa_lead"))
            if self.mantissa_digits > 1:
                segs.append(Fixed("."))
                segs.append(
                    Free(
                        CharDFA.positions([DIGITS] * (self.mantissa_digits - 1)), target, "mantissa"
                    )
                )
            segs.append(Fixed("e"))
            segs.extend(_fixed_prefix_then_free(exps, target, "exponent"))
        return _merge(segs)


def _fixed_prefix_then_free(words: list[str], target: str, role: str) -> list[Segment]:
    """A finite language as the characters all words share at the start (fixed) + the rest."""
    common = 0
    while common < len(words[0]) and len({w[common] for w in words}) == 1:
        common += 1
    out: list[Segment] = [Fixed(words[0][:common])]
    if common < len(words[0]):
        out.append(Free(CharDFA.strings([w[common:] for w in words]), target, role))
    return out


@dataclass
class DecimalCodec:
    """`name=IIIIIII.F` per target: zero-padded fixed point with `int_digits` integer digits and
    `frac_digits` fraction digits (0 = no point)."""

    targets: tuple[str, ...] = ("duration_s",)
    int_digits: int = 7
    frac_digits: int = 1
    clamped: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        self.targets = _check_targets(self.targets)
        if not 1 <= self.int_digits <= 15:
            raise EncodingError(f"int_digits must be 1..15, got {self.int_digits}")
        if not 0 <= self.frac_digits <= 6:
            raise EncodingError(f"frac_digits must be 0..6, got {self.frac_digits}")

    @property
    def max_value(self) -> float:
        return float(
            "9" * self.int_digits + ("." + "9" * self.frac_digits if self.frac_digits else "")
        )

    def config(self) -> dict[str, Any]:
        return {
            "name": "decimal",
            "targets": list(self.targets),
            "int_digits": self.int_digits,
            "frac_digits": self.frac_digits,
        }

    def _one(self, v: float) -> str:
        if v < 0 or math.isinf(v) or v > self.max_value:
            self.clamped += 1
            v = 0.0 if v < 0 else self.max_value
        width = self.int_digits + (self.frac_digits + 1 if self.frac_digits else 0)
        text = f"{v:0{width}.{self.frac_digits}f}"
        if len(text) > width:  # rounding carried past the top (99999.96 → 100000.0)
            self.clamped += 1
            text = f"{self.max_value:0{width}.{self.frac_digits}f}"
        return text

    def encode(self, values: Mapping[str, float]) -> str:
        return PAIR_SEPARATOR.join(
            f"{t}{NAME_SEPARATOR}{self._one(_value(values, t))}" for t in self.targets
        )

    def decode(self, text: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for target, body in zip(self.targets, _split_fields(text, self.targets), strict=True):
            whole, sep, frac = body.partition(".")
            ok = (
                len(whole) == self.int_digits
                and whole.isascii()
                and whole.isdigit()
                and (
                    (self.frac_digits == 0 and not sep)
                    or (sep and len(frac) == self.frac_digits and frac.isascii() and frac.isdigit())
                )
            )
            if not ok:
                raise EncodingError(
                    f"{target}: {body!r} is not a decimal with {self.int_digits} integer and "
                    f"{self.frac_digits} fraction digit(s)"
                )
            out[target] = float(body)
        return out

    def segments(self) -> list[Segment]:
        segs: list[Segment] = []
        for i, target in enumerate(self.targets):
            segs.append(Fixed((PAIR_SEPARATOR if i else "") + target + NAME_SEPARATOR))
            segs.append(Free(CharDFA.positions([DIGITS] * self.int_digits), target, "integer"))
            if self.frac_digits:
                segs.append(Fixed("."))
                segs.append(
                    Free(CharDFA.positions([DIGITS] * self.frac_digits), target, "fraction")
                )
        return _merge(segs)


CODECS: dict[str, type[ScientificCodec] | type[DecimalCodec]] = {
    "sci": ScientificCodec,
    "decimal": DecimalCodec,
}


def codec_for(name: str, targets: Sequence[str], **params: Any) -> Codec:
    """A codec by name ("sci" or "decimal") for `targets`, with its parameters (e.g.
    mantissa_digits=3, exp_min=-2, exp_max=9 / int_digits=7, frac_digits=1)."""
    cls = CODECS.get(name)
    if cls is None:
        raise EncodingError(f"unknown encoding {name!r}; choose one of {', '.join(CODECS)}")
    try:
        codec: Codec = cls(tuple(targets), **params)
    except TypeError as exc:
        raise EncodingError(f"bad parameters for encoding {name!r}: {exc}") from exc
    return codec


def median_and_quantiles(
    decoded: Sequence[Mapping[str, float]],
) -> dict[str, tuple[float, float, float]]:
    """Per target, (median, P10, P90) over K decoded samples of one job (linear interpolation
    between order statistics, numpy's default)."""
    if not decoded:
        raise EncodingError("no samples to summarise")
    targets = list(decoded[0])
    out: dict[str, tuple[float, float, float]] = {}
    for t in targets:
        xs = sorted(float(d[t]) for d in decoded)
        out[t] = (_quantile(xs, 0.5), _quantile(xs, 0.1), _quantile(xs, 0.9))
    return out


def _quantile(xs: list[float], q: float) -> float:
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
