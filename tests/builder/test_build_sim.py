"""A raw store written by `simulate dump` builds into a valid, documented, synthetic dataset."""

from __future__ import annotations

from pathlib import Path

import pytest

from gharuntime.builder.build import build
from gharuntime.dataset import read_manifest
from gharuntime.sim import World
from gharuntime.sim.dump import dump_world
from gharuntime.source_kinds.raw import RawSource
from gharuntime.validation import validate_folder


@pytest.fixture(scope="module")
def dumped_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    out = tmp_path_factory.mktemp("sim") / "raw"
    stats = dump_world(World(seed=3, scale="tiny"), out, logs=True)
    return out, stats.jobs


@pytest.fixture(scope="module")
def sim_dataset(dumped_store: tuple[Path, int], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sim-ds") / "ds"
    build(RawSource([dumped_store[0]]), out)
    return out


def test_sim_dump_builds_a_valid_dataset(sim_dataset: Path) -> None:
    assert validate_folder(sim_dataset) == []


def test_every_dumped_job_is_a_candidate_and_every_removal_is_counted(
    dumped_store: tuple[Path, int], sim_dataset: Path
) -> None:
    manifest = read_manifest(sim_dataset)
    assert manifest["build"]["candidates"] == dumped_store[1]
    assert manifest["rows"] + sum(manifest["filters"].values()) == dumped_store[1]
    assert manifest["build"]["problems"]["counts"] == {}


def test_sim_job_names_all_resolve_to_yaml_keys(sim_dataset: Path) -> None:
    keys = read_manifest(sim_dataset)["build"]["job_keys"]
    assert keys.get("unresolved", 0) == 0 and keys.get("no_yaml", 0) == 0


def test_sim_dataset_is_marked_synthetic(sim_dataset: Path) -> None:
    assert read_manifest(sim_dataset)["source"]["synthetic"] is True
    assert read_manifest(sim_dataset)["source"]["stores"][0]["meta"]["synthetic"] == "1"
    assert "**This dataset is synthetic.**" in (sim_dataset / "README.md").read_text()


def test_sim_logs_fill_log_bytes_and_runner_image(sim_dataset: Path) -> None:
    import polars as pl

    from gharuntime.dataset import load

    rows = pl.concat([load(sim_dataset, "temporal", s) for s in ("train", "validation", "test")])
    assert rows["log_bytes"].null_count() < rows.height
    assert rows["runner_os"].null_count() == 0
