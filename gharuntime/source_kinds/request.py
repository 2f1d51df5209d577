"""`gharuntime build` as one typed request and one call: `run_build(BuildRequest(...))` checks
the dataset folder and the previous release, then builds the source's config with
`build(config.source(), out, options)`. The command line only turns its options into the
request (`gharuntime.source_kinds.config_from_options` for the source). It sits with the kinds,
above the builder it calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gharuntime.builder.build import BuildOptions, BuildResult, build
from gharuntime.builder.filters import DEFAULT_CONCLUSIONS
from gharuntime.dataset import DEFAULT_ROWS_PER_FILE, DatasetError
from gharuntime.paths import output_folder_problem
from gharuntime.progress import Progress
from gharuntime.release_diff import DatasetSide, open_side
from gharuntime.source_kinds.base import SourceConfig, SourceOptionError

__all__ = ["BuildRequest", "parse_conclusions", "run_build"]


def parse_conclusions(text: str) -> tuple[str, ...] | None:
    """`success,failure` as a tuple; `all` as None (every conclusion kept)."""
    if text.strip().lower() == "all":
        return None
    values = tuple(v.strip() for v in text.split(",") if v.strip())
    if not values:
        raise SourceOptionError(
            "give conclusions to keep, e.g. success or success,failure", option="--conclusions"
        )
    return values


@dataclass(frozen=True)
class BuildRequest:
    """A build: the config of the source kind (`--source KIND` and its options), the dataset
    folder, and what every build takes (`previous` as given: a dataset folder or
    ORG/NAME[@REVISION], opened by run_build)."""

    config: SourceConfig
    out: Path
    conclusions: Sequence[str] | None = DEFAULT_CONCLUSIONS
    rows_per_file: int = DEFAULT_ROWS_PER_FILE
    previous: str | None = None


def _check_out(out: Path) -> None:
    if out.exists() and (
        not out.is_dir() or (any(out.iterdir()) and not (out / "manifest.json").is_file())
    ):
        raise SourceOptionError(
            f"{out} exists and is not a dataset folder; choose another --out (an earlier "
            "dataset there would be replaced, anything else is never touched)",
            option="--out",
        )


def run_build(request: BuildRequest, progress: Progress | None = None) -> BuildResult:
    """Check that --out may be replaced (it is a dataset folder or new, and nothing the build
    reads), open --previous, then build. SourceOptionError names the option to fix; BuildError
    is a source that cannot be built (nothing written either way)."""
    out = request.out
    _check_out(out)
    before: DatasetSide | None = None
    if request.previous is not None:
        try:
            before = open_side(request.previous)
        except DatasetError as exc:
            raise SourceOptionError(str(exc), option="--previous") from None
    # the folder replaced at --out is never one the build reads (a --previous release, a source)
    problem = output_folder_problem(
        out, [*request.config.reads(), before.root if before is not None else None]
    )
    if problem:
        raise SourceOptionError(problem, option="--out")
    options = BuildOptions(request.conclusions, request.rows_per_file, before, progress)
    return build(request.config.source(), out, options)
