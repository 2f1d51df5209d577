"""The build: a Source (raw store, GHALogs dump, API JSON) → normalized, filtered, split,
documented dataset folder, by one `gharuntime.builder.build.build(source, out, BuildOptions)`
(not re-exported here: the name would hide the module). The sources a person names are
`gharuntime.source_kinds.SOURCES`; `gharuntime.builder.request.run_build` is the command's call.
`build_from_ghalogs` and `build_from_raw` are deprecated shorthands (each warns)."""

from gharuntime.builder.build import (
    BuildError,
    BuildOptions,
    BuildResult,
    RawSource,
    build_from_ghalogs,
    build_from_raw,
    finish_build,
)

__all__ = [
    "BuildError",
    "BuildOptions",
    "BuildResult",
    "RawSource",
    "build_from_ghalogs",
    "build_from_raw",
    "finish_build",
]
