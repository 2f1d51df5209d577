from __future__ import annotations

from gharuntime.crawler.client import Token, TokenPool


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
