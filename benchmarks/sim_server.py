"""Benchmark: requests per second the simulated GitHub serves on loopback to 2 client threads.

Two workloads, measured in the same run: `rate_limit` (the cheapest endpoint: the server's own
overhead, the reference) and `crawl` (what a crawler asks: run listings of 100, job listings of
an attempt, a job, a workflow file at a head SHA, in a repeating cycle over many repositories,
so most requests hit repositories not in the server's cache at first).

    python benchmarks/sim_server.py                        # 10 s per workload, small world
    python benchmarks/sim_server.py --seconds 30 --scale medium
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time

import requests

from gharuntime.sim import ServerConfig, World, serve


def _crawl_urls(world: World, limit: int) -> list[str]:
    urls: list[str] = []
    for meta in world.metas():
        if meta.private or meta.old_name or meta.actions_disabled:
            continue
        rw = world.repo(meta.index)
        repo = f"/repos/{meta.full_name}"
        urls.append(f"{repo}/actions/runs?per_page=100")
        for run in rw.runs[:3]:
            urls.append(
                f"{repo}/actions/runs/{run.id}/attempts/{run.latest.number}/jobs?per_page=100"
            )
            if run.latest.jobs:
                urls.append(f"{repo}/actions/jobs/{run.latest.jobs[0].id}")
            urls.append(f"{repo}/contents/{run.workflow.path}?ref={run.commit.sha}")
        if len(urls) >= limit:
            break
    return urls


def _measure(base: str, urls: list[str], seconds: float, threads: int) -> tuple[int, int, float]:
    counts = [0] * threads
    errors = [0] * threads
    stop = time.perf_counter() + seconds

    def client(k: int) -> None:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer bench-{k}"
        for url in itertools.cycle(urls[k::threads] or urls):
            if time.perf_counter() >= stop:
                break
            r = session.get(base + url)
            counts[k] += 1
            errors[k] += r.status_code != 200

    start = time.perf_counter()
    workers = [threading.Thread(target=client, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    return sum(counts), sum(errors), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", default="small")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--urls", type=int, default=3000)
    args = parser.parse_args()

    world = World(args.seed, args.scale)
    urls = _crawl_urls(World(args.seed, args.scale, cache_repos=1), args.urls)
    config = ServerConfig(rate_limit=10**9)
    figures: dict[str, object] = {
        "benchmark": "sim_server",
        "scale": args.scale,
        "threads": args.threads,
    }
    with serve(world, config) as server:
        n, errors, elapsed = _measure(server.url, ["/rate_limit"], args.seconds, args.threads)
        figures["rate_limit_rps"] = round(n / elapsed, 1)
        n, errors, elapsed = _measure(server.url, urls, args.seconds, args.threads)
        figures["crawl_rps"] = round(n / elapsed, 1)  # cold: repositories built on first touch
        figures["crawl_requests"] = n
        figures["crawl_errors"] = errors
        figures["crawl_distinct_urls"] = len(urls)
        warm = urls[: max(1, n // 2)]  # requested once already, repositories now in the cache
        n, errors, elapsed = _measure(server.url, warm, args.seconds, args.threads)
        figures["crawl_warm_rps"] = round(n / elapsed, 1)
        figures["crawl_errors"] = int(figures["crawl_errors"]) + errors  # type: ignore[call-overload]
    figures["crawl_vs_rate_limit"] = round(
        float(figures["crawl_rps"]) / float(figures["rate_limit_rps"]), 3
    )  # type: ignore[arg-type]
    print(
        f"{args.threads} client threads: /rate_limit {figures['rate_limit_rps']} req/s, "
        f"crawl mix {figures['crawl_rps']} req/s cold, {figures['crawl_warm_rps']} req/s warm "
        f"({figures['crawl_errors']} errors)"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
