"""How many API requests the crawler spends per stored job, how long a big crawl takes, and what
a resume after `kill -9` costs — all against the simulated GitHub on 127.0.0.1.

Figures (requests are counted by the server's own request recorder, in the same run):
1. requests per stored job record on a world with 5 runs per workflow, without and with logs,
   for the crawler and for a naive reference that fetches the workflow YAML for every run
   (`--yaml-strategy per-run`, the same crawler otherwise). Goal: <= 0.6 without logs. With
   logs, the crawler's two routes: one log archive per run attempt (default) and one log
   request per job (`--log-route job`). Goal: <= 0.9 API requests per job with logs (log blobs
   are downloads from a pre-signed URL, not API requests).
2. wall time to crawl a world of `--wall-repos` repositories (1,000 ≈ 20,000 runs with --full),
   the crawler running as its own process (`gharuntime crawl`, default concurrency).
3. the extra requests a resume costs: the same crawl killed (SIGKILL, via the crawler's test
   hook) halfway through its requests, then rerun; extra = killed + rerun - uninterrupted.

    python benchmarks/crawl_requests.py            # small, about a minute
    python benchmarks/crawl_requests.py --full     # 1,000 repositories for figure 2

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gharuntime.sim import END, Scale, ServerConfig, SimServer, World, serve
from gharuntime.sim.world import iso

TOKEN = "ghp_" + "benchmark" + "0" * 27
DAY = 86400


def exe() -> str:
    found = Path(sys.executable).parent / "gharuntime"
    return str(found) if found.exists() else (shutil.which("gharuntime") or "gharuntime")


def count_records(out: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for shard in sorted((out / "shards").glob("*.jsonl.gz")):
        with gzip.open(shard, "rt") as fh:
            for line in fh:
                kind = json.loads(line)["kind"]
                counts[kind] = counts.get(kind, 0) + 1
    return counts


def crawl(
    server: SimServer,
    names: list[str],
    out: Path,
    work: Path,
    days: int,
    *extra: str,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run `gharuntime crawl` as a process; returns requests served, wall time and exit code."""
    repos = work / "repos.txt"
    repos.write_text("\n".join(names) + "\n")
    tokens = work / "tokens.txt"
    tokens.write_text(TOKEN + "\n")
    args = [
        exe(), "crawl", "--out", str(out), "--repos", str(repos), "--token-file", str(tokens),
        "--api-url", server.url, "--since", iso(END - days * DAY), "--until", iso(END), *extra,
    ]  # fmt: skip
    before = server.recorder.total
    per_endpoint_before = _per_endpoint(server)
    blobs_before = server.recorder.count("blob/logs") + server.recorder.count("blob/run-logs")
    started = time.perf_counter()
    proc = subprocess.run(
        args,
        cwd=work,
        capture_output=True,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}, **(env or {})},
    )
    wall = time.perf_counter() - started
    blobs = (
        server.recorder.count("blob/logs") + server.recorder.count("blob/run-logs") - blobs_before
    )
    after = _per_endpoint(server)
    per_endpoint = {
        e: n - per_endpoint_before.get(e, 0)
        for e, n in after.items()
        if n > per_endpoint_before.get(e, 0)
    }
    return {
        "per_endpoint": dict(sorted(per_endpoint.items(), key=lambda kv: -kv[1])),
        "requests": server.recorder.total - before,
        "api_requests": server.recorder.total - before - blobs,  # log blobs: no API quota
        "wall_s": wall,
        "rc": proc.returncode,
    }


def _per_endpoint(server: SimServer) -> dict[str, int]:
    """Requests served so far per endpoint, from the server's recorder (all tokens)."""
    out: dict[str, int] = {}
    for (endpoint, _token), n in server.recorder.requests.items():
        out[endpoint] = out.get(endpoint, 0) + n
    return out


CONFIG = ServerConfig(tokens={TOKEN: "bench"}, rate_limit=10**9)  # quota is not measured here


