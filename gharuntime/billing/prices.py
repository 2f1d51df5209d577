"""The price table: per-minute rates by runner kind, read from a dated YAML file.

The table shipped with the package (`prices.yml`, GitHub's published rates) is the default;
`predict --prices FILE` reads another in the same format — an enterprise's negotiated rates, or
what a minute of your own self-hosted runner costs. A file is checked whole before it is used:
a value that is not a rate, a kind gharuntime does not know, a key it does not read, each is a
PriceError naming the file, the line and the fix.
"""

from __future__ import annotations

import math
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


def _scalar(node: yaml.Node, path: str, what: str) -> Any:
    if not isinstance(node, yaml.ScalarNode):
        raise PriceError(
            f"{what} must be a single value", path, _line(node), f"give {what} one value"
        )
    return yaml.SafeLoader("").construct_object(node)


def _kind(node: yaml.Node, path: str, what: str) -> str:
    value = _scalar(node, path, what)
    if not isinstance(value, str) or value not in KINDS:
        raise PriceError(f"{what}: unknown runner kind {value!r}", path, _line(node), _KIND_FIX)
    return value


def _rate(node: yaml.Node, path: str, kind: str) -> float:
    value = _scalar(node, path, f"the rate of {kind}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PriceError(
            f"the rate of {kind} is {node.value!r}, not a number",
            path,
            _line(node),
            "write the USD per minute as a plain number, e.g. `0.006` (no $ sign, no quotes)",
        )
    if not math.isfinite(value) or value < 0:
        raise PriceError(
            f"the rate of {kind} is {value}: a rate must be a finite number of at least 0",
            path,
            _line(node),
            "write the USD per minute, e.g. `0.006`; 0 for a runner that costs nothing",
        )
    return float(value)


def _date(node: yaml.Node, path: str, key: str) -> date:
    value = _scalar(node, path, key)
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise PriceError(
            f"{key} is {node.value!r}, not a date", path, _line(node), "write it as YYYY-MM-DD"
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
