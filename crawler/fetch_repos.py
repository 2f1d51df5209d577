"""Fetching a repository: its object (following a rename) and its workflows."""

from __future__ import annotations

import json
from typing import Any

from gharuntime.contract import RawKind
from gharuntime.crawler import endpoints as ep
from gharuntime.crawler.fetch_runs import RunFetching
from gharuntime.crawler.listing import pages, response_message
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.crawler.store import Sql
from gharuntime.crawler.units import Failure, Task

__all__ = ["RepositoryFetching"]


class RepositoryFetching(RunFetching):
    """The repository unit; an available repository queues its run windows."""

    def _repo_task(self, name: str) -> Task:
        client = self.client

        def work() -> Any:
            r = client.get(ep.repository(name), use_etag=True)
            if r.status != 200 or not isinstance(r.body, dict):
                return ("missing", r.status, response_message(r))
            full_name = str(r.body["full_name"])
            items: list[Any] = []
            actions_status = 200
            for page in pages(
                client, ep.workflows(full_name), {"per_page": self.opts.per_page}, use_etag=True
            ):
                if page.status != 200 or not isinstance(page.body, dict):
                    actions_status = page.status
                    break
                items.extend(page.body.get("workflows", []))
            return ("ok", r, items, actions_status)

        def apply(result: Any) -> None:
            if isinstance(result, Failure):
                self._fail(result, f"repository:{name}")
                self.stats.count_repository("failed")
                self.on_event(CrawlEvent("repository", {"name": name, "state": "failed"}))
                return
            if result[0] == "missing":
                _, status, message = result
                self._fail(
                    Failure(
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
                    Failure(
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
