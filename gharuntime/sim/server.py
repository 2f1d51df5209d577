"""The simulated GitHub's HTTP server: GitHub's REST endpoints the crawler uses (and the GraphQL
blob query), served from a `World` on 127.0.0.1 with GitHub's pagination, filters, caps, rate
limits, ETags, redirects and errors, plus seeded fault injection and a request recorder.

    with serve(World(seed=1, scale="small")) as gh:
        requests.get(gh.url + "/repos/OWNER/NAME", headers={"Authorization": "Bearer t"})
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from gharuntime.sim.faults import Faults, Recorder
from gharuntime.sim.graphql import GraphQLError, answer
from gharuntime.sim.logs import job_log
from gharuntime.sim.payloads import Payloads
from gharuntime.sim.ratelimit import Quota, RateLimiter
from gharuntime.sim.world import (
    DAY,
    END,
    LOG_RETENTION_DAYS,
    RepoMeta,
    RepoWorld,
    Run,
    World,
    parse_iso,
)

__all__ = ["ServerConfig", "SimServer", "serve"]

DOCS = "https://docs.github.com/rest"
FILTERED_CAP = 1000
"""GitHub returns at most 1,000 results for a filtered run listing or a search."""


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


class _Response(Exception):
    """Raised by a route to answer right away (errors, redirects)."""

    def __init__(
        self, status: int, body: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}


def _error(status: int, message: str) -> _Response:
    return _Response(status, {"message": message, "documentation_url": DOCS, "status": str(status)})


_REPO = r"(?:/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)|/repositories/(?P<rid>\d+))"
_ROUTES: list[tuple[str, re.Pattern[str], str, str]] = [
    (m, re.compile(p + r"/?$"), name, res)
    for m, p, name, res in (
        ("GET", r"/rate_limit", "rate-limit/get", "none"),
        ("GET", r"/search/repositories", "search/repos", "search"),
        ("POST", r"/graphql", "graphql", "graphql"),
        ("GET", r"/_blobs/logs/(?P<job>\d+)", "blob/logs", "none"),
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
_RUN_FILTERS = ("actor", "branch", "check_suite_id", "created", "event", "head_sha", "status")
_STATUSES = (
    "completed",
    "in_progress",
    "queued",
    "requested",
    "waiting",
    "pending",
    "action_required",
)


def _created_filter(spec: str) -> Callable[[float], bool]:
    """GitHub's date syntax: `A..B`, `>=A`, `>A`, `<=A`, `<A`, `A` (a day or an instant)."""
    spec = spec.strip()

    def bound(text: str, end_of_day: bool) -> float:
        t = parse_iso(text)
        return t + DAY - 1e-6 if end_of_day and len(text.strip()) == 10 else t

    try:
        if ".." in spec:
            a, b = spec.split("..", 1)
            lo = -math.inf if a in ("", "*") else bound(a, False)
            hi = math.inf if b in ("", "*") else bound(b, True)
            return lambda t: lo <= t <= hi
        for op in (">=", "<=", ">", "<"):
            if spec.startswith(op):
                v = spec[len(op) :]
                if op == ">=":
                    x = bound(v, False)
                    return lambda t: t >= x
                if op == "<=":
                    x = bound(v, True)
                    return lambda t: t <= x
                if op == ">":
                    x = bound(v, True)
                    return lambda t: t > x
                x = bound(v, False)
                return lambda t: t < x
        lo, hi = bound(spec, False), bound(spec, True)
        return lambda t: lo <= t <= hi
    except ValueError as exc:
        raise _error(422, f"Invalid created filter {spec!r}: {exc}") from exc


