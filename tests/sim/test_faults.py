"""Fault injection: each fault is seeded, observable over HTTP, and recorded."""

from __future__ import annotations

import http.client
import time
from urllib.parse import urlsplit

import pytest
import requests

from gharuntime.sim import Faults, ServerConfig, World, serve
from gharuntime.sim.world import END, RepoWorld


def _repo(world: World) -> RepoWorld:
    return next(
        world.repo(m.index)
        for m in world.metas()
        if not (m.private or m.old_name or m.actions_disabled) and len(world.repo(m.index).runs) > 6
    )


def test_same_seed_same_faults() -> None:
    a = Faults(seed=3, error_503=0.3)
    assert [a.draw("GET /x", n) for n in range(50)] == [
        Faults(seed=3, error_503=0.3).draw("GET /x", n) for n in range(50)
    ]
    assert [a.draw("GET /x", n) for n in range(50)] != [
        Faults(seed=4, error_503=0.3).draw("GET /x", n) for n in range(50)
    ]


def test_rates_are_honoured() -> None:
    faults = Faults(seed=1, error_500=0.1, reset=0.05)
    drawn = [faults.draw("GET /y", n) for n in range(4000)]
    assert 300 < drawn.count("error_500") < 500 and 120 < drawn.count("reset") < 280


def test_parse_from_the_command_line() -> None:
    assert Faults.parse("error_503=0.02,reset=0.01,seed=7") == Faults(
        seed=7, error_503=0.02, reset=0.01
    )
    with pytest.raises(ValueError, match="unknown fault"):
        Faults.parse("boom=1")


@pytest.mark.parametrize(
    "kind,status", [("error_500", 500), ("error_502", 502), ("error_503", 503)]
)
def test_server_errors(sim_world: World, kind: str, status: int) -> None:
    with serve(sim_world, ServerConfig(faults=Faults(seed=1, **{kind: 1.0}))) as server:
        r = requests.get(f"{server.url}/repos/{_repo(sim_world).meta.full_name}")
        assert r.status_code == status
        assert server.recorder.fault_count(kind) == 1


def test_connection_reset(sim_world: World) -> None:
    with serve(sim_world, ServerConfig(faults=Faults(seed=1, reset=1.0))) as server:
        with pytest.raises(requests.ConnectionError):
            requests.get(f"{server.url}/repos/{_repo(sim_world).meta.full_name}")
        assert server.recorder.fault_count("reset") == 1


def test_truncated_body_is_shorter_than_promised(sim_world: World) -> None:
    with serve(sim_world, ServerConfig(faults=Faults(seed=1, truncate=1.0))) as server:
        url = urlsplit(server.url)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
        conn.request("GET", f"/repos/{_repo(sim_world).meta.full_name}")
        resp = conn.getresponse()
        with pytest.raises(http.client.IncompleteRead):
            resp.read()
        conn.close()


def test_slow_responses(sim_world: World) -> None:
    with serve(sim_world, ServerConfig(faults=Faults(seed=1, slow=1.0, slow_s=0.4))) as server:
        start = time.perf_counter()
        assert (
            requests.get(f"{server.url}/repos/{_repo(sim_world).meta.full_name}").status_code == 200
        )
        assert time.perf_counter() - start >= 0.4


def test_repeated_item_starts_the_next_page(sim_world: World) -> None:
    rw = _repo(sim_world)
    with serve(sim_world, ServerConfig(faults=Faults(seed=1, repeat=1.0))) as server:
        url = f"{server.url}/repos/{rw.meta.full_name}/actions/runs"
        first = requests.get(url, params={"per_page": 3}).json()["workflow_runs"]
        second = requests.get(url, params={"per_page": 3, "page": 2}).json()["workflow_runs"]
        assert second[0]["id"] == first[-1]["id"]
        assert server.recorder.fault_count("repeat") == 1  # page 1 has nothing before it


def test_logs_expire_during_the_crawl_and_stay_expired(sim_world: World) -> None:
    rw = _repo(sim_world)
    job = next(
        j
        for r in reversed(rw.runs)
        for j in r.latest.jobs
        if j.status == "completed" and j.completed > END - 80 * 86400
    )
    faults = Faults(seed=1, expire=0.5)
    with serve(sim_world, ServerConfig(faults=faults)) as server:
        url = f"{server.url}/repos/{rw.meta.full_name}/actions/jobs/{job.id}/logs"
        codes = [requests.get(url, allow_redirects=False).status_code for _ in range(12)]
        first_gone = codes.index(410)
        assert set(codes[:first_gone]) <= {302} and set(codes[first_gone:]) == {410}
        assert server.recorder.fault_count("expire") == 1


def test_faults_are_recorded_by_endpoint(sim_world: World) -> None:
    with serve(sim_world, ServerConfig(faults=Faults(seed=2, error_503=0.5))) as server:
        for _ in range(20):
            requests.get(f"{server.url}/repos/nobody/nothing")
        assert (
            server.recorder.count("repos/get", status=503)
            == server.recorder.fault_count("error_503")
            > 0
        )
        assert server.recorder.count("repos/get") == 20
