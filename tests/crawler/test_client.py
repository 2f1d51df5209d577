from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from crawler_support import (
    SINCE,
    TOKENS,
    UNTIL,
    comparable,
    keys,
    make_client,
    repo_names,
    run_crawl,
    store_records,
    world_truth,
)

from gharuntime.crawler.client import BadCredentials, GitHubClient, Token, TokenPool
from gharuntime.crawler.crawl import CrawlOptions, crawl
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.crawler.redact import redact
from gharuntime.sim import END, Faults, ServerConfig, SimServer, World, serve
from gharuntime.sim.world import iso

DAY = 86400


def _headers(remaining: int, reset: int) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": "5000",
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": str(reset),
        "X-RateLimit-Resource": "core",
    }


def test_token_repr_hides_the_secret() -> None:
    assert "s3cret" not in repr(Token("s3cret-value", "token 1"))


def test_spent_account_is_skipped_for_its_other_tokens() -> None:
    a1, a2, b = Token("a1", "t1"), Token("a2", "t2"), Token("b", "t3")
    a1.account = a2.account = "user:alice"
    b.account = "user:bob"
    pool = TokenPool([a1, a2, b], clock=lambda: 1000.0)
    pool.exhaust(a1, "core", 2000.0)
    picked = {pool.pick("core")[0] for _ in range(6)}
    assert picked == {b}


def test_all_spent_means_wait_until_the_soonest_reset() -> None:
    a, b = Token("a", "t1"), Token("b", "t2")
    pool = TokenPool([a, b], clock=lambda: 1000.0)
    pool.update(a, _headers(0, 1300), "core")
    pool.update(b, _headers(0, 1100), "core")
    token, wait = pool.pick("core")
    assert token is None and wait == 100.0


def test_quota_is_per_resource() -> None:
    a = Token("a", "t1")
    pool = TokenPool([a], clock=lambda: 1000.0)
    pool.exhaust(a, "core", 2000.0)
    assert pool.pick("graphql") == (a, 0.0)


def test_reset_in_the_past_frees_the_account() -> None:
    now = [1000.0]
    a = Token("a", "t1")
    pool = TokenPool([a], clock=lambda: now[0])
    pool.update(a, _headers(0, 1010), "core")
    assert pool.pick("core")[0] is None
    now[0] = 1011.0
    assert pool.pick("core")[0] is a


def test_remaining_counts_each_account_once() -> None:
    a1, a2 = Token("a1", "t1"), Token("a2", "t2")
    a1.account = a2.account = "user:alice"
    pool = TokenPool([a1, a2], clock=lambda: 1000.0)
    pool.update(a1, _headers(4000, 2000), "core")
    pool.update(a2, _headers(3999, 2000), "core")
    assert pool.remaining("core") == 3999


# -- against the simulated GitHub ---------------------------------------------------------------
def test_tokens_of_one_account_are_grouped(crawl_server: SimServer) -> None:
    client = make_client(crawl_server.url)
    client.identify()
    accounts = [t.account for t in client.pool.tokens]
    assert accounts[0] == accounts[1] != accounts[2]


def test_bad_token_names_the_problem_never_the_token(crawl_server: SimServer) -> None:
    secret = "ghp_" + "notvalid" + "Z" * 28
    client = GitHubClient(crawl_server.url, [Token(secret, "token 1 (--token-file line 1)")])
    with pytest.raises(BadCredentials) as info:
        client.identify()
    message = str(info.value)
    assert "401" in message and "token 1 (--token-file line 1)" in message
    assert secret not in message and "notvalid" not in message