class SimServer:
    """A running simulated GitHub. Use `serve()` rather than building one directly."""

    def __init__(
        self, world: World, config: ServerConfig, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.world = world
        self.config = config
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
        self._expired_jobs: set[int] = set()
        self._token_labels: dict[str, str] = {}
        self._lock = threading.Lock()
        self._metas: list[RepoMeta] | None = None
        self._httpd = ThreadingHTTPServer((host, port), _make_handler(self))
        self._httpd.daemon_threads = True
        self._httpd.request_queue_size = 128
        self.url = f"http://{host}:{self._httpd.server_address[1]}"
        self.payloads = Payloads(self.url)
        self._thread: threading.Thread | None = None

    # ----- lifecycle ----------------------------------------------------------------------
    def start(self) -> str:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="sim-github", daemon=True
        )
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    # ----- identity -------------------------------------------------------------------------
    def account(self, authorization: str | None) -> tuple[str, str]:
        """(account, token label) for an Authorization header; raises 401 on a bad token."""
        if not authorization:
            return "anonymous", "anonymous"
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() not in ("token", "bearer") or not token:
            raise _error(401, "Bad credentials")
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
                    raise _error(401, "Bad credentials")
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
                raise _error(404, "Not Found")
            return self.world.repo(index)
        full = f"{unquote(groups['owner'] or '')}/{unquote(groups['repo'] or '')}"
        found = self.world.lookup(full)
        if found is None or self.world.meta(found[0]).private:
            raise _error(404, "Not Found")
        index, renamed = found
        if renamed:
            meta = self.world.meta(index)
            where = f"{self.url}/repositories/{meta.id}{rest}"
            raise _Response(
                301,
                {"message": "Moved Permanently", "url": where, "documentation_url": DOCS},
                {"Location": where},
            )
        return self.world.repo(index)

    def metas(self) -> list[RepoMeta]:
        if self._metas is None:
            self._metas = [m for m in self.world.metas() if not m.private]
        return self._metas


def _page_args(query: Mapping[str, list[str]]) -> tuple[int, int]:
    try:
        per_page = int(query.get("per_page", ["30"])[0])
        page = int(query.get("page", ["1"])[0])
    except ValueError as exc:
        raise _error(422, f"Invalid pagination parameter: {exc}") from exc
    return max(1, page), min(100, max(1, per_page))


def _paginate(
    server: SimServer,
    path: str,
    query: Mapping[str, list[str]],
    total: int,
    cap: int | None,
    repeat_box: list[str | None],
) -> tuple[slice, dict[str, str]]:
    """The slice of items for this page and the Link header (first/prev/next/last)."""
    page, per_page = _page_args(query)
    repeat = repeat_box[0] == "repeat"
    servable = min(total, cap) if cap is not None else total
    last = max(1, math.ceil(servable / per_page))
    start = (page - 1) * per_page
    stop = min(start + per_page, servable)
    if repeat and page > 1 and start < servable:
        start -= 1
    elif repeat:
        repeat_box[0] = None
    links = []

    def url(p: int) -> str:
        q = {k: v[0] for k, v in query.items()}
        q["page"] = str(p)
        q.setdefault("per_page", str(per_page))
        return f"{server.url}{path}?{urlencode(q)}"

    if page < last:
        links.append(f'<{url(page + 1)}>; rel="next"')
        links.append(f'<{url(last)}>; rel="last"')
    if page > 1:
        links.insert(0, f'<{url(page - 1)}>; rel="prev"')
        links.insert(0, f'<{url(1)}>; rel="first"')
    headers = {"Link": ", ".join(links)} if links else {}
    return slice(max(0, start), max(0, stop)), headers


def _filter_runs(runs: list[Run], query: Mapping[str, list[str]]) -> list[Run]:
    out = runs
    if "created" in query:
        test = _created_filter(query["created"][0])
        out = [r for r in out if test(r.created)]
    if "status" in query:
        st = query["status"][0]
        out = [
            r
            for r in out
            if (r.latest.status == st if st in _STATUSES else r.latest.conclusion == st)
        ]
    if "event" in query:
        out = [r for r in out if r.event == query["event"][0]]
    if "branch" in query:
        out = [r for r in out if r.branch == query["branch"][0]]
    if "head_sha" in query:
        out = [r for r in out if r.commit.sha == query["head_sha"][0]]
    return out


