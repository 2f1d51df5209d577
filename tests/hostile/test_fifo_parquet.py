"""A FIFO in place of any Parquet file a command reads (a model's tables, a dataset's data
files) is refused at once with exit 2, never waited on: every Parquet read goes through
gharuntime/parquet.py, which opens only regular files (gharuntime/readfile.py). Each run is a
subprocess with a deadline, so a hang fails the test instead of stalling it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from fuzz_support import check, invoke, run_limited


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> Path:
    base = tmp_path_factory.mktemp("fifo")
    shutil.copytree(fixture_dataset_master, base / "ds")
    out = invoke(["baseline", "group-median", "--dataset", "ds", "--out", "m.jsonl"], base)
    assert out.code == 0, out.output
    (base / "wf.yml").write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps: [{run: pytest}]\n"
    )
    return base


COMMANDS = {
    "predict": (["predict", "wf.yml", "--model", "m.model"], "m.model"),
    "diff-old": (["diff", "ds", "ds2"], "ds"),
    "diff-new": (["diff", "ds2", "ds"], "ds"),
}


def _cases() -> list[tuple[str, int]]:
    """Each of a model's first tables alone; a dataset's data files all at once (diff reads
    one config's files: whichever it picks is a FIFO)."""
    return [("predict", i) for i in range(3)] + [("diff-old", -1), ("diff-new", -1)]


@pytest.mark.slow
@pytest.mark.parametrize(("command", "nth"), _cases())
def test_a_fifo_as_a_parquet_file_is_refused_not_waited_on(
    root: Path, tmp_path: Path, command: str, nth: int
) -> None:
    for name in ("ds", "m.model"):
        shutil.copytree(root / name, tmp_path / name)
    shutil.copytree(root / "ds", tmp_path / "ds2")
    shutil.copy(root / "wf.yml", tmp_path / "wf.yml")
    args, folder = COMMANDS[command]
    # (a model's quantile sidecars are optional files, covered with the sidecars' checks)
    files = sorted(f for f in (tmp_path / folder).rglob("*.parquet") if "quantile" not in f.name)
    assert files, folder
    for target in files if nth < 0 else [files[nth % len(files)]]:
        target.unlink()
        os.mkfifo(target)
    out = run_limited(args, tmp_path, memory_mb=4096, timeout=60)
    check(out, (command, target.name))
    assert out.code == 2, out.output[-2000:]
    assert "not a regular file" in out.output, out.output[-2000:]
