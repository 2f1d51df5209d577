"""Resumability: `kill -9` at any moment, then the same command, stores exactly what an
uninterrupted crawl stores, nothing twice."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from crawler_support import (
    TOKENS,
    cli_crawl,
    comparable,
    repo_names,
    store_records,
    world_truth,
)

from gharuntime.contract import RawKind
from gharuntime.crawler.store import KILL_ENV, CrawlStore
from gharuntime.sim import ServerConfig, SimServer, World, serve

FLUSH = ("--flush-records", "20")  # many small shards, so kills land between and inside them


def test_a_record_is_added_once_per_kind_and_key(tmp_path: Path) -> None:
    store = CrawlStore(tmp_path, api_url="http://127.0.0.1:1")
    assert store.add(RawKind.JOB, "7", {"id": 7}, 1)
    assert not store.add(RawKind.JOB, "7", {"id": 7}, 1)  # still buffered
    store.flush()
    assert not store.add(RawKind.JOB, "7", {"id": 7}, 1)  # now in a shard
    assert store.add(RawKind.RUN, "7", {"id": 7}, 1)  # another kind, same key
    store.close()
    assert set(store_records(tmp_path)) == {("job", "7"), ("run", "7")}


def test_unflushed_records_and_marks_vanish_together(tmp_path: Path) -> None:
    store = CrawlStore(tmp_path, api_url="http://127.0.0.1:1")
    store.add(RawKind.JOB, "1", {}, 1)
    store.mark([("INSERT INTO blobs VALUES (1, 'a.yml', 'abc')", ())])
    store.writer.con.close()  # dies before flushing
    again = CrawlStore(tmp_path, api_url="http://127.0.0.1:1")
    assert again.query("SELECT COUNT(*) FROM blobs") == [(0,)]
    assert not again.has(RawKind.JOB, "1")
    again.close()


@pytest.fixture(scope="module")
def resume_server() -> Iterator[SimServer]:
    with serve(World(seed=5, scale="tiny"), ServerConfig(tokens=TOKENS)) as server:
        yield server


@pytest.fixture(scope="module")
def resume_inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(repos file, token file) for the resume crawls: the tiny world's public repositories."""
    root = tmp_path_factory.mktemp("resume-inputs")
    repos = root / "repos.txt"
    repos.write_text("\n".join(repo_names(World(seed=5, scale="tiny"), public_only=True)) + "\n")
    tokens = root / "tokens.txt"
    tokens.write_text("\n".join(TOKENS) + "\n")
    return repos, tokens


@pytest.fixture(scope="module")
def uninterrupted(
    resume_server: SimServer,
    resume_inputs: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[tuple[str, str], Any]:
    """The records of one crawl that nobody interrupted."""
    out = tmp_path_factory.mktemp("uninterrupted") / "raw"
    proc = cli_crawl(out, resume_server.url, *resume_inputs, *FLUSH, cwd=out.parent)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    records = comparable(store_records(out))
    assert set(k for k, _ in records) >= {"repository", "run", "job", "workflow_file"}
    truth = world_truth(World(seed=5, scale="tiny"))
    assert {k for kind, k in records if kind == "run"} == truth.runs
    return records


def _rerun(out: Path, server: SimServer, inputs: tuple[Path, Path]) -> None:
    proc = cli_crawl(out, server.url, *inputs, *FLUSH, cwd=out.parent)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err


@pytest.mark.slow
@pytest.mark.parametrize(
    "kill_at", ["request:16", "request:45", "request:90", "shard-write:1", "shard-write:6"]
)
def test_kill_9_then_the_same_command_stores_what_an_uninterrupted_crawl_stores(
    kill_at: str,
    resume_server: SimServer,
    resume_inputs: tuple[Path, Path],
    uninterrupted: dict[tuple[str, str], Any],
    tmp_path: Path,
) -> None:
    out = tmp_path / "raw"
    proc = cli_crawl(
        out, resume_server.url, *resume_inputs, *FLUSH, env={KILL_ENV: kill_at}, cwd=tmp_path
    )
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL  # it really died there
    if kill_at.startswith("shard-write"):
        leftovers = {p.name for p in (out / "shards").iterdir()}
        assert any(n not in _listed(out) for n in leftovers)  # a written, unlisted shard
    _rerun(out, resume_server, resume_inputs)
    assert comparable(store_records(out)) == uninterrupted


@pytest.mark.slow
def test_kill_9_from_outside_after_requests_seen_by_the_server(
    resume_server: SimServer,
    resume_inputs: tuple[Path, Path],
    uninterrupted: dict[tuple[str, str], Any],
    tmp_path: Path,
) -> None:
    out = tmp_path / "raw"
    start = resume_server.recorder.total
    proc = cli_crawl(out, resume_server.url, *resume_inputs, *FLUSH, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while resume_server.recorder.total - start < 80 and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    _rerun(out, resume_server, resume_inputs)
    assert comparable(store_records(out)) == uninterrupted


def _listed(root: Path) -> set[str]:
    from gharuntime.rawstore import listed_shards

    return set(listed_shards(root))


@pytest.mark.slow
def test_ctrl_c_during_a_quota_wait_exits_promptly_and_the_rerun_completes(
    resume_inputs: tuple[Path, Path],
    uninterrupted: dict[tuple[str, str], Any],
    resume_server: SimServer,
    tmp_path: Path,
) -> None:
    out = tmp_path / "raw"
    world = World(seed=5, scale="tiny")
    with serve(world, ServerConfig(tokens=TOKENS, rate_limit=30, window_s=3600)) as stingy:
        proc = cli_crawl(out, stingy.url, *resume_inputs, *FLUSH, cwd=tmp_path)
        deadline = time.monotonic() + 60
        while stingy.recorder.total < 60 and time.monotonic() < deadline:  # 2 accounts x 30
            time.sleep(0.02)
        time.sleep(0.5)  # now every token waits for an hour-long reset
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        _, err = proc.communicate(timeout=30)
        stingy_url = stingy.url
    assert proc.returncode == 130 and time.monotonic() - started < 10
    assert "waiting" in err and "Rerun the same command" in err
    _rerun(out, resume_server, resume_inputs)  # a server with quota to spare
    records = json.loads(
        json.dumps(list(store_records(out).items())).replace(stingy_url, resume_server.url)
    )
    assert comparable({(k, key): v for (k, key), v in records}) == uninterrupted
