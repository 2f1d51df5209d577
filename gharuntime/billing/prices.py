"""The price table: per-minute rates by runner kind, read from a dated YAML file.

The table shipped with the package (`prices.yml`, GitHub's published rates) is the default;
`predict --prices FILE` reads another in the same format — an enterprise's negotiated rates, or
what a minute of your own self-hosted runner costs. A file is checked whole before it is used:
a value that is not a rate, a kind gharuntime does not know, a key it does not read, each is a
PriceError naming the file, the line and the fix. Values are read from their text (`_scalar`):
a rate is a plain decimal up to MAX_RATE, a date is YYYY-MM-DD, and no YAML tag applies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from gharuntime.billing.runners import KINDS
from gharuntime.errors import GharuntimeError
from gharuntime.readfile import InputFileError, read_bytes

__all__ = [
    "MAX_PRICE_FILE_BYTES",
    "MAX_RATE",
    "PriceError",
    "PriceTable",
    "default_prices",
    "load_prices",
    "parse_prices",
]

MAX_PRICE_FILE_BYTES = 1 << 20
"""A price table is a few kilobytes; a larger file is refused before it is parsed."""

_TOP = {
    "source": "the page the rates come from, a URL",
    "read_on": "the date the page was read, YYYY-MM-DD",
    "rates_from": "the date the rates apply from, YYYY-MM-DD",
    "rates": "per-minute rate in USD by runner kind",
    "free_in_public": "kinds that cost nothing in a public repository",
    "labels": "your own runner labels → their kind",
}


class PriceError(GharuntimeError, ValueError):
    """A price file that cannot be used; `line` is 1-based when known."""

    def __init__(self, message: str, path: str, line: int | None, fix: str) -> None:
        self.message, self.path, self.line = message, path, line
        super().__init__(message, where=f"{path}:{line}" if line else path, fix=fix)


@dataclass(frozen=True)
class PriceTable:
    """Rates in USD per billed minute by kind, with where they come from."""

    rates: dict[str, float]
    free_in_public: frozenset[str] = frozenset()
    labels: dict[str, str] = field(default_factory=dict)
    source: str | None = None
    read_on: date | None = None
    rates_from: date | None = None
    path: str = "prices.yml"

    def provenance(self) -> dict[str, Any]:
        """Where the rates come from, for `--json` and the table's footer."""
        return {
            "file": self.path,
            "source": self.source,
            "read_on": self.read_on.isoformat() if self.read_on else None,
            "rates_from": self.rates_from.isoformat() if self.rates_from else None,
        }


_KIND_FIX = "use one of the kinds gharuntime knows: " + ", ".join(KINDS)


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _mapping(node: yaml.Node, path: str, what: str) -> list[tuple[yaml.ScalarNode, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        raise PriceError(
            f"{what} must be a mapping", path, _line(node), f"write {what} as `key: value` lines"
        )
    seen: set[str] = set()
    out = []
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            raise PriceError(
                f"a key of {what} is not a name", path, _line(key), "use plain names as keys"
            )
        if key.value in seen:
            raise PriceError(
                f"`{key.value}` is given twice in {what}", path, _line(key), "keep one of them"
            )
        seen.add(key.value)
        out.append((key, value))
    return out


def _scalar(node: yaml.Node, path: str, what: str) -> str:
    """The text of a single value, as written: a price file is read from its text alone, so no
    YAML tag (`!!python/...`, `!!binary`), merge key, sexagesimal (`1:30`), hex (`0x10`) or
    timestamp reading ever applies (each was a traceback or a wrong rate)."""
    if not isinstance(node, yaml.ScalarNode):
        raise PriceError(
            f"{what} must be a single value", path, _line(node), f"give {what} one value"
        )
    if node.tag not in _PLAIN_TAGS:
        raise PriceError(
            f"{what} carries the YAML tag {node.tag!r}",
            path,
            _line(node),
            "write plain values: a price file reads no YAML tags or merge keys (`<<`)",
        )
    return str(node.value)


_PLAIN_TAGS = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "null", "bool", "timestamp")
)
_DECIMAL = re.compile(r"(?:0|[1-9][0-9]{0,5})(?:\.[0-9]{1,12})?")
_NUMBER_LIKE = re.compile(r"[-+]?(?:\.(?:inf|nan)|[0-9][0-9_:.eExXoObB+-]*)", re.I)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
MAX_RATE = 1000.0
"""USD per minute: far above any runner GitHub sells (its largest GPU runner is under $0.10)."""


def _kind(node: yaml.Node, path: str, what: str) -> str:
    value = _scalar(node, path, what)
    if node.tag != "tag:yaml.org,2002:str" or value not in KINDS:
        raise PriceError(f"{what}: unknown runner kind {value!r}", path, _line(node), _KIND_FIX)
    return value


