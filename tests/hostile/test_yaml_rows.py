"""Hostile input, round 4 (#37 item 3): a large workflow's YAML on each of its many jobs.

A build keeps a workflow's text once (polars views) until the Parquet files are written, and
writes them one bounded row group at a time (`gharuntime.parquet.write_parquet`), so a 7 MB
workflow run by 300 jobs builds within a memory cap below 300 copies of it. A workflow over the
8 MB parser cap is refused (counted) and not stored at all: neither its text nor a sha256 of a
text the row does not hold.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
from fuzz_support import ENV

from gharuntime.dataset import load
from gharuntime.parquet import _groups, write_parquet
from gharuntime.workflow import MAX_YAML_BYTES

JOBS = 300


def _workflow(size: int) -> str:
    head = (
        "name: CI\non: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - run: echo hi\n"
    )
    line = "# " + "x" * 98 + "\n"
    return head + line * ((size - len(head)) // len(line) + 1)


def _dump(root: Path, size: int) -> tuple[Path, Path]:
    """A git repository holding one workflow of `size` bytes, and an API JSON export of one
    run of it with JOBS jobs."""
    repo = root / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text(_workflow(size))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "ci"], check=True)
    sha = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    run = {
        "id": 7,
        "run_attempt": 1,
        "repository": {"id": 3, "full_name": "o/r", "fork": False},
        "run_number": 1,
        "event": "push",
        "head_branch": "main",
        "head_sha": sha,
        "workflow_id": 5,
        "path": ".github/workflows/ci.yml",
        "name": "CI",
        "created_at": "2024-01-01T00:00:00Z",
        "run_started_at": "2024-01-01T00:00:01Z",
    }
    jobs = [
        {
            "id": 100 + i,
            "run_id": 7,
            "run_attempt": 1,
            "name": "build",
            "status": "completed",
            "conclusion": "success",
            "created_at": f"2024-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
            "started_at": f"2024-01-01T01:{i // 60:02d}:{i % 60:02d}Z",
            "completed_at": f"2024-01-01T02:{i // 60:02d}:{i % 60:02d}Z",
            "labels": ["ubuntu-latest"],
            "steps": [{"name": "Run echo hi"}],
            "head_sha": sha,
            "workflow_name": "CI",
            "run_url": "https://api.github.com/repos/o/r/actions/runs/7",
        }
        for i in range(JOBS)
    ]
    src = root / "src"
    src.mkdir()
    (src / "runs.json").write_text(json.dumps({"workflow_runs": [run]}))
    (src / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    return src, repo


_PEAK = """
import atexit, sys
PEAK = sys.argv[1]
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            open(PEAK, "w").write(line.split()[1])
atexit.register(peak)
from gharuntime.cli.main import main
sys.argv = ["gharuntime", *sys.argv[2:]]
main()
"""


def _build(tmp_path: Path, size: int) -> tuple[Path, int]:
    """Build the dump in a child process; the dataset and the child's peak resident MB."""
    src, repo = _dump(tmp_path, size)
    out, peak = tmp_path / "ds", tmp_path / "peak"
    args = ["build", "--source", "api-json", str(src), "--yaml-git", str(repo), "--out", str(out)]
    env = {**os.environ, **ENV, "POLARS_MAX_THREADS": "2", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(peak), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output and "MemoryError" not in output, output[-3000:]
    assert done.returncode in (0, 1), output[-3000:]
    return out, int(peak.read_text()) // 1024


def test_row_groups_are_cut_where_their_text_passes_the_budget() -> None:
    sizes = pl.Series([10, 10, 10, 50, 10, 10, 10])
    assert _groups(sizes, 4, 1000) == [(0, 4), (4, 3)]  # under budget: plain 4-row groups
    assert _groups(sizes, 4, 30) == [(0, 3), (3, 1), (4, 3)]
    assert _groups(sizes, 100, 5) == [(i, 1) for i in range(7)]  # a row over it: alone


def test_write_parquet_bounds_each_group(tmp_path: Path) -> None:
    text = "y" * 1000
    frame = pl.DataFrame({"id": [str(i) for i in range(10)], "t": [text] * 10})
    write_parquet(frame, tmp_path / "x.parquet", budget=3500)
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(tmp_path / "x.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [3, 3, 3, 1]
    assert pl.read_parquet(tmp_path / "x.parquet").equals(frame)


def test_a_7_mb_workflow_on_300_jobs_builds_in_bounded_memory(tmp_path: Path) -> None:
    """Before, the build peaked at 4.7 GB resident (300 copies made at once, twice); now at
    1.2 GB (one row group's copies under ROW_GROUP_TEXT_BYTES)."""
    out, peak_mb = _build(tmp_path, 7 * 2**20)
    assert peak_mb < 2048, peak_mb
    rows = load(out, "temporal", "train").vstack(load(out, "temporal", "test"))
    rows = rows.vstack(load(out, "temporal", "validation"))
    assert rows.height == JOBS
    assert rows["workflow_yaml"].null_count() == 0
    assert rows["workflow_yaml"].str.len_bytes().min() > 7 * 2**20 - 200
    size = sum(p.stat().st_size for p in (out / "data").rglob("*.parquet"))
    assert size < 64 * 2**20  # Parquet's dictionary keeps one copy per row group


def test_a_workflow_over_the_cap_is_not_stored_on_its_rows(tmp_path: Path) -> None:
    out, peak_mb = _build(tmp_path, MAX_YAML_BYTES + 2**20)
    assert peak_mb < 1024, peak_mb
    rows = pl.concat(
        [load(out, config="temporal", split=s) for s in ("train", "validation", "test")]
    )
    assert rows.height == JOBS
    assert rows["workflow_yaml"].null_count() == JOBS
    assert rows["workflow_sha256"].null_count() == JOBS  # no sha256 of a text not held
    manifest = json.loads((out / "manifest.json").read_text())
    problems = json.dumps(manifest["build"]["problems"])
    assert "workflow_yaml_does_not_parse" in problems and "8 MB" in problems
    size = sum(p.stat().st_size for p in (out / "data").rglob("*.parquet"))
    assert size < 8 * 2**20
