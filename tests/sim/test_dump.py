"""`simulate dump`: the raw records a complete crawl would store, written straight to a raw store."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import requests

from gharuntime.contract import RawKind
from gharuntime.rawstore import iter_records
from gharuntime.sim import SimServer, World
from gharuntime.sim.dump import DumpError, dump_world, redact


@pytest.fixture(scope="module")
def dumped(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Path]:
    world = World(seed=7, scale="tiny")
    out = tmp_path_factory.mktemp("dump") / "raw"
    dump_world(world, out, logs=True, shard_records=500)
    return world, out


def _keys(out: Path, kind: RawKind) -> list[str]:
    return [r.key for r in iter_records([out]) if r.kind == kind]


def test_one_record_per_run_attempt_of_completed_runs(dumped: tuple[World, Path]) -> None:
    world, out = dumped
    expected = [f"{r.id}:{a.number}" for _, r in world.completed_runs() for a in r.attempts]
    assert sorted(_keys(out, RawKind.RUN)) == sorted(expected)


def test_one_record_per_job_of_those_attempts(dumped: tuple[World, Path]) -> None:
    world, out = dumped
    expected = [str(j.id) for _, r in world.completed_runs() for a in r.attempts for j in a.jobs]
    assert sorted(_keys(out, RawKind.JOB)) == sorted(expected)


def test_repositories_and_workflows(dumped: tuple[World, Path]) -> None:
    world, out = dumped
    public = [m for m in world.metas() if not m.private]
    assert sorted(_keys(out, RawKind.REPOSITORY)) == sorted(str(m.id) for m in public)
    assert sorted(_keys(out, RawKind.WORKFLOW)) == sorted(
        str(w.id) for m in public for w in world.repo(m.index).workflows
    )


def test_workflow_files_once_per_distinct_blob(dumped: tuple[World, Path]) -> None:
    world, out = dumped
    keys = _keys(out, RawKind.WORKFLOW_FILE)
    assert len(keys) == len(set(keys))
    expected = {
        f"{rw.meta.id}:{r.workflow.path}:{rw.file_at(r.workflow.path, r.commit.sha)[1]}"
        for rw, r in world.completed_runs()
    }  # type: ignore[index]
    assert set(keys) == expected


def test_workflow_refs_per_path_and_head_sha(dumped: tuple[World, Path]) -> None:
    world, out = dumped
    refs = {r.key: r.body for r in iter_records([out]) if r.kind == RawKind.WORKFLOW_REF}
    expected = {
        f"{rw.meta.id}:{r.workflow.path}:{r.commit.sha}" for rw, r in world.completed_runs()
    }
    assert set(refs) == expected
    body = next(iter(refs.values()))
    assert set(body) == {"repo_id", "path", "head_sha", "blob_sha"}


def test_workflow_file_body_decodes_to_the_text(dumped: tuple[World, Path]) -> None:
    import base64

    world, out = dumped
    rec = next(r for r in iter_records([out]) if r.kind == RawKind.WORKFLOW_FILE)
    rw = world.repo(world.index_of_id("repo", rec.repo_id or 0) or 0)
    path = rec.body["path"]
    text = base64.b64decode(rec.body["content"]).decode()
    assert any(
        v[1] == text and v[2] == rec.body["sha"]
        for w in rw.workflows
        if w.path == path
        for v in w.versions
    )


def test_logs_ok_expired_and_missing_and_redacted(dumped: tuple[World, Path]) -> None:
    _, out = dumped
    logs = [r.body for r in iter_records([out]) if r.kind == RawKind.LOG]
    statuses = Counter(b["status"] for b in logs)
    assert {"ok", "expired", "missing"} <= set(statuses)
    assert all(b["bytes"] > 0 for b in logs if b["status"] == "ok")
    assert not any("ghp_" in b["text"] or "ghs_" in b["text"] for b in logs if b["text"])


def test_redact_masks_tokens_keys_and_url_passwords() -> None:
    text = "t ghp_abcdefghijklmnopqrstuvwxyz0123456789 AWS_SECRET_ACCESS_KEY=zzz postgres://admin:hunter2@db"
    assert redact(text) == "t *** AWS_SECRET_ACCESS_KEY=*** postgres://***@db"


def test_records_equal_what_the_server_serves(
    dumped: tuple[World, Path], sim_server: SimServer
) -> None:
    world, out = dumped
    rec = next(r for r in iter_records([out]) if r.kind == RawKind.RUN and r.key.endswith(":1"))
    run_id = int(rec.key.split(":")[0])
    rw = world.repo(world.index_of_id("run", run_id) or 0)
    served = requests.get(
        f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs/{run_id}/attempts/1"
    ).json()
    assert (
        json.loads(json.dumps(served).replace(sim_server.url, "https://api.github.com")) == rec.body
    )


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    world = World(seed=3, scale="tiny")
    dump_world(world, tmp_path / "a")
    dump_world(World(seed=3, scale="tiny"), tmp_path / "b")
    a = sorted((tmp_path / "a" / "shards").iterdir())
    b = sorted((tmp_path / "b" / "shards").iterdir())
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_interrupted_dump_resumes_without_repeats(tmp_path: Path) -> None:
    world = World(seed=3, scale="tiny")
    calls = []

    def stop_after_first_shard(_what: str, done: int, total: int | None) -> None:
        calls.append(done)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dump_world(world, tmp_path / "raw", shard_records=200, progress=stop_after_first_shard)
    dump_world(World(seed=3, scale="tiny"), tmp_path / "raw", shard_records=200)
    dump_world(World(seed=3, scale="tiny"), tmp_path / "whole")
    resumed = Counter((r.kind, r.key) for r in iter_records([tmp_path / "raw"]))
    whole = Counter((r.kind, r.key) for r in iter_records([tmp_path / "whole"]))
    assert resumed == whole and max(resumed.values()) == 1


def test_refuses_a_folder_holding_another_world(tmp_path: Path) -> None:
    dump_world(World(seed=3, scale="tiny"), tmp_path / "raw")
    with pytest.raises(DumpError, match="sim_seed=3"):
        dump_world(World(seed=4, scale="tiny"), tmp_path / "raw")


def test_refuses_a_folder_that_is_not_a_raw_store(tmp_path: Path) -> None:
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "notes.txt").write_text("mine")
    with pytest.raises(DumpError, match="not empty"):
        dump_world(World(seed=3, scale="tiny"), tmp_path / "raw")


@pytest.mark.slow
def test_two_workers_write_the_same_records_as_one(tmp_path: Path) -> None:
    dump_world(World(seed=3, scale="tiny"), tmp_path / "one")
    dump_world(World(seed=3, scale="tiny"), tmp_path / "two", workers=2)
    one = Counter((r.kind, r.key) for r in iter_records([tmp_path / "one"]))
    two = Counter((r.kind, r.key) for r in iter_records([tmp_path / "two"]))
    assert one == two


def test_cost_model_parameters_never_appear_in_records(dumped: tuple[World, Path]) -> None:
    world, out = dumped
    text = "\n".join(json.dumps(r.body) for r in iter_records([out]))
    for name in ("speed", "drift", "flaky", "cache_hit", "profile"):
        assert f'"{name}"' not in text
    for m in world.metas():
        for value in (m.profile.speed, m.profile.drift, m.profile.flaky, m.profile.cache_hit):
            assert repr(value) not in text
