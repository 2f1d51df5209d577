"""What a source kind is: a typed config made from the build command's options
(`from_options`), which makes the Source the build reads (`source()`). Every option of
`gharuntime build` is either taken by a kind or refused for it (`refuse_unused`), never ignored."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from gharuntime.errors import OptionError
from gharuntime.sources.base import Source

__all__ = ["FLAGS", "SourceConfig", "SourceOptionError", "SourceOptions", "refuse_unused"]


class SourceOptionError(OptionError):
    """An option a source cannot use, or a value it cannot take; `option` names it."""


@dataclass(frozen=True)
class SourceOptions:
    """Every source option of `gharuntime build` as given; each kind's `from_options` takes
    the ones it names in its `options`. `out` is the dataset folder (the crawl folder's default
    sits beside it)."""

    out: Path
    paths: tuple[Path, ...] = ()
    raw: tuple[Path, ...] = ()
    yaml_git: tuple[Path, ...] = ()
    cross_repo: tuple[str, ...] = ()
    logs: Path | None = None
    crawl_dir: Path | None = None
    seed: int = 0
    scale: str = "tiny"
    crawl_logs: bool = False
    repos_file: Path | None = None
    search: str | None = None
    max_repos: int | None = None
    since: str | None = None
    until: str | None = None
    max_runs_per_workflow: int | None = None
    token_file: Path | None = None
    api_url: str = "https://api.github.com"
    max_retries: int = 6
    workers: int = 1


FLAGS = {
    "paths": "PATHS",
    "raw": "--raw",
    "yaml_git": "--yaml-git",
    "cross_repo": "--cross-repo",
    "logs": "--logs",
    "crawl_dir": "--crawl-dir",
    "seed": "--seed",
    "scale": "--scale",
    "crawl_logs": "--crawl-logs",
    "repos_file": "--repos",
    "search": "--search",
    "max_repos": "--max-repos",
    "since": "--since",
    "until": "--until",
    "max_runs_per_workflow": "--max-runs-per-workflow",
    "token_file": "--token-file",
    "api_url": "--api-url",
    "max_retries": "--max-retries",
    "workers": "--workers",
}
"""The option of `gharuntime build` each SourceOptions field comes from."""


class SourceConfig:
    """A source kind's typed config. `kind` is its `--source` name, `options` the SourceOptions
    fields it takes (any other one given is refused), `summary` one line for --help."""

    kind: ClassVar[str]
    options: ClassVar[frozenset[str]]
    summary: ClassVar[str]

    @classmethod
    def from_options(cls, opts: SourceOptions) -> SourceConfig:
        """The config from the command's options (SourceOptionError when one is unusable)."""
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
    """SourceOptionError for the first option given that `config`'s kind does not take,
    naming the kinds that do."""
    all_kinds = list(kinds)
    for name in given:
        if name in FLAGS and name not in config.options:
            takers = [k.kind for k in all_kinds if name in k.options]
            listed = ", ".join(takers[:-1]) + " or " + takers[-1] if len(takers) > 1 else takers[0]
            raise SourceOptionError(
                f"--source {config.kind} does not use it; it is for --source {listed} only",
                option=FLAGS[name],
            )
