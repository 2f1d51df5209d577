"""How fast, and in how much memory, `gharuntime build` turns a raw store into a dataset.

The paper's scale is 580,000 runs (about 2 million jobs); the goal is under 10 minutes and under
6 GB peak RSS on a 2-core machine. The build runs as a child process (`gharuntime build`), so its
peak RSS (getrusage of children) is the build's alone. As a reference measured in the same run,
the script also times the floor of any build: decompressing and JSON-decoding every record.

    python benchmarks/build_scale.py                       # small generated store (quick)
    python benchmarks/build_scale.py --runs 580000         # the paper's scale, generated here
    python benchmarks/build_scale.py --raw DIR [DIR ...]   # a store from `simulate dump`

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from gharuntime.contract import RawKind, RawStoreLayout
from gharuntime.rawstore import RawStoreWriter, listed_shards

WORKFLOW = """name: CI {n}
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: make lint
  test:
    name: test (${{{{ matrix.os }}}}, py${{{{ matrix.python }}}})
    needs: lint
    runs-on: ${{{{ matrix.os }}}}
    strategy:
      matrix:
        os: [ubuntu-latest{extra_os}]
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - run: pytest -q
"""


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def generate(root: Path, runs: int, seed: int = 0, repos: int | None = None) -> int:
    """A raw store shaped like a crawl: API-sized run and job bodies, YAML, refs, log sizes."""
    rng = random.Random(seed)
    repos = repos or max(1, runs // 100)
    writer = RawStoreWriter(root, meta={"source": f"benchmark generator seed={seed}"})
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    job_id = 10_000_000_000
    n_jobs = 0
    filler = {"url": "https://api.github.com/repos/o/r/x" * 3, "node_id": "MDEyOldvcmtmbG93" * 2}
    for r in range(repos):
        repo_id = 1_000_000 + r
        full = f"owner{r}/repo{r}"
        writer.add(
            RawKind.REPOSITORY,
            str(repo_id),
            {
                "id": repo_id,
                "full_name": full,
                "language": rng.choice(["Python", "Go", "Rust", "TypeScript"]),
                "stargazers_count": rng.randint(100, 50_000),
                "size": rng.randint(100, 500_000),
                "topics": ["ci"],
                "fork": False,
                "created_at": "2015-01-01T00:00:00Z",
                "default_branch": "main",
                **filler,
            },
            repo_id,
        )
        for wf in range(2):
            text = WORKFLOW.format(n=wf, extra_os=", windows-latest" if r % 3 == 0 else "")
            blob = f"blob-{r}-{wf}"
            path = f".github/workflows/ci{wf}.yml"
            writer.add(
                RawKind.WORKFLOW_FILE,
                f"{repo_id}:{path}:{blob}",
                {
                    "sha": blob,
                    "encoding": "base64",
                    "content": base64.b64encode(text.encode()).decode(),
                },
                repo_id,
            )
    per_repo = runs // repos
    for i in range(runs):
        r = i % repos
        repo_id = 1_000_000 + r
        wf = i % 2
        path = f".github/workflows/ci{wf}.yml"
        run_id = 5_000_000_000 + i
        created = start + timedelta(seconds=(i // repos) * 86_400 * 90 / max(per_repo, 1) + r)
        sha = f"{i:040x}"
        writer.add(
            RawKind.RUN,
            f"{run_id}:1",
            {
                "id": run_id,
                "name": f"CI {wf}",
                "run_attempt": 1,
                "run_number": i // repos,
                "event": "push",
                "status": "completed",
                "conclusion": "success",
                "head_branch": "main",
                "head_sha": sha,
                "path": f"{path}@refs/heads/main",
                "workflow_id": repo_id * 10 + wf,
                "created_at": _iso(created),
                "run_started_at": _iso(created),
                "head_commit": {"id": sha, "message": "change things\n\nmore"},
                "repository": {"id": repo_id, "full_name": f"owner{r}/repo{r}", **filler},
                "head_repository": {"id": repo_id, **filler},
                "actor": {"login": "someone", **filler},
                **filler,
            },
            repo_id,
        )
        writer.add(
            RawKind.WORKFLOW_REF,
            f"{repo_id}:{path}:{sha}",
            {"repo_id": repo_id, "path": path, "head_sha": sha, "blob_sha": f"blob-{r}-{wf}"},
            repo_id,
        )
        oses = ["ubuntu-latest", "windows-latest"] if r % 3 == 0 else ["ubuntu-latest"]
        names = [("lint", ["ubuntu-latest"])] + [
            (f"test ({o}, py{p})", [o]) for o in oses for p in ("3.11", "3.12")
        ]
        t = created + timedelta(seconds=3)
        for name, labels in names:
            job_id += 1
            n_jobs += 1
            dur = rng.lognormvariate(4.5, 0.8)
            done = t + timedelta(seconds=dur)
            writer.add(
                RawKind.JOB,
                str(job_id),
                {
                    "id": job_id,
                    "run_id": run_id,
                    "run_attempt": 1,
                    "name": name,
                    "status": "completed",
                    "conclusion": "success" if rng.random() > 0.1 else "failure",
                    "created_at": _iso(created),
                    "started_at": _iso(t),
                    "completed_at": _iso(done),
                    "labels": labels,
                    "steps": [
                        {"name": s, "status": "completed", "conclusion": "success", "number": k}
                        for k, s in enumerate(["Set up job", "Checkout", "Run", "Complete job"])
                    ],
                    "runner_name": "GitHub Actions 2",
                    "head_sha": sha,
                    **filler,
                },
                repo_id,
            )
            writer.add(
                RawKind.LOG,
                str(job_id),
                {
                    "job_id": job_id,
                    "status": "ok",
                    "bytes": rng.randint(1_000, 900_000),
                    "text": None,
                },
                repo_id,
            )
        if writer.pending >= 50_000:
            writer.flush()
    writer.close()
    return n_jobs


def read_floor(roots: list[Path]) -> tuple[float, int]:
    """Seconds to decompress and JSON-decode every listed record: no build can be faster."""
    t0 = time.perf_counter()
    n = 0
    for root in roots:
        for name in listed_shards(root):
            with gzip.open(root / RawStoreLayout().shards / name, "rb") as fh:
                for line in fh:
                    json.loads(line)
                    n += 1
    return time.perf_counter() - t0, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--raw", nargs="+", type=Path, help="existing raw store(s) to build from")
    ap.add_argument("--runs", type=int, default=5_000, help="runs to generate (default 5000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="keep the generated store and dataset here")
    args = ap.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="gharuntime-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    generated = None
    if args.raw:
        roots = list(args.raw)
    else:
        t0 = time.perf_counter()
        roots = [work / "store"]
        if roots[0].exists():
            shutil.rmtree(roots[0])
        generated = generate(roots[0], args.runs, args.seed)
        print(
            f"generated {args.runs:,} runs / {generated:,} jobs in {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
    floor_s, records = read_floor(roots)
    print(f"read floor: {records:,} records decoded in {floor_s:.1f} s", file=sys.stderr)

    out = work / "dataset"
    exe = shutil.which("gharuntime", path=str(Path(sys.executable).parent)) or "gharuntime"
    cmd = [exe, "build", "--raw", *map(str, roots), "--out", str(out), "--json"]
    t0 = time.perf_counter()
    proc = subprocess.run([*cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"build failed with exit code {proc.returncode}")
    manifest = json.loads(proc.stdout)
    rows = int(manifest["rows"])
    candidates = int(manifest["build"]["candidates"])
    result = {
        "benchmark": "build_scale",
        "records": records,
        "candidate_jobs": candidates,
        "rows": rows,
        "runs": int(manifest["runs"]),
        "wall_s": round(wall, 1),
        "candidate_jobs_per_s": round(candidates / wall),
        "peak_rss_gb": round(peak_kb / 1024**2, 2),
        "read_floor_s": round(floor_s, 1),
        "wall_over_read_floor": round(wall / floor_s, 2) if floor_s else None,
        "goal_met": wall < 600 and peak_kb / 1024**2 < 6,
        # Other work on the machine slows the build; the load average says how much there was.
        "load_avg_1m_after": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "exit_code": proc.returncode,
    }
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
