"""Fetching job logs: one archive per run attempt, or one log per job."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gharuntime.contract import RawKind
from gharuntime.crawler import endpoints as ep
from gharuntime.crawler.store import Sql
from gharuntime.crawler.units import CrawlerBase, Failure, Task
from gharuntime.logarchive import ArchiveError, job_file_name, read_archive

__all__ = ["LogFetching", "LogJob"]


@dataclass(frozen=True)
class LogJob:
    """A job whose log a crawl with --logs still has to store."""

    job_id: int
    name: str
    conclusion: str | None
    steps: int


def _expired(job: LogJob) -> dict[str, Any]:
    status = "missing" if job.conclusion == "skipped" else "expired"  # skipped: never had a log
    return {"job_id": job.job_id, "status": status, "bytes": None, "text": None}


class LogFetching(CrawlerBase):
    """The log units of a crawl with --logs."""

    def _queue_logs(self, repo_id: int, run_id: int, attempt: int, jobs: list[LogJob]) -> None:
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

    def _archive_task(self, repo_id: int, run_id: int, attempt: int, jobs: list[LogJob]) -> Task:
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
            rest: list[LogJob] = []
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
            if isinstance(result, Failure):
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
            if isinstance(result, Failure):
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
