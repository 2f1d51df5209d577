"""The simulated GitHub under hostile requests: answers are GitHub's JSON errors, never an HTML
page or a server traceback."""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlsplit

import pytest

from gharuntime.sim.faults import Faults


def _raw(url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
        (b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400),
        (b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999\r\n\r\n", 400),
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"\r\n", 431),
        (b"BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", 501),
    ],
)
def test_bad_requests_get_github_json(
    sim_server: Any, capfd: pytest.CaptureFixture[str], request_bytes: bytes, status: int
) -> None:
    got, headers, body = _raw(sim_server.url, request_bytes)
    assert got == status
    assert headers["content-type"].startswith("application/json")
    assert "message" in json.loads(body)
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize(
    "spec",
    ["error_503=2", "reset=-0.1", "error_503=nan", "seed=-1", "seed=1.5", "x=1", "reset=abc"],
)
def test_nonsense_fault_rates_are_refused(spec: str) -> None:
    with pytest.raises(ValueError):
        Faults.parse(spec)
