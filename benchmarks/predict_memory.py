"""Peak memory of `gharuntime predict` on a 1 MB workflow file (issue 14: memory grew with
jobs × file size).

Writes a workflow of about 1 MB (many jobs, each with a few steps), trains nothing: it uses a
model folder given with --model, or fits `median` on the fixture dataset. Runs `predict` in a
fresh subprocess and reads its peak RSS (ru_maxrss of the child); as the reference measured in the
same run, it also runs `predict` on a small workflow of the same shape (10 jobs) and reports
the ratio. Prints the figures, then ONE JSON object on its last line.

    python benchmarks/predict_memory.py [--model DIR] [--mb 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def workflow(n_jobs: int) -> str:
    lines = ["name: big", "on: [push, pull_request]", "jobs:"]
    for i in range(n_jobs):
        lines += [
            f"  job{i}:",
            f"    name: Job number {i} of the big workflow",
            "    runs-on: ubuntu-latest",
            "    timeout-minutes: 30",
            "    steps:",
            "      - uses: actions/checkout@v4",
            "      - uses: actions/setup-python@v5",
            "        with: {python-version: '3.12'}",
            f"      - run: pip install -r requirements-{i}.txt && pytest tests/part_{i} -q",
            f"      - run: echo 'finished part {i} of the test suite, uploading the report'",
        ]
    return "\n".join(lines) + "\n"


def sized(mb: float) -> tuple[str, int]:
    per_job = len(workflow(2)) - len(workflow(1))
    n = max(1, int(mb * 2**20 / per_job))
    return workflow(n), n


def peak_of(cmd: list[str]) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, exit code) of a fresh child process."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:  # ru_maxrss of children is the max over all; run the larger one last
        peak = before
    if proc.returncode != 0:
        print(proc.stderr[-2000:], file=sys.stderr)
    return peak / 1024, seconds, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, help="a model folder (default: median on the fixture)")
    ap.add_argument("--mb", type=float, default=1.0, help="workflow file size in MB")
    args = ap.parse_args()
    exe = [sys.executable, "-m", "gharuntime.cli.main"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = args.model
        if model is None:
            from gharuntime.dataset import write_dataset
            from gharuntime.fixture import fixture_jobs

            write_dataset(fixture_jobs(), work / "ds", provenance={"kind": "fixture", "seed": 0})
            subprocess.run(
                [
                    *exe,
                    "baseline",
                    "median",
                    "--dataset",
                    str(work / "ds"),
                    "--out",
                    str(work / "m.jsonl"),
                ],
                check=True,
                capture_output=True,
            )
            model = work / "m.model"
        small = work / "small.yml"
        small.write_text(workflow(10))
        small_bytes = small.stat().st_size
        big_text, n_jobs = sized(args.mb)
        big = work / "big.yml"
        big.write_text(big_text)
        base = [*exe, "predict", "--model", str(model), "--json", "--at", "2026-01-01"]
        small_mb, small_s, small_rc = peak_of([*base, str(small)])
        big_mb, big_s, big_rc = peak_of([*base, str(big)])
    load = os.getloadavg()
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"reference: 10 jobs, {small_bytes} B: "
        f"peak RSS {small_mb:.0f} MB, {small_s:.1f} s (exit {small_rc})"
    )
    print(
        f"big: {n_jobs} jobs, {len(big_text) / 2**20:.2f} MB: peak RSS {big_mb:.0f} MB, "
        f"{big_s:.1f} s (exit {big_rc})"
    )
    print(f"ratio big/reference: {big_mb / small_mb:.2f}")
    print(
        json.dumps(
            {
                "workflow_mb": round(len(big_text) / 2**20, 3),
                "jobs": n_jobs,
                "peak_rss_mb": round(big_mb, 1),
                "reference_peak_rss_mb": round(small_mb, 1),
                "ratio": round(big_mb / small_mb, 2),
                "seconds": round(big_s, 2),
                "exit_codes": [small_rc, big_rc],
                "load_average_1m": round(load[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
