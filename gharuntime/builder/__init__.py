"""The build: a Source (raw store, GHALogs dump, API JSON) → normalized, filtered, split,
documented dataset folder, by one `gharuntime.builder.build.build` (not re-exported here: the
name would hide the module)."""

from gharuntime.builder.build import (
    BuildError,
    BuildResult,
    RawSource,
    build_from_ghalogs,
    build_from_raw,
    finish_build,
)

__all__ = [
    "BuildError",
    "BuildResult",
    "RawSource",
    "build_from_ghalogs",
    "build_from_raw",
    "finish_build",
]
