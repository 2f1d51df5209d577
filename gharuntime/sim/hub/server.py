"""The test Hub's server: where it listens, its tokens, its faults and its traffic counters."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from gharuntime.sim.hub.handler import make_handler
from gharuntime.sim.hub.store import Store

__all__ = ["HubFault", "HubServer", "HubTraffic", "serve_hub"]


@dataclass
class HubFault:
    """Answer `times` requests whose method is `method` and whose path matches `path` (a
    regular expression) with `kind`: "500", or "drop" (read half the body, then close the
    connection without an answer)."""

    method: str
    path: str
    kind: str = "500"
    times: int = 1


@dataclass
class HubTraffic:
    """What the server received and sent: request lines and body/response byte counts."""

    requests: list[tuple[str, str]] = field(default_factory=list)
    bytes_received: int = 0
    bytes_sent: int = 0

    def count(self, method: str, path_pattern: str) -> int:
        return sum(1 for m, p in self.requests if m == method and re.search(path_pattern, p))


class HubServer:
    """The Hub endpoint; `start()` binds 127.0.0.1 on a free port (or `port`)."""

    def __init__(
        self,
        root: Path,
        *,
        tokens: Mapping[str, str] | None = None,
        page_size: int = 1000,
        port: int = 0,
    ) -> None:
        self.store = Store(root)
        self.tokens = dict(tokens or {})
        self.page_size = page_size
        self.faults: list[HubFault] = []
        self.traffic = HubTraffic()
        self._traffic_lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", port), make_handler(self))
        self._thread: threading.Thread | None = None
        self._serving = False  # a serve_forever loop was started: only then can shutdown() wait

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> str:
        self._serving = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self.url

    def stop(self) -> None:
        """Stop serving and close the socket; a server never started is only closed
        (socketserver's shutdown() would wait forever for a loop that never ran)."""
        if self._serving:
            self._httpd.shutdown()
            self._serving = False
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def serve_forever(self) -> None:
        self._serving = True
        self._httpd.serve_forever()

    def fault_for(self, method: str, path: str) -> str | None:
        with self._traffic_lock:
            for fault in self.faults:
                if fault.times > 0 and fault.method == method and re.search(fault.path, path):
                    fault.times -= 1
                    return fault.kind
        return None

    def record(self, method: str, path: str, received: int = 0, sent: int = 0) -> None:
        with self._traffic_lock:
            if method:
                self.traffic.requests.append((method, path))
            self.traffic.bytes_received += received
            self.traffic.bytes_sent += sent

    def user(self, authorization: str | None) -> str | None:
        """The account a token names; None for no token or one the server does not know."""
        if not authorization or not authorization.startswith("Bearer "):
            return None
        token = authorization[len("Bearer ") :].strip()
        if not self.tokens:
            return "anonymous-writer" if token else None
        return self.tokens.get(token)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-request is not a server error worth a traceback."""


@contextlib.contextmanager
def serve_hub(
    root: Path, *, tokens: Mapping[str, str] | None = None, page_size: int = 1000
) -> Iterator[HubServer]:
    """A running HubServer storing under `root`, stopped on exit."""
    server = HubServer(root, tokens=tokens, page_size=page_size)
    server.start()
    try:
        yield server
    finally:
        server.stop()
