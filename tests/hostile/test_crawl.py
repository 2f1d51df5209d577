"""The crawler against hostile input: tokens a header cannot carry, API URLs with credentials,
and a server (real HTTP on 127.0.0.1) that answers with bodies of the wrong shape."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli
from gharuntime.rawstore import iter_records

SECRET = "ghp_" + "Hostile" + "Z" * 29  # built at run time; never a literal secret in the source


class _Odd(BaseHTTPRequestHandler):
    """GitHub's shapes, except that ids are strings that echo the caller's token."""

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-RateLimit-Limit", "5000")
        self.send_header("X-RateLimit-Remaining", "4999")
        self.send_header("X-RateLimit-Reset", "9999999999")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        token = self.headers.get("Authorization", "").split(" ")[-1]
        if self.path.startswith("/user"):
            self._send(200, {"login": "hostile", "id": 1})
        elif self.path.startswith("/rate_limit"):
            self._send(200, {"resources": {}})
        elif "/actions/workflows" in self.path:
            self._send(200, {"total_count": 1, "workflows": [{"id": token, "path": token}]})
        elif self.path.startswith("/repos/"):
            self._send(200, {"id": token, "full_name": "octo/hello", "archived": False})
        else:
            self._send(404, {"message": "Not Found"})


@pytest.fixture()
def odd_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Odd)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _crawl(tmp_path: Path, url: str, *extra: str, env: dict[str, str] | None = None) -> Any:
    repos = tmp_path / "repos.txt"
    repos.write_text("octo/hello\n")
    return CliRunner().invoke(
        cli,
        [
            "crawl",
            "--out",
            str(tmp_path / "raw"),
            "--repos",
            str(repos),
            "--api-url",
            url,
            "--max-retries",
            "0",
            "--backoff",
            "0",
            "0",
            *extra,
        ],
        env=env or {"GITHUB_TOKEN": SECRET},
    )


def test_a_body_of_the_wrong_shape_becomes_a_scrubbed_error_record(
    odd_server: str, tmp_path: Path
) -> None:
    for attempt in (1, 2):  # the rerun meets the same body: still no crash
        result = _crawl(tmp_path, odd_server)
        assert result.exit_code == 1, (attempt, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "Traceback" not in result.output
        assert SECRET not in result.output
    errors = [r.body for r in iter_records([tmp_path / "raw"]) if r.kind.value == "error"]
    assert errors and all(e["what"] == "repository" for e in errors)
    assert all("unexpected response" in e["message"] for e in errors)
    assert SECRET not in json.dumps(errors)


@pytest.mark.parametrize(
    "content",
    [
        b"ghp_abc\ndef ghi\n",  # two tokens on one line
        b"ghp_" + b"A" * 20 + b"\r\x01x\n",  # a control character
        b"\xff\xfe not utf-8\n",
        "ghp_ünïcode\n".encode(),
    ],
)
def test_a_token_a_header_cannot_carry_is_refused_without_showing_it(
    tmp_path: Path, content: bytes
) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_bytes(content)
    result = _crawl(tmp_path, "http://127.0.0.1:9", "--token-file", str(tokens), env={})
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "--token-file" in result.output
    for line in content.splitlines():
        word = line.decode("utf-8", "replace").strip()
        if len(word) > 6:
            assert word not in result.output
    assert not (tmp_path / "raw").exists()


def test_a_newline_in_github_token_is_refused(tmp_path: Path) -> None:
    result = _crawl(tmp_path, "http://127.0.0.1:9", env={"GITHUB_TOKEN": SECRET + "\nX-Evil: 1"})
    assert result.exit_code == 2 and "GITHUB_TOKEN" in result.output
    assert SECRET not in result.output


@pytest.mark.parametrize(
    "url",
    [
        "http://user:" + "pa55word" + "@127.0.0.1:9",
        "ftp://127.0.0.1/",
        "file:///etc/passwd",
        "127.0.0.1:9",
        "http://127.0.0.1:99999",
        "http://[::1",
    ],
)
def test_an_api_url_with_credentials_or_not_http_is_refused(tmp_path: Path, url: str) -> None:
    result = _crawl(tmp_path, url)
    assert result.exit_code == 2, result.output
    assert "pa55word" not in result.output
    assert not (tmp_path / "raw").exists()


def test_credentials_never_reach_the_store_or_the_dataset(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "build",
            "--source",
            "github",
            "--repos",
            str(tmp_path / "r.txt"),
            "--api-url",
            "https://bot:" + "pa55word" + "@ghe.example/api/v3",
            "--out",
            str(tmp_path / "ds"),
        ],
    )
    assert result.exit_code == 2
    assert "pa55word" not in result.output
    assert not (tmp_path / "ds.raw").exists()


def test_since_after_until_is_refused(tmp_path: Path) -> None:
    result = _crawl(
        tmp_path, "http://127.0.0.1:9", "--since", "2026-02-01", "--until", "2026-01-01"
    )
    assert result.exit_code == 2 and "--since" in result.output


def test_state_db_of_the_store_is_untouched_by_a_refusal(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "state.sqlite").mkdir()  # a folder where the database should be
    result = _crawl(tmp_path, "http://127.0.0.1:9")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert (raw / "state.sqlite").is_dir()
