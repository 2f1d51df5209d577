"""The sources a person names with `gharuntime build --source KIND`, one module each holding the
whole kind: the options of `gharuntime build` it takes (click parameters), a typed config made
from their values, the Source it builds from and what the dataset card says of it. `SOURCES` is
the one registry: the command takes its `--source` choices and its source options from it
(`options()`), and `build(config.source(), out, options)` builds.

These modules sit above the builder (a kind assembles a Source from a reader of
gharuntime.sources and the builder's normalisation and crawl folder rules); neither the builder
nor the readers import them. `crawled` is what the kinds that crawl first share; `request` the
command's one call (`run_build`).

To add a kind: a module here with a SourceConfig (kind, summary, options, from_options,
source), its Source and its card text, and an entry in SOURCES; see
docs/maintainer/development.md."""

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gharuntime.source_kinds.api_json import ApiJsonConfig, ApiJsonSource
from gharuntime.source_kinds.base import (
    SourceConfig,
    SourceOption,
    SourceOptionError,
    refuse_unused,
)
from gharuntime.source_kinds.ghalogs import GhalogsConfig, GhalogsSource
from gharuntime.source_kinds.github import GitHubConfig, GitHubSource
from gharuntime.source_kinds.raw import RawConfig, RawSource
from gharuntime.source_kinds.simulated import SimulatedConfig

__all__ = [
    "SOURCES",
    "ApiJsonConfig",
    "ApiJsonSource",
    "GhalogsConfig",
    "GhalogsSource",
    "GitHubConfig",
    "GitHubSource",
    "RawConfig",
    "RawSource",
    "SimulatedConfig",
    "SourceConfig",
    "SourceOption",
    "SourceOptionError",
    "config_from_options",
    "options",
    "refuse_unused",
]


SOURCES: dict[str, type[SourceConfig]] = {
    config.kind: config
    for config in (RawConfig, GhalogsConfig, ApiJsonConfig, SimulatedConfig, GitHubConfig)
}
"""Every source kind by its `--source` name; the first is the default."""


def options() -> list[SourceOption]:
    """Every option the kinds take, each once (several kinds share some), in --help's order."""
    unique = {id(o): o for config in SOURCES.values() for o in config.options}
    return sorted(unique.values(), key=lambda o: o.rank)


def config_from_options(
    kind: str, out: Path, values: Mapping[str, Any], given: Iterable[str] = ()
) -> SourceConfig:
    """The config of source `kind` from the build command's values (by parameter name; a
    missing one takes the command's default) and the dataset folder `out`. `given` names the
    options a person set: one the kind does not take is refused, never ignored."""
    try:
        config = SOURCES[kind]
    except KeyError:
        raise SourceOptionError(
            f"unknown source {kind[:100]!a}; choose one of {', '.join(SOURCES)}", option="--source"
        ) from None
    refuse_unused(config, given, SOURCES.values())
    own = {o.name: values.get(o.name, o.default) for o in config.options}
    return config.from_options(out, own)
