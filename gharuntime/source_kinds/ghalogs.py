"""`--source ghalogs`: the published GHALogs dump (runs.json.gz, repositories.json.gz) and,
with --logs, its folder of per-run log archives. The kind whole: its options (PATHS, --logs),
its config, its Source (`GhalogsSource`, over the reader gharuntime.sources.ghalogs) and what
the card says of it (what GHALogs lacks, and that it is to be cited)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import click

from gharuntime.progress import Progress
from gharuntime.source_kinds.base import PATHS, SourceConfig, SourceOption, SourceOptionError
from gharuntime.source_kinds.raw import folders_only
from gharuntime.sources.base import Candidates, CardText, Source
from gharuntime.sources.ghalogs import read_ghalogs

__all__ = ["LOGS", "GhalogsConfig", "GhalogsSource", "ghalogs_card"]

LOGS = SourceOption(
    click.Option(
        ["--logs"],
        type=click.Path(path_type=Path, exists=True, file_okay=False),
        default=None,
        help="GHALogs only: the folder of per-run log archives (adds runner labels and the "
        "runner's start and end times).",
    ),
    rank=50,
)


@dataclass(frozen=True)
class GhalogsConfig(SourceConfig):
    """The dump folder and, optionally, the log archives' folder."""

    kind: ClassVar[str] = "ghalogs"
    options: ClassVar[tuple[SourceOption, ...]] = (PATHS, LOGS)
    summary: ClassVar[str] = "the published GHALogs dump"

    dump: Path
    logs: Path | None = None

    @classmethod
    def from_options(cls, out: Path, values: Mapping[str, Any]) -> GhalogsConfig:
        """Exactly one dump folder (PATHS), and --logs."""
        paths = tuple(values[PATHS.name])
        if len(paths) != 1:
            raise SourceOptionError(
                "--source ghalogs takes exactly one dump folder: --source ghalogs DIR",
                option="PATHS",
            )
        folders_only(cls.kind, paths)
        return cls(paths[0], values[LOGS.name])

    def source(self) -> Source:
        return GhalogsSource(self.dump, self.logs)

    def reads(self) -> list[Path]:
        return [self.dump, *([self.logs] if self.logs is not None else [])]


@dataclass(frozen=True)
class GhalogsSource:
    """The GHALogs dump at `dump` (and its log archives under `logs`) as a build Source."""

    dump: Path
    logs: Path | None = None

    def read(self, progress: Progress | None = None) -> Candidates:
        """read_ghalogs' rows, problems and provenance as Candidates (SourceError: no dump)."""
        read = [read_ghalogs(self.dump, logs=self.logs, progress=progress)]
        _, problems, info = read[0]
        return Candidates(
            frame=read.pop()[0],  # no reference kept here: the build frees it stage by stage
            problems=problems,
            provenance={"kind": "ghalogs", "synthetic": False, **info},
            build={"records": info.get("runs_read", 0)},
            card=ghalogs_card,
        )


def ghalogs_card(provenance: Mapping[str, Any]) -> CardText:
    """What the card says of a GHALogs build: the dump's own selection, the columns it cannot
    fill, how durations are measured, and that GHALogs is to be cited too."""
    return CardText(
        "Built from the published GHALogs dump (Moriconi et al., MSR 2025: the 5 most recent "
        "runs of workflows in GitHub repositories with more than 100 stars, conclusion success, "
        "failure or timed_out, logs capped at 20 MB). GHALogs has no job ids, no workflow YAML "
        "and no per-job conclusion, so these columns stay null: "
        f"{', '.join(f'`{c}`' for c in provenance.get('null_columns', []))}. Row ids are a "
        f"stable hash: {provenance.get('id_rule', '')}. `created_at` is the run's start time. "
        f"Log archive used: {'yes' if provenance.get('log_archive') else 'no'}.",
        source_datasets=("GHALogs",),
        limitations=(
            "- GHALogs rows have no workflow YAML, so the `config` track's richest inputs are "
            "null; job durations run from the runner's first log line (past the wait for a "
            "runner, which GitHub's own started_at also leaves out) to the log's last line (or "
            "span the logged steps); `step_names` stay null because GHALogs has log files only "
            "for the steps that ran; and a job log file's ' (1)' suffix is dropped from its "
            "name.",
        ),
        citation="\nThe rows come from GHALogs; cite it too: Moriconi et al., *GHALogs: "
        "Large-Scale Dataset of GitHub Actions Runs*, MSR 2025.",
    )