def test_faults_leave_the_same_store_as_a_fault_free_crawl(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    names = repo_names(crawl_world)
    run_crawl(tmp_path / "clean", crawl_server.url, names, per_page=7)  # pages: repeats
    faults = Faults(
        seed=3,
        error_500=0.04,
        error_502=0.03,
        error_503=0.03,
        reset=0.04,
        truncate=0.05,
        repeat=0.3,
    )
    config = ServerConfig(tokens=TOKENS, faults=faults, secondary=(40, 1.0), secondary_block_s=0.3)
    with serve(crawl_world, config) as faulty:
        events: list[CrawlEvent] = []
        run_crawl(tmp_path / "faulty", faulty.url, names, events=events, per_page=7)
        count = faulty.recorder.fault_count
        injected = {
            "5xx": count("error_500") + count("error_502") + count("error_503"),
            **{k: count(k) for k in ("reset", "truncate", "repeat")},
        }
        secondary = faulty.recorder.count(status=403)
    assert all(injected.values()) and secondary > 0, (injected, secondary)
    clean = _portable(store_records(tmp_path / "clean"), crawl_server.url)
    assert _portable(store_records(tmp_path / "faulty"), faulty.url) == clean


def test_exhausted_quota_waits_for_the_reset_then_finishes(
    crawl_world: World, tmp_path: Path
) -> None:
    names = repo_names(crawl_world)[:4]
    config = ServerConfig(tokens=TOKENS, rate_limit=15, window_s=1.5)
    events: list[CrawlEvent] = []
    with serve(crawl_world, config) as server:
        run_crawl(tmp_path / "limited", server.url, names, events=events)
        refused = server.recorder.count(status=403)
        url = server.url
    with serve(crawl_world, ServerConfig(tokens=TOKENS)) as free:
        run_crawl(tmp_path / "free", free.url, names)
        free_url = free.url
    waits = [e for e in events if e.kind == "wait" and "quota" in e.data["reason"]]
    assert waits and refused <= 2 * len(waits) + 4  # no hammering while spent
    assert _portable(store_records(tmp_path / "limited"), url) == _portable(
        store_records(tmp_path / "free"), free_url
    )


def test_truncated_responses_are_retried_then_reported(crawl_world: World, tmp_path: Path) -> None:
    name = repo_names(crawl_world, public_only=True)[0]
    config = ServerConfig(tokens=TOKENS, faults=Faults(truncate=1.0))
    with serve(crawl_world, config) as server:
        client = make_client(server.url, max_retries=2)
        opts = CrawlOptions(repos=[name], since=SINCE, until=UNTIL)
        result = crawl(tmp_path, opts, client)
        served = server.recorder.count("repos/get")
    assert served == 3  # one try and two retries
    [failure] = result.failures
    assert failure["what"] == "repository" and "truncated" in failure["message"]
    assert store_records(tmp_path)[("error", f"repository:{name}")]["where"] == name
    assert not result.finished


def test_a_new_window_revalidates_repositories_with_etags(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    names = repo_names(crawl_world, public_only=True)
    client = make_client(crawl_server.url)
    crawl(tmp_path, CrawlOptions(repos=names, since=SINCE, until=UNTIL), client)
    before = crawl_server.recorder.count(status=304)
    later = make_client(crawl_server.url)  # a new process: ETags come from the store
    result = crawl(
        tmp_path, CrawlOptions(repos=names, since=iso(END - 90 * DAY), until=SINCE), later
    )
    assert crawl_server.recorder.count(status=304) - before == 2 * len(names)
    assert later.stats.not_modified == 2 * len(names) and not result.failures
    records = store_records(tmp_path)  # nothing stored twice, and the older runs added
    truth = world_truth(crawl_world, iso(END - 90 * DAY), UNTIL)
    assert keys(records, "run") == truth.runs


def test_logs_are_stored_redacted_with_expired_ones_marked(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    names = repo_names(crawl_world, public_only=True)[:5]
    since = iso(END - 110 * DAY)
    client = make_client(crawl_server.url)
    crawl(tmp_path, CrawlOptions(repos=names, since=since, until=UNTIL, logs=True), client)
    records = store_records(tmp_path)
    logs = {k: records[("log", k)] for k in keys(records, "log")}
    assert set(logs) == keys(records, "job")
    statuses = Counter(v["status"] for v in logs.values())
    assert statuses["ok"] > 0 and statuses["expired"] > 0  # runs older than 90 days
    for body in logs.values():
        if body["status"] == "ok":
            assert body["bytes"] >= 0 and body["text"] is not None
            assert redact(body["text"]) == body["text"]  # nothing left to redact
            assert not re.search(r"gh[pousr]_[A-Za-z0-9]{20,}", body["text"])


def test_logs_over_the_cap_are_too_large_with_their_size(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    names = repo_names(crawl_world, public_only=True)[:2]
    client = make_client(crawl_server.url)
    opts = CrawlOptions(repos=names, since=SINCE, until=UNTIL, logs=True, log_cap_bytes=2000)
    crawl(tmp_path, opts, client)
    records = store_records(tmp_path)
    big = [records[k] for k in records if k[0] == "log" and records[k]["status"] == "too_large"]
    assert big and all(b["bytes"] > 2000 and b["text"] is None for b in big)


def _portable(records: dict[tuple[str, str], Any], url: str) -> dict[tuple[str, str], Any]:
    """Records with the server's address taken out (two servers listen on two ports)."""
    import json

    return comparable(
        {k: json.loads(json.dumps(v).replace(url, "<api>")) for k, v in records.items()}
    )


def test_secondary_limits_are_waited_out_even_with_no_error_retries(
    crawl_world: World, tmp_path: Path
) -> None:
    names = repo_names(crawl_world, public_only=True)[:2]
    config = ServerConfig(tokens=TOKENS, secondary=(3, 0.4), secondary_block_s=0.05)
    with serve(crawl_world, config) as server:
        result = run_crawl(tmp_path, server.url, names, policy={"max_retries": 0})
        refused = server.recorder.count(status=403)
    assert refused > 0 and not result.failures  # no error budget at all, yet it finishes
    assert keys(store_records(tmp_path), "run")


def test_a_token_is_recognised_by_githubs_formats_never_quoted() -> None:
    from gharuntime.crawler.client import token_format_problem

    good = [
        "ghp_" + "A1b2" * 9,
        "github_pat_" + "a" * 22 + "_" + "B" * 59,
        "gho_" + "x" * 36,
        "ghu_" + "y" * 36,
        "ghs_" + "z9._-" * 10,  # GitHub App tokens may hold . and - and be longer
        "ghr_" + "r" * 76,
        "0123456789abcdef" * 2 + "01234567",  # a classic token: 40 hex digits
    ]
    for secret in good:
        assert token_format_problem(secret) is None, secret
    bad = [
        "/usr/local/bin:/usr/bin:/bin",
        "hunter2",
        "ghp_short",
        "ghx_" + "a" * 36,
        "0123456789abcdef" * 2 + "0123456",  # 39 hex digits
        "ghp_" + "a" * 36 + "/",
    ]
    for secret in bad:
        problem = token_format_problem(secret)
        assert problem is not None and secret not in problem, secret