def _search(server: SimServer, q: str) -> list[RepoMeta]:
    metas = server.metas()
    terms: list[str] = []
    for part in q.split():
        key, sep, value = part.partition(":")
        if not sep:
            terms.append(part.lower())
            continue
        key = key.lower()
        if key in ("stars", "forks", "size"):
            attr = {"stars": "stars", "forks": "forks", "size": "size_kb"}[key]
            test = _number_filter(value)
            metas = [m for m in metas if test(getattr(m, attr))]
        elif key in ("pushed", "created"):
            ctest = _created_filter(value)
            attr = "pushed_at" if key == "pushed" else "created_at"
            metas = [m for m in metas if ctest(getattr(m, attr))]
        elif key == "language":
            metas = [m for m in metas if m.language.lower() == value.lower().strip('"')]
        elif key == "archived":
            metas = [m for m in metas if m.archived == (value == "true")]
        elif key == "fork":
            if value != "true" and value != "only":
                metas = [m for m in metas if not m.fork]
            elif value == "only":
                metas = [m for m in metas if m.fork]
        elif key == "topic":
            metas = [m for m in metas if value in m.topics]
        elif key in ("is", "user", "org"):
            if key in ("user", "org"):
                metas = [m for m in metas if m.owner.lower() == value.lower()]
        else:
            raise _error(422, f"Validation Failed: unknown search qualifier {key!r}")
    for term in terms:
        metas = [m for m in metas if term in m.full_name.lower() or term in m.description.lower()]
    return metas


def _number_filter(spec: str) -> Callable[[int], bool]:
    try:
        if ".." in spec:
            a, b = spec.split("..", 1)
            lo = -math.inf if a in ("", "*") else int(a)
            hi = math.inf if b in ("", "*") else int(b)
            return lambda v: lo <= v <= hi
        for op in (">=", "<=", ">", "<"):
            if spec.startswith(op):
                x = int(spec[len(op) :])
                return {
                    ">=": lambda v, x=x: v >= x,
                    "<=": lambda v, x=x: v <= x,
                    ">": lambda v, x=x: v > x,
                    "<": lambda v, x=x: v < x,
                }[op]
        x = int(spec)
        return lambda v: v == x
    except ValueError as exc:
        raise _error(422, f"Validation Failed: bad number range {spec!r}") from exc


