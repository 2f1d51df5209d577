"""Fault injection and request recording for the simulated server.

Each fault has a rate and the draws are seeded per request URL and occurrence (not per arrival
order), so a test sees the same faults on the same requests however its threads interleave."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from dataclasses import dataclass, fields

__all__ = ["FAULT_KINDS", "REQUEST_FAULTS", "Faults", "Recorder"]

FAULT_KINDS = (
    "error_500",
    "error_502",
    "error_503",
    "reset",
    "slow",
    "truncate",
    "repeat",
    "expire",
)
REQUEST_FAULTS = FAULT_KINDS[:6]
"""Faults any counted request may suffer; `repeat` applies to listings, `expire` to logs."""


@dataclass(frozen=True)
class Faults:
    """Rates (0..1) of each fault per request, and the seed of their draws.

    - error_500/502/503: answer that status with GitHub's error body
    - reset: close the connection without answering
    - slow: answer after `slow_s` seconds
    - truncate: promise the full Content-Length, send half the body, close
    - repeat: a list page starts with the last item of the page before (a new item arrived)
    - expire: a job's log download answers 410 from now on (logs expiring during a crawl)
    """

    seed: int = 0
    error_500: float = 0.0
    error_502: float = 0.0
    error_503: float = 0.0
    reset: float = 0.0
    slow: float = 0.0
    truncate: float = 0.0
    repeat: float = 0.0
    expire: float = 0.0
    slow_s: float = 0.3

    @property
    def any(self) -> bool:
        return any(getattr(self, k) > 0 for k in FAULT_KINDS)

    def draw(self, key: str, occurrence: int, kinds: tuple[str, ...] = FAULT_KINDS) -> str | None:
        """The fault (if any) for the `occurrence`-th request of `key`."""
        if not self.any:
            return None
        digest = hashlib.blake2b(f"{self.seed}|{key}|{occurrence}".encode(), digest_size=8).digest()
        u = int.from_bytes(digest, "big") / 2**64
        acc = 0.0
        for kind in kinds:
            acc += getattr(self, kind)
            if u < acc:
                return kind
        return None

    @classmethod
    def parse(cls, spec: str) -> Faults:
        """`"error_503=0.02,reset=0.01,seed=7"` → Faults (for the command line)."""
        values: dict[str, float] = {}
        names = {f.name for f in fields(cls)}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            name, _, value = part.partition("=")
            if name not in names:
                raise ValueError(f"unknown fault {name!r}; known: {', '.join(sorted(names))}")
            try:
                number = float(value)
            except ValueError:
                raise ValueError(f"{name}={value!r}: not a number") from None
            if name == "seed":
                if not number.is_integer() or not 0 <= number < 2**63:
                    raise ValueError(f"seed={value}: give a whole number from 0")
            elif not 0.0 <= number <= 1.0:
                raise ValueError(f"{name}={value}: a fault rate is a fraction from 0 to 1")
            values[name] = number
        seed = int(values.pop("seed", 0))
        return cls(seed=seed, **values)


class Recorder:
    """What the server served, for exact request counts in tests and benchmarks. Tokens appear
    only as labels (`account#n`), never as themselves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[tuple[str, str]] = Counter()  # (endpoint, token label)
        self.statuses: Counter[tuple[str, int]] = Counter()  # (endpoint, status)
        self.faults: Counter[tuple[str, str]] = Counter()  # (endpoint, fault kind)
        self.not_modified = 0
        self.total = 0

    def record(self, endpoint: str, token: str, status: int, fault: str | None) -> None:
        with self._lock:
            self.total += 1
            self.requests[(endpoint, token)] += 1
            self.statuses[(endpoint, status)] += 1
            if status == 304:
                self.not_modified += 1
            if fault:
                self.faults[(endpoint, fault)] += 1

    def count(
        self, endpoint: str | None = None, token: str | None = None, status: int | None = None
    ) -> int:
        """Requests served, optionally only for one endpoint, token label or status."""
        with self._lock:
            if status is not None:
                return sum(
                    n
                    for (e, s), n in self.statuses.items()
                    if s == status and endpoint in (None, e)
                )
            return sum(
                n
                for (e, t), n in self.requests.items()
                if endpoint in (None, e) and token in (None, t)
            )

    def fault_count(self, kind: str | None = None) -> int:
        with self._lock:
            return sum(n for (_, k), n in self.faults.items() if kind in (None, k))

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.statuses.clear()
            self.faults.clear()
            self.not_modified = 0
            self.total = 0
