"""The simulated world's job and run duration populations, beside the real reference material.

Measures, over every successful job that ran (steps listed, carried-over copies of "re-run failed
jobs" left out) of a seeded world: the share under 10 s, 30 s and 60 s, the median, p90, p99,
the longest, and the share over one hour; and the same for completed successful runs (attempt
created → last update). When the shared reference data is present (`--shared`, default
../shared beside the project), the same figures for the real jobs it holds: the GHALogs record
(one run, 18 job logs, durations from the logged steps) and PyGithub's recorded job objects.
These are tiny samples, printed only to be set beside the world's figures. The last line printed
is one JSON object with every figure.

    python benchmarks/sim_populations.py                       # seed 1, scale small
    python benchmarks/sim_populations.py --seed 2 --scale medium
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from gharuntime.sim import World


def _figures(seconds: list[float]) -> dict[str, Any]:
    d = np.asarray(seconds, dtype=float)
    if d.size == 0:
        return {"n": 0}
    return {
        "n": int(d.size),
        "under_10s": round(float((d < 10).mean()), 4),
        "under_30s": round(float((d < 30).mean()), 4),
        "under_60s": round(float((d < 60).mean()), 4),
        "median_s": round(float(np.median(d)), 1),
        "p90_s": round(float(np.percentile(d, 90)), 1),
        "p99_s": round(float(np.percentile(d, 99)), 1),
        "max_s": round(float(d.max()), 1),
        "over_1h": round(float((d > 3600).mean()), 4),
    }


def world_populations(seed: int, scale: str) -> dict[str, Any]:
    jobs: list[float] = []
    runs: list[float] = []
    for rw in World(seed, scale).repos():
        for run in rw.runs:
            for attempt in run.attempts:
                if attempt.status == "completed" and attempt.conclusion == "success":
                    runs.append(attempt.updated - attempt.started)
                for job in attempt.jobs:
                    ran = job.status == "completed" and job.steps and job.started >= job.created
                    if ran and job.conclusion == "success":
                        jobs.append(job.completed - job.started)
    return {"jobs": _figures(jobs), "runs": _figures(runs)}


def _iso(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T")).timestamp()


def reference_populations(shared: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    record = shared / "reference/ghalogs/run.json"
    if record.is_file():
        run = json.loads(record.read_text())
        spans = []
        for entry in run.get("log_insights") or []:
            steps = [s for s in entry.get("steps") or [] if s.get("start_date")]
            if steps:
                start = min(_iso(s["start_date"]) for s in steps)
                end = max(_iso(s["start_date"]) + float(s.get("duration_sec") or 0) for s in steps)
                spans.append(end - start)
        out["ghalogs_record_jobs"] = _figures(spans)
    recorded = shared / "reference/recorded-api/jobs.json"
    if recorded.is_file():
        jobs = json.loads(recorded.read_text())
        spans = [
            _iso(j["completed_at"]) - _iso(j["started_at"])
            for j in jobs
            if j.get("started_at") and j.get("completed_at") and j.get("conclusion") == "success"
        ]
        out["pygithub_recorded_jobs"] = _figures(spans)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", default="small")
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared"
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    figures: dict[str, Any] = {"seed": args.seed, "scale": args.scale}
    figures["world"] = world_populations(args.seed, args.scale)
    figures["reference"] = reference_populations(args.shared)
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    figures["load_average"] = [round(x, 2) for x in os.getloadavg()]
    for group in ("world", "reference"):
        for name, values in figures[group].items():
            print(f"{group}.{name}: {values}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
