"""The sources a person names with `gharuntime build --source KIND`, one module each: a typed
config made from the command's options and the Source it builds from. `SOURCES` is the one
registry the command line looks a kind up in; `build(config.source(), out, options)` builds.

These modules sit above the builder (they assemble a Source from a reader and the builder's
crawl and normalisation); the readers in gharuntime.sources never import the builder. Importing
this package does not import the simulator: the simulated kind imports it when it crawls.

To add a kind: a module here with a SourceConfig (kind, options, from_options, source) and an
entry in SOURCES; see docs/maintainer/development.md."""

from collections.abc import Iterable

from gharuntime.source_kinds.api_json import ApiJsonConfig
from gharuntime.source_kinds.base import (
    FLAGS,
    SourceConfig,
    SourceOptionError,
    SourceOptions,
    refuse_unused,
)
from gharuntime.source_kinds.ghalogs import GhalogsConfig
from gharuntime.source_kinds.github import GitHubConfig
from gharuntime.source_kinds.raw import RawConfig
from gharuntime.source_kinds.simulated import SimulatedConfig

__all__ = [
    "FLAGS",
    "SOURCES",
    "ApiJsonConfig",
    "GhalogsConfig",
    "GitHubConfig",
    "RawConfig",
    "SimulatedConfig",
    "SourceConfig",
    "SourceOptionError",
    "SourceOptions",
    "config_from_options",
    "refuse_unused",
]


SOURCES: dict[str, type[SourceConfig]] = {
    config.kind: config
    for config in (RawConfig, GhalogsConfig, ApiJsonConfig, SimulatedConfig, GitHubConfig)
}
"""Every source kind by its `--source` name; the first is the default."""


def config_from_options(kind: str, opts: SourceOptions, given: Iterable[str] = ()) -> SourceConfig:
    """The config of source `kind` from the build command's options; `given` names the
    SourceOptions fields a person set: one the kind does not take is refused, never ignored."""
    try:
        config = SOURCES[kind]
    except KeyError:
        raise SourceOptionError(
            f"unknown source {kind[:100]!a}; choose one of {', '.join(SOURCES)}", option="--source"
        ) from None
    refuse_unused(config, given, SOURCES.values())
    return config.from_options(opts)
