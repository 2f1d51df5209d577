"""gharuntime.leaderboard.regions and `gharuntime leaderboard --readme/--check`: a table quoted in
another Markdown file is rendered from the results between its markers, everything else kept;
`--check` names each file the results would change and writes nothing."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from leaderboard_support import leaderboard_cli as _run

from gharuntime.leaderboard import LeaderboardError, build_leaderboard

START = "<!-- gharuntime:table dataset=gharuntime-fixture config=temporal track=config -->"
END = "<!-- /gharuntime:table -->"
BEFORE = "# My project\n\nSome text, kept as written: | not a table |\n\n"
AFTER = "\nMore text after the table.\n"


def _readme(tmp_path: Path, body: str = "stale table\n") -> Path:
    path = tmp_path / "README.md"
    path.write_text(f"{BEFORE}{START}\n{body}{END}\n{AFTER}", encoding="utf-8")
    return path


def _rmsle(results: Path, method: str) -> str:
    path = results / "gharuntime-fixture" / f"temporal-config-{method}.json"
    block = json.loads(path.read_text(encoding="utf-8"))["metrics"]["duration_s"]["rmsle"]
    return f"{block['value']:.3f} [{block['ci_low']:.3f}, {block['ci_high']:.3f}]"


def test_a_region_is_rendered_from_the_results_and_the_rest_kept(
    results_dir: Path, tmp_path: Path
) -> None:
    readme = _readme(tmp_path)
    r = _run(
        "--results", str(results_dir), "--out", str(tmp_path / "board"), "--readme", str(readme)
    )
    assert r.exit_code == 0, r.output
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"{BEFORE}{START}\n") and text.endswith(f"{END}\n{AFTER}")
    region = text.split(START)[1].split(END)[0]
    assert "stale table" not in region
    assert "`results/gharuntime-fixture`" in region  # where it comes from, relative to the file
    lines = region.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    rows = list(itertools.takewhile(lambda line: line.startswith("| "), lines[start:]))
    methods = [line.split(" | ")[1] for line in rows[2:]]  # the table (coverage by recency follows)
    assert sorted(methods) == ["alternating", "double", "exact-ish", "opposite"]
    for line in rows[2:]:
        method = line.split(" | ")[1]
        assert f"| {_rmsle(results_dir, method)} |" in line
    assert "history" not in "".join(methods)  # only the table the region names
    # rendering again changes nothing
    before = readme.read_bytes()
    r = _run(
        "--results", str(results_dir), "--out", str(tmp_path / "board"), "--readme", str(readme)
    )
    assert r.exit_code == 0 and readme.read_bytes() == before


def test_check_names_each_stale_file_and_writes_nothing(results_dir: Path, tmp_path: Path) -> None:
    board, readme = tmp_path / "board", _readme(tmp_path)
    args = ["--results", str(results_dir), "--out", str(board), "--readme", str(readme)]
    r = _run(*args, "--check")
    assert r.exit_code == 1, r.output
    summary = results_dir / "gharuntime-fixture" / "summary.md"
    for path in (board / "README.md", board / "index.html", summary):
        assert f"{path}: missing" in r.output
        assert not path.exists()
    assert f"{readme}: differs" in r.output and "stale table" in readme.read_text()
    assert _run(*args).exit_code == 0
    assert _run(*args, "--check").exit_code == 0
    # one changed byte in one file: that file alone is named
    summary.write_text(summary.read_text(encoding="utf-8").replace("0.", "9.", 1))
    r = _run(*args, "--check")
    assert r.exit_code == 1
    assert f"{summary}: differs" in r.output
    assert str(board / "README.md") not in r.output and str(readme) not in r.output


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (f"{START}\nno end\n", "line 1: the region is not closed"),
        (f"x\n{START}\n{START}\n{END}\n", "line 3: a region opens inside the region of line 2"),
        (f"{END}\n", "line 1: <!-- /gharuntime:table --> closes no region"),
        ("no region at all\n", "holds no table region"),
        (
            "<!-- gharuntime:table dataset=gharuntime-fixture config=temporal -->\n" + END,
            "line 1: the region names no track",
        ),
        (
            "<!-- gharuntime:table dataset=d config=c track=t colour=red -->\n" + END,
            "line 1: unknown colour=",
        ),
        (
            "<!-- gharuntime:table dataset=gharuntime-fixture config=cross_repo track=config -->\n"
            + END,
            "line 1: the results hold no table gharuntime-fixture/cross_repo/config; they hold: "
            "gharuntime-fixture/temporal/config, gharuntime-fixture/temporal/history",
        ),
    ],
)
def test_a_bad_region_is_refused_by_line_and_nothing_is_written(
    results_dir: Path, tmp_path: Path, text: str, says: str
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(text, encoding="utf-8")
    board = tmp_path / "board"
    with pytest.raises(LeaderboardError) as caught:
        build_leaderboard(results_dir, board, readmes=[readme])
    assert any(p.startswith(f"{readme}") and says in p for p in caught.value.problems), (
        caught.value.problems
    )
    assert readme.read_text(encoding="utf-8") == text
    assert not board.exists() and not (results_dir / "gharuntime-fixture" / "summary.md").exists()
    r = _run("--results", str(results_dir), "--out", str(board), "--readme", str(readme))
    assert r.exit_code == 2 and says in r.output and "nothing written" in r.output


def test_a_readme_that_is_not_a_regular_utf8_file_is_refused(
    results_dir: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    latin = tmp_path / "latin.md"
    latin.write_bytes(f"{START}\ncaf\xe9\n{END}\n".encode("latin-1"))
    for bad, says in ((fifo, "not a regular file"), (latin, "line 2 is not UTF-8 text")):
        r = _run("--results", str(results_dir), "--out", str(tmp_path / "b"), "--readme", str(bad))
        assert r.exit_code == 2 and says in r.output, r.output
