"""The simulated GitHub's rate limits, ETags and tokens, over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from gharuntime.sim import ServerConfig, SimServer, World, serve


class FakeClock:
    """A clock the test moves by hand, so window resets need no sleeping."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture()
def limited(sim_world: World, clock: FakeClock) -> Iterator[SimServer]:
    """A server with a 5-request hour shared by two tokens of one account, and a third account."""
    config = ServerConfig(
        tokens={"tok-a1": "alice", "tok-a2": "alice", "tok-b": "bob"}, rate_limit=5, clock=clock
    )
    with serve(sim_world, config) as server:
        yield server


def _get(
    server: SimServer, token: str, path: str = "/repos/nobody/nothing", **headers: str
) -> requests.Response:
    return requests.get(server.url + path, headers={"Authorization": f"token {token}", **headers})


def _repo_path(world: World) -> str:
    meta = next(m for m in world.metas() if not (m.private or m.old_name))
    return f"/repos/{meta.full_name}"


def test_every_response_carries_rate_limit_headers(limited: SimServer) -> None:
    r = _get(limited, "tok-a1")
    assert r.headers["X-RateLimit-Limit"] == "5"
    assert r.headers["X-RateLimit-Remaining"] == "4"
    assert r.headers["X-RateLimit-Used"] == "1"
    assert int(r.headers["X-RateLimit-Reset"]) == 1_000_000 + 3600
    assert r.headers["X-RateLimit-Resource"] == "core"


def test_tokens_of_one_account_share_its_quota(limited: SimServer) -> None:
    for _ in range(3):
        _get(limited, "tok-a1")
    assert _get(limited, "tok-a2").headers["X-RateLimit-Remaining"] == "1"
    assert _get(limited, "tok-b").headers["X-RateLimit-Remaining"] == "4"


def test_exhausted_quota_answers_403_until_the_reset(limited: SimServer, clock: FakeClock) -> None:
    for _ in range(5):
        _get(limited, "tok-a1")
    r = _get(limited, "tok-a2")
    assert r.status_code == 403 and "rate limit exceeded" in r.json()["message"]
    assert r.headers["X-RateLimit-Remaining"] == "0"
    clock.now += 3601
    assert _get(limited, "tok-a1").status_code == 404  # counted again: the repository is missing


def test_exhausted_quota_can_answer_429(sim_world: World, clock: FakeClock) -> None:
    with serve(sim_world, ServerConfig(rate_limit=1, exhausted_status=429, clock=clock)) as server:
        _get(server, "t")
        assert _get(server, "t").status_code == 429


def test_unknown_token_is_401_and_not_counted(limited: SimServer) -> None:
    assert _get(limited, "tok-zzz").status_code == 401
    assert limited.recorder.count(token="bad-token") == 1
    assert _get(limited, "tok-a1").headers["X-RateLimit-Used"] == "1"


def test_search_has_its_own_resource(limited: SimServer) -> None:
    r = _get(limited, "tok-a1", "/search/repositories?q=stars:>1")
    assert r.headers["X-RateLimit-Resource"] == "search" and r.headers["X-RateLimit-Limit"] == "30"


def test_graphql_counts_against_graphql(limited: SimServer) -> None:
    r = requests.post(
        limited.url + "/graphql",
        json={
            "query": 'query { r0: repository(owner: "a", name: "b") { object(expression: "x:y") { ... on Blob { oid } } } }'
        },
        headers={"Authorization": "bearer tok-b"},
    )
    assert r.headers["X-RateLimit-Resource"] == "graphql"


def test_rate_limit_endpoint_reports_without_counting(limited: SimServer) -> None:
    _get(limited, "tok-a1")
    body = _get(limited, "tok-a1", "/rate_limit").json()
    assert body["resources"]["core"] == {
        "limit": 5,
        "remaining": 4,
        "reset": 1_000_000 + 3600,
        "used": 1,
    }
    assert body["rate"]["used"] == 1


def test_matching_etag_answers_304_without_counting(limited: SimServer, sim_world: World) -> None:
    path = _repo_path(sim_world)
    first = _get(limited, "tok-a1", path)
    again = _get(limited, "tok-a1", path, **{"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["X-RateLimit-Used"] == "1"
    assert limited.recorder.not_modified == 1


def test_stale_etag_answers_200(limited: SimServer, sim_world: World) -> None:
    r = _get(limited, "tok-a1", _repo_path(sim_world), **{"If-None-Match": '"0000"'})
    assert r.status_code == 200


def test_secondary_limit_refuses_bursts_with_and_without_retry_after(
    sim_world: World, clock: FakeClock
) -> None:
    config = ServerConfig(secondary=(3, 1.0), secondary_block_s=5.0, clock=clock)
    with serve(sim_world, config) as server:
        refusals = []
        for _ in range(40):
            r = _get(server, "t")
            if r.status_code == 403:
                refusals.append(r)
        assert len(refusals) == 37
        assert all("secondary rate limit" in r.json()["message"] for r in refusals)
        with_retry = [r for r in refusals if "Retry-After" in r.headers]
        assert 0 < len(with_retry) < len(refusals)
        assert all(int(r.headers["Retry-After"]) == 5 for r in with_retry)
        clock.now += 6
        assert _get(server, "t").status_code == 404


def test_anonymous_requests_have_a_small_limit(sim_world: World, clock: FakeClock) -> None:
    with serve(sim_world, ServerConfig(anonymous_limit=2, clock=clock)) as server:
        codes = [requests.get(server.url + "/repos/nobody/nothing").status_code for _ in range(3)]
        assert codes == [404, 404, 403]


def test_recorder_counts_requests_by_endpoint_and_token_label(
    limited: SimServer, sim_world: World
) -> None:
    _get(limited, "tok-a1", _repo_path(sim_world))
    _get(limited, "tok-a2", _repo_path(sim_world))
    _get(limited, "tok-b", "/rate_limit")
    assert limited.recorder.count("repos/get") == 2
    assert (
        limited.recorder.count(token="alice#0") == 1
        and limited.recorder.count(token="alice#1") == 1
    )
    assert all("tok-" not in label for _, label in limited.recorder.requests)
