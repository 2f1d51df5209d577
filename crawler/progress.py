"""What a crawl reports while it works: events for a live display and counters for the summary.

Library code never prints; the crawl calls `on_event(CrawlEvent)` and keeps a `CrawlStats`, and
the CLI renders both.

A crawl reports events, not the library's one `gharuntime.progress.Progress(what, done, total)`:
its display shows more than a count (the request in flight, rate-limit waits, retries, each
repository's outcome), and the stats need those facts too. Where a count is all a caller wants,
`gharuntime.source_kinds.crawled` adapts the events (repositories done of planned) into Progress.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CrawlEvent", "CrawlStats", "EventSink", "ignore_events"]


@dataclass(frozen=True)
class CrawlEvent:
    """One thing that happened.

    kind is one of: `request` (endpoint, status), `retry` (endpoint, reason, delay),
    `wait` (seconds, reason: the crawl is waiting for a rate-limit reset or a secondary limit),
    `repository` (name, state: ok|missing|failed|actions_unavailable when its metadata is in,
    renamed (with `to`), and exactly once `done` when every unit of it is stored),
    `stored` (counts by kind),
    `problem` (what, where, message), `plan` (repositories: total to crawl).
    """

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


EventSink = Callable[[CrawlEvent], None]


def ignore_events(event: CrawlEvent) -> None:
    """An event sink that drops everything."""


class CrawlStats:
    """Thread-safe counters for the end summary."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[str] = Counter()  # by endpoint
        self.statuses: Counter[int] = Counter()
        self.not_modified = 0
        self.retries: Counter[str] = Counter()  # by reason
        self.records: Counter[str] = Counter()  # by raw kind
        self.failures: Counter[str] = Counter()  # by what failed
        self.waited_s = 0.0
        self.repositories: Counter[str] = Counter()  # by outcome
        self.quota_left: int | None = None

    def count_request(self, endpoint: str, status: int) -> None:
        with self._lock:
            self.requests[endpoint] += 1
            self.statuses[status] += 1
            if status == 304:
                self.not_modified += 1

    def count_retry(self, reason: str) -> None:
        with self._lock:
            self.retries[reason] += 1

    def count_wait(self, seconds: float) -> None:
        with self._lock:
            self.waited_s += seconds

    def count_failure(self, what: str) -> None:
        with self._lock:
            self.failures[what] += 1

    def count_records(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self.records[kind] += n

    def count_repository(self, outcome: str) -> None:
        with self._lock:
            self.repositories[outcome] += 1

    @property
    def total_requests(self) -> int:
        return sum(self.requests.values())

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        with self._lock:
            return {
                "requests": self.total_requests,
                "requests_by_endpoint": dict(sorted(self.requests.items())),
                "not_modified": self.not_modified,
                "retries": dict(sorted(self.retries.items())),
                "records": dict(sorted(self.records.items())),
                "failures": dict(sorted(self.failures.items())),
                "repositories": dict(sorted(self.repositories.items())),
                "waited_s": round(self.waited_s, 3),
            }
