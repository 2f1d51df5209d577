"""gharuntime.sim.hub.server: where the test Hub listens and for how long, whose tokens it
knows, the faults it injects and the traffic it counts, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from gharuntime.sim.hub import HubFault, HubServer, HubTraffic, serve_hub

TOKEN = "hf_server_secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubServer]:
    with serve_hub(
        tmp_path_factory.mktemp("hub"), tokens={TOKEN: "alice", "hf_bob": "bob"}
    ) as server:
        yield server


@pytest.fixture()
def hub(running: HubServer) -> Iterator[HubServer]:
    """The module's server, with no fault left over from another test."""
    running.faults.clear()
    yield running
    running.faults.clear()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _validate(hub: HubServer, body: bytes = b'{"content": ""}') -> requests.Response:
    return requests.post(f"{hub.url}/api/validate-yaml", data=body, timeout=10)


# --- listening --------------------------------------------------------------------------------


def test_serve_hub_listens_on_127_0_0_1_until_its_block_ends(tmp_path: Path) -> None:
    with serve_hub(tmp_path / "hub") as hub:
        host, port = hub.url.removeprefix("http://").split(":")
        assert host == "127.0.0.1" and int(port) > 0
        assert _validate(hub).status_code == 200
        assert (tmp_path / "hub" / "objects").is_dir()  # the store lives where it was told
    with pytest.raises(requests.ConnectionError):
        _validate(hub)


def test_the_server_stops_when_the_block_raises(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="inside"), serve_hub(tmp_path) as hub:
        assert _validate(hub).ok
        raise RuntimeError("inside")
    with pytest.raises(requests.ConnectionError):
        _validate(hub)


def test_a_server_started_by_hand_listens_on_the_port_it_was_given(tmp_path: Path) -> None:
    port = _free_port()
    hub = HubServer(tmp_path, port=port, page_size=7)
    try:
        assert hub.start() == hub.url == f"http://127.0.0.1:{port}"
        assert _validate(hub).ok and hub.page_size == 7
    finally:
        hub.stop()
    with pytest.raises(requests.ConnectionError):
        _validate(hub)


# --- tokens -----------------------------------------------------------------------------------


def test_a_token_names_its_account_and_nothing_else_does(hub: HubServer) -> None:
    assert hub.user(f"Bearer {TOKEN}") == "alice" and hub.user("Bearer hf_bob") == "bob"
    assert hub.user(f"Bearer  {TOKEN} ") == "alice"
    for header in ("Bearer nope", TOKEN, f"Basic {TOKEN}", f"bearer {TOKEN}", "", None):
        assert hub.user(header) is None, header


def test_without_a_token_list_any_token_may_write(tmp_path: Path) -> None:
    with serve_hub(tmp_path) as hub:
        assert hub.user("Bearer anything") == "anonymous-writer"
        assert hub.user("Bearer ") is None and hub.user(None) is None
        body = {"type": "dataset", "organization": "org", "name": "open"}
        url = f"{hub.url}/api/repos/create"
        headers = {"Authorization": "Bearer anything"}
        assert requests.post(url, json=body, headers=headers, timeout=10).status_code == 200


def test_the_server_refuses_writes_with_a_token_it_does_not_know(hub: HubServer) -> None:
    body = {"type": "dataset", "organization": "org", "name": "tokens"}
    url = f"{hub.url}/api/repos/create"
    refused = requests.post(url, json=body, headers={"Authorization": "Bearer x"}, timeout=10)
    assert refused.status_code == 401
    assert requests.post(url, json=body, headers=AUTH, timeout=10).status_code == 200


# --- faults -----------------------------------------------------------------------------------


def test_a_fault_answers_its_requests_times_times_then_stops(hub: HubServer) -> None:
    hub.faults.append(HubFault("POST", r"^/api/validate-yaml$", "500", times=2))
    for _ in range(2):
        answer = _validate(hub)
        assert answer.status_code == 500
        assert answer.headers["X-Error-Message"] == "injected server error"
    assert _validate(hub).status_code == 200
    assert hub.faults[0].times == 0


