"""`--source api-json`: files, folders or git repositories of GitHub jobs/runs API JSON, with
the workflow YAML read from --yaml-git histories (gharuntime.builder.api_build.ApiJsonSource)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from gharuntime.contract import SPLITS
from gharuntime.source_kinds.base import SourceConfig, SourceOptionError, SourceOptions
from gharuntime.sources.base import Source

__all__ = ["ApiJsonConfig", "parse_cross_repo"]


def parse_cross_repo(items: tuple[str, ...]) -> dict[str, str]:
    """OWNER/NAME=SPLIT items as {owner/name: split}."""
    fixed: dict[str, str] = {}
    for item in items:
        name, sep, split = item.rpartition("=")
        if not sep or not name or split not in SPLITS:
            raise SourceOptionError(
                f"{item[:200]!a}: write OWNER/NAME=SPLIT with SPLIT one of {', '.join(SPLITS)}",
                option="--cross-repo",
            )
        fixed[name] = split
    return fixed


@dataclass(frozen=True)
class ApiJsonConfig(SourceConfig):
    """API JSON paths, the YAML histories, fixed cross_repo splits and YAML workers."""

    kind: ClassVar[str] = "api-json"
    options: ClassVar[frozenset[str]] = frozenset({"paths", "yaml_git", "cross_repo", "workers"})
    summary: ClassVar[str] = "files, folders or git repositories of jobs/runs API JSON"

    paths: tuple[Path, ...]
    yaml_git: tuple[Path, ...] = ()
    cross_repo: dict[str, str] = field(default_factory=dict)
    workers: int = 1

    @classmethod
    def from_options(cls, opts: SourceOptions) -> ApiJsonConfig:
        """PATHS (at least one), --yaml-git, --cross-repo OWNER/NAME=SPLIT."""
        if not opts.paths:
            raise SourceOptionError(
                "give files, folders or git repositories of API JSON: --source api-json PATH...",
                option="PATHS",
            )
        return cls(opts.paths, opts.yaml_git, parse_cross_repo(opts.cross_repo), opts.workers)

    def source(self) -> Source:
        from gharuntime.builder.api_build import ApiJsonSource

        return ApiJsonSource(
            list(self.paths),
            yaml_git=list(self.yaml_git),
            cross_repo=self.cross_repo,
            workers=self.workers,
        )

    def reads(self) -> list[Path]:
        return [*self.paths, *self.yaml_git]