def names_of(world: World) -> list[str]:
    return [m.full_name for m in world.metas() if not m.private]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repos", type=int, default=60, help="repositories of the requests world")
    ap.add_argument(
        "--wall-repos", type=int, default=120, help="repositories of the wall-time world"
    )
    ap.add_argument("--full", action="store_true", help="1,000 repositories for the wall time")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument(
        "--requests-only", action="store_true", help="figure 1 only (no wall time, no resume)"
    )
    args = ap.parse_args()
    wall_repos = 1000 if args.full else args.wall_repos
    work = Path(tempfile.mkdtemp(prefix="crawl-bench-"))
    figures: dict[str, Any] = {"repos": args.repos, "wall_repos": wall_repos}
    try:
        # 1. requests per job: 5 runs per workflow, all within 60 days (logs not yet expired).
        days = 60
        world = World(seed=args.seed, scale=Scale(args.repos, 2.5, 5.0, days))
        names = names_of(world)
        with serve(world, CONFIG) as server:
            for label, extra in (
                ("ours", ()),
                ("ours_logs", ("--logs",)),
                ("ours_logs_job_route", ("--logs", "--log-route", "job")),
                ("naive", ("--yaml-strategy", "per-run")),
                ("naive_logs", ("--yaml-strategy", "per-run", "--logs")),
            ):
                out = work / label
                r = crawl(server, names, out, work, days, *extra)
                jobs = count_records(out).get("job", 0)
                figures[f"{label}_requests"] = r["requests"]
                figures[f"{label}_jobs"] = jobs
                figures[f"{label}_requests_per_job"] = round(r["requests"] / max(1, jobs), 4)
                figures[f"{label}_api_requests_per_job"] = round(
                    r["api_requests"] / max(1, jobs), 4
                )
                figures[f"{label}_per_endpoint_per_job"] = {
                    e: round(n / max(1, jobs), 4) for e, n in r["per_endpoint"].items()
                }
                print(
                    f"{label:>11}: {r['requests']:6d} requests ({r['api_requests']} to the API), "
                    f"{jobs:6d} jobs, {r['requests'] / max(1, jobs):.3f} requests/job, "
                    f"{r['wall_s']:.1f} s (rc {r['rc']})"
                )
                for e, n in r["per_endpoint"].items():  # where they go
                    print(f"{'':>13}{n / max(1, jobs):7.4f}/job  {n:6d}  {e}")
        figures["naive_over_ours"] = round(
            figures["naive_requests_per_job"] / figures["ours_requests_per_job"], 3
        )
        figures["goal_requests_per_job"] = 0.6
        figures["goal_met"] = figures["ours_requests_per_job"] <= 0.6
        figures["goal_logs_api_requests_per_job"] = 0.9
        figures["goal_logs_met"] = figures["ours_logs_api_requests_per_job"] <= 0.9

        if args.requests_only:
            print(json.dumps(figures, sort_keys=True))
            return
        # 2. wall time and 3. resume cost, on a bigger world (8 runs per workflow).
        days = 120
        big = World(seed=args.seed, scale=Scale(wall_repos, 2.5, 8.0, days))
        names = names_of(big)
        with serve(big, CONFIG) as server:
            out = work / "wall"
            r = crawl(server, names, out, work, days)
            counts = count_records(out)
            figures.update(
                wall_s=round(r["wall_s"], 2),
                wall_requests=r["requests"],
                wall_runs=counts.get("run", 0),
                wall_jobs=counts.get("job", 0),
                requests_per_s=round(r["requests"] / r["wall_s"], 1),
            )
            print(
                f"wall: {wall_repos} repositories, {counts.get('run', 0)} runs, {counts.get('job', 0)} jobs: "
                f"{r['wall_s']:.1f} s, {r['requests']} requests ({r['requests'] / r['wall_s']:.0f}/s)"
            )
            full = r["requests"]
            out = work / "resumed"
            kill_at = full // 2
            killed = crawl(
                server,
                names,
                out,
                work,
                days,
                env={"GHARUNTIME_CRAWL_KILL_AT": f"request:{kill_at}"},
            )
            rerun = crawl(server, names, out, work, days)
            same = count_records(out) == counts
            extra = killed["requests"] + rerun["requests"] - full
            figures.update(
                resume_killed_at_request=kill_at,
                resume_killed_rc=killed["rc"],
                resume_extra_requests=extra,
                resume_extra_fraction=round(extra / full, 4),
                resume_same_records=same,
            )
            print(
                f"resume: killed at request {kill_at} (rc {killed['rc']}), rerun {rerun['requests']} requests; "
                f"extra {extra} ({100 * extra / full:.2f}% of an uninterrupted crawl); same records: {same}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
