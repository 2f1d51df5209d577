"""Fetching runs: a time window's run listing, then each run's jobs and earlier attempts."""

from __future__ import annotations

from typing import Any

from gharuntime.contract import RawKind
from gharuntime.crawler import endpoints as ep
from gharuntime.crawler.fetch_logs import LogFetching, LogJob
from gharuntime.crawler.fetch_yaml import YamlFetching
from gharuntime.crawler.listing import pages, response_message
from gharuntime.crawler.store import Sql
from gharuntime.crawler.units import Failure, Task
from gharuntime.crawler.windows import LISTING_CAP, split_window
from gharuntime.workflow import strip_ref

__all__ = ["RunFetching"]


class RunFetching(YamlFetching, LogFetching):
    """The window and run units; a run's YAML and logs are queued as its jobs arrive."""

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
            for i, page in enumerate(pages(client, path, params)):
                if page.status != 200 or not isinstance(page.body, dict):
                    return Failure("runs", where, page.status, response_message(page))
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
            if isinstance(result, Failure):
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
            for page in pages(client, ep.run_jobs(full_name, run_id), params):
                if page.status != 200 or not isinstance(page.body, dict):
                    return Failure("jobs", where, page.status, response_message(page))
                for job in page.body.get("jobs", []):
                    jobs.setdefault(int(job["id"]), job)
            seen = {int(j.get("run_attempt") or 1) for j in jobs.values()}
            for n in range(1, attempt + 1):
                if n in seen:
                    continue
                # A server that ignores filter=all: ask the attempt itself.
                for page in pages(
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
                    return Failure(
                        "run_attempt", f"{where}: attempt {n}", r.status, response_message(r)
                    )
            return jobs, runs

        def apply(result: Any) -> None:
            if isinstance(result, Failure):
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
            wanted: dict[int, list[LogJob]] = {}
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
                        LogJob(job_id, str(job.get("name") or ""), conclusion, steps)
                    )
            self.store.mark(sql)
            for number, items in sorted(wanted.items()):
                self._queue_logs(repo_id, run_id, number, items)

        key = f"jobs:{run_id}:{attempt}"
        return self._guard("jobs", where, work), self._checked("jobs", where, key, apply), repo_id
