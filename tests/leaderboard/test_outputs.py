"""gharuntime.leaderboard.outputs: `build_leaderboard` writes README.md and index.html, the same
bytes from the same results, or nothing at all."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from leaderboard_support import leaderboard_cli as _run

from gharuntime.leaderboard import LeaderboardError, build_leaderboard, scan
from gharuntime.leaderboard.view import table_views


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


def test_build_leaderboard_writes_both_files_and_returns_their_views(
    results_master: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site" / "board"
    board = build_leaderboard(results_master, out, summaries=False)  # the shared folder as it is
    assert (board.markdown, board.page) == (out / "README.md", out / "index.html")
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "index.html"]  # no temporary
    assert [v.key for v in board.views] == [v.key for v in table_views(scan(results_master))]
    # the results folder is named relative to where the files are written
    label = Path(os.path.relpath(results_master, out)).as_posix()
    assert f"results in `{label}`" in board.markdown.read_text(encoding="utf-8")
    assert f"from <code>{label}</code>" in board.page.read_text(encoding="utf-8")
    for path in (board.markdown, board.page):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_an_out_that_is_a_file_is_refused(results_master: Path, tmp_path: Path) -> None:
    out = tmp_path / "board"
    out.write_text("a file", encoding="utf-8")
    with pytest.raises(LeaderboardError, match="not a folder; --out takes the folder"):
        build_leaderboard(results_master, out)
    assert out.read_text(encoding="utf-8") == "a file"


@pytest.mark.parametrize("blocked", ["README.md", "index.html"])
def test_nothing_is_written_when_either_file_cannot_be(
    results_master: Path, tmp_path: Path, blocked: str
) -> None:
    out = tmp_path / "board"
    out.mkdir()
    (out / blocked).mkdir()  # a folder where a file goes
    other = "index.html" if blocked == "README.md" else "README.md"
    (out / other).write_text("old", encoding="utf-8")
    with pytest.raises(LeaderboardError) as caught:
        build_leaderboard(results_master, out)
    assert caught.value.problems == [
        f"{out / blocked}: exists and is not a regular file; remove it or give another --out"
    ]
    assert (out / other).read_text(encoding="utf-8") == "old"


def test_a_bad_result_writes_nothing_and_names_the_file(results_dir: Path, tmp_path: Path) -> None:
    bad = results_dir / "gharuntime-fixture" / "temporal-config-double.json"
    bad.write_text(bad.read_text(encoding="utf-8").replace('"rmsle"', '"rmsle_"', 1))
    with pytest.raises(LeaderboardError) as caught:
        build_leaderboard(results_dir, tmp_path / "board")
    assert caught.value.problems and all(str(bad) in p for p in caught.value.problems)
    assert not (tmp_path / "board").exists()


def test_a_rebuild_replaces_the_files_in_place(results_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "board"
    first = build_leaderboard(results_dir, out).markdown.read_text(encoding="utf-8")
    (results_dir / "gharuntime-fixture" / "temporal-config-double.json").unlink()
    second = build_leaderboard(results_dir, out).markdown.read_text(encoding="utf-8")
    assert "| double |" in first and "| double |" not in second
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "index.html"]
