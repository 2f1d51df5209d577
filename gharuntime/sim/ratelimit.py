"""GitHub's rate limits for the simulated server: a primary limit per account and resource
(tokens of one account share it), reset hourly (search: per minute), and a secondary limit on
bursts that answers 403 with or without `Retry-After`."""

from __future__ import annotations

import random
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Quota", "RateLimiter", "Verdict"]


@dataclass(frozen=True)
class Quota:
    """One account's standing on one resource, as the X-RateLimit-* headers say it."""

    limit: int
    remaining: int
    used: int
    reset: int
    resource: str


@dataclass(frozen=True)
class Verdict:
    """What the limiter decided for one request: allowed, or refused with a status."""

    allowed: bool
    quota: Quota
    status: int = 200
    message: str = ""
    retry_after: int | None = None


class RateLimiter:
    """Counts requests per (account, resource). `limits` maps resource → (requests, window s);
    `secondary` is (requests, window s) per account across resources, None to disable."""

    def __init__(
        self,
        limits: dict[str, tuple[int, float]],
        *,
        exhausted_status: int = 403,
        secondary: tuple[int, float] | None = None,
        secondary_block_s: float = 2.0,
        seed: int = 0,
        clock: Callable[[], float],
    ) -> None:
        self.limits = limits
        self.exhausted_status = exhausted_status
        self.secondary = secondary
        self.secondary_block_s = secondary_block_s
        self.clock = clock
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, str], tuple[float, int]] = {}  # → (reset time, used)
        self._recent: dict[str, deque[float]] = {}
        self._blocked_until: dict[str, float] = {}

    def _window(self, account: str, resource: str, now: float) -> tuple[float, int]:
        key = (account, resource)
        reset, used = self._windows.get(key, (0.0, 0))
        if now >= reset:
            reset, used = now + self.limits[resource][1], 0
            self._windows[key] = (reset, used)
        return reset, used

    def peek(self, account: str, resource: str) -> Quota:
        with self._lock:
            now = self.clock()
            reset, used = self._window(account, resource, now)
            limit = self.limits[resource][0]
            return Quota(limit, max(0, limit - used), used, int(reset), resource)

    def check(self, account: str, resource: str) -> Verdict:
        """Refuse when the account is over its secondary or primary limit; does not count."""
        with self._lock:
            now = self.clock()
            reset, used = self._window(account, resource, now)
            limit = self.limits[resource][0]
            quota = Quota(limit, max(0, limit - used), used, int(reset), resource)
            if self.secondary is not None:
                blocked = self._blocked_until.get(account, 0.0)
                recent = self._recent.setdefault(account, deque())
                while recent and recent[0] <= now - self.secondary[1]:
                    recent.popleft()
                if now < blocked or len(recent) >= self.secondary[0]:
                    if now >= blocked:
                        self._blocked_until[account] = now + self.secondary_block_s
                    retry = None
                    if self._rng.random() < 0.5:
                        retry = max(1, int(self._blocked_until[account] - now + 0.999))
                    return Verdict(
                        False,
                        quota,
                        403,
                        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                        retry,
                    )
            if used >= limit:
                return Verdict(
                    False,
                    quota,
                    self.exhausted_status,
                    f"API rate limit exceeded for account {account}.",
                    None,
                )
            return Verdict(True, quota)

    def count(self, account: str, resource: str) -> Quota:
        """Charge one request; returns the standing after it."""
        with self._lock:
            now = self.clock()
            reset, used = self._window(account, resource, now)
            used += 1
            self._windows[(account, resource)] = (reset, used)
            if self.secondary is not None:
                self._recent.setdefault(account, deque()).append(now)
            limit = self.limits[resource][0]
            return Quota(limit, max(0, limit - used), used, int(reset), resource)
