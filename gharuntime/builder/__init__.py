"""The build: raw store or GHALogs dump → normalized, filtered, split, documented dataset folder."""

from gharuntime.builder.build import (
    BuildError,
    BuildResult,
    build_from_ghalogs,
    build_from_raw,
    finish_build,
)

__all__ = ["BuildError", "BuildResult", "build_from_ghalogs", "build_from_raw", "finish_build"]