def _rate(node: yaml.Node, path: str, kind: str) -> float:
    text = _scalar(node, path, f"the rate of {kind}")
    if getattr(node, "style", None) is not None or not _DECIMAL.fullmatch(text):
        if getattr(node, "style", None) is None and _NUMBER_LIKE.fullmatch(text):
            raise PriceError(
                f"the rate of {kind} is {text[:40]}: a rate must be a finite number of at least "
                "0, written as a plain decimal (no exponent, hex or `1:30`)",
                path,
                _line(node),
                "write the USD per minute, e.g. `0.006`; 0 for a runner that costs nothing",
            )
        raise PriceError(
            f"the rate of {kind} is {text[:40]!r}, not a number",
            path,
            _line(node),
            "write the USD per minute as a plain number, e.g. `0.006` (no $ sign, no quotes)",
        )
    value = float(text)
    if value > MAX_RATE:
        raise PriceError(
            f"the rate of {kind} is {text}: a rate is at most {MAX_RATE:g} USD per minute",
            path,
            _line(node),
            "write the USD per minute, e.g. `0.006`; 0 for a runner that costs nothing",
        )
    return value


def _date(node: yaml.Node, path: str, key: str) -> date:
    text = _scalar(node, path, key)
    try:
        if not _DAY.fullmatch(text):
            raise ValueError(text)
        return date.fromisoformat(text)  # 2026-02-30 is a ValueError too
    except ValueError:
        raise PriceError(
            f"{key} is {text[:40]!r}, not a date", path, _line(node), "write it as YYYY-MM-DD"
        ) from None


def parse_prices(text: str, path: str) -> PriceTable:
    """A PriceTable from the text of a price file; raises PriceError."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise PriceError(
            "is nested too deeply",
            path,
            None,
            "a price file is flat: `rates:` with `kind: rate` lines",
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise PriceError(
            f"does not parse as YAML: {problem}",
            path,
            int(mark.line) + 1 if mark is not None else None,
            "fix the YAML at that line; a price file is `rates:` with `kind: rate` lines",
        ) from None
    if root is None:
        raise PriceError("is empty", path, None, "give at least `rates:` with `kind: rate` lines")
    fields = dict((k.value, (k, v)) for k, v in _mapping(root, path, "the file"))
    for name, (key, _) in fields.items():
        if name not in _TOP:
            raise PriceError(
                f"unknown key `{name}`",
                path,
                _line(key),
                "the keys are " + "; ".join(f"`{k}` ({v})" for k, v in _TOP.items()),
            )
    if "rates" not in fields:
        raise PriceError("has no `rates:`", path, None, "add `rates:` with `kind: rate` lines")
    rates = {}
    for key, value in _mapping(fields["rates"][1], path, "`rates:`"):
        kind = _kind(key, path, "`rates:`")
        rates[kind] = _rate(value, path, kind)
    free: set[str] = set()
    if "free_in_public" in fields:
        node = fields["free_in_public"][1]
        if not isinstance(node, yaml.SequenceNode):
            raise PriceError(
                "`free_in_public:` must be a list",
                path,
                _line(node),
                "write it as `[linux, windows]`",
            )
        free = {_kind(item, path, "`free_in_public:`") for item in node.value}
    labels = {}
    if "labels" in fields:
        for key, value in _mapping(fields["labels"][1], path, "`labels:`"):
            labels[str(key.value)] = _kind(value, path, f"label `{key.value}`")
    source = _scalar(fields["source"][1], path, "source") if "source" in fields else None
    return PriceTable(
        rates=rates,
        free_in_public=frozenset(free),
        labels=labels,
        source=str(source) if source is not None else None,
        read_on=_date(fields["read_on"][1], path, "read_on") if "read_on" in fields else None,
        rates_from=_date(fields["rates_from"][1], path, "rates_from")
        if "rates_from" in fields
        else None,
        path=path,
    )


def load_prices(path: Path) -> PriceTable:
    """Read and check a price file; raises PriceError (with the line where known)."""
    try:
        raw = read_bytes(path, MAX_PRICE_FILE_BYTES + 1)  # a regular file only: no FIFO hangs
    except InputFileError as exc:
        raise PriceError(
            f"cannot read: {exc}", str(path), None, "give a readable price file"
        ) from None
    if len(raw) > MAX_PRICE_FILE_BYTES:
        raise PriceError(
            f"is over {MAX_PRICE_FILE_BYTES} bytes",
            str(path),
            None,
            "a price table is a few lines per runner kind",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise PriceError("is not UTF-8 text", str(path), line, "save the file as UTF-8") from None
    return parse_prices(text, str(path))


def default_prices() -> PriceTable:
    """The table shipped with the package: GitHub's published rates (see prices.yml)."""
    text = files("gharuntime.billing").joinpath("prices.yml").read_text(encoding="utf-8")
    return parse_prices(text, "gharuntime/billing/prices.yml")
