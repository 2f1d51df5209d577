"""Outputs and stores under hostile use: `eval --out`/`baseline --out` never replace an input,
a dataset's files or a device; a crawling build never writes into a folder that is not its
store nor mixes two worlds; a killed build's temporary folders are cleaned; new folders get the
umask's permissions; and an error a later run fetched is no longer reported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir
from gharuntime.cli.main import cli
from gharuntime.paths import clean_stale_siblings, contained, make_temp_dir, output_file_problem


@pytest.fixture()
def scored(fixture_dataset: Path, tmp_path: Path) -> Path:
    out = CliRunner().invoke(
        cli,
        [
            "baseline",
            "median",
            "--dataset",
            str(fixture_dataset),
            "--out",
            str(tmp_path / "m.jsonl"),
        ],
    )
    assert out.exit_code == 0, out.output
    return tmp_path / "m.jsonl"


@pytest.mark.parametrize("target", ["submission", "meta", "manifest", "inside", "device", "folder"])
def test_eval_out_never_replaces_an_input(fixture_dataset: Path, scored: Path, target: str) -> None:
    out = {
        "submission": scored,
        "meta": scored.with_name("m.meta.json"),
        "manifest": fixture_dataset / "manifest.json",
        "inside": fixture_dataset / "data" / "result.json",
        "device": Path("/dev/null"),
        "folder": scored.parent,
    }[target]
    before = {p: p.read_bytes() for p in (scored, fixture_dataset / "manifest.json")}
    result = CliRunner().invoke(
        cli,
        [
            "eval",
            str(scored),
            "--dataset",
            str(fixture_dataset),
            "--resamples",
            "3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "--out" in result.output
    assert {p: p.read_bytes() for p in before} == before
    if target == "inside":
        assert not out.exists()


def test_baseline_out_inside_the_dataset_is_refused(fixture_dataset: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "baseline",
            "median",
            "--dataset",
            str(fixture_dataset),
            "--out",
            str(fixture_dataset / "preds.jsonl"),
        ],
    )
    assert result.exit_code == 2
    assert not (fixture_dataset / "preds.jsonl").exists()


def test_output_file_problem_accepts_an_ordinary_new_file(tmp_path: Path) -> None:
    assert output_file_problem(tmp_path / "result.json", [tmp_path / "a.jsonl"]) is None


@pytest.mark.parametrize(
    "relative", ["/etc/passwd", "../x", "a/../../x", "", "a\x00b", "..", "a\\..\\b"]
)
def test_contained_refuses_paths_that_leave_the_folder(tmp_path: Path, relative: str) -> None:
    assert contained(tmp_path, relative) is None


def test_contained_refuses_a_symlink_out(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/etc")
    assert contained(tmp_path, "link/passwd") is None
    assert contained(tmp_path, "data/x.parquet") == tmp_path / "data" / "x.parquet"


def test_stale_temporary_siblings_of_a_killed_writer_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    # a writer that was killed: its pid no longer runs
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = int(proc.stdout)
    stale = tmp_path / f".ds.tmp-{dead}-abc"
    stale.mkdir()
    (stale / "part.parquet").write_bytes(b"x")
    old = tmp_path / f".ds.old-{dead}"
    old.mkdir()
    alive = tmp_path / f".ds.tmp-{os.getppid()}-xyz"  # a running process's: kept
    alive.mkdir()
    other = tmp_path / f".other.tmp-{dead}-abc"  # another output's: kept
    other.mkdir()
    removed = clean_stale_siblings(out)
    assert set(removed) == {stale, old}
    assert alive.exists() and other.exists() and not stale.exists()


def test_new_folders_follow_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        made = make_temp_dir(tmp_path / "ds")
        assert made.stat().st_mode & 0o777 == 0o755
    finally:
        os.umask(previous)


def test_a_built_dataset_is_not_private_to_its_owner(fixture_dataset: Path, tmp_path: Path) -> None:
    from gharuntime.dataset import write_dataset
    from gharuntime.fixture import fixture_jobs

    previous = os.umask(0o022)
    try:
        write_dataset(fixture_jobs(), tmp_path / "ds", provenance={"kind": "fixture", "seed": 0})
    finally:
        os.umask(previous)
    assert (tmp_path / "ds").stat().st_mode & 0o777 == 0o755
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_claim_crawl_dir_refuses_other_data_and_other_worlds(tmp_path: Path) -> None:
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"meow")
    with pytest.raises(CrawlDirError, match="no raw store"):
        claim_crawl_dir(other, "the simulated GitHub, seed 1, scale tiny")
    assert [p.name for p in other.iterdir()] == ["cat.jpg"]
    store = tmp_path / "store"
    claim_crawl_dir(store, "the simulated GitHub, seed 1, scale tiny")
    claim_crawl_dir(store, "the simulated GitHub, seed 1, scale tiny")  # same world: continues
    with pytest.raises(CrawlDirError, match="mix two worlds"):
        claim_crawl_dir(store, "the simulated GitHub, seed 2, scale tiny")
    (tmp_path / "file").write_text("x")
    with pytest.raises(CrawlDirError, match="is a file"):
        claim_crawl_dir(tmp_path / "file", "x")


@pytest.mark.slow
def test_build_with_another_seed_at_the_same_out_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    first = CliRunner().invoke(
        cli, ["build", "--source", "simulated", "--seed", "1", "--out", str(out)]
    )
    assert first.exit_code == 0, first.output
    manifest = (out / "manifest.json").read_bytes()
    second = CliRunner().invoke(
        cli, ["build", "--source", "simulated", "--seed", "2", "--out", str(out)]
    )
    assert second.exit_code == 2 and "seed 1" in second.output and "seed 2" in second.output
    assert (out / "manifest.json").read_bytes() == manifest


def _files(folder: Path) -> dict[str, bytes]:
    """A store's files (SQLite's -wal/-shm side files, which a read may leave, aside)."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def test_a_store_of_other_settings_is_refused_by_the_library_too(tmp_path: Path) -> None:
    """prepare_simulated_store (the library's path, the pipeline's) follows claim_crawl_dir's rule:
    a store of another seed or --crawl-logs is refused and kept, never removed."""
    from gharuntime.builder.build import BuildError
    from gharuntime.rawstore import connect_state
    from gharuntime.source_kinds.simulated import prepare_simulated_store

    store = tmp_path / "sim.raw"
    prepare_simulated_store(store, 1, "tiny", False)
    con = connect_state(store)
    con.execute("INSERT INTO shards VALUES ('shard-00000.jsonl.gz', 3, ?)", ("0" * 64,))
    con.close()
    (store / "shard-00000.jsonl.gz").write_bytes(b"records")
    prepare_simulated_store(store, 1, "tiny", False)  # the same world: continued
    before = _files(store)
    for seed, logs, said in ((1, True, "logs 0"), (2, False, "seed 2")):
        with pytest.raises(BuildError, match="mix two worlds") as caught:
            prepare_simulated_store(store, seed, "tiny", logs)
        assert said in str(caught.value) and str(store) in str(caught.value)
        assert "delete that folder" in str(caught.value)
        assert _files(store) == before