def test_a_fault_matches_its_method_and_searches_its_path(hub: HubServer) -> None:
    hub.faults.append(HubFault("GET", r"validate", "500", times=5))
    assert _validate(hub).status_code == 200  # a POST: not this fault's
    hub.faults.append(HubFault("POST", r"yaml$"))  # searched, not matched from the start
    assert _validate(hub).status_code == 500
    assert hub.fault_for("POST", "/api/validate-yaml") is None  # the POST fault is spent
    assert hub.fault_for("GET", "/x/validate/y") == "500"
    assert [f.times for f in hub.faults] == [4, 0]


def test_the_first_fault_that_matches_is_used(hub: HubServer) -> None:
    hub.faults += [HubFault("PUT", r"^/lfs/", "drop"), HubFault("PUT", r"^/lfs/", "500")]
    assert hub.fault_for("PUT", "/lfs/abc") == "drop"
    assert hub.fault_for("PUT", "/lfs/abc") == "500"
    assert hub.fault_for("PUT", "/lfs/abc") is None


def test_a_drop_fault_hangs_up_without_an_answer_and_the_server_serves_on(
    hub: HubServer,
) -> None:
    hub.faults.append(HubFault("POST", r"^/api/validate-yaml$", "drop"))
    with pytest.raises(requests.ConnectionError):
        _validate(hub, json.dumps({"content": "x" * 50_000}).encode())
    assert _validate(hub).status_code == 200


# --- traffic ----------------------------------------------------------------------------------


def test_traffic_counts_requests_and_the_bytes_each_way(tmp_path: Path) -> None:
    with serve_hub(tmp_path) as hub:  # its own server: no other test's bytes still arriving
        body = json.dumps({"content": "---\nlicense: mit\n---\n"}).encode()
        answer = _validate(hub, body)
        refs = requests.get(f"{hub.url}/api/datasets/org/none/refs?expand=true", timeout=10)
        assert refs.status_code == 404
        assert hub.traffic.requests == [
            ("POST", "/api/validate-yaml"),
            ("GET", "/api/datasets/org/none/refs"),  # the path, without its query
        ]
        assert hub.traffic.bytes_received == len(body)  # counted as read, before the answer
        # the bytes sent are counted once written, which may be just after the client has them
        sent = len(answer.content) + len(refs.content)
        deadline = time.monotonic() + 5
        while hub.traffic.bytes_sent < sent and time.monotonic() < deadline:
            time.sleep(0.01)
        assert hub.traffic.bytes_sent == sent


def test_traffic_count_selects_by_method_and_pattern() -> None:
    traffic = HubTraffic(
        requests=[("PUT", "/lfs/aa"), ("PUT", "/lfs/bb/verify"), ("POST", "/lfs/aa")]
    )
    assert traffic.count("PUT", r"^/lfs/") == 2
    assert traffic.count("PUT", r"^/lfs/[a-z]+$") == 1
    assert traffic.count("POST", r"verify") == 0
    assert traffic.count("GET", r"") == 0


def test_parallel_requests_are_each_counted_once(hub: HubServer) -> None:
    before = hub.traffic.count("POST", r"^/api/repos/create$")
    statuses: list[int] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        body = {"type": "dataset", "organization": "org", "name": f"par{i}"}
        answer = requests.post(f"{hub.url}/api/repos/create", json=body, headers=AUTH, timeout=10)
        with lock:
            statuses.append(answer.status_code)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 8
    assert hub.traffic.count("POST", r"^/api/repos/create$") - before == 8
    assert all(hub.store.repo(f"org/par{i}") is not None for i in range(8))


@pytest.mark.timeout(20)
def test_a_server_never_started_stops_at_once_and_frees_its_port(tmp_path: Path) -> None:
    """stop() once waited forever for a serving loop that never ran."""
    hub = HubServer(tmp_path)
    port = int(hub.url.rsplit(":", 1)[1])
    hub.stop()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # the port is free again
