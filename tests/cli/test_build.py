"""`gharuntime build`: sources, end summary, exit codes."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from raw_world import T0, RawWorld, standard_world

from gharuntime.cli.main import cli
from gharuntime.contract import RawStoreLayout
from gharuntime.validation import validate_folder


@pytest.fixture()
def two_stores(shared_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    a = standard_world(shared_dir).write(tmp_path / "a")
    w = RawWorld(shared_dir)
    w.next_job_id = 900_000_000
    w.job(w.run(42, T0), "lint")
    return a, w.write(tmp_path / "b")


def test_help_teaches_with_examples() -> None:
    result = CliRunner().invoke(cli, ["build", "--help"])
    assert result.exit_code == 0
    assert "gharuntime build --raw" in result.output
    assert "--source ghalogs" in result.output


def test_build_from_two_raw_stores_prints_a_summary(
    two_stores: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "ds"
    result = CliRunner().invoke(
        cli, ["build", "--raw", str(two_stores[0]), str(two_stores[1]), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "31 jobs" in result.output
    assert "input problems: none" in result.output
    assert validate_folder(out) == []


def test_lost_input_is_reported_and_exits_1(shared_dir: Path, tmp_path: Path) -> None:
    store = standard_world(shared_dir).write(tmp_path / "store", per_shard=10)
    last = sorted((store / RawStoreLayout().shards).glob("*.jsonl.gz"))[-1]
    whole = gzip.decompress(last.read_bytes()).count(b"\n")
    last.write_bytes(last.read_bytes()[:40])  # the gzip header: no record survives
    result = CliRunner().invoke(cli, ["build", "--raw", str(store), "--out", str(tmp_path / "ds")])
    assert result.exit_code == 1, result.output
    assert f"truncated_shard: {whole}" in result.output
    assert "Traceback" not in result.output
    assert validate_folder(tmp_path / "ds") == []


def test_not_a_raw_store_exits_2_without_traceback(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["build", "--raw", str(tmp_path), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2
    assert "not a raw store" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_no_source_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["build", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "--raw DIR" in result.output


def test_ghalogs_source_takes_one_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["build", "--source", "ghalogs", str(tmp_path), str(tmp_path), "--out", "x"]
    )
    assert result.exit_code == 2
    assert "exactly one dump folder" in result.output


def test_out_that_is_not_a_dataset_is_refused_before_any_work(
    two_stores: tuple[Path, Path], tmp_path: Path
) -> None:
    keep = tmp_path / "my-files"
    keep.mkdir()
    (keep / "notes.txt").write_text("precious")
    result = CliRunner().invoke(cli, ["build", "--raw", str(two_stores[0]), "--out", str(keep)])
    assert result.exit_code == 2
    assert "is not a dataset folder" in result.output
    assert [p.name for p in keep.iterdir()] == ["notes.txt"]


def test_rebuild_over_an_earlier_dataset_replaces_it(
    two_stores: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "ds"
    for store in two_stores:
        result = CliRunner().invoke(cli, ["build", "--raw", str(store), "--out", str(out)])
        assert result.exit_code == 0, result.output
    assert validate_folder(out) == []
    assert "1 jobs" in result.output  # the second store alone holds one job


@pytest.mark.parametrize("damage", ["emptied", "deleted", "lines_removed"])
def test_a_damaged_listed_shard_is_counted_by_its_lost_records(
    shared_dir: Path, tmp_path: Path, damage: str
) -> None:
    """state.sqlite lists each shard's record count and sha256; a shard that lost records after
    the crawl is found and every record it lost is counted (exit 1), never "problems: none"."""
    store = standard_world(shared_dir).write(tmp_path / "store", per_shard=10)
    shard = sorted((store / RawStoreLayout().shards).glob("*.jsonl.gz"))[0]
    lines = gzip.decompress(shard.read_bytes()).splitlines(keepends=True)
    if damage == "emptied":
        shard.write_bytes(gzip.compress(b"", mtime=0))
        lost = len(lines)
    elif damage == "deleted":
        shard.unlink()
        lost = len(lines)
    else:
        shard.write_bytes(gzip.compress(b"".join(lines[:3]), mtime=0))
        lost = len(lines) - 3
    con = sqlite3.connect(store / "state.sqlite")
    listed = con.execute("SELECT records FROM shards WHERE name=?", (shard.name,)).fetchone()[0]
    con.close()
    assert listed == len(lines)
    result = CliRunner().invoke(cli, ["build", "--raw", str(store), "--out", str(tmp_path / "ds")])
    assert result.exit_code == 1, result.output
    assert f"truncated_shard: {lost}" in result.output
    assert "input problems: none" not in result.output
