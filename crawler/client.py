"""A polite GitHub REST/GraphQL client: token pool, rate limits, retries, ETags.

Why not PyGithub: the crawler needs to see every response's rate-limit headers, pick the token per
request across accounts, stream logs with a size cap, and count requests by endpoint; a thin layer
over a `requests.Session` (injectable, like the base URL) does that in one place.

Tokens live only inside `Token` objects (their repr hides them) and in the Authorization header;
every message this module builds passes through a `Scrubber` that knows them.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from gharuntime.contract import SIMULATED_HEADER
from gharuntime.crawler.endpoints import endpoint_name, resource_of
from gharuntime.crawler.progress import CrawlEvent, CrawlStats, EventSink, ignore_events
from gharuntime.crawler.redact import Scrubber
from gharuntime.errors import GharuntimeError

__all__ = [
    "BadCredentials",
    "Cancelled",
    "CrawlError",
    "EtagCache",
    "GitHubClient",
    "LogDownload",
    "RequestFailed",
    "Response",
    "RetryPolicy",
    "Token",
    "TokenPool",
    "api_url_problem",
    "token_format_problem",
    "token_problem",
]

USER_AGENT = "gharuntime-crawler"
TRANSIENT = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
)


class CrawlError(GharuntimeError):
    """Base of the crawler's errors; messages never contain a token."""


class Cancelled(CrawlError):
    """The client was cancelled (the crawl is stopping)."""


class BadCredentials(CrawlError):
    """A token was rejected (401): the crawl cannot go on with it."""


class RequestFailed(CrawlError):
    """A request still failed after every retry; `where` is the request's path."""

    where: str

    def __init__(self, message: str, *, where: str, status: int | None, reason: str) -> None:
        super().__init__(message)
        self.where = where
        self.status = status
        self.reason = reason

    def __str__(self) -> str:
        # `where` is the request path, which callers show as a URL beside the message; the
        # base would put it before the message.
        return self.what


@dataclass
class RetryPolicy:
    """How hard to try. Delays are jittered: a uniform draw in [delay/2, delay]."""

    max_retries: int = 6
    backoff_base: float = 1.0  # first retry waits about this long
    backoff_cap: float = 60.0  # no single backoff is longer
    secondary_wait: float = 60.0  # a secondary limit without Retry-After (GitHub: at least 1 min)
    max_rate_limited: int = 50  # rate-limit refusals of one request before giving up
    max_reset_wait: float = 3900.0  # refuse to wait longer than this for a quota reset
    timeout: float = 60.0  # per request (connect and read)

    def backoff(self, attempt: int, rng: random.Random) -> float:
        delay: float = min(self.backoff_cap, self.backoff_base * (2.0**attempt))
        return delay * rng.uniform(0.5, 1.0)


def token_problem(secret: str) -> str | None:
    """Why `secret` cannot be sent as a token (None when it can). The answer never quotes it:
    an HTTP header value is printable ASCII, and a token holds no space (two tokens on one line)."""
    if not secret:
        return "is empty"
    if len(secret) > 1000:
        return f"is {len(secret):,} characters long; a GitHub token is under 300"
    if any(not 0x21 <= ord(ch) <= 0x7E for ch in secret):
        return (
            "holds a space, a control character or a non-ASCII character, which an HTTP header "
            "cannot carry; give one token a line"
        )
    return None


_GITHUB_TOKEN = re.compile(
    r"(?:(?:ghp|gho|ghu|ghs|ghr)_|github_pat_)[A-Za-z0-9._-]{20,}|[0-9a-fA-F]{40}"
)
"""GitHub's token formats: a type prefix (ghp_ personal access token, gho_ OAuth, ghu_ and ghs_
GitHub App user-to-server and server-to-server (GITHUB_TOKEN in Actions), ghr_ refresh,
github_pat_ fine-grained) then letters, digits and `_` (GitHub App tokens may also hold `.` and
`-` and grow longer), or a classic token of 40 hex digits."""


def token_format_problem(secret: str) -> str | None:
    """Why `secret` is not a GitHub token by its form (None when it looks like one), never
    quoting it: for a value taken from a place that may hold anything (an environment variable
    named on the command line), so a PATH or a password is never sent to the API."""
    problem = token_problem(secret)
    if problem:
        return problem
    if not _GITHUB_TOKEN.fullmatch(secret):
        return (
            "does not look like a GitHub token (one starts ghp_, github_pat_, gho_, ghu_, ghs_ "
            "or ghr_, or is 40 hex digits)"
        )
    return None


