"""Run one benchmark script and keep what it measured, with where and when it ran, as a file
under benchmarks/results/ the docs can cite.

Every script here ends with one JSON line of its figures; this runs it (in a child process, from
the repository root) and writes that object under `figures`, beside the command, the git commit
the script ran at (`git_dirty` when tracked files had uncommitted changes: commit first), the
wall seconds and the load average before and after (figures of a loaded machine are not an idle
one's). Paths of this machine are not kept: the repository root, the temporary folder and
$GHARUNTIME_REAL_DATASET are written as `.`, `$TMPDIR` and `$GHARUNTIME_REAL_DATASET`.

    python benchmarks/record.py benchmarks/results/crawl_requests-small.json -- \\
        python benchmarks/crawl_requests.py

Exit code: the benchmark's (nothing is written unless it exited 0 with a JSON last line).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _state() -> tuple[str | None, bool | None]:
    status = _git("status", "--porcelain", "--untracked-files=no")
    return _git("rev-parse", "HEAD"), None if status is None else bool(status)


def _scrub(value: Any, swaps: list[tuple[str, str]]) -> Any:
    """`value` with each machine path of `swaps` replaced by its stand-in, in every string."""
    if isinstance(value, dict):
        return {_scrub(k, swaps): _scrub(v, swaps) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, swaps) for v in value]
    if isinstance(value, str):
        for path, name in swaps:
            value = value.replace(path, name)
    return value


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[1] != "--":
        print("usage: record.py OUT.json -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    out, command = Path(args[0]), args[2:]
    swaps = [(str(ROOT) + "/", ""), (str(ROOT), ".")]
    real = os.environ.get("GHARUNTIME_REAL_DATASET")
    if real:
        swaps.insert(0, (str(Path(real).resolve()), "$GHARUNTIME_REAL_DATASET"))
        swaps.insert(0, (real, "$GHARUNTIME_REAL_DATASET"))
    swaps.append((tempfile.gettempdir(), "$TMPDIR"))
    commit, dirty = _state()
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - t0
    load_after = os.getloadavg()
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        return done.returncode
    lines = done.stdout.strip().splitlines()
    try:
        figures = json.loads(lines[-1])
    except (IndexError, ValueError):
        print("record.py: the benchmark's last line is not one JSON object", file=sys.stderr)
        return 2
    commit_after, dirty_after = _state()
    shown = [Path(sys.executable).name if c == sys.executable else c for c in command]
    record = {
        "command": _scrub(" ".join(shown), swaps),
        "git_commit": commit,
        "git_dirty": None
        if dirty is None
        else bool(dirty or dirty_after) or commit_after != commit,
        "wall_s": round(wall, 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
        "figures": _scrub(figures, swaps),
    }
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
