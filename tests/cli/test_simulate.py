"""`gharuntime simulate serve|dump` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import requests
from click.testing import CliRunner

from gharuntime.cli.main import cli


def test_dump_writes_a_raw_store_and_reports_json(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "simulate",
            "dump",
            "--seed",
            "2",
            "--repos",
            "3",
            "--out",
            str(tmp_path / "raw"),
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{") :])
    assert report["repos"] > 0 and report["runs"] > 0
    assert (tmp_path / "raw" / "state.sqlite").is_file()


def test_dump_into_a_folder_of_another_world_is_a_usage_error(tmp_path: Path) -> None:
    runner = CliRunner()
    runner.invoke(
        cli,
        [
            "simulate",
            "dump",
            "--seed",
            "2",
            "--repos",
            "2",
            "--out",
            str(tmp_path / "raw"),
            "--workers",
            "1",
        ],
    )
    result = runner.invoke(
        cli,
        [
            "simulate",
            "dump",
            "--seed",
            "3",
            "--repos",
            "2",
            "--out",
            str(tmp_path / "raw"),
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 2 and "use another --out folder" in result.output


def test_serve_rejects_an_unknown_fault() -> None:
    result = CliRunner().invoke(cli, ["simulate", "serve", "--faults", "explode=1"])
    assert result.exit_code == 2 and "unknown fault" in result.output


def test_serve_rejects_a_bad_tokens_file(tmp_path: Path) -> None:
    bad = tmp_path / "tokens.json"
    bad.write_text("[1, 2]")
    result = CliRunner().invoke(cli, ["simulate", "serve", "--tokens", str(bad)])
    assert result.exit_code == 2 and "token" in result.output


def test_help_teaches_with_an_example() -> None:
    result = CliRunner().invoke(cli, ["simulate", "dump", "--help"])
    assert result.exit_code == 0 and "Example:" in result.output


def test_serve_answers_over_http_until_stopped(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"secret-token-1": "alice"}))
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gharuntime"),
            "simulate",
            "serve",
            "--port",
            "0",
            "--tokens",
            str(tokens),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        r = requests.get(
            f"{url}/rate_limit", headers={"Authorization": "token secret-token-1"}, timeout=10
        )
        assert r.status_code == 200 and r.json()["rate"]["limit"] == 5000
        assert (
            requests.get(
                f"{url}/rate_limit", headers={"Authorization": "token nope"}, timeout=10
            ).status_code
            == 401
        )
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "secret-token-1" not in err


def test_serve_on_a_busy_port_is_a_usage_error() -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = CliRunner().invoke(cli, ["simulate", "serve", "--port", str(port)])
    assert result.exit_code == 2 and "pick another --port" in result.output


def test_serve_refuses_an_empty_host() -> None:
    """Found by the fuzzer: --host "" listened on every interface and printed http://:PORT."""
    result = CliRunner().invoke(cli, ["simulate", "serve", "--repos", "2", "--host", ""])
    assert result.exit_code == 2 and "--host" in result.output, result.output
