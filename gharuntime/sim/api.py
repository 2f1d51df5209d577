"""What the simulated GitHub answers: one function per request, from the route's name and
parameters to (status, body, headers) — GitHub's filters, pagination, caps, search qualifiers,
redirects and errors. `server.py` does the HTTP, identity, limits and faults around it."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, Protocol
from urllib.parse import unquote, urlencode

from gharuntime.errors import GharuntimeError
from gharuntime.sim.graphql import GraphQLError, answer
from gharuntime.sim.logs import attempt_log_archive, job_log
from gharuntime.sim.payloads import WEB_FLOW, Payloads
from gharuntime.sim.ratelimit import RateLimiter
from gharuntime.sim.vocabulary import COMMIT_AUTHORS
from gharuntime.sim.world import (
    DAY,
    END,
    LOG_RETENTION_DAYS,
    Attempt,
    Job,
    RepoWorld,
    Run,
    SimRepo,
    World,
    parse_iso,
)
from gharuntime.workflow import runner_os

__all__ = ["DOCS", "FILTERED_CAP", "Answer", "Backend", "error", "rate_limit_body", "respond"]


class Backend(Protocol):
    """What the answers need from the server around them (`server.SimServer` is one); a protocol,
    so that this module does not import the server that imports it."""

    url: str
    world: World
    payloads: Payloads
    limiter: RateLimiter
    expired_jobs: set[int]
    graphql_text_limit: int | None

    def repo(self, groups: Mapping[str, str | None], rest: str) -> RepoWorld: ...

    def metas(self) -> list[SimRepo]: ...


DOCS = "https://docs.github.com/rest"
FILTERED_CAP = 1000
"""GitHub returns at most 1,000 results for a filtered run listing or a search."""


class Answer(GharuntimeError):
    """Raised by a route to answer right away (errors, redirects)."""

    def __init__(
        self, status: int, body: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}


def error(status: int, message: str) -> Answer:
    return Answer(status, {"message": message, "documentation_url": DOCS, "status": str(status)})


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
        raise error(422, f"Invalid created filter {spec!r}: {exc}") from exc


def _page_args(query: Mapping[str, list[str]]) -> tuple[int, int]:
    try:
        per_page = int(query.get("per_page", ["30"])[0])
        page = int(query.get("page", ["1"])[0])
    except ValueError as exc:
        raise error(422, f"Invalid pagination parameter: {exc}") from exc
    return max(1, page), min(100, max(1, per_page))


def _paginate(
    server: Backend,
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


def _search(server: Backend, q: str) -> list[SimRepo]:
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
            raise error(422, f"Validation Failed: unknown search qualifier {key!r}")
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
        raise error(422, f"Validation Failed: bad number range {spec!r}") from exc


_AUTHORS_CREATED = 1_262_304_000  # 2010-01-01: the authors' accounts predate every repository


def _account(server: Backend, login: str) -> dict[str, Any]:
    """`GET /users/{username}` for the accounts the world names: repository owners (every owner
    holds three repositories, its group number ends its login), commit authors and web-flow."""
    P = server.payloads
    world = server.world
    if login in COMMIT_AUTHORS or login == WEB_FLOW:
        return P.public_user(P.author(login), _AUTHORS_CREATED)
    digits = len(login) - len(login.rstrip("0123456789"))
    if digits:
        first = int(login[-digits:]) * 3
        if first < len(world):
            m = world.meta(first)
            if m.owner.lower() == login.lower():
                return P.public_user(P.owner(m), m.created_at)
    raise error(404, "Not Found")


def respond(
    server: Backend,
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
            raise error(422, "Validation Failed: q is missing")
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
            raise error(400, f"Problems parsing JSON: {exc}") from exc

        def blob(full: str, sha: str, file_path: str) -> tuple[bool, str | None]:
            found = server.world.lookup(full)
            if found is None or server.world.meta(found[0]).private:
                return False, None
            if not sha:
                return True, None
            at = server.world.repo(found[0]).file_at(file_path, sha)
            return True, at[1] if at else None

        def text(full: str, oid: str) -> str | None:
            found = server.world.lookup(full)
            if found is None or server.world.meta(found[0]).private:
                return None
            return server.world.repo(found[0]).blob_text(oid)

        try:
            return 200, answer(query_text, blob, text, server.graphql_text_limit), {}
        except GraphQLError as exc:
            return 200, {"errors": [{"message": str(exc)}]}, {}
    if name == "blob/logs":
        job_id = int(g["job"] or 0)
        index = server.world.index_of_id("job", job_id)
        hit = server.world.repo(index).job(job_id) if index is not None else None
        if hit is None:
            raise Answer(404, "Not Found")
        return 200, job_log(hit[2]), {"Content-Type": "text/plain; charset=utf-8"}
    if name == "users/get-by-username":
        return 200, _account(server, unquote(g["login"] or "")), {}
    if name == "blob/run-logs":
        run_id = int(g["run"] or 0)
        index = server.world.index_of_id("run", run_id)
        logged_run = server.world.repo(index).run(run_id) if index is not None else None
        n = int(g["att"] or 0)
        if logged_run is None or not 1 <= n <= len(logged_run.attempts):
            raise Answer(404, "Not Found")
        return (
            200,
            attempt_log_archive(_logged_jobs(server, logged_run.attempts[n - 1])),
            {"Content-Type": "application/zip"},
        )

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
            raise error(404, "Not Found")
        return 200, P.workflow(m, wf), {}
    if name in ("actions/list-workflow-runs-for-repo", "actions/list-workflow-runs"):
        runs = rw.runs
        if name == "actions/list-workflow-runs":
            wf = rw.workflow(unquote(g["wf"] or ""))
            if wf is None:
                raise error(404, "Not Found")
            runs = [r for r in runs if r.workflow is wf]
        runs = _filter_runs(runs, query)[::-1]  # newest first
        filtered = any(k in query for k in _RUN_FILTERS)
        sl, headers = _paginate(
            server, path, query, len(runs), FILTERED_CAP if filtered else None, fault
        )
        encoded_runs = b",".join(_run_json(P, rw, r, None) for r in runs[sl])
        return (
            200,
            b'{"total_count":%d,"workflow_runs":[%s]}' % (len(runs), encoded_runs),
            headers,
        )
    if "run" in g and g.get("run"):
        run = rw.run(int(g["run"] or 0))
        if run is None:
            raise error(404, "Not Found")
        attempt = None
        if g.get("att"):
            n = int(g["att"] or 0)
            if not 1 <= n <= len(run.attempts):
                raise error(404, "Not Found")
            attempt = run.attempts[n - 1]
        if name in ("actions/get-workflow-run", "actions/get-workflow-run-attempt"):
            return 200, _run_json(P, rw, run, attempt), {}
        if name == "actions/download-workflow-run-attempt-logs":
            assert attempt is not None
            if not _logged_jobs(server, attempt):
                ran = [j for j in attempt.jobs if j.status == "completed" and j.steps]
                raise error(410 if ran else 404, "Gone" if ran else "Not Found")
            sig = hashlib.sha1(f"{run.id}:{attempt.number}".encode()).hexdigest()[:16]
            where = f"{server.url}/_blobs/run-logs/{run.id}/{attempt.number}?sig={sig}"
            return 302, None, {"Location": where}
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
            raise error(404, "Not Found")
        job_run, _, job = located
        if name == "actions/get-job-for-workflow-run":
            return 200, P.job(rw, job_run, job), {}
        if job.status != "completed" or not job.steps:
            raise error(404, "Not Found")  # still running, or never started: no log
        if job.completed < END - LOG_RETENTION_DAYS * DAY or job.id in server.expired_jobs:
            fault[0] = None
            raise error(410, "Gone")
        if fault[0] == "expire":
            server.expired_jobs.add(job.id)
            raise error(410, "Gone")
        sig = hashlib.sha1(f"{job.id}".encode()).hexdigest()[:16]
        where = f"{server.url}/_blobs/logs/{job.id}?sig={sig}"
        return 302, None, {"Location": where}
    if name == "repos/get-content":
        file_path = unquote(g["path"] or "")
        ref = query.get("ref", [m.default_branch])[0]
        at = rw.file_at(file_path, ref)
        if at is None:
            raise error(404, "Not Found")
        return 200, P.content(m, file_path, at[0], at[1], ref), {}
    if name == "repos/get-commit":
        commit = rw.commit(unquote(g["ref"] or ""))
        if commit is None:
            raise error(422, f"No commit found for SHA: {g['ref']}")
        return 200, P.commit(rw, commit), {}
    raise error(404, "Not Found")


def _logged_jobs(server: Backend, attempt: Attempt) -> list[Job]:
    """The jobs of an attempt whose logs GitHub still holds: they ran, completed, and are not
    past the retention period (nor expired by a fault during this serve)."""
    kept = END - LOG_RETENTION_DAYS * DAY
    return [
        j
        for j in attempt.jobs
        if j.status == "completed"
        and j.steps
        and j.completed >= kept
        and j.id not in server.expired_jobs
    ]


def _run_json(P: Payloads, rw: RepoWorld, run: Run, attempt: Attempt | None) -> bytes:
    """A run object as JSON, with its two embedded repositories (most of its bytes) spliced in
    from an encoding made once per repository: the same JSON value, a fraction of the work."""
    body = P.run(rw, run, attempt)
    repo = body.pop("repository")
    body.pop("head_repository")
    encoded = _REPO_JSON.get(id(repo))
    if encoded is None or encoded[0] is not repo:
        encoded = (repo, json.dumps(repo, separators=(",", ":")).encode())
        if len(_REPO_JSON) > 4096:
            _REPO_JSON.clear()
        _REPO_JSON[id(repo)] = encoded
    head = json.dumps(body, separators=(",", ":")).encode()
    return head[:-1] + b',"repository":' + encoded[1] + b',"head_repository":' + encoded[1] + b"}"


_REPO_JSON: dict[int, tuple[dict[str, Any], bytes]] = {}


def _os(labels: tuple[str, ...]) -> str:
    return runner_os(labels) or "Linux"


def rate_limit_body(server: Backend, account: str) -> dict[str, Any]:
    def one(resource: str) -> dict[str, int]:
        q = server.limiter.peek(account, resource)
        return {"limit": q.limit, "remaining": q.remaining, "reset": q.reset, "used": q.used}

    core = one("anonymous" if account == "anonymous" else "core")
    resources = {"core": core, "search": one("search"), "graphql": one("graphql")}
    return {"resources": resources, "rate": core}
