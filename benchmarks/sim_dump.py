"""Benchmark: generate a simulated world straight into a raw store (`simulate dump`).

Prints wall time, peak RSS (this process and its workers), and throughput; the last line is one
JSON object with the figures. The paper's scale is 27,000 repositories / ≈580,000 runs:

    python benchmarks/sim_dump.py                       # 500 repositories (a quick look)
    python benchmarks/sim_dump.py --repos 27000         # the paper's scale (minutes)

As a reference measured in the same run, it also times (CPU) generating the same repositories' world
alone (no JSON, no gzip, no disk) for the first `--reference-repos` repositories, so the ratio
says how much of the dump is generation and how much is writing.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from gharuntime.sim.dump import dump_world
from gharuntime.sim.world import SCALES, Scale, World


def main() -> None:
    paper = SCALES["paper"]
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repos", type=int, default=500)
    parser.add_argument("--workflows-per-repo", type=float, default=paper.workflows_per_repo)
    parser.add_argument("--runs-per-workflow", type=float, default=paper.runs_per_workflow)
    parser.add_argument("--days", type=int, default=paper.days)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--logs", action="store_true", help="also write logs")
    parser.add_argument("--reference-repos", type=int, default=200)
    parser.add_argument(
        "--out", type=Path, help="keep the raw store here (default: a temporary folder, removed)"
    )
    args = parser.parse_args()

    scale = Scale(args.repos, args.workflows_per_repo, args.runs_per_workflow, args.days)
    out = args.out or Path(tempfile.mkdtemp(prefix="sim-dump-")) / "raw"
    start = time.perf_counter()
    last = [0.0]

    def progress(_what: str, done: int, total: int | None) -> None:
        now = time.perf_counter()
        if now - last[0] > 30 or done == total:
            last[0] = now
            print(
                f"  {done}/{total} repositories, {now - start:.0f} s", file=sys.stderr, flush=True
            )

    stats = dump_world(
        World(args.seed, scale), out, logs=args.logs, workers=args.workers, progress=progress
    )
    wall = time.perf_counter() - start
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    peak_self = me.ru_maxrss / 1024
    peak_children = kids.ru_maxrss / 1024
    # CPU seconds of the dump (this process and its workers): what wall time would be on idle
    # cores; wall time on a shared machine also counts waiting for the CPU.
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    ref_n = min(args.reference_repos, args.repos)
    world = World(args.seed, scale, cache_repos=1)
    t0 = time.process_time()
    for i in range(ref_n):
        world._build_repo(i)
    ref_per_repo = (time.process_time() - t0) / max(1, ref_n)
    dump_per_repo_cpu = cpu / max(1, args.repos)
    if args.out is None:
        shutil.rmtree(out.parent, ignore_errors=True)

    figures = {
        "benchmark": "sim_dump",
        "repos": stats.repos,
        "runs": stats.runs,
        "attempts": stats.attempts,
        "jobs": stats.jobs,
        "records": stats.records,
        "workers": args.workers,
        "logs": args.logs,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cpu_ms_per_repo": round(cpu * 1000 / max(1, args.repos), 2),
        "idle_wall_estimate_s": round(cpu / args.workers, 1),
        "runs_per_s": round(stats.runs / wall, 1),
        "peak_rss_mb_main": round(peak_self, 1),
        "peak_rss_mb_worker": round(peak_children, 1),
        "store_mb": round(size / 2**20, 1),
        "generation_only_ms_per_repo": round(ref_per_repo * 1000, 2),
        "dump_cpu_ms_per_repo": round(dump_per_repo_cpu * 1000, 2),
        "generation_share": round(ref_per_repo / dump_per_repo_cpu, 2)
        if dump_per_repo_cpu
        else None,
    }
    print(
        f"dumped {stats.runs:,} runs of {stats.repos:,} repositories in {wall:.1f} s wall, {cpu:.1f} s CPU "
        f"({figures['runs_per_s']} runs/s), peak RSS {peak_self:.0f} MB main / {peak_children:.0f} MB worker, "
        f"store {figures['store_mb']} MB"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
