"""`--source raw` (the default): one or more raw stores (crawl shards, `simulate dump`), read
together (gharuntime.builder.build.RawSource)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from gharuntime.source_kinds.base import SourceConfig, SourceOptionError, SourceOptions
from gharuntime.sources.base import Source

__all__ = ["RawConfig", "folders_only"]


def folders_only(kind: str, paths: tuple[Path, ...]) -> None:
    """Refuse a file among PATHS for a kind that reads folders."""
    for path in paths:
        if not path.is_dir():
            raise SourceOptionError(
                f"{path} is a file; --source {kind} reads a folder (only --source api-json "
                "takes files)",
                option="PATHS",
            )


@dataclass(frozen=True)
class RawConfig(SourceConfig):
    """Raw store folders; `workers` processes parse the workflow YAML."""

    kind: ClassVar[str] = "raw"
    options: ClassVar[frozenset[str]] = frozenset({"paths", "raw", "workers"})
    summary: ClassVar[str] = "raw stores (crawl shards, `simulate dump`), read together"

    roots: tuple[Path, ...]
    workers: int = 1

    @classmethod
    def from_options(cls, opts: SourceOptions) -> RawConfig:
        """--raw DIR [DIR ...] and PATHS, at least one."""
        roots = (*opts.raw, *opts.paths)
        if not roots:
            raise SourceOptionError(
                "give a source: --raw DIR [DIR ...] or --source ghalogs DIR (see --help)",
                option="--raw",
            )
        folders_only(cls.kind, opts.paths)
        return cls(roots, opts.workers)

    def source(self) -> Source:
        from gharuntime.builder.build import RawSource

        return RawSource(list(self.roots), workers=self.workers)

    def reads(self) -> list[Path]:
        return list(self.roots)
