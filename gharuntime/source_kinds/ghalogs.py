"""`--source ghalogs`: the published GHALogs dump (runs.json.gz, repositories.json.gz) and,
with --logs, its folder of per-run log archives (gharuntime.sources.ghalogs.GhalogsSource)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from gharuntime.source_kinds.base import SourceConfig, SourceOptionError, SourceOptions
from gharuntime.source_kinds.raw import folders_only
from gharuntime.sources.base import Source

__all__ = ["GhalogsConfig"]


@dataclass(frozen=True)
class GhalogsConfig(SourceConfig):
    """The dump folder and, optionally, the log archives' folder."""

    kind: ClassVar[str] = "ghalogs"
    options: ClassVar[frozenset[str]] = frozenset({"paths", "logs"})
    summary: ClassVar[str] = "the published GHALogs dump"

    dump: Path
    logs: Path | None = None

    @classmethod
    def from_options(cls, opts: SourceOptions) -> GhalogsConfig:
        """Exactly one dump folder (PATHS), and --logs."""
        if len(opts.paths) != 1:
            raise SourceOptionError(
                "--source ghalogs takes exactly one dump folder: --source ghalogs DIR",
                option="PATHS",
            )
        folders_only(cls.kind, opts.paths)
        return cls(opts.paths[0], opts.logs)

    def source(self) -> Source:
        from gharuntime.sources.ghalogs import GhalogsSource

        return GhalogsSource(self.dump, self.logs)

    def reads(self) -> list[Path]:
        return [self.dump, *([self.logs] if self.logs is not None else [])]
