"""What a source kind is: a typed config that declares the options of `gharuntime build` it
takes (`options`, click parameters), is made from their values (`from_options`) and makes the
Source the build reads (`source()`). Every option of the command is either taken by a kind or
refused for it (`refuse_unused`), never ignored. The options several kinds take are declared
here, once; a kind's own ones in its module."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import click

from gharuntime.errors import OptionError
from gharuntime.sources.base import Source

__all__ = [
    "CRAWL_DIR",
    "CRAWL_LOGS",
    "PATHS",
    "WORKERS",
    "SourceConfig",
    "SourceOption",
    "SourceOptionError",
    "crawl_dir_of",
    "refuse_unused",
]


class SourceOptionError(OptionError):
    """An option a source cannot use, or a value it cannot take; `option` names it."""


@dataclass(frozen=True, eq=False)
class SourceOption:
    """One option of `gharuntime build` that source kinds take: its click parameter (whose
    name is the key of its value in `from_options`' values) and `rank`, where --help lists it
    among all the command's options (ascending; the build's own options sit at 25 `--source`,
    55-57 `--out` `--conclusions` `--rows-per-file` and 300-301 `--previous` `--json`)."""

    param: click.Parameter
    rank: int

    @property
    def name(self) -> str:
        """The parameter's name: the key of its value."""
        return str(self.param.name)

    @property
    def flag(self) -> str:
        """How a person writes it: `--raw`, or `PATHS` for the argument."""
        if isinstance(self.param, click.Option):
            return self.param.opts[0]
        return self.param.human_readable_name

    @property
    def default(self) -> Any:
        """The value the command gives it when it is not given (click marks "no default" with
        a sentinel of its own: none, or no value, here)."""
        value = self.param.default
        if self.param.multiple or self.param.nargs == -1:
            return tuple(value) if isinstance(value, (list, tuple)) else ()
        return value if isinstance(value, (str, int, float, Path)) else None


PATHS = SourceOption(
    click.Argument(["paths"], nargs=-1, type=click.Path(path_type=Path, exists=True)), rank=10
)
WORKERS = SourceOption(
    click.Option(
        ["--workers"],
        type=click.IntRange(1, 64),
        default=min(os.cpu_count() or 1, 4),
        show_default="the CPU count, at most 4",
        help="Processes that parse workflow YAML (the slowest part of a large build).",
    ),
    rank=200,
)
CRAWL_DIR = SourceOption(
    click.Option(
        ["--crawl-dir"],
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="simulated/github: raw store the crawl writes and the build reads (default: "
        "OUT.raw beside --out); rerunning with the same folder continues the crawl.",
    ),
    rank=60,
)
CRAWL_LOGS = SourceOption(
    click.Option(
        ["--crawl-logs/--no-crawl-logs"],
        default=False,
        help="simulated/github: also download each job's log (fills log_bytes).",
    ),
    rank=90,
)


def crawl_dir_of(out: Path, values: Mapping[str, Any]) -> Path:
    """--crawl-dir, or OUT.raw beside the dataset folder --out."""
    given: Path | None = values[CRAWL_DIR.name]
    return given or out.with_name(out.name + ".raw")


class SourceConfig:
    """A source kind's typed config. `kind` is its `--source` name, `options` the options of
    `gharuntime build` it takes (any other one given is refused), `summary` one line for
    --help."""

    kind: ClassVar[str]
    options: ClassVar[tuple[SourceOption, ...]]
    summary: ClassVar[str]

    @classmethod
    def from_options(cls, out: Path, values: Mapping[str, Any]) -> SourceConfig:
        """The config from the values of its options (by parameter name) and the dataset
        folder `out`; SourceOptionError when one is unusable."""
        raise NotImplementedError

    def source(self) -> Source:
        """The Source the build reads."""
        raise NotImplementedError

    def reads(self) -> list[Path]:
        """Every path the build reads or writes besides the dataset (never replaced by it)."""
        return []

    def warnings(self) -> list[str]:
        """What a person should hear before the build starts (no token, say)."""
        return []


def refuse_unused(
    config: type[SourceConfig], given: Iterable[str], kinds: Iterable[type[SourceConfig]]
) -> None:
    """SourceOptionError for the first option given (by parameter name, in --help's order)
    that `config`'s kind does not take, naming the kinds that do."""
    all_kinds = list(kinds)
    named = set(given)
    every = sorted({o.name: o for k in all_kinds for o in k.options}.values(), key=lambda o: o.rank)
    for option in every:
        if option.name in named and option not in config.options:
            takers = [k.kind for k in all_kinds if option in k.options]
            listed = ", ".join(takers[:-1]) + " or " + takers[-1] if len(takers) > 1 else takers[0]
            raise SourceOptionError(
                f"--source {config.kind} does not use it; it is for --source {listed} only",
                option=option.flag,
            )
