"""gharuntime.source_kinds: one registry of the sources `gharuntime build --source` names,
each a typed config; every build option applies to a source or is refused for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from raw_world import standard_world

from gharuntime.builder.build import BuildOptions, build
from gharuntime.cli.build import build_command
from gharuntime.cli.main import cli
from gharuntime.source_kinds import (
    FLAGS,
    SOURCES,
    RawConfig,
    SimulatedConfig,
    SourceOptionError,
    SourceOptions,
    config_from_options,
)


def test_the_registry_names_every_kind_the_command_offers() -> None:
    choices = next(p for p in build_command.params if p.name == "kind").type.choices  # type: ignore[attr-defined]
    assert list(SOURCES) == ["raw", "ghalogs", "api-json", "simulated", "github"]
    assert list(choices) == list(SOURCES)
    for config in SOURCES.values():
        assert config.options <= set(FLAGS), config.kind
    # every source option of the command is taken by some kind
    assert set(FLAGS) == set().union(*(c.options for c in SOURCES.values()))


def test_a_kind_is_looked_up_and_built_from_the_options(tmp_path: Path) -> None:
    opts = SourceOptions(out=tmp_path / "ds", raw=(tmp_path,), workers=3)
    assert config_from_options("raw", opts, {"raw", "workers"}) == RawConfig((tmp_path,), 3)
    sim = config_from_options("simulated", SourceOptions(out=tmp_path / "ds", seed=4))
    assert sim == SimulatedConfig(tmp_path / "ds.raw", seed=4)
    with pytest.raises(SourceOptionError, match="unknown source 'nope'"):
        config_from_options("nope", opts)


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
