"""Fetching workflow YAML once per content: head SHAs to blob oids, then each new blob's text."""

from __future__ import annotations

from typing import Any

from gharuntime.contract import RawKind
from gharuntime.crawler import endpoints as ep
from gharuntime.crawler.listing import response_message
from gharuntime.crawler.store import Sql
from gharuntime.crawler.units import CrawlerBase, Failure, Task

__all__ = ["GRAPHQL_BATCH", "YamlFetching"]

GRAPHQL_BATCH = 100


class YamlFetching(CrawlerBase):
    """The refs and blobs units: which file each run ran, and its text."""

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
            if isinstance(result, Failure):
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
            if isinstance(result, Failure):  # the batch failed: each file on its own
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
                return Failure("workflow_file", where, r.status, response_message(r))
            return r.body

        def apply(result: Any) -> None:
            self._blobs_in_flight.discard((repo_id, path, blob))
            if isinstance(result, Failure):
                self._fail(result, f"workflow_file:{repo_id}:{path}:{blob}")
                return
            self._store_blob(repo_id, path, blob, result)

        key = f"workflow_file:{repo_id}:{path}:{blob}"
        return (
            self._guard("workflow_file", where, work),
            self._checked("workflow_file", where, key, apply),
            repo_id,
        )
