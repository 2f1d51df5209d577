"""The simulated world's job and run duration populations, beside the real reference material.

Measures, over every successful job that ran (steps listed, carried-over copies of "re-run failed
jobs" left out) of a seeded world: the share under 10 s, 30 s and 60 s, the median, p90, p99,
the longest, and the share over one hour; and the same for completed successful runs (attempt
created → last update). When the shared reference data is present (`--shared`, default
../shared beside the project), the same figures for the real jobs it holds: the GHALogs record
(one run, 18 job logs, durations from the logged steps) and PyGithub's recorded job objects.
These are tiny samples, printed only to be set beside the world's figures.

It also measures the world the way the one published study of GitHub Actions job times we could
read measured GitHub (`published_comparison`): Bouzenia & Pradel, "Resource Usage and
Optimization Opportunities in Workflows of GitHub Actions", ICSE 2024, figures from the saved
outputs of its replication notebooks (github.com/sola-st/github-workflow-resource-optimization,
paper_analysis_RQ1.ipynb and _RQ3.ipynb at 5bc28fc; the authors say they differ from the paper by
under 0.03 / 0.5%): a job's time is completed_at - started_at (every conclusion, queue excluded),
a run's VM time the sum of its jobs'; a job's task is read off its name (test, build, lint,
deploy); a repository is "paid tier" when in some 30 days 1.52 x its job time exceeds 2,000
minutes; a run is hit by a hang when one of its jobs ran over 21,541 s. And jobs per run on one
run per workflow, as GHALogs (Moriconi et al., MSR 2025: mean 3.3, median 1.0) counted them.
The last line printed is one JSON object with every figure.

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


# Bouzenia & Pradel (ICSE 2024), replication notebook outputs: mean minutes (IQR), free | paid tier
PUBLISHED_JOB_MINUTES = {
    "test": {"free": (1.5, 1.3), "paid": (8.1, 7.2)},
    "build": {"free": (1.5, 1.3), "paid": (9.7, 8.4)},
    "lint": {"free": (0.8, 0.4), "paid": (1.8, 1.7)},
    "deploy": {"free": (0.3, 0.2), "paid": (1.3, 1.5)},
}
PUBLISHED_RUN_MINUTES = {
    "pull_request": {"free": (3.6, 3.6), "paid": (31.1, 20.1)},
    "push": {"free": (4.3, 4.2), "paid": (28.4, 19.5)},
    "schedule": {"free": (0.9, 0.2), "paid": (13.8, 1.3)},
}
PUBLISHED_HUNG_RUNS = {"free": 0.0, "paid": 0.005}  # runs with a job over 21,541 s (rounded)
PUBLISHED_JOBS_PER_RUN = {"mean": 3.3, "median": 1.0}  # GHALogs, one run per workflow


def _task(name: str) -> str | None:
    low = name.lower()
    for task in ("test", "build", "lint", "deploy"):
        if task in low:
            return task
    return None


def _mean_iqr(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    d = np.asarray(values, dtype=float) / 60.0
    q1, q3 = np.percentile(d, [25, 75])
    return {
        "n": int(d.size),
        "mean_min": round(float(d.mean()), 2),
        "iqr_min": round(float(q3 - q1), 2),
    }


def published_comparison(seed: int, scale: str) -> dict[str, Any]:
    """The world measured with the published study's definitions (see the module docstring)."""
    month = 30 * 86400.0
    jobs: dict[str, dict[str, list[float]]] = {"free": {}, "paid": {}}
    runs: dict[str, dict[str, list[float]]] = {"free": {}, "paid": {}}
    hung = {"free": [0, 0], "paid": [0, 0]}
    per_workflow: list[int] = []
    for rw in World(seed, scale).repos():
        rows = []  # (run created, run VM seconds, event, [(job name, seconds)])
        latest: dict[str, int] = {}
        for run in rw.runs:
            for attempt in run.attempts:
                spans = [
                    (j.name, max(0.0, j.completed - j.started))
                    for j in attempt.jobs
                    if j.status == "completed" and j.steps
                ]
                if spans:
                    rows.append((run.created, sum(s for _, s in spans), run.event, spans))
            latest[run.workflow.path] = len(run.latest.jobs)
        per_workflow.extend(latest.values())
        rows.sort(key=lambda r: r[0])
        times = np.asarray([r[0] for r in rows])
        vm = np.cumsum([r[1] for r in rows])
        paid = False
        for i, t in enumerate(times):
            j = int(np.searchsorted(times, t + month, side="right")) - 1
            window = vm[j] - (vm[i - 1] if i else 0.0)
            if 1.52 * window > 2000 * 60:
                paid = True
                break
        tier = "paid" if paid else "free"
        for _, seconds, event, spans in rows:
            if seconds > 0:
                runs[tier].setdefault(event, []).append(seconds)
            hung[tier][0] += any(s > 21541 for _, s in spans)
            hung[tier][1] += 1
            for name, s in spans:
                task = _task(name)
                if task:
                    jobs[tier].setdefault(task, []).append(s)
    return {
        "job_minutes_by_task": {
            t: {task: _mean_iqr(v) for task, v in sorted(by.items())} for t, by in jobs.items()
        },
        "run_vm_minutes_by_event": {
            t: {event: _mean_iqr(v) for event, v in sorted(by.items())} for t, by in runs.items()
        },
        "runs_hit_by_a_hang": {t: round(h[0] / h[1], 4) if h[1] else None for t, h in hung.items()},
        "runs": {t: h[1] for t, h in hung.items()},
        "jobs_per_run_one_per_workflow": {
            "mean": round(float(np.mean(per_workflow)), 2),
            "median": float(np.median(per_workflow)),
        },
        "published": {
            "source": "Bouzenia & Pradel, ICSE 2024 (replication notebooks); GHALogs, MSR 2025",
            "job_minutes_by_task": PUBLISHED_JOB_MINUTES,
            "run_vm_minutes_by_event": PUBLISHED_RUN_MINUTES,
            "runs_hit_by_a_hang": PUBLISHED_HUNG_RUNS,
            "jobs_per_run_one_per_workflow": PUBLISHED_JOBS_PER_RUN,
        },
    }


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
    figures["published_comparison"] = published_comparison(args.seed, args.scale)
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    figures["load_average"] = [round(x, 2) for x in os.getloadavg()]
    for group in ("world", "reference", "published_comparison"):
        for name, values in figures[group].items():
            print(f"{group}.{name}: {values}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
