"""gharuntime.source_kinds: one registry of the sources `gharuntime build --source` names,
each a typed config that declares its own options; the command's source options are exactly the
kinds' ones, and every build option applies to a source or is refused for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from raw_world import standard_world

from gharuntime.builder.build import BuildOptions, build
from gharuntime.cli.build import build_command
from gharuntime.cli.main import cli
from gharuntime.source_kinds import (
    SOURCES,
    RawConfig,
    SimulatedConfig,
    SourceOptionError,
    config_from_options,
    options,
)
from gharuntime.source_kinds.base import PATHS, SourceOption

BUILD_OWN = {"kind", "out", "conclusions", "rows_per_file", "previous", "as_json"}
"""The options every build takes, whatever its source (the command's own)."""


def test_the_registry_names_every_kind_the_command_offers() -> None:
    choices = next(p for p in build_command.params if p.name == "kind").type.choices  # type: ignore[attr-defined]
    assert list(SOURCES) == ["raw", "ghalogs", "api-json", "simulated", "github"]
    assert list(choices) == list(SOURCES)


def test_the_command_takes_its_source_options_from_the_kinds() -> None:
    """No list of source options beside the kinds': the command's parameters are its own
    options plus each option some kind declares, the very same click parameter objects."""
    params = build_command.params
    declared = [o.param for o in options()]
    assert [p for p in params if p.name not in BUILD_OWN] == declared
    assert all(any(p is q for p in params) for q in declared)
    for config in SOURCES.values():
        assert all(isinstance(o, SourceOption) for o in config.options), config.kind
    names = [o.name for o in options()]
    assert len(names) == len(set(names))  # each declared once, shared by the kinds that take it
    assert [k for k, c in SOURCES.items() if PATHS in c.options] == ["raw", "ghalogs", "api-json"]


def test_a_kind_is_looked_up_and_built_from_the_options(tmp_path: Path) -> None:
    values = {"raw": (tmp_path,), "workers": 3}
    config = config_from_options("raw", tmp_path / "ds", values, {"raw", "workers"})
    assert config == RawConfig((tmp_path,), 3)
    # an option not given takes the command's default
    sim = config_from_options("simulated", tmp_path / "ds", {"seed": 4, "workers": 1})
    assert sim == SimulatedConfig(tmp_path / "ds.raw", seed=4)
    with pytest.raises(SourceOptionError, match="unknown source 'nope'"):
        config_from_options("nope", tmp_path / "ds", values)


@pytest.mark.parametrize(
    ("args", "option", "takers"),
    [
        (["--seed", "3"], "--seed", "simulated"),
        (["--scale", "small"], "--scale", "simulated"),
        (["--crawl-dir", "c"], "--crawl-dir", "simulated or github"),
        (["--repos", "{tmp}/r.txt"], "--repos", "github"),
        (["--yaml-git", "."], "--yaml-git", "api-json"),
        (["--logs", "."], "--logs", "ghalogs"),
    ],
)
def test_an_option_a_raw_build_cannot_use_is_refused(
    args: list[str], option: str, takers: str, tmp_path: Path
) -> None:
    (tmp_path / "r.txt").write_text("a/b\n")
    (tmp_path / "store").mkdir()
    result = CliRunner().invoke(
        cli,
        ["build", "--raw", str(tmp_path / "store")]
        + [a.format(tmp=tmp_path) for a in args]
        + ["--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 2, result.output
    assert f"{option}: --source raw does not use it" in result.output
    assert f"for --source {takers} only" in result.output
    assert not (tmp_path / "o").exists()


def test_paths_are_refused_for_a_source_that_crawls(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["build", "--source", "simulated", str(tmp_path)])
    assert result.exit_code == 2
    assert "PATHS: --source simulated does not use it" in result.output
    assert "for --source raw, ghalogs or api-json only" in result.output


def test_workers_are_refused_for_ghalogs_and_raw_stores_for_api_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["build", "--source", "ghalogs", str(tmp_path), "--workers", "2", "--out", "o"]
    )
    assert result.exit_code == 2 and "--workers: --source ghalogs does not use it" in result.output
    result = CliRunner().invoke(
        cli, ["build", "--source", "api-json", str(tmp_path), "--raw", str(tmp_path)]
    )
    assert result.exit_code == 2 and "--raw: --source api-json does not use it" in result.output


def test_an_option_from_the_environment_is_not_refused(shared_dir: Path, tmp_path: Path) -> None:
    store = standard_world(shared_dir).write(tmp_path / "a")
    result = CliRunner().invoke(
        cli,
        ["build", "--raw", str(store), "--out", str(tmp_path / "ds")],
        env={"GITHUB_API_URL": "http://127.0.0.1:9"},
    )
    assert result.exit_code == 0, result.output


@pytest.mark.slow
def test_rows_per_file_applies_to_a_crawled_source(tmp_path: Path) -> None:
    config = SimulatedConfig(tmp_path / "sim.raw", seed=2, scale="tiny")
    whole = build(config.source(), tmp_path / "whole", BuildOptions())
    split = build(config.source(), tmp_path / "split", BuildOptions(rows_per_file=100))
    assert whole.rows == split.rows
    files = [f["path"] for f in split.manifest["files"]]
    assert len(files) > len(whole.manifest["files"])
    assert any("-00001-of-" in f for f in files)


KIND = """
from dataclasses import dataclass
from typing import ClassVar

from gharuntime.source_kinds.base import SourceConfig
from gharuntime.source_kinds.raw import RawConfig  # another module's kind: not this one's


@dataclass(frozen=True)
class {name}(SourceConfig):
    kind: ClassVar[str] = "{kind}"
    rank: ClassVar[int] = {rank}
    options: ClassVar[tuple] = ()
    summary: ClassVar[str] = "a kind of a test"
"""


def test_a_kind_is_found_in_its_package_without_a_registry_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`discover` reads the package's modules: each SourceConfig subclass a module defines
    with a kind of its own, in rank order; one declared twice is refused."""
    from gharuntime.source_kinds import discover

    package = tmp_path / "extkinds"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "late.py").write_text(KIND.format(name="Late", kind="late", rank=90))
    (package / "early.py").write_text(KIND.format(name="Early", kind="early", rank=5))
    (package / "helpers.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = discover("extkinds")
    assert list(found) == ["early", "late"]
    assert found["late"].__module__ == "extkinds.late"
    assert list(SOURCES) == list(discover())  # the registry is what its package holds
    (package / "again.py").write_text(KIND.format(name="Again", kind="late", rank=1))
    with pytest.raises(RuntimeError, match="'late' is declared twice"):
        discover("extkinds")