@pytest.mark.slow
def test_toggling_crawl_logs_is_refused_and_keeps_the_store(tmp_path: Path) -> None:
    """A store crawled without logs is not wiped by a build with --crawl-logs (it once was)."""
    out = tmp_path / "sim"
    args = ["build", "--source", "simulated", "--seed", "1", "--scale", "tiny", "--out", str(out)]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    manifest = (out / "manifest.json").read_bytes()
    store = tmp_path / "sim.raw"
    before = _files(store)
    second = CliRunner().invoke(cli, [*args, "--crawl-logs"])
    assert second.exit_code == 2, second.output
    assert "logs 0" in second.output and "logs 1" in second.output, second.output
    assert "Traceback" not in second.output
    assert _files(store) == before
    assert (out / "manifest.json").read_bytes() == manifest


@pytest.mark.slow
def test_fetch_errors_a_rerun_fetched_are_no_longer_reported(tmp_path: Path) -> None:
    """A crawl against a faulty simulated GitHub with no retries stores error records; the same
    crawl against a healthy server fetches them; the build then reports no fetch error."""
    from gharuntime.builder.build import build
    from gharuntime.crawler.client import GitHubClient, RetryPolicy, Token
    from gharuntime.crawler.crawl import CrawlOptions, crawl
    from gharuntime.sim import END, ServerConfig, World, serve
    from gharuntime.sim.faults import Faults
    from gharuntime.sim.world import DAY, iso
    from gharuntime.source_kinds.raw import RawSource

    world = World(2, "tiny")
    token = "ghp_" + "R" * 36
    repos = [m.full_name for m in world.metas() if not m.private][:4]
    opts = CrawlOptions(repos=repos, since=iso(END - 60 * DAY), until=iso(END))
    raw = tmp_path / "raw"
    faulty = ServerConfig(tokens={token: "a"}, faults=Faults(error_503=0.3, seed=3))
    with serve(world, faulty) as server:
        client = GitHubClient(
            server.url, [Token(token, "t")], policy=RetryPolicy(max_retries=0), seed=0
        )
        first = crawl(raw, opts, client)
    assert first.failures, "the faulty server caused no failure: the test would prove nothing"
    broken = build(RawSource([raw]), tmp_path / "ds1")
    assert sum(broken.manifest["build"]["fetch_errors"].values()) > 0
    healthy = ServerConfig(tokens={token: "a"})
    for _ in range(3):  # failures of listed units are retried by each rerun
        with serve(world, healthy) as server:
            client = GitHubClient(server.url, [Token(token, "t")], seed=0)
            again = crawl(raw, opts, client)
        if not again.failures:
            break
    assert not again.failures
    result = build(RawSource([raw]), tmp_path / "ds2")
    assert result.manifest["build"]["fetch_errors"] == {}
    card = (tmp_path / "ds2" / "README.md").read_text()
    assert "could not be fetched" not in card.lower()