def _handle(
    server: SimServer,
    name: str,
    g: Mapping[str, str | None],
    path: str,
    query: Mapping[str, list[str]],
    body: bytes,
    fault: list[str | None],
) -> tuple[int, Any, dict[str, str]]:
    """Compute one response: (status, JSON body or text, headers). `fault[0]` is the fault drawn
    for this request; set to None when it did not apply, so it is not recorded."""
    P = server.payloads
    if name == "search/repos":
        q = query.get("q", [""])[0]
        if not q.strip():
            raise _error(422, "Validation Failed: q is missing")
        found = _search(server, q)
        sort = query.get("sort", [""])[0]
        desc = query.get("order", ["desc"])[0] != "asc"
        if sort == "stars":
            found = sorted(found, key=lambda m: (m.stars, m.id), reverse=desc)
        elif sort == "updated":
            found = sorted(found, key=lambda m: (m.pushed_at, m.id), reverse=desc)
        elif sort == "forks":
            found = sorted(found, key=lambda m: (m.forks, m.id), reverse=desc)
        sl, headers = _paginate(server, path, query, len(found), FILTERED_CAP, fault)
        items = [P.repository(m, score=1.0) for m in found[sl]]
        return (
            200,
            {"total_count": len(found), "incomplete_results": False, "items": items},
            headers,
        )
    if name == "graphql":
        try:
            request = json.loads(body or b"{}")
            query_text = str(request["query"])
        except (ValueError, KeyError, TypeError) as exc:
            raise _error(400, f"Problems parsing JSON: {exc}") from exc

        def blob(full: str, sha: str, file_path: str) -> tuple[bool, str | None]:
            found = server.world.lookup(full)
            if found is None or server.world.meta(found[0]).private:
                return False, None
            if not sha:
                return True, None
            at = server.world.repo(found[0]).file_at(file_path, sha)
            return True, at[1] if at else None

        try:
            return 200, answer(query_text, blob), {}
        except GraphQLError as exc:
            return 200, {"errors": [{"message": str(exc)}]}, {}
    if name == "blob/logs":
        job_id = int(g["job"] or 0)
        index = server.world.index_of_id("job", job_id)
        hit = server.world.repo(index).job(job_id) if index is not None else None
        if hit is None:
            raise _Response(404, "Not Found")
        return 200, job_log(hit[2]), {"Content-Type": "text/plain; charset=utf-8"}

    rest = (
        path[path.index(g["repo"] or "") + len(g["repo"] or "") :]
        if g.get("owner")
        else path.split(str(g["rid"]), 1)[1]
    )
    rw = server.repo(g, rest)
    m = rw.meta
    if name == "repos/get":
        return 200, P.repository(m), {}
    if name == "actions/list-repo-workflows":
        sl, headers = _paginate(server, path, query, len(rw.workflows), None, fault)
        return (
            200,
            {
                "total_count": len(rw.workflows),
                "workflows": [P.workflow(m, w) for w in rw.workflows[sl]],
            },
            headers,
        )
    if name == "actions/get-workflow":
        wf = rw.workflow(unquote(g["wf"] or ""))
        if wf is None:
            raise _error(404, "Not Found")
        return 200, P.workflow(m, wf), {}
    if name in ("actions/list-workflow-runs-for-repo", "actions/list-workflow-runs"):
        runs = rw.runs
        if name == "actions/list-workflow-runs":
            wf = rw.workflow(unquote(g["wf"] or ""))
            if wf is None:
                raise _error(404, "Not Found")
            runs = [r for r in runs if r.workflow is wf]
        runs = _filter_runs(runs, query)[::-1]  # newest first
        filtered = any(k in query for k in _RUN_FILTERS)
        sl, headers = _paginate(
            server, path, query, len(runs), FILTERED_CAP if filtered else None, fault
        )
        return (
            200,
            {"total_count": len(runs), "workflow_runs": [P.run(rw, r) for r in runs[sl]]},
            headers,
        )
    if "run" in g and g.get("run"):
        run = rw.run(int(g["run"] or 0))
        if run is None:
            raise _error(404, "Not Found")
        attempt = None
        if g.get("att"):
            n = int(g["att"] or 0)
            if not 1 <= n <= len(run.attempts):
                raise _error(404, "Not Found")
            attempt = run.attempts[n - 1]
        if name in ("actions/get-workflow-run", "actions/get-workflow-run-attempt"):
            return 200, P.run(rw, run, attempt), {}
        if name == "actions/get-workflow-run-usage":
            att = run.latest
            billable: dict[str, Any] = {}
            for j in att.jobs:
                os_name = {"Linux": "UBUNTU", "Windows": "WINDOWS", "macOS": "MACOS"}.get(
                    _os(j.labels), "UBUNTU"
                )
                ms = int((j.completed - j.started) * 1000) if j.status == "completed" else 0
                entry = billable.setdefault(os_name, {"total_ms": 0, "jobs": 0, "job_runs": []})
                entry["total_ms"] += ms
                entry["jobs"] += 1
                entry["job_runs"].append({"job_id": j.id, "duration_ms": ms})
            return (
                200,
                {"billable": billable, "run_duration_ms": int((att.updated - att.started) * 1000)},
                {},
            )
        jobs = (attempt or run.latest).jobs
        if (
            name == "actions/list-jobs-for-workflow-run"
            and query.get("filter", ["latest"])[0] == "all"
        ):
            jobs = [j for a in run.attempts for j in a.jobs]
        sl, headers = _paginate(server, path, query, len(jobs), None, fault)
        return (
            200,
            {"total_count": len(jobs), "jobs": [P.job(rw, run, j) for j in jobs[sl]]},
            headers,
        )
    if g.get("job"):
        located = rw.job(int(g["job"] or 0))
        if located is None:
            raise _error(404, "Not Found")
        job_run, _, job = located
        if name == "actions/get-job-for-workflow-run":
            return 200, P.job(rw, job_run, job), {}
        if job.status != "completed":
            raise _error(404, "Not Found")
        if job.completed < END - LOG_RETENTION_DAYS * DAY or job.id in server._expired_jobs:
            fault[0] = None
            raise _error(410, "Gone")
        if fault[0] == "expire":
            server._expired_jobs.add(job.id)
            raise _error(410, "Gone")
        sig = hashlib.sha1(f"{job.id}".encode()).hexdigest()[:16]
        where = f"{server.url}/_blobs/logs/{job.id}?sig={sig}"
        return 302, None, {"Location": where}
    if name == "repos/get-content":
        file_path = unquote(g["path"] or "")
        ref = query.get("ref", [m.default_branch])[0]
        at = rw.file_at(file_path, ref)
        if at is None:
            raise _error(404, "Not Found")
        return 200, P.content(m, file_path, at[0], at[1], ref), {}
    if name == "repos/get-commit":
        commit = rw.commit(unquote(g["ref"] or ""))
        if commit is None:
            raise _error(422, f"No commit found for SHA: {g['ref']}")
        return 200, P.commit(rw, commit), {}
    raise _error(404, "Not Found")


