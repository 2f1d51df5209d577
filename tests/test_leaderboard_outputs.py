"""gharuntime.leaderboard.outputs: `build_leaderboard` writes README.md and index.html, the same
bytes from the same results, or nothing at all."""

from __future__ import annotations

import shutil
from pathlib import Path

from leaderboard_support import leaderboard_cli as _run


def test_outputs_are_deterministic(results_master: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "board", tmp_path / "b" / "board"
    shutil.copytree(results_master, tmp_path / "a" / "results")
    shutil.copytree(results_master, tmp_path / "b" / "results")
    for root, out in ((tmp_path / "a", a), (tmp_path / "b", b)):
        r = _run("--results", str(root / "results"), "--out", str(out))
        assert r.exit_code == 0, r.output
    assert (a / "README.md").read_bytes() == (b / "README.md").read_bytes()
    assert (a / "index.html").read_bytes() == (b / "index.html").read_bytes()
    r = _run("--results", str(tmp_path / "a" / "results"), "--out", str(a))
    assert (a / "index.html").read_bytes() == (b / "index.html").read_bytes()
