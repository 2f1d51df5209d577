"""How long README command (a) takes after installation: `gharuntime pipeline` on a fresh folder.

Runs `gharuntime pipeline --seed 1 --scale small` in a child process (the simulated GitHub on
127.0.0.1 → crawl → build → validate → 18 method runs → eval → leaderboard), then prints its wall
time, the CPU time of the child and its threads, peak RSS, and the load average before and after
(other work on the machine stretches the wall time; CPU seconds much less). The ratio reported
is wall / 600 s, the goal (issue #11: under 10 minutes on the 2-core development machine).

    python benchmarks/pipeline.py [--scale small] [--out DIR]

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 600.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="small", choices=["tiny", "small"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, help="work folder (default: a temporary one, removed)")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="gharuntime-pipeline-"))
    if out.exists() and any(out.iterdir()):
        sys.exit(f"{out} is not empty; the figure is for a fresh folder")
    gharuntime = Path(sys.executable).with_name("gharuntime")
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(gharuntime), "pipeline", "--seed", str(args.seed), "--scale", args.scale,
         "--out", str(out)],
        check=False,
    )  # fmt: skip
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_after = os.getloadavg()
    results = sorted((out / "results").rglob("*.json")) if (out / "results").is_dir() else []
    figures = {
        "scale": args.scale,
        "exit_code": proc.returncode,
        "wall_s": round(wall, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "results": len(results),
        "leaderboard": (out / "leaderboard" / "index.html").is_file(),
        "wall_over_goal": round(wall / GOAL_S, 3),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(),
    }
    print(f"pipeline ({args.scale}): {wall:.0f} s wall, {figures['cpu_s']:.0f} s CPU, "
          f"{figures['peak_rss_mb']:.0f} MB peak RSS, load {load_before[0]:.1f} → "
          f"{load_after[0]:.1f}; goal {GOAL_S:.0f} s")  # fmt: skip
    if args.out is None:
        shutil.rmtree(out, ignore_errors=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
