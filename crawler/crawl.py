"""What to fetch, in what order: the crawl engine.

Units of work, each marked done with the shard holding its records (see store.py):
- repository: GET the repository (following a rename's 301) and its workflows;
- window: one `created` window of the completed-run listing (split in halves while the listing
  says more than the 1,000 results GitHub returns for a filtered query);
- run: the jobs of every attempt of one run (one `filter=all` listing), plus the run object of
  each earlier attempt;
- refs: up to 100 (path, head SHA) pairs of one repository, resolved to blob oids by one GraphQL
  query; blobs: the text of up to 100 new oids by one more GraphQL query (a text cut short or
  binary: one REST contents request for it), so YAML is fetched once per content;
- logs: with --logs, one log archive per run attempt (a zip of every job's log, mapped back to
  job ids by job name); a job the archive does not hold, or whose name it shares with another
  job, falls back to its own log request, as does every log a resumed crawl still lacks;
  `log_route="job"` asks for each job's log on its own (the reference for the benchmark).

Worker threads only talk HTTP; the calling thread owns the store and applies each result, so
every database write happens in one thread and in order.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from requests.utils import parse_header_links

from gharuntime.contract import RawKind
from gharuntime.crawler import endpoints as ep
from gharuntime.crawler.client import BadCredentials, GitHubClient, RequestFailed, Response
from gharuntime.crawler.progress import CrawlEvent, CrawlStats, EventSink, ignore_events
from gharuntime.crawler.store import CrawlStore, Sql
from gharuntime.logarchive import ArchiveError, job_file_name, read_archive
from gharuntime.workflow import strip_ref

__all__ = [
    "LISTING_CAP",
    "CrawlOptions",
    "CrawlResult",
    "Crawler",
    "crawl",
    "default_window",
    "format_time",
    "in_shard",
    "parse_time",
    "select_repositories",
    "split_window",
]

LISTING_CAP = 1000  # GitHub returns at most this many results for a filtered listing
PER_PAGE = 100
GRAPHQL_BATCH = 100


@dataclass
class CrawlOptions:
    """What to crawl. `yaml_strategy="per-run"` is the naive reference used by the benchmark."""

    repos: list[str] | None = None
    search: str | None = None
    max_repos: int | None = None
    since: str | None = None  # "YYYY-MM-DDTHH:MM:SSZ"; None: the stored or default window
    until: str | None = None
    max_runs_per_workflow: int | None = None
    logs: bool = False
    log_cap_bytes: int = 20_000_000
    log_route: str = "attempt"  # attempt: one archive per run attempt; job: one log per job
    shard: tuple[int, int] | None = None  # (k, n), k in 1..n
    concurrency: int = 4
    yaml_strategy: str = "blob-oid"
    flush_records: int = 2000
    flush_seconds: float = 5.0
    window_days: int = 90
    per_page: int = PER_PAGE  # listing page size (GitHub's maximum, 100, costs fewest requests)


@dataclass
class CrawlResult:
    """What a crawl did."""

    crawl_id: int
    since: str
    until: str
    repositories: int
    stats: CrawlStats
    failures: list[dict[str, Any]] = field(default_factory=list)
    finished: bool = False


def format_time(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """An ISO date or date-time (a bare date means midnight UTC) as an aware UTC datetime."""
    t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc)


def default_window(days: int = 90, now: datetime | None = None) -> tuple[str, str]:
    """The last `days` days up to now (GitHub deletes logs after 90)."""
    end = (now or datetime.now(timezone.utc)).replace(microsecond=0)
    return format_time(end - timedelta(days=days)), format_time(end)


def split_window(since: str, until: str) -> tuple[tuple[str, str], tuple[str, str]] | None:
    """Two halves of an inclusive `created` window, or None if it is too short to split.

    The halves share their middle second (`a..m` and `m..b`): a listing's bounds are inclusive
    and times may carry fractions of a second, so abutting halves (`m+1..b`) could drop a run
    created between m and m+1. A run listed twice is stored once (runs dedup on id and attempt).
    """
    a, b = parse_time(since), parse_time(until)
    span = int((b - a).total_seconds())
    if span < 2:
        return None
    mid = format_time(a + timedelta(seconds=span // 2))
    return (since, mid), (mid, until)


def in_shard(full_name: str, shard: tuple[int, int] | None) -> bool:
    """Whether a repository belongs to shard k of n (a stable hash of the lowercased name)."""
    if shard is None:
        return True
    k, n = shard
    digest = hashlib.sha256(full_name.strip().lower().encode()).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


def _pages(
    client: GitHubClient, path: str, params: dict[str, Any], **kw: Any
) -> Iterator[Response]:
    """The pages of a listing, following `Link: rel="next"`."""
    resp = client.get(path, params, **kw)
    yield resp
    while resp.status == 200:
        nxt = _next_link(resp)
        if nxt is None:
            return
        resp = client.get(nxt, **kw)
        yield resp


def _next_link(resp: Response) -> str | None:
    link = resp.headers.get("Link")
    if not link:
        return None
    for item in parse_header_links(link):
        if item.get("rel") == "next" and item.get("url"):
            return item["url"]
    return None


def select_repositories(client: GitHubClient, opts: CrawlOptions) -> list[str]:
    """The repositories to crawl: `--repos` or `--search`, capped by `--max-repos`, then sharded."""
    names: list[str] = []
    if opts.repos is not None:
        for name in opts.repos:
            if name not in names:
                names.append(name)
    elif opts.search:
        for resp in _pages(client, "/search/repositories", {"q": opts.search, "per_page": 100}):
            if resp.status != 200 or not isinstance(resp.body, dict):
                raise RequestFailed(
                    f"search failed with HTTP {resp.status}: {_message(resp)}",
                    where="/search/repositories",
                    status=resp.status,
                    reason="search",
                )
            for item in resp.body.get("items", []):
                if item["full_name"] not in names:
                    names.append(item["full_name"])
            if opts.max_repos is not None and len(names) >= opts.max_repos:
                break
    if opts.max_repos is not None:
        names = names[: opts.max_repos]
    return [n for n in names if in_shard(n, opts.shard)]


def _message(resp: Response) -> str:
    if isinstance(resp.body, dict) and "message" in resp.body:
        return str(resp.body["message"])
    return f"HTTP {resp.status}"


# -- what workers hand back ---------------------------------------------------------------------
@dataclass
class _Failure:
    what: str
    where: str
    status: int | None
    message: str


@dataclass(frozen=True)
class _LogJob:
    """A job whose log a crawl with --logs still has to store."""

    job_id: int
    name: str
    conclusion: str | None
    steps: int


def _expired(job: _LogJob) -> dict[str, Any]:
    status = "missing" if job.conclusion == "skipped" else "expired"  # skipped: never had a log
    return {"job_id": job.job_id, "status": status, "bytes": None, "text": None}


Apply = Callable[[Any], None]
Task = tuple[Callable[[], Any], Apply, "int | str"]  # work, apply, repository key


class Crawler:
    """Runs one crawl into a store. Not reusable; call `run()` once."""

    def __init__(
        self,
        client: GitHubClient,
        store: CrawlStore,
        opts: CrawlOptions,
        *,
        on_event: EventSink = ignore_events,
    ) -> None:
        self.client = client
        self.store = store
        self.opts = opts
        self.stats = client.stats
        self.on_event = on_event
        self._queue: deque[Task] = deque()
        self._open: dict[int | str, int] = {}  # repository key -> units queued or in flight
        self._label: dict[int | str, str] = {}  # repository key -> owner/name
        self._rid_of: dict[str, int] = {}  # owner/name as selected -> repository id
        self._refs_in_flight: set[tuple[int, str, str]] = set()
        self._blobs_in_flight: set[tuple[int, str, str]] = set()
        self._failures: list[dict[str, Any]] = []
        self._last_flush = time.monotonic()
        self._repo_cache: dict[int, tuple[str, list[int]]] = {}
        self.crawl_id = 0
        self.since = self.until = ""

    # -- driver -------------------------------------------------------------------------------
    def run(self) -> CrawlResult:
        # "now" is the server's clock when it said (its Date header), else this machine's.
        default = default_window(self.opts.window_days, now=self.client.server_now)
        self.crawl_id, self.since, self.until, selection = self.store.crawl_for(
            self.opts.since, self.opts.until, default
        )
        if selection is None or self.opts.repos is not None:
            # A --repos file is read afresh (lines may be added); a search is fixed at its first
            # answer, since it answers differently tomorrow.
            selection = select_repositories(self.client, self.opts)
            self.store.save_selection(
                self.crawl_id,
                selection,
                {"max_runs_per_workflow": self.opts.max_runs_per_workflow, "logs": self.opts.logs},
            )
        self.on_event(
            CrawlEvent(
                "plan",
                {"repositories": len(selection), "since": self.since, "until": self.until},
            )
        )
        self._plan(selection)
        pool = ThreadPoolExecutor(max_workers=max(1, self.opts.concurrency))
        in_flight: dict[Future[Any], tuple[Apply, int | str]] = {}
        applying = False
        try:
            while self._queue or in_flight:
                while self._queue and len(in_flight) < 2 * max(1, self.opts.concurrency):
                    work, apply, key = self._queue.popleft()
                    in_flight[pool.submit(work)] = (apply, key)
                done, _ = wait(list(in_flight), timeout=1.0, return_when=FIRST_COMPLETED)
                for fut in done:
                    apply, key = in_flight.pop(fut)
                    result = fut.result()
                    applying = True
                    apply(result)
                    applying = False
                    self._settle(key)
                self._maybe_flush()
        except BaseException:
            # Stop the workers (a quota wait may be an hour long), then keep what is complete.
            # A result half applied (Ctrl-C inside `apply`) is not: drop the buffer, and the
            # units since the last shard are simply done again next time.
            self.client.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            if not applying:
                self.store.flush()
            raise
        pool.shutdown(wait=True)
        self.store.flush()
        finished = not self._failures
        if finished:
            self.store.finish(self.crawl_id)
        return CrawlResult(
            self.crawl_id,
            self.since,
            self.until,
            len(selection),
            self.stats,
            self._failures,
            finished,
        )

    def _maybe_flush(self) -> None:
        if (
            self.store.pending >= self.opts.flush_records
            or time.monotonic() - self._last_flush >= self.opts.flush_seconds
        ):
            self.store.flush()
            self._last_flush = time.monotonic()
            self.on_event(CrawlEvent("stored", dict(self.stats.records)))

    def _push(
        self, work: Callable[[], Any], apply: Apply, key: int | str, *, front: bool = True
    ) -> None:
        self._open[key] = self._open.get(key, 0) + 1
        if front:
            self._queue.appendleft((work, apply, key))
        else:
            self._queue.append((work, apply, key))

    def _settle(self, key: int | str) -> None:
        """One unit of a repository is applied; announce the repository when none is left."""
        self._open[key] -= 1
        if self._open[key] > 0:
            return
        del self._open[key]
        if isinstance(key, str) and self._rid_of.get(key) in self._open:
            return  # its runs, YAML and logs go on under the repository id
        name = self._label.get(key, str(key))
        self.on_event(CrawlEvent("repository", {"name": name, "state": "done"}))

    def _fail(self, f: _Failure, kind_key: str) -> None:
        """Report a unit that could not be fetched: an error record, a problem event."""
        scrub = self.client.scrub  # a server's message could quote what it was sent
        body = {
            "what": f.what,
            "where": scrub(f.where),
            "status": f.status,
            "message": scrub(f.message),
        }
        self.store.add(RawKind.ERROR, kind_key, body, None)
        self.stats.count_failure(f.what)
        self.stats.count_records(RawKind.ERROR.value)
        self._failures.append(body)
        self.on_event(CrawlEvent("problem", body))

    def _resolve(self, kind_key: str) -> None:
        """A unit that an earlier run could not fetch was fetched now: store a record saying so,
        so the build no longer counts the old error record (the store is append-only)."""
        if self.store.has(RawKind.ERROR, kind_key):
            self.store.add(RawKind.ERROR, f"{kind_key}#resolved", {"resolved": kind_key}, None)

    def _checked(self, what: str, where: str, kind_key: str, apply: Apply) -> Apply:
        """Run `apply` in the main thread; a response of an unexpected shape (a string where
        GitHub sends an integer id, a list for an object) becomes a scrubbed error record for the
        unit, which the next run retries, instead of ending the crawl. Nothing of the value is
        quoted: a hostile server may echo the token back."""

        def run(result: Any) -> None:
            if isinstance(result, _Failure):
                apply(result)
                return
            try:
                apply(result)
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                self._fail(
                    _Failure(
                        what,
                        where,
                        None,
                        f"unexpected response: a value of the wrong type or shape "
                        f"({type(exc).__name__})",
                    ),
                    kind_key,
                )

        return run

    def _guard(self, what: str, where: str, work: Callable[[], Any]) -> Callable[[], Any]:
        """Run `work`, turning a RequestFailed into a _Failure the main thread records."""

        def run() -> Any:
            try:
                return work()
            except BadCredentials:
                raise
            except RequestFailed as exc:
                return _Failure(what, where, exc.status, str(exc))
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                # Valid JSON of the wrong shape: report it rather than stop the crawl; the
                # exception's text may quote what the server sent, so only its type is kept.
                return _Failure(what, where, None, f"unexpected response ({type(exc).__name__})")

        return run

    # -- planning: from the database, what is left ----------------------------------------------
    def _plan(self, selection: list[str]) -> None:
        q = self.store.query
        done = {
            name: (state, rid)
            for name, state, rid in q(
                "SELECT name, state, repo_id FROM repos WHERE crawl_id=?", (self.crawl_id,)
            )
        }
        for name in selection:
            if name in done:
                state, rid = done[name]
                self.stats.count_repository(state)
                if rid is not None:
                    self._label[int(rid)] = name
                    self._rid_of[name] = int(rid)
                if state == "ok":
                    self._plan_windows(int(rid))
            else:
                self._push(*self._repo_task(name), front=False)
        for run_id, attempt, rid in q(
            "SELECT run_id, attempt, repo_id FROM run_units WHERE done=0 ORDER BY run_id"
        ):
            self._push(*self._run_task(int(rid), int(run_id), int(attempt)))
        pairs: dict[int, list[tuple[str, str]]] = {}
        for rid, path, sha in q(
            "SELECT DISTINCT u.repo_id, u.path, u.head_sha FROM run_units u WHERE NOT EXISTS "
            "(SELECT 1 FROM refs r WHERE r.repo_id=u.repo_id AND r.path=u.path AND r.head_sha=u.head_sha)"
        ):
            pairs.setdefault(int(rid), []).append((path, sha))
        for rid, items in pairs.items():
            self._queue_refs(rid, items)
        blobs: dict[int, list[tuple[str, str, str]]] = {}
        for rid, path, blob, sha in q(
            "SELECT r.repo_id, r.path, r.blob_sha, MIN(r.head_sha) FROM refs r WHERE r.blob_sha IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM blobs b WHERE b.repo_id=r.repo_id AND b.path=r.path "
            "AND b.blob_sha=r.blob_sha) GROUP BY r.repo_id, r.path, r.blob_sha"
        ):
            blobs.setdefault(int(rid), []).append((path, blob, sha))
        for rid, found in blobs.items():
            self._queue_blobs(rid, found)
        if self.opts.logs:
            for job_id, rid, conclusion, steps in q(
                "SELECT job_id, repo_id, conclusion, steps FROM logs WHERE state IS NULL"
            ):
                self._push(*self._log_task(int(rid), int(job_id), conclusion, int(steps)))
        for name in selection:  # what an earlier run finished counts as complete from the start
            if name in done and (done[name][1] is None or int(done[name][1]) not in self._open):
                self.on_event(CrawlEvent("repository", {"name": name, "state": "done"}))

    def _full_name(self, repo_id: int) -> str:
        row = self.store.query("SELECT full_name FROM repo_info WHERE repo_id=?", (repo_id,))
        return str(row[0][0])

    def _workflow_ids(self, repo_id: int) -> list[int]:
        row = self.store.query("SELECT workflows FROM repo_info WHERE repo_id=?", (repo_id,))
        return [int(x) for x in json.loads(row[0][0])]

    def _plan_windows(self, repo_id: int) -> None:
        workflows = self._workflow_ids(repo_id)
        if not workflows:
            return
        targets = workflows if self.opts.max_runs_per_workflow else [0]
        for wf in targets:
            self._expand_window(repo_id, wf, self.since, self.until)

    def _expand_window(self, repo_id: int, wf: int, since: str, until: str) -> None:
        row = self.store.query(
            "SELECT state FROM windows WHERE crawl_id=? AND repo_id=? AND workflow_id=? AND since=? AND until=?",
            (self.crawl_id, repo_id, wf, since, until),
        )
        state = row[0][0] if row else None
        if state == "done":
            return
        if state == "split":
            halves = split_window(since, until)
            if halves is not None:
                for s, u in reversed(halves):
                    self._expand_window(repo_id, wf, s, u)
                return
        self._push(*self._window_task(repo_id, wf, since, until))

    # -- repository -----------------------------------------------------------------------------
    def _repo_task(self, name: str) -> Task:
        client = self.client

        def work() -> Any:
            r = client.get(ep.repository(name), use_etag=True)
            if r.status != 200 or not isinstance(r.body, dict):
                return ("missing", r.status, _message(r))
            full_name = str(r.body["full_name"])
            items: list[Any] = []
            actions_status = 200
            for page in _pages(
                client, ep.workflows(full_name), {"per_page": self.opts.per_page}, use_etag=True
            ):
                if page.status != 200 or not isinstance(page.body, dict):
                    actions_status = page.status
                    break
                items.extend(page.body.get("workflows", []))
            return ("ok", r, items, actions_status)

        def apply(result: Any) -> None:
            if isinstance(result, _Failure):
                self._fail(result, f"repository:{name}")
                self.stats.count_repository("failed")
                self.on_event(CrawlEvent("repository", {"name": name, "state": "failed"}))
                return
            if result[0] == "missing":
                _, status, message = result
                self._fail(
                    _Failure(
                        "repository",
                        name,
                        status,
                        f"{message}: the repository does not exist, is private, or the token cannot see it; skipped",
                    ),
                    f"repository:{name}",
                )
                self.store.mark(
                    [
                        (
                            "INSERT OR REPLACE INTO repos VALUES (?, ?, 'missing', NULL)",
                            (self.crawl_id, name),
                        )
                    ]
                )
                self.stats.count_repository("missing")
                self.on_event(CrawlEvent("repository", {"name": name, "state": "missing"}))
                return
            _, r, items, actions_status = result
            body = r.body
            rid = int(body["id"])
            full_name = str(body["full_name"])
            self._resolve(f"repository:{name}")
            self._label[rid] = name
            self._rid_of[name] = rid
            self.store.add(RawKind.REPOSITORY, str(rid), body, rid)
            sql: list[Sql] = []
            if full_name.lower() != name.lower():
                sql.append(("INSERT OR REPLACE INTO renames VALUES (?, ?)", (name, full_name)))
                self.on_event(
                    CrawlEvent("repository", {"name": name, "state": "renamed", "to": full_name})
                )
                self.stats.count_repository("renamed")
            wf_ids: list[int] = []
            for wf in items:
                wf_ids.append(int(wf["id"]))
                self.store.add(RawKind.WORKFLOW, str(wf["id"]), wf, rid)
            state = "ok"
            if actions_status != 200:
                state = "actions_unavailable"
                self._fail(
                    _Failure(
                        "workflows",
                        full_name,
                        actions_status,
                        "GitHub Actions is disabled or unavailable for this repository; skipped",
                    ),
                    f"workflows:{full_name}",
                )
                wf_ids = []
            if body.get("archived"):
                self.stats.count_repository("archived")
            if not wf_ids and state == "ok":
                self.stats.count_repository("no_workflows")
            sql += [
                (
                    "INSERT OR REPLACE INTO repo_info VALUES (?, ?, ?)",
                    (rid, full_name, json.dumps(wf_ids)),
                ),
                (
                    "INSERT OR REPLACE INTO repos VALUES (?, ?, ?, ?)",
                    (self.crawl_id, name, state, rid),
                ),
            ]
            for url, (etag, cached) in (
                self.client.etags.dirty() if self.client.etags else {}
            ).items():
                sql.append(
                    (
                        "INSERT OR REPLACE INTO etags VALUES (?, ?, ?)",
                        (url, etag, json.dumps(cached)),
                    )
                )
            self.store.mark(sql)
            # The rows above commit with the next flush; windows read them back from memory.
            self._repo_cache[rid] = (full_name, wf_ids)
            self.stats.count_repository("ok" if state == "ok" else state)
            self.on_event(CrawlEvent("repository", {"name": name, "state": state}))
            if state == "ok" and wf_ids:
                targets = wf_ids if self.opts.max_runs_per_workflow else [0]
                for wf in targets:
                    self._push(*self._window_task(rid, wf, self.since, self.until))

        return (
            self._guard("repository", name, work),
            self._checked("repository", name, f"repository:{name}", apply),
            name,
        )

    def _name(self, repo_id: int) -> str:
        cached = self._repo_cache.get(repo_id)
        return cached[0] if cached else self._full_name(repo_id)

    # -- run listing windows ---------------------------------------------------------------------
    def _window_task(self, repo_id: int, wf: int, since: str, until: str) -> Task:
        client = self.client
        full_name = self._name(repo_id)
        limit = self.opts.max_runs_per_workflow
        path = ep.workflow_runs(full_name, wf) if wf else ep.run_listing(full_name)
        params = {
            "status": "completed",
            "created": f"{since}..{until}",
            "per_page": min(limit, self.opts.per_page) if limit else self.opts.per_page,
        }
        where = f"{full_name} runs {since}..{until}" + (f" workflow {wf}" if wf else "")

        def work() -> Any:
            runs: dict[tuple[int, int], Any] = {}
            for i, page in enumerate(_pages(client, path, params)):
                if page.status != 200 or not isinstance(page.body, dict):
                    return _Failure("runs", where, page.status, _message(page))
                if (
                    i == 0
                    and limit is None
                    and int(page.body.get("total_count", 0)) > LISTING_CAP
                    and split_window(since, until) is not None
                ):
                    return "split"
                for run in page.body.get("workflow_runs", []):
                    if run.get("status") != "completed":
                        continue
                    key = (int(run["id"]), int(run.get("run_attempt") or 1))
                    runs.setdefault(key, run)  # pages may repeat items
                    if limit and len(runs) >= limit:
                        return list(runs.values())
            return list(runs.values())

        def apply(result: Any) -> None:
            unit = (self.crawl_id, repo_id, wf, since, until)
            if isinstance(result, _Failure):
                self._fail(result, f"runs:{repo_id}:{wf}:{since}..{until}")
                return
            self._resolve(f"runs:{repo_id}:{wf}:{since}..{until}")
            if result == "split":
                halves = split_window(since, until)
                assert halves is not None
                self.store.mark(
                    [("INSERT OR REPLACE INTO windows VALUES (?, ?, ?, ?, ?, 'split')", unit)]
                )
                for s, u in reversed(halves):
                    self._push(*self._window_task(repo_id, wf, s, u))
                return
            sql: list[Sql] = [
                ("INSERT OR REPLACE INTO windows VALUES (?, ?, ?, ?, ?, 'done')", unit)
            ]
            new_pairs: list[tuple[str, str]] = []
            for run in result:
                run_id, attempt = int(run["id"]), int(run.get("run_attempt") or 1)
                if not self.store.add(RawKind.RUN, f"{run_id}:{attempt}", run, repo_id):
                    continue
                self.stats.count_records(RawKind.RUN.value)
                path_, _ = strip_ref(str(run.get("path") or ""))
                sha = str(run.get("head_sha") or "")
                sql.append(
                    (
                        "INSERT OR IGNORE INTO run_units VALUES (?, ?, ?, ?, ?, 0)",
                        (run_id, attempt, repo_id, sha, path_),
                    )
                )
                self._push(*self._run_task(repo_id, run_id, attempt))
                if path_ and sha:
                    new_pairs.append((path_, sha))
            self.store.mark(sql)
            self._queue_refs(repo_id, new_pairs)

        key = f"runs:{repo_id}:{wf}:{since}..{until}"
        return self._guard("runs", where, work), self._checked("runs", where, key, apply), repo_id

    # -- jobs of a run ----------------------------------------------------------------------------
    def _run_task(self, repo_id: int, run_id: int, attempt: int) -> Task:
        client = self.client
        full_name = self._name(repo_id)
        earlier = [n for n in range(1, attempt) if not self.store.has(RawKind.RUN, f"{run_id}:{n}")]
        where = f"{full_name} run {run_id} attempt {attempt}"
        per_page = self.opts.per_page

        def work() -> Any:
            jobs: dict[int, Any] = {}
            params = {"filter": "all", "per_page": per_page}
            for page in _pages(client, ep.run_jobs(full_name, run_id), params):
                if page.status != 200 or not isinstance(page.body, dict):
                    return _Failure("jobs", where, page.status, _message(page))
                for job in page.body.get("jobs", []):
                    jobs.setdefault(int(job["id"]), job)
            seen = {int(j.get("run_attempt") or 1) for j in jobs.values()}
            for n in range(1, attempt + 1):
                if n in seen:
                    continue
                # A server that ignores filter=all: ask the attempt itself.
                for page in _pages(
                    client, ep.attempt_jobs(full_name, run_id, n), {"per_page": per_page}
                ):
                    if page.status != 200 or not isinstance(page.body, dict):
                        break
                    for job in page.body.get("jobs", []):
                        jobs.setdefault(int(job["id"]), job)
            runs: list[Any] = []
            for n in earlier:
                r = client.get(ep.run_attempt(full_name, run_id, n))
                if r.status == 200 and isinstance(r.body, dict):
                    runs.append(r.body)
                else:
                    return _Failure("run_attempt", f"{where}: attempt {n}", r.status, _message(r))
            return jobs, runs

        def apply(result: Any) -> None:
            if isinstance(result, _Failure):
                self._fail(result, f"jobs:{run_id}:{attempt}")
                return
            self._resolve(f"jobs:{run_id}:{attempt}")
            jobs, runs = result
            sql: list[Sql] = [
                ("UPDATE run_units SET done=1 WHERE run_id=? AND attempt=?", (run_id, attempt))
            ]
            for run in runs:
                key = f"{run['id']}:{run.get('run_attempt') or 1}"
                if self.store.add(RawKind.RUN, key, run, repo_id):
                    self.stats.count_records(RawKind.RUN.value)
            wanted: dict[int, list[_LogJob]] = {}
            for job_id, job in sorted(jobs.items()):
                if not self.store.add(RawKind.JOB, str(job_id), job, repo_id):
                    continue
                self.stats.count_records(RawKind.JOB.value)
                # Every job's log is listed as not fetched, so a later run with --logs finds it.
                conclusion = job.get("conclusion")
                steps = len(job.get("steps") or [])
                sql.append(
                    (
                        "INSERT OR IGNORE INTO logs VALUES (?, ?, ?, NULL, ?)",
                        (job_id, repo_id, conclusion, steps),
                    )
                )
                if self.opts.logs:
                    number = int(job.get("run_attempt") or 1)
                    wanted.setdefault(number, []).append(
                        _LogJob(job_id, str(job.get("name") or ""), conclusion, steps)
                    )
            self.store.mark(sql)
            for number, items in sorted(wanted.items()):
                self._queue_logs(repo_id, run_id, number, items)

        key = f"jobs:{run_id}:{attempt}"
        return self._guard("jobs", where, work), self._checked("jobs", where, key, apply), repo_id

    # -- workflow YAML ----------------------------------------------------------------------------
    def _queue_refs(self, repo_id: int, pairs: list[tuple[str, str]]) -> None:
        fresh: list[tuple[str, str]] = []
        for path, sha in pairs:
            key = (repo_id, path, sha)
            if self.opts.yaml_strategy != "per-run":
                if key in self._refs_in_flight or self.store.has(
                    RawKind.WORKFLOW_REF, f"{repo_id}:{path}:{sha}"
                ):
                    continue
                self._refs_in_flight.add(key)
            fresh.append((path, sha))
        for i in range(0, len(fresh), GRAPHQL_BATCH):
            self._push(*self._refs_task(repo_id, fresh[i : i + GRAPHQL_BATCH]))

    def _refs_task(self, repo_id: int, pairs: list[tuple[str, str]]) -> Task:
        client = self.client
        full_name = self._name(repo_id)
        owner, _, name = full_name.partition("/")
        where = f"{full_name} workflow refs ({len(pairs)})"
        naive = self.opts.yaml_strategy == "per-run"

        def work() -> Any:
            if naive:
                # The reference strategy: the file at every run's head SHA.
                found: list[tuple[str, str, Any]] = []
                for path, sha in pairs:
                    r = client.get(ep.contents(full_name, path), {"ref": sha})
                    found.append((path, sha, r.body if r.status == 200 else None))
                return found
            data = client.graphql(
                ep.graphql_blob_query(owner, name, [f"{sha}:{path}" for path, sha in pairs])
            )
            repo = data.get("repository") or {}
            oids: list[tuple[str, str, str | None]] = []
            for i, (path, sha) in enumerate(pairs):
                obj = repo.get(f"a{i}")
                oid = obj.get("oid") if isinstance(obj, dict) else None
                oids.append((path, sha, str(oid) if oid else None))
            return oids

        def apply(result: Any) -> None:
            for path, sha in pairs:
                self._refs_in_flight.discard((repo_id, path, sha))
            if isinstance(result, _Failure):
                self._fail(result, f"refs:{repo_id}:{pairs[0][0]}:{pairs[0][1]}")
                return
            self._resolve(f"refs:{repo_id}:{pairs[0][0]}:{pairs[0][1]}")
            sql: list[Sql] = []
            new_blobs: list[tuple[str, str, str]] = []
            for path, sha, got in result:
                if naive:
                    blob = str(got["sha"]) if isinstance(got, dict) and "sha" in got else None
                    if blob and self.store.add(
                        RawKind.WORKFLOW_FILE, f"{repo_id}:{path}:{blob}", got, repo_id
                    ):
                        self.stats.count_records(RawKind.WORKFLOW_FILE.value)
                        sql.append(
                            ("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?)", (repo_id, path, blob))
                        )
                else:
                    blob = got
                ref = {"repo_id": repo_id, "path": path, "head_sha": sha, "blob_sha": blob}
                if self.store.add(RawKind.WORKFLOW_REF, f"{repo_id}:{path}:{sha}", ref, repo_id):
                    self.stats.count_records(RawKind.WORKFLOW_REF.value)
                sql.append(
                    ("INSERT OR IGNORE INTO refs VALUES (?, ?, ?, ?)", (repo_id, path, sha, blob))
                )
                if blob and not naive:
                    new_blobs.append((path, blob, sha))
            self.store.mark(sql)
            self._queue_blobs(repo_id, new_blobs)

        key = f"refs:{repo_id}:{pairs[0][0]}:{pairs[0][1]}"
        return (
            self._guard("workflow_refs", where, work),
            self._checked("workflow_refs", where, key, apply),
            repo_id,
        )

    def _queue_blobs(self, repo_id: int, items: list[tuple[str, str, str]]) -> None:
        """Fetch the text of each new (path, blob, sha) of a repository: up to GRAPHQL_BATCH
        blobs in one GraphQL query; a blob it cannot give whole comes from the contents API."""
        fresh: list[tuple[str, str, str]] = []
        for path, blob, sha in items:
            key = (repo_id, path, blob)
            if key in self._blobs_in_flight or self.store.has(
                RawKind.WORKFLOW_FILE, f"{repo_id}:{path}:{blob}"
            ):
                continue
            self._blobs_in_flight.add(key)
            fresh.append((path, blob, sha))
        for i in range(0, len(fresh), GRAPHQL_BATCH):
            self._push(*self._blob_texts_task(repo_id, fresh[i : i + GRAPHQL_BATCH]))

    def _store_blob(self, repo_id: int, path: str, blob: str, body: dict[str, Any]) -> None:
        self._resolve(f"workflow_file:{repo_id}:{path}:{blob}")
        if self.store.add(RawKind.WORKFLOW_FILE, f"{repo_id}:{path}:{blob}", body, repo_id):
            self.stats.count_records(RawKind.WORKFLOW_FILE.value)
        self.store.mark([("INSERT OR IGNORE INTO blobs VALUES (?, ?, ?)", (repo_id, path, blob))])

    def _blob_texts_task(self, repo_id: int, items: list[tuple[str, str, str]]) -> Task:
        client = self.client
        full_name = self._name(repo_id)
        owner, _, name = full_name.partition("/")
        where = f"{full_name} workflow files ({len(items)})"

        def work() -> Any:
            data = client.graphql(ep.graphql_blob_text_query(owner, name, [b for _, b, _ in items]))
            repo = data.get("repository") or {}
            return [repo.get(f"b{i}") for i in range(len(items))]

        def apply(result: Any) -> None:
            if isinstance(result, _Failure):  # the batch failed: each file on its own
                for path, blob, sha in items:
                    self._push(*self._blob_task(repo_id, path, blob, sha))
                return
            for (path, blob, sha), got in zip(items, result, strict=True):
                text = got.get("text") if isinstance(got, dict) else None
                if (
                    isinstance(text, str)
                    and not got.get("isTruncated")
                    and not got.get("isBinary")
                    and got.get("oid") == blob
                ):
                    body = {"source": "graphql", "path": path, "sha": blob, "text": text}
                    body["size"] = got.get("byteSize")
                    self._blobs_in_flight.discard((repo_id, path, blob))
                    self._store_blob(repo_id, path, blob, body)
                else:  # binary, truncated or not found: the contents API gives it whole
                    self._push(*self._blob_task(repo_id, path, blob, sha))

        return self._guard("workflow_files", where, work), apply, repo_id

    def _blob_task(self, repo_id: int, path: str, blob: str, sha: str) -> Task:
        client = self.client
        full_name = self._name(repo_id)
        where = f"{full_name}/{path}@{sha}"

        def work() -> Any:
            r = client.get(ep.contents(full_name, path), {"ref": sha})
            if r.status != 200 or not isinstance(r.body, dict) or "content" not in r.body:
                return _Failure("workflow_file", where, r.status, _message(r))
            return r.body

        def apply(result: Any) -> None:
            self._blobs_in_flight.discard((repo_id, path, blob))
            if isinstance(result, _Failure):
                self._fail(result, f"workflow_file:{repo_id}:{path}:{blob}")
                return
            self._store_blob(repo_id, path, blob, result)

        key = f"workflow_file:{repo_id}:{path}:{blob}"
        return (
            self._guard("workflow_file", where, work),
            self._checked("workflow_file", where, key, apply),
            repo_id,
        )

    # -- logs -------------------------------------------------------------------------------------
    def _queue_logs(self, repo_id: int, run_id: int, attempt: int, jobs: list[_LogJob]) -> None:
        """One archive request for the attempt's jobs that ran (when more than one did), one
        log request per job otherwise; a job that ran no step needs no request."""
        ran = [j for j in jobs if j.steps > 0]
        if self.opts.log_route == "attempt" and len(ran) > 1:
            for j in jobs:
                if j.steps == 0:
                    self._push(*self._log_task(repo_id, j.job_id, j.conclusion, j.steps))
            self._push(*self._archive_task(repo_id, run_id, attempt, ran))
            return
        for j in jobs:
            self._push(*self._log_task(repo_id, j.job_id, j.conclusion, j.steps))

    def _archive_task(self, repo_id: int, run_id: int, attempt: int, jobs: list[_LogJob]) -> Task:
        client = self.client
        full_name = self._name(repo_id)
        cap = self.opts.log_cap_bytes
        where = f"{full_name} run {run_id} attempt {attempt} logs"
        stems = [job_file_name(j.name) for j in jobs]
        unique = {stem for stem in stems if stems.count(stem) == 1}

        def work() -> Any:
            status, _, data = client.download(
                ep.attempt_logs(full_name, run_id, attempt), cap * len(jobs), "attempt_logs"
            )
            if status == "expired":
                return [_expired(j) for j in jobs], []
            if data is None:  # the whole archive over the caps: each log on its own
                return [], jobs
            try:
                files = read_archive(data)
            except ArchiveError:  # not a zip: each log on its own
                return [], jobs
            found: list[dict[str, Any]] = []
            rest: list[_LogJob] = []
            for job, stem in zip(jobs, stems, strict=True):
                raw = files.get(stem) if stem in unique else None
                if raw is None:  # not in the archive, or its name is shared: ask for it alone
                    rest.append(job)
                elif len(raw) > cap:
                    found.append(
                        {
                            "job_id": job.job_id,
                            "status": "too_large",
                            "bytes": len(raw),
                            "text": None,
                        }
                    )
                else:
                    # Our own tokens and common secret shapes out; GitHub's *** masks stay.
                    text = client.scrub(raw.decode("utf-8", errors="replace"))
                    found.append(
                        {"job_id": job.job_id, "status": "ok", "bytes": len(raw), "text": text}
                    )
            return found, rest

        def apply(result: Any) -> None:
            if isinstance(result, _Failure):
                # the archive failed: each job's log on its own (whose failures are recorded)
                for j in jobs:
                    self._push(*self._log_task(repo_id, j.job_id, j.conclusion, j.steps))
                return
            found, rest = result
            sql: list[Sql] = []
            for body in found:
                if self.store.add(RawKind.LOG, str(body["job_id"]), body, repo_id):
                    self.stats.count_records(RawKind.LOG.value)
                sql.append(
                    ("UPDATE logs SET state=? WHERE job_id=?", (body["status"], body["job_id"]))
                )
            self.store.mark(sql)
            for j in rest:
                self._push(*self._log_task(repo_id, j.job_id, j.conclusion, j.steps))

        return self._guard("attempt_logs", where, work), apply, repo_id

    def _log_task(self, repo_id: int, job_id: int, conclusion: str | None, steps: int) -> Task:
        client = self.client
        full_name = self._name(repo_id)
        cap = self.opts.log_cap_bytes
        where = f"{full_name} job {job_id} log"

        def work() -> Any:
            if steps == 0:  # a job that ran no step (skipped, never started) has no log
                return {"job_id": job_id, "status": "missing", "bytes": None, "text": None}
            got = client.download_log(ep.job_logs(full_name, job_id), cap)
            status = got.status
            if status == "expired" and conclusion == "skipped":
                status = "missing"  # a skipped job never had a log
            # Our own tokens and common secret shapes out; GitHub's *** masks stay.
            text = client.scrub(got.text) if got.text is not None else None
            return {"job_id": job_id, "status": status, "bytes": got.bytes, "text": text}

        def apply(result: Any) -> None:
            if isinstance(result, _Failure):
                self._fail(result, f"log:{job_id}")
                return
            self._resolve(f"log:{job_id}")
            if self.store.add(RawKind.LOG, str(job_id), result, repo_id):
                self.stats.count_records(RawKind.LOG.value)
            self.store.mark(
                [("UPDATE logs SET state=? WHERE job_id=?", (result["status"], job_id))]
            )

        key = f"log:{job_id}"
        return self._guard("log", where, work), self._checked("log", where, key, apply), repo_id


def crawl(
    out: Path,
    opts: CrawlOptions,
    client: GitHubClient,
    *,
    on_event: EventSink = ignore_events,
) -> CrawlResult:
    """Crawl into the raw store at `out`, continuing whatever an earlier run left unfinished."""
    store = CrawlStore(out, api_url=client.api_url)
    store.synthetic = lambda: client.simulated
    if store.kill.point == "request":
        client.on_response = lambda: store.kill.tick("request")
    try:
        if client.etags is not None:
            for url, entry in store.load_etags().items():
                client.etags.put(url, *entry)
            client.etags.dirty()
        return Crawler(client, store, opts, on_event=on_event).run()
    finally:
        store.close()