def _os(labels: tuple[str, ...]) -> str:
    from gharuntime.workflow import runner_os

    return runner_os(labels) or "Linux"


def _make_handler(server: SimServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "gharuntime-sim"
        sys_version = ""

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: and a request line never carries a token anyway

        def do_GET(self) -> None:
            self._dispatch("GET")

        def do_POST(self) -> None:
            self._dispatch("POST")

        def _dispatch(self, method: str) -> None:
            split = urlsplit(self.path)
            path = split.path
            query = parse_qs(split.query, keep_blank_values=True)
            length = int(self.headers.get("Content-Length") or 0)
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
            except _Response as exc:
                self._send(exc.status, exc.body, exc.headers, name, "bad-token", None, None)
                return
            if account == "anonymous" and resource != "none":
                resource = "anonymous"
            fault = None
            if server.config.faults.any and (resource != "none" or name == "blob/logs"):
                kinds: tuple[str, ...] = (
                    "error_500",
                    "error_502",
                    "error_503",
                    "reset",
                    "slow",
                    "truncate",
                )
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
                    status, payload, headers = 200, _rate_limit_body(server, account), {}
                else:
                    status, payload, headers = _handle(server, name, groups, path, query, body, box)
            except _Response as exc:
                status, payload, headers = exc.status, exc.body, exc.headers
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
                return
            with contextlib.suppress(OSError):
                self.wfile.write(data[: len(data) // 2] if fault == "truncate" else data)

    return Handler


def _encode(payload: Any) -> tuple[bytes, str]:
    if payload is None:
        return b"", "application/json; charset=utf-8"
    if isinstance(payload, bytes):
        return payload, "application/json; charset=utf-8"
    if isinstance(payload, str):
        return payload.encode(), "text/plain; charset=utf-8"
    return json.dumps(payload, separators=(",", ":")).encode(), "application/json; charset=utf-8"


def _rate_limit_body(server: SimServer, account: str) -> dict[str, Any]:
    def one(resource: str) -> dict[str, int]:
        q = server.limiter.peek(account, resource)
        return {"limit": q.limit, "remaining": q.remaining, "reset": q.reset, "used": q.used}

    core = one("anonymous" if account == "anonymous" else "core")
    resources = {"core": core, "search": one("search"), "graphql": one("graphql")}
    return {"resources": resources, "rate": core}


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
