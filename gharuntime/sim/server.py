"""The simulated GitHub's HTTP server: GitHub's REST endpoints the crawler uses (and the GraphQL
blob query), served from a `World` on 127.0.0.1 with GitHub's pagination, filters, caps, rate
limits, ETags, redirects and errors, plus seeded fault injection and a request recorder.

    with serve(World(seed=1, scale="small")) as gh:
        requests.get(gh.url + "/repos/OWNER/NAME", headers={"Authorization": "Bearer t"})
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import json
import re
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from gharuntime.contract import SIMULATED_HEADER
from gharuntime.sim.api import DOCS, Answer, error, rate_limit_body, respond
from gharuntime.sim.faults import REQUEST_FAULTS, Faults, Recorder
from gharuntime.sim.payloads import Payloads
from gharuntime.sim.ratelimit import Quota, RateLimiter
from gharuntime.sim.world import (
    END,
    RepoWorld,
    SimRepo,
    World,
)

__all__ = ["ServerConfig", "SimServer", "serve"]


@dataclass(frozen=True)
class ServerConfig:
    """How the simulated GitHub behaves.

    tokens: token → account name; tokens of one account share its quota. None accepts any
    token, each as its own account. Requests without a token use the "anonymous" account with
    `anonymous_limit` requests per window.
    """

    tokens: Mapping[str, str] | None = None
    rate_limit: int = 5000
    search_limit: int = 30
    graphql_limit: int = 5000
    anonymous_limit: int = 60
    window_s: float = 3600.0
    exhausted_status: int = 403
    secondary: tuple[int, float] | None = None
    secondary_block_s: float = 2.0
    faults: Faults = field(default_factory=Faults)
    clock: Callable[[], float] = time.time
    # GraphQL's Blob.text is cut short (isTruncated: true) above this many bytes; GitHub does
    # not document its limit, so by default nothing is cut (tests set it to exercise fallback)
    graphql_text_limit: int | None = None


_REPO = r"(?:/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)|/repositories/(?P<rid>\d+))"
_ROUTES: list[tuple[str, re.Pattern[str], str, str]] = [
    (m, re.compile(p + r"/?$"), name, res)
    for m, p, name, res in (
        ("GET", r"/rate_limit", "rate-limit/get", "none"),
        ("GET", r"/search/repositories", "search/repos", "search"),
        ("POST", r"/graphql", "graphql", "graphql"),
        ("GET", r"/_blobs/logs/(?P<job>\d+)", "blob/logs", "none"),
        ("GET", r"/users/(?P<login>[^/]+)", "users/get-by-username", "core"),
        ("GET", r"/_blobs/run-logs/(?P<run>\d+)/(?P<att>\d+)", "blob/run-logs", "none"),
        ("GET", _REPO, "repos/get", "core"),
        ("GET", _REPO + r"/actions/workflows", "actions/list-repo-workflows", "core"),
        ("GET", _REPO + r"/actions/workflows/(?P<wf>[^/]+)", "actions/get-workflow", "core"),
        (
            "GET",
            _REPO + r"/actions/workflows/(?P<wf>[^/]+)/runs",
            "actions/list-workflow-runs",
            "core",
        ),
        ("GET", _REPO + r"/actions/runs", "actions/list-workflow-runs-for-repo", "core"),
        ("GET", _REPO + r"/actions/runs/(?P<run>\d+)", "actions/get-workflow-run", "core"),
        (
            "GET",
            _REPO + r"/actions/runs/(?P<run>\d+)/timing",
            "actions/get-workflow-run-usage",
            "core",
        ),
        (
            "GET",
            _REPO + r"/actions/runs/(?P<run>\d+)/attempts/(?P<att>\d+)",
            "actions/get-workflow-run-attempt",
            "core",
        ),
        (
            "GET",
            _REPO + r"/actions/runs/(?P<run>\d+)/jobs",
            "actions/list-jobs-for-workflow-run",
            "core",
        ),
        (
            "GET",
            _REPO + r"/actions/runs/(?P<run>\d+)/attempts/(?P<att>\d+)/jobs",
            "actions/list-jobs-for-workflow-run-attempt",
            "core",
        ),
        (
            "GET",
            _REPO + r"/actions/runs/(?P<run>\d+)/attempts/(?P<att>\d+)/logs",
            "actions/download-workflow-run-attempt-logs",
            "core",
        ),
        ("GET", _REPO + r"/actions/jobs/(?P<job>\d+)", "actions/get-job-for-workflow-run", "core"),
        (
            "GET",
            _REPO + r"/actions/jobs/(?P<job>\d+)/logs",
            "actions/download-job-logs-for-workflow-run",
            "core",
        ),
        ("GET", _REPO + r"/contents/(?P<path>.+?)", "repos/get-content", "core"),
        ("GET", _REPO + r"/commits/(?P<ref>[^/]+)", "repos/get-commit", "core"),
    )
]


class _QuietHTTPServer(ThreadingHTTPServer):
    """A client that hangs up mid-request (a killed crawler, a test's reset) is normal here:
    drop the connection without printing a traceback; anything else still reports."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)):
            return
        super().handle_error(request, client_address)


class SimServer:
    """A running simulated GitHub. Use `serve()` rather than building one directly."""

    def __init__(
        self, world: World, config: ServerConfig, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.world = world
        self.config = config
        self.graphql_text_limit = config.graphql_text_limit
        self.recorder = Recorder()
        self.limiter = RateLimiter(
            {
                "core": (config.rate_limit, config.window_s),
                "search": (config.search_limit, 60.0),
                "graphql": (config.graphql_limit, config.window_s),
                "anonymous": (config.anonymous_limit, config.window_s),
            },
            exhausted_status=config.exhausted_status,
            secondary=config.secondary,
            secondary_block_s=config.secondary_block_s,
            seed=config.faults.seed,
            clock=config.clock,
        )
        self._occurrences: Counter[str] = Counter()
        self.expired_jobs: set[int] = set()  # logs answered 410 (they stay expired)
        self._token_labels: dict[str, str] = {}
        self._lock = threading.Lock()
        self._metas: list[SimRepo] | None = None
        self._httpd = _QuietHTTPServer((host, port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._httpd.request_queue_size = 128
        self.url = f"http://{host}:{self._httpd.server_address[1]}"
        self.payloads = Payloads(self.url)
        self._thread: threading.Thread | None = None
        self._serving = False  # a serve_forever loop was started: only then can shutdown() wait

    # ----- lifecycle ----------------------------------------------------------------------
    def start(self) -> str:
        self._serving = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="sim-github", daemon=True
        )
        self._thread.start()
        return self.url

    def stop(self) -> None:
        """Stop serving and close the socket; a server never started is only closed
        (socketserver's shutdown() would wait forever for a loop that never ran)."""
        if self._serving:
            self._httpd.shutdown()
            self._serving = False
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted; the socket is closed on the way out (the port
        is free again, and an in-process caller leaks no socket)."""
        self._serving = True
        try:
            self._httpd.serve_forever()
        finally:
            self._httpd.server_close()

    # ----- identity -------------------------------------------------------------------------
    def account(self, authorization: str | None) -> tuple[str, str]:
        """(account, token label) for an Authorization header; raises 401 on a bad token."""
        if not authorization:
            return "anonymous", "anonymous"
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() not in ("token", "bearer") or not token:
            raise error(401, "Bad credentials")
        with self._lock:
            label = self._token_labels.get(token)
            if label is None:
                tokens = self.config.tokens
                if tokens is None:
                    label = f"token#{len(self._token_labels)}"
                elif token in tokens:
                    account = tokens[token]
                    n = sum(1 for t in self._token_labels.values() if t.startswith(account + "#"))
                    label = f"{account}#{n}"
                else:
                    raise error(401, "Bad credentials")
                self._token_labels[token] = label
        return label.rsplit("#", 1)[0] if self.config.tokens is not None else label, label

    def occurrence(self, key: str) -> int:
        with self._lock:
            self._occurrences[key] += 1
            return self._occurrences[key]

    # ----- lookups --------------------------------------------------------------------------
    def repo(self, groups: Mapping[str, str | None], rest: str) -> RepoWorld:
        if groups.get("rid"):
            index = self.world.index_of_id("repo", int(groups["rid"] or 0))
            if index is None or self.world.meta(index).private:
                raise error(404, "Not Found")
            return self.world.repo(index)
        full = f"{unquote(groups['owner'] or '')}/{unquote(groups['repo'] or '')}"
        found = self.world.lookup(full)
        if found is None or self.world.meta(found[0]).private:
            raise error(404, "Not Found")
        index, renamed = found
        if renamed:
            meta = self.world.meta(index)
            where = f"{self.url}/repositories/{meta.id}{rest}"
            raise Answer(
                301,
                {"message": "Moved Permanently", "url": where, "documentation_url": DOCS},
                {"Location": where},
            )
        return self.world.repo(index)

    def metas(self) -> list[SimRepo]:
        if self._metas is None:
            self._metas = [m for m in self.world.metas() if not m.private]
        return self._metas


MAX_BODY_BYTES = 1 << 20  # the largest request body (a GraphQL query) the server reads


def _make_handler(server: SimServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out in separate writes
        wbufsize = 1 << 16  # ...so buffer them into one, flushed per response
        server_version = "gharuntime-sim"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: and a request line never carries a token anyway

        def date_time_string(self, timestamp: float | None = None) -> str:
            # The Date header is the world's "now" (END), whatever the wall clock says: a
            # crawler's default window ("the last 90 days" of the server's clock) then covers the
            # same runs on any day.
            return email.utils.formatdate(END, usegmt=True)

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            """The errors http.server answers itself (414 URI too long, 431 headers too large,
            501 unsupported method, 400 bad request line) in GitHub's JSON, not HTML."""
            self.close_connection = True
            data = json.dumps(
                {"message": message or HTTPStatus(code).phrase, "documentation_url": DOCS}
            ).encode()
            try:
                self.send_response(code, message)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                if self.command != "HEAD" and code >= 200 and code not in (204, 304):
                    self.wfile.write(data)
            except OSError:
                pass

        def do_GET(self) -> None:
            self._dispatch("GET")

        def do_POST(self) -> None:
            self._dispatch("POST")

        def _dispatch(self, method: str) -> None:
            split = urlsplit(self.path)
            path = split.path
            query = parse_qs(split.query, keep_blank_values=True)
            raw_length = self.headers.get("Content-Length") or "0"
            length = int(raw_length) if raw_length.isdigit() and len(raw_length) < 12 else -1
            if length < 0 or length > MAX_BODY_BYTES:
                # GitHub answers a bad or huge Content-Length with 400 and closes the connection
                self.close_connection = True
                self._send(
                    400,
                    {
                        "message": "Problems parsing request: bad Content-Length",
                        "documentation_url": DOCS,
                    },
                    {"Connection": "close"},
                    "unknown",
                    "-",
                    None,
                    None,
                )
                return
            body = self.rfile.read(length) if length else b""
            route = None
            for m, pattern, name, resource in _ROUTES:
                if m == method:
                    match = pattern.match(path)
                    if match:
                        route = (name, resource, match.groupdict())
                        break
            if route is None:
                self._send(
                    404,
                    {"message": "Not Found", "documentation_url": DOCS},
                    {},
                    "unknown",
                    "-",
                    None,
                    None,
                )
                return
            name, resource, groups = route
            try:
                account, label = server.account(self.headers.get("Authorization"))
            except Answer as exc:
                self._send(exc.status, exc.body, exc.headers, name, "bad-token", None, None)
                return
            if account == "anonymous" and resource != "none":
                resource = "anonymous"
            fault = None
            if server.config.faults.any and (
                resource != "none" or name in ("blob/logs", "blob/run-logs")
            ):
                kinds: tuple[str, ...] = REQUEST_FAULTS
                if name.startswith("actions/list") or name == "search/repos":
                    kinds += ("repeat",)
                if name == "actions/download-job-logs-for-workflow-run":
                    kinds += ("expire",)
                fault = server.config.faults.draw(
                    f"{method} {self.path}", server.occurrence(f"{method} {self.path}"), kinds
                )
            if fault == "reset":
                server.recorder.record(name, label, 0, fault)
                self._reset()
                return
            if fault == "slow":
                time.sleep(server.config.faults.slow_s)
            if fault in ("error_500", "error_502", "error_503"):
                status = int(fault[-3:])
                quota = server.limiter.peek(account, resource) if resource != "none" else None
                self._send(
                    status,
                    {
                        "message": "Server Error"
                        if status == 500
                        else "Bad Gateway"
                        if status == 502
                        else "Service Unavailable"
                    },
                    {},
                    name,
                    label,
                    quota,
                    fault,
                )
                return
            quota = None
            if resource != "none":
                verdict = server.limiter.check(account, resource)
                if not verdict.allowed:
                    headers = (
                        {"Retry-After": str(verdict.retry_after)}
                        if verdict.retry_after is not None
                        else {}
                    )
                    self._send(
                        verdict.status,
                        {"message": verdict.message, "documentation_url": DOCS},
                        headers,
                        name,
                        label,
                        verdict.quota,
                        fault,
                    )
                    return
            box = [fault]
            try:
                if name == "rate-limit/get":
                    status, payload, headers = 200, rate_limit_body(server, account), {}
                else:
                    status, payload, headers = respond(server, name, groups, path, query, body, box)
            except Answer as exc:
                status, payload, headers = exc.status, exc.body, exc.headers
            except Exception as exc:  # a simulator bug must not look like a dropped connection
                status, headers = 500, {}
                payload = {
                    "message": f"simulated GitHub failed: {type(exc).__name__}: {exc}",
                    "documentation_url": DOCS,
                }
            fault = box[0]
            data, content_type = _encode(payload)
            headers.setdefault("Content-Type", content_type)
            if method == "GET" and status == 200:
                etag = '"' + hashlib.md5(data).hexdigest() + '"'
                headers["ETag"] = etag
                sent = self.headers.get("If-None-Match")
                if sent and etag in [t.strip().removeprefix("W/") for t in sent.split(",")]:
                    quota = server.limiter.peek(account, resource) if resource != "none" else None
                    self._send(304, b"", headers, name, label, quota, fault)
                    return
            if resource != "none":
                quota = server.limiter.count(account, resource)
            self._send(status, data, headers, name, label, quota, fault)

        def _reset(self) -> None:
            with contextlib.suppress(OSError):
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
            self.close_connection = True

        def _send(
            self,
            status: int,
            payload: Any,
            headers: dict[str, str],
            name: str,
            label: str,
            quota: Quota | None,
            fault: str | None,
        ) -> None:
            data, content_type = _encode(payload)
            server.recorder.record(name, label, status, fault)
            self.send_response(status)
            if status != 304:
                self.send_header("Content-Type", headers.pop("Content-Type", content_type))
            else:
                headers.pop("Content-Type", None)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-GitHub-Api-Version-Selected", "2022-11-28")
            self.send_header(SIMULATED_HEADER, "1")  # this is not GitHub: crawlers record it
            if quota is not None:
                self.send_header("X-RateLimit-Limit", str(quota.limit))
                self.send_header("X-RateLimit-Remaining", str(quota.remaining))
                self.send_header("X-RateLimit-Used", str(quota.used))
                self.send_header("X-RateLimit-Reset", str(quota.reset))
                self.send_header(
                    "X-RateLimit-Resource",
                    "core" if quota.resource == "anonymous" else quota.resource,
                )
            for k, v in headers.items():
                self.send_header(k, v)
            if fault == "truncate":
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if status == 304:
                with contextlib.suppress(OSError):
                    self.wfile.flush()
                return
            with contextlib.suppress(OSError):
                self.wfile.write(data[: len(data) // 2] if fault == "truncate" else data)
                self.wfile.flush()

    return Handler


def _encode(payload: Any) -> tuple[bytes, str]:
    if payload is None:
        return b"", "application/json; charset=utf-8"
    if isinstance(payload, bytes):
        return payload, "application/json; charset=utf-8"
    if isinstance(payload, str):
        return payload.encode(), "text/plain; charset=utf-8"
    return json.dumps(payload, separators=(",", ":")).encode(), "application/json; charset=utf-8"


@contextlib.contextmanager
def serve(
    world: World, config: ServerConfig | None = None, *, host: str = "127.0.0.1", port: int = 0
) -> Iterator[SimServer]:
    """Run the simulated GitHub in a background thread for the `with` block (port 0: a free
    port; the base URL is `.url`)."""
    sim = SimServer(world, config or ServerConfig(), host, port)
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()
