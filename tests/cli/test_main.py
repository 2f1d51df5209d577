"""The root group: a path the file system cannot name (a name over 255 bytes) is bad input,
exit 2 with what and the fix, wherever a command first touches it; never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli

LONG = "z" * 300


@pytest.mark.parametrize(
    "args",
    [
        ["build", "--source", "simulated", "--scale", "tiny", "--out", LONG],
        ["baseline", "median", "--dataset", LONG, "--out", "x.jsonl"],
        ["download", "a/b", "--to", LONG],
        ["laser", "bench", "--model", LONG],
    ],
    ids=["build --out", "baseline --dataset", "download --to", "laser bench --model"],
)
def test_a_name_too_long_for_the_file_system_exits_2(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "zzzzzzzzzz" in result.output and "give a shorter" in result.output
    assert LONG not in result.output  # the name is shortened, not printed whole
    assert list(tmp_path.iterdir()) == []
