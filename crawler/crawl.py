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
every database write happens in one thread and in order. This module is the driver (planning
what is left, running units, flushing); each kind of unit is fetched by its own module:
`fetch_repos`, `fetch_runs` (windows and runs), `fetch_yaml` (refs and blobs), `fetch_logs`,
on the shared bookkeeping of `units`.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from gharuntime.crawler.client import GitHubClient
from gharuntime.crawler.fetch_repos import RepositoryFetching
from gharuntime.crawler.options import CrawlOptions, CrawlResult
from gharuntime.crawler.progress import CrawlEvent, EventSink, ignore_events
from gharuntime.crawler.selection import in_shard, select_repositories
from gharuntime.crawler.store import CrawlStore
from gharuntime.crawler.units import Apply
from gharuntime.crawler.windows import (
    LISTING_CAP,
    default_window,
    format_time,
    parse_time,
    split_window,
)

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


class Crawler(RepositoryFetching):
    """Runs one crawl into a store. Not reusable; call `run()` once."""

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
