"""The sources a person names with `gharuntime build --source KIND`, one module each holding the
whole kind: the options of `gharuntime build` it takes (click parameters), a typed config made
from their values, the Source it builds from and what the dataset card says of it. `SOURCES` is
the one registry, found in this package's modules (`discover`: every SourceConfig subclass a
module defines with a `kind` of its own): the command takes its `--source` choices and its
source options from it (`options()`), and `build(config.source(), out, options)` builds.

These modules sit above the builder (a kind assembles a Source from a reader of
gharuntime.sources and the builder's normalisation and crawl folder rules); neither the builder
nor the readers import them. `crawled` is what the kinds that crawl first share; `request` the
command's one call (`run_build`).

To add a kind: a module here with a SourceConfig (kind, summary, options, rank,
from_options, source), its Source and its card text; nothing to register. See
docs/maintainer/development.md."""

import importlib
import pkgutil
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
    "discover",
    "options",
    "refuse_unused",
]


def discover(package: str = __name__) -> dict[str, type[SourceConfig]]:
    """Every source kind the modules of `package` define, by its `--source` name, in `rank`
    order: each SourceConfig subclass a module defines with a `kind` of its own (a class it
    imports from another module is that module's). Two modules declaring one kind are a
    mistake of the code, refused."""
    found: dict[str, type[SourceConfig]] = {}
    where = importlib.import_module(package).__path__
    for info in sorted(pkgutil.iter_modules(where, f"{package}."), key=lambda i: i.name):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if not (isinstance(value, type) and issubclass(value, SourceConfig)):
                continue
            if value.__module__ != module.__name__ or "kind" not in vars(value):
                continue
            if value.kind in found:
                raise RuntimeError(
                    f"source kind {value.kind!r} is declared twice: by "
                    f"{found[value.kind].__module__} and {module.__name__}"
                )
            found[value.kind] = value
    return dict(sorted(found.items(), key=lambda item: (item[1].rank, item[0])))


SOURCES: dict[str, type[SourceConfig]] = discover()
"""Every source kind by its `--source` name, found in this package's modules, in rank order;
the first (raw) is the default."""


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