def api_url_problem(url: str) -> str | None:
    """Why `url` cannot be the API root (None when it can). A user:password in it is refused,
    not stored: it would end up in the raw store, the manifest and the dataset card."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{url!r} is not a URL ({exc})"
    del port
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http(s) URL, e.g. https://api.github.com"
    if parts.username is not None or parts.password is not None:
        return (
            "the URL holds a user or password; remove it and pass the token with --token-file "
            "or GITHUB_TOKEN"
        )
    if parts.query or parts.fragment:
        return f"{url!r}: an API root has no ?query or #fragment"
    if any(ord(ch) <= 0x20 or ord(ch) >= 0x7F for ch in url):
        return f"{url!a} holds spaces, control or non-ASCII characters"
    return None


class Token:
    """One token and what we know of its account. `repr` never shows the secret."""

    def __init__(self, secret: str, label: str) -> None:
        problem = token_problem(secret)
        if problem:
            raise ValueError(f"{label} {problem}")
        self._secret = secret
        self.label = label  # e.g. "token 2 (--token-file line 3)"
        self.account: str = label

    @property
    def secret(self) -> str:
        return self._secret

    def __repr__(self) -> str:
        return f"Token({self.label!r}, account={self.account!r})"


@dataclass
class _Quota:
    limit: int | None = None
    remaining: int | None = None
    reset: float = 0.0  # epoch seconds


class TokenPool:
    """Tokens grouped by account; tokens of one account share each resource's quota."""

    def __init__(self, tokens: Sequence[Token], clock: Callable[[], float] = time.time) -> None:
        self.tokens = list(tokens)
        self._clock = clock
        self._lock = threading.Lock()
        self._quota: dict[tuple[str, str], _Quota] = {}
        self._turn = 0

    def _q(self, account: str, resource: str) -> _Quota:
        return self._quota.setdefault((account, resource), _Quota())

    def pick(self, resource: str) -> tuple[Token | None, float]:
        """The token to use now (most quota left, round robin among equals), or the seconds to
        wait until some account's quota resets. With no tokens, requests go unauthenticated."""
        with self._lock:
            if not self.tokens:
                return None, 0.0
            now = self._clock()
            best: Token | None = None
            best_left = -1
            n = len(self.tokens)
            for i in range(n):
                tok = self.tokens[(self._turn + i) % n]
                q = self._q(tok.account, resource)
                if q.remaining is not None and q.remaining <= 0 and q.reset > now:
                    continue
                left = q.remaining if q.remaining is not None and q.reset > now else 1 << 30
                if left > best_left:
                    best, best_left = tok, left
            if best is not None:
                self._turn = (self._turn + 1) % n
                q = self._q(best.account, resource)
                if q.remaining is not None:
                    q.remaining -= 1  # reserve; the response headers correct it
                return best, 0.0
            soonest = min(self._q(t.account, resource).reset for t in self.tokens)
            return None, max(0.0, soonest - now)

    def update(self, token: Token | None, headers: Mapping[str, str], resource: str) -> None:
        """Learn the account's quota from a response's X-RateLimit-* headers."""
        if token is None or "X-RateLimit-Remaining" not in headers:
            return
        resource = headers.get("X-RateLimit-Resource", resource)
        try:
            remaining = int(headers["X-RateLimit-Remaining"])
            reset = float(headers.get("X-RateLimit-Reset", "0"))
            limit = int(headers["X-RateLimit-Limit"]) if "X-RateLimit-Limit" in headers else None
        except ValueError:
            return
        with self._lock:
            q = self._q(token.account, resource)
            if reset > q.reset or q.remaining is None:
                q.remaining, q.reset = remaining, reset
            else:
                q.remaining = min(q.remaining, remaining) if reset == q.reset else remaining
            q.limit = limit

    def exhaust(self, token: Token, resource: str, reset: float) -> None:
        """Mark the token's account out of quota until `reset`."""
        with self._lock:
            q = self._q(token.account, resource)
            q.remaining, q.reset = 0, max(reset, self._clock() + 1.0)

    def remaining(self, resource: str = "core") -> int | None:
        """Quota left across accounts (None until a response told us)."""
        with self._lock:
            now = self._clock()
            seen: dict[str, int] = {}
            for tok in self.tokens:
                q = self._quota.get((tok.account, resource))
                if q is not None and q.remaining is not None:
                    seen[tok.account] = q.remaining if q.reset > now else (q.limit or q.remaining)
            return sum(seen.values()) if seen else None


