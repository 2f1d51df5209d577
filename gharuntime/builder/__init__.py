"""The build: a Source (see gharuntime.sources.base) → normalized, filtered, split, documented
dataset folder, by one `gharuntime.builder.build.build(source, out, BuildOptions)` (not
re-exported here: the name would hide the module). The builder sits below the source kinds:
the sources a person names, each with its Source, are `gharuntime.source_kinds.SOURCES`, and
`gharuntime.source_kinds.request.run_build` is the command's call."""

from gharuntime.builder.build import BuildError, BuildOptions, BuildResult, finish_build

__all__ = ["BuildError", "BuildOptions", "BuildResult", "finish_build"]
