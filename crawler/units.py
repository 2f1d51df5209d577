"""A unit of work (fetched in a worker thread, applied in the main one) and the state and
bookkeeping that every kind of unit shares: queueing, failures, resolved errors, guards."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gharuntime.contract import RawKind
from gharuntime.crawler.client import BadCredentials, GitHubClient, RequestFailed
from gharuntime.crawler.options import CrawlOptions
from gharuntime.crawler.progress import CrawlEvent, EventSink, ignore_events
from gharuntime.crawler.store import CrawlStore

__all__ = ["Apply", "CrawlerBase", "Failure", "Task"]


@dataclass
class Failure:
    """A unit that could not be fetched, as a worker hands it back to the main thread."""

    what: str
    where: str
    status: int | None
    message: str


Apply = Callable[[Any], None]
Task = tuple[Callable[[], Any], Apply, "int | str"]  # work, apply, repository key


class CrawlerBase:
    """A crawl's state and the helpers every fetcher uses; `Crawler` adds the fetchers and the
    driver on top."""

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

    def _push(
        self, work: Callable[[], Any], apply: Apply, key: int | str, *, front: bool = True
    ) -> None:
        self._open[key] = self._open.get(key, 0) + 1
        if front:
            self._queue.appendleft((work, apply, key))
        else:
            self._queue.append((work, apply, key))

    def _fail(self, f: Failure, kind_key: str) -> None:
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
            if isinstance(result, Failure):
                apply(result)
                return
            try:
                apply(result)
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                self._fail(
                    Failure(
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
        """Run `work`, turning a RequestFailed into a Failure the main thread records."""

        def run() -> Any:
            try:
                return work()
            except BadCredentials:
                raise
            except RequestFailed as exc:
                return Failure(what, where, exc.status, str(exc))
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
                # Valid JSON of the wrong shape: report it rather than stop the crawl; the
                # exception's text may quote what the server sent, so only its type is kept.
                return Failure(what, where, None, f"unexpected response ({type(exc).__name__})")

        return run

    def _full_name(self, repo_id: int) -> str:
        row = self.store.query("SELECT full_name FROM repo_info WHERE repo_id=?", (repo_id,))
        return str(row[0][0])

    def _name(self, repo_id: int) -> str:
        cached = self._repo_cache.get(repo_id)
        return cached[0] if cached else self._full_name(repo_id)