class EtagCache:
    """URL -> (ETag, body) for conditional requests; `dirty()` hands new entries to the store."""

    def __init__(self, entries: Mapping[str, tuple[str, Any]] | None = None) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[str, Any]] = dict(entries or {})
        self._dirty: dict[str, tuple[str, Any]] = {}

    def get(self, url: str) -> tuple[str, Any] | None:
        with self._lock:
            return self._entries.get(url)

    def put(self, url: str, etag: str, body: Any) -> None:
        with self._lock:
            self._entries[url] = (etag, body)
            self._dirty[url] = (etag, body)

    def dirty(self) -> dict[str, tuple[str, Any]]:
        """Entries added since the last call."""
        with self._lock:
            out, self._dirty = self._dirty, {}
            return out


@dataclass
class Response:
    """A finished exchange: status, parsed JSON body (None when not JSON) and where it ended."""

    status: int
    body: Any
    headers: Mapping[str, str]
    url: str
    redirected_from: list[str] = field(default_factory=list)
    from_cache: bool = False


@dataclass
class LogDownload:
    """A job log: `status` ok | expired | missing | too_large, `bytes` (None when unknown)."""

    status: str
    bytes: int | None
    text: str | None


class GitHubClient:
    """Sends requests with retries, quota awareness and token rotation; counts what it does."""

    def __init__(
        self,
        api_url: str = "https://api.github.com",
        tokens: Sequence[Token] = (),
        *,
        session: requests.Session | None = None,
        policy: RetryPolicy | None = None,
        stats: CrawlStats | None = None,
        on_event: EventSink = ignore_events,
        etags: EtagCache | None = None,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.time,
        seed: int | None = None,
        on_response: Callable[[], None] | None = None,
    ) -> None:
        problem = api_url_problem(api_url)
        if problem:
            raise ValueError(f"api_url: {problem}")
        self.api_url = api_url.rstrip("/")
        self.pool = TokenPool(tokens, clock=clock)
        self.session = session or requests.Session()
        self.policy = policy or RetryPolicy()
        self.stats = stats or CrawlStats()
        self.on_event = on_event
        self.etags = etags
        self.scrub = Scrubber(t.secret for t in tokens)
        self._stop = threading.Event()
        self._sleep = sleep if sleep is not None else self._interruptible_sleep
        self._clock = clock
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self.on_response = on_response  # called after every HTTP response (test hooks)
        self._secondary_hits = 0
        # Set once any response carries SIMULATED_HEADER: the API is gharuntime's simulated
        # GitHub, and what the crawl stores is synthetic.
        self.simulated = False
        # The server's clock (its Date header, first seen): "now" for the crawl's default window,
        # so a crawl of a server with a fixed clock (the simulated GitHub's world ends at a fixed
        # END) covers the same runs whatever day it runs.
        self.server_now: datetime | None = None

    # -- plumbing -----------------------------------------------------------------------------
    def cancel(self) -> None:
        """Wake every waiting request and make each raise Cancelled (the crawl is stopping)."""
        self._stop.set()

    def _interruptible_sleep(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else self.api_url + path

    def _headers(self, token: Token | None, extra: Mapping[str, str] | None) -> dict[str, str]:
        h = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": USER_AGENT,
        }
        if token is not None:
            h["Authorization"] = f"Bearer {token.secret}"
        h.update(extra or {})
        return h

    def _delay(self, attempt: int) -> float:
        with self._rng_lock:
            return self.policy.backoff(attempt, self._rng)

    def _wait(self, seconds: float, reason: str) -> None:
        if seconds <= 0:
            return
        self.on_event(CrawlEvent("wait", {"seconds": round(seconds, 3), "reason": reason}))
        self.stats.count_wait(seconds)
        self._sleep(seconds)
        if self._stop.is_set():
            raise Cancelled("the crawl is stopping")

    def _retry(self, endpoint: str, reason: str, attempt: int, delay: float | None = None) -> None:
        delay = self._delay(attempt) if delay is None else delay
        self.stats.count_retry(reason)
        self.on_event(
            CrawlEvent("retry", {"endpoint": endpoint, "reason": reason, "delay": round(delay, 3)})
        )
        self._wait(delay, f"retry after {reason}")

    def _acquire(self, resource: str) -> Token | None:
        while True:
            token, wait = self.pool.pick(resource)
            if token is not None or wait <= 0:
                return token
            if wait > self.policy.max_reset_wait:
                raise RequestFailed(
                    f"every token's {resource} quota is spent and the reset is {wait:.0f} s away",
                    where=resource,
                    status=None,
                    reason="quota",
                )
            self._wait(wait + 1.0, f"{resource} quota spent; waiting for its reset")

    def _fail(self, what: str, path: str, status: int | None, reason: str) -> RequestFailed:
        return RequestFailed(self.scrub(what), where=self.scrub(path), status=status, reason=reason)

    # -- the one request loop ------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        use_etag: bool = False,
        expect_json: bool = True,
        allow_redirects: bool = True,
        ok_statuses: Sequence[int] = (),
    ) -> Response:
        """Send one logical request, retrying transient trouble; return the final response.

        Retried: connection errors, resets, truncated or malformed bodies, 5xx, secondary rate
        limits (honouring Retry-After), and a spent primary quota (another token, or a wait for
        the reset). Raised: BadCredentials on 401, RequestFailed once retries are used up.
        Other 4xx (404, 410, 409, ...) are returned for the caller to judge.
        """
        url = self.url(path)
        endpoint = endpoint_name(urlsplit(url).path[len(urlsplit(self.api_url).path) :] or path)
        resource = resource_of(path)
        cached = self.etags.get(url + _query(params)) if use_etag and self.etags else None
        attempt = 0  # tries lost to errors (5xx, resets, bad bodies)
        limited = 0  # tries refused by a rate limit: polite waits, not errors
        while True:
            if self._stop.is_set():
                raise Cancelled("the crawl is stopping")
            token = self._acquire(resource)
            extra = {"If-None-Match": cached[0]} if cached else None
            try:
                resp = self.session.request(
                    method,
                    url,
                    params=params,
                    json=json_body,
                    headers=self._headers(token, extra),
                    timeout=self.policy.timeout,
                    allow_redirects=allow_redirects,
                )
                content = resp.content  # reads the whole body: truncation raises here
            except TRANSIENT as exc:
                self.stats.count_request(endpoint, 0)
                reason, what = _transient_reason(exc)
                if attempt >= self.policy.max_retries:
                    raise self._fail(
                        f"{endpoint}: {what} after {attempt + 1} tries", path, None, reason
                    ) from None
                self._retry(endpoint, reason, attempt)
                attempt += 1
                continue
            if self.on_response is not None:
                self.on_response()
            if resp.headers.get(SIMULATED_HEADER) == "1":
                self.simulated = True
            if self.server_now is None and resp.headers.get("Date"):
                self.server_now = _http_date(resp.headers["Date"])
            status = resp.status_code
            self.stats.count_request(endpoint, status)
            self.on_event(CrawlEvent("request", {"endpoint": endpoint, "status": status}))
            self.pool.update(token, resp.headers, resource)
            if status == 401:
                who = token.label if token else "the anonymous request"
                raise BadCredentials(
                    f"{who} was rejected by {self.api_url} (401 Bad credentials): the token is "
                    "wrong, expired or revoked. Replace it in --token-file or GITHUB_TOKEN."
                )
            if status in (403, 429) and status not in ok_statuses:
                wait = self._rate_limited(resp, token, resource)
                if wait is not None:
                    if limited >= self.policy.max_rate_limited:
                        raise self._fail(
                            f"{endpoint}: still rate limited after {limited + 1} tries",
                            path,
                            status,
                            "rate-limit",
                        )
                    if wait > 0:
                        self._retry(endpoint, "secondary-limit", limited, wait)
                    else:
                        self.stats.count_retry("primary-limit")
                    limited += 1
                    continue
            if status >= 500:
                if attempt >= self.policy.max_retries:
                    raise self._fail(
                        f"{endpoint}: HTTP {status} after {attempt + 1} tries", path, status, "5xx"
                    )
                self._retry(endpoint, f"http-{status}", attempt)
                attempt += 1
                continue
            if status == 304 and cached is not None:
                # Not modified: the cached body stands in for a 200 (and cost no quota).
                return Response(200, cached[1], resp.headers, resp.url, from_cache=True)
            body: Any = None
            if expect_json and 200 <= status < 300:
                try:
                    body = json.loads(content)
                except ValueError:
                    if attempt >= self.policy.max_retries:
                        raise self._fail(
                            f"{endpoint}: malformed JSON body after {attempt + 1} tries",
                            path,
                            status,
                            "malformed",
                        ) from None
                    self._retry(endpoint, "malformed", attempt)
                    attempt += 1
                    continue
                if use_etag and self.etags is not None and resp.headers.get("ETag"):
                    self.etags.put(url + _query(params), resp.headers["ETag"], body)
            elif expect_json and content:
                try:
                    body = json.loads(content)
                except ValueError:
                    body = None
            self._secondary_hits = 0
            redirected = [r.url for r in resp.history if r.status_code in (301, 302, 307, 308)]
            return Response(status, body, resp.headers, resp.url, redirected)

    def _rate_limited(
        self, resp: requests.Response, token: Token | None, resource: str
    ) -> float | None:
        """Seconds to wait before retrying (0: switch token now), or None if not a rate limit."""
        h = resp.headers
        retry_after = h.get("Retry-After")
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                return self.policy.secondary_wait
        if h.get("X-RateLimit-Remaining") == "0":
            reset = float(h.get("X-RateLimit-Reset", "0") or 0)
            if token is not None:
                self.pool.exhaust(token, h.get("X-RateLimit-Resource", resource), reset)
                return 0.0
            return max(1.0, reset - self._clock())
        text = resp.text.lower() if resp.content else ""
        if "rate limit" in text or resp.status_code == 429:
            # GitHub: wait at least a minute, longer each time it happens again.
            self._secondary_hits += 1
            factor: float = min(8.0, 2.0 ** (self._secondary_hits - 1))
            return self.policy.secondary_wait * factor
        return None

    # -- conveniences -------------------------------------------------------------------------
    def get(self, path: str, params: Mapping[str, Any] | None = None, **kw: Any) -> Response:
        return self.request("GET", path, params=params, **kw)

    def graphql(self, query: str) -> Any:
        """POST a GraphQL query; returns `data`. Errors without data are retried, then raised."""
        for attempt in range(self.policy.max_retries + 1):
            resp = self.request("POST", "/graphql", json_body={"query": query})
            body = resp.body if isinstance(resp.body, dict) else None
            if resp.status == 200 and body is not None and isinstance(body.get("data"), dict):
                return body["data"]
            if resp.status == 200 and attempt < self.policy.max_retries:
                self._retry("graphql", "graphql-error", attempt)
                continue
            detail = ""
            if body and body.get("errors"):
                detail = ": " + "; ".join(str(e.get("message", e)) for e in body["errors"][:3])
            raise self._fail(
                f"graphql: HTTP {resp.status}{detail}", "/graphql", resp.status, "graphql"
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def identify(self) -> None:
        """Learn which tokens share an account (and so a quota).

        GET /user names each token's account. Where that is not served (an app token, a server
        without /user), tokens are grouped by experiment: /rate_limit (free) shows each token's
        `used` count; one counted request with a token raises it for exactly the tokens of that
        account. A 401 on any token raises BadCredentials.
        """
        unknown: list[Token] = []
        for token in self.pool.tokens:
            resp = self._single(token, "/user")
            if resp.status == 200 and isinstance(resp.body, dict) and resp.body.get("login"):
                token.account = f"user:{resp.body['login']}"
            else:
                unknown.append(token)
                self._used(token)  # free; checks the token (401) where /user is not served
        while len(unknown) > 1:
            before = {t.label: self._used(t) for t in unknown}
            lead = unknown[0]
            self._single(lead, "/repos/gharuntime-crawler/account-probe")
            after = {t.label: self._used(t) for t in unknown}
            same = [
                t
                for t in unknown
                if before[t.label] is not None
                and after[t.label] is not None
                and after[t.label] > before[t.label]  # type: ignore[operator]
            ]
            if lead not in same:
                return  # the server does not count as GitHub does: keep tokens apart
            for t in same:
                t.account = f"shares:{lead.label}"
            unknown = [t for t in unknown if t not in same]

    def _used(self, token: Token) -> int | None:
        resp = self._single(token, "/rate_limit")
        try:
            return int(resp.body["resources"]["core"]["used"])
        except (TypeError, KeyError, ValueError):
            return None

    def _single(self, token: Token, path: str) -> Response:
        """A request made with one given token (for identification)."""
        saved = self.pool.tokens
        self.pool.tokens = [token]
        try:
            return self.get(path, ok_statuses=(403,))
        finally:
            self.pool.tokens = saved

    def download_log(self, path: str, cap_bytes: int) -> LogDownload:
        """Follow the 302 of a job-log request and stream the text, stopping at `cap_bytes`.

        404/410 (GitHub keeps logs 90 days) come back as `expired`; a log over the cap as
        `too_large` with its size when the server states it, and no text (a truncated log would
        pass for a complete one).
        """
        status, size, data = self.download(path, cap_bytes, "job_logs")
        text = data.decode("utf-8", errors="replace") if data is not None else None
        return LogDownload(status, size, text)

    def download(
        self, path: str, cap_bytes: int, what: str
    ) -> tuple[str, int | None, bytes | None]:
        """(status, size, bytes) of a download GitHub answers with a 302 to a blob (a job's log,
        a run attempt's log archive): `ok`, `expired` (404/410) or `too_large` (no bytes)."""
        resp = self.get(path, allow_redirects=False, expect_json=False)
        if resp.status in (404, 410):
            return "expired", None, None
        location = resp.headers.get("Location")
        if resp.status == 200:  # a server that answers in place
            location = resp.url
        if resp.status not in (200, 301, 302, 303, 307) or not location:
            raise self._fail(f"{what}: HTTP {resp.status}", path, resp.status, "log")
        location = urljoin(self.url(path), location)
        for attempt in range(self.policy.max_retries + 1):
            try:
                # A pre-signed blob URL: never send a token there.
                with self.session.get(
                    location,
                    stream=True,
                    timeout=self.policy.timeout,
                    headers={"User-Agent": USER_AGENT},
                ) as blob:
                    self.stats.count_request("log_blob", blob.status_code)
                    if self.on_response is not None:
                        self.on_response()
                    if blob.status_code in (404, 410):
                        return "expired", None, None
                    if blob.status_code >= 500:
                        raise requests.ConnectionError(f"HTTP {blob.status_code}")
                    if blob.status_code != 200:
                        raise self._fail(
                            f"log blob: HTTP {blob.status_code}", path, blob.status_code, "log"
                        )
                    stated = blob.headers.get("Content-Length")
                    size = int(stated) if stated and stated.isdigit() else None
                    if size is not None and size > cap_bytes:
                        return "too_large", size, None
                    chunks: list[bytes] = []
                    got = 0
                    for chunk in blob.iter_content(64 * 1024):
                        got += len(chunk)
                        if got > cap_bytes:
                            return "too_large", size, None
                        chunks.append(chunk)
                    if size is not None and got != size:
                        raise requests.exceptions.ChunkedEncodingError("short log body")
                    data = b"".join(chunks)
                    return "ok", len(data), data
            except TRANSIENT:
                if attempt >= self.policy.max_retries:
                    raise self._fail(
                        "log blob: connection failed", path, None, "connection"
                    ) from None
                self._retry("log_blob", "connection", attempt)
        raise AssertionError("unreachable")  # pragma: no cover


def _transient_reason(exc: Exception) -> tuple[str, str]:
    """(short reason for counters, phrase for messages) of a transient failure."""
    if isinstance(
        exc, (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)
    ):
        return "truncated", "truncated or undecodable response body"
    if isinstance(exc, requests.Timeout):
        return "timeout", "timed out"
    return "connection", "connection failed or was reset"


def _http_date(text: str) -> datetime | None:
    """An HTTP Date header as an aware UTC datetime; None when it does not parse."""
    try:
        return email.utils.parsedate_to_datetime(text).astimezone(timezone.utc)
    except (TypeError, ValueError):
        return None


def _query(params: Mapping[str, Any] | None) -> str:
    if not params:
        return ""
    return "?" + "&".join(f"{k}={params[k]}" for k in sorted(params))
