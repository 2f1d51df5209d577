"""A small, seeded job table written through the contract: for tests, and for trying `validate`
and `eval` before a real build. Not a benchmark: `gharuntime build` makes the real dataset.

Run `python -m gharuntime.fixture OUT_DIR` to write one as a dataset folder.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import polars as pl

from gharuntime.contract import job_table_schema
from gharuntime.history import history_durations

__all__ = ["fixture_jobs", "main"]

_WORKFLOW = """name: CI
on: [push, pull_request]
jobs:
  test:
    runs-on: ${{{{ matrix.os }}}}
    strategy:
      matrix:
        os: [{oses}]
        python: ["3.10", "3.11"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{{{ matrix.python }}}}
      - run: pip install -e .[test]
      - run: pytest -q
"""


def fixture_jobs(seed: int = 0, repos: int = 40, runs_per_repo: int = 5) -> pl.DataFrame:
    """A job table with `repos` repositories, each running a 2x2 (or 1x2) matrix per run."""
    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    rows = []
    job_id = 1_000_000
    for r in range(repos):
        repo_id = 10_000 + r
        oses = ["ubuntu-latest", "windows-latest"] if r % 2 else ["ubuntu-latest"]
        yaml_text = _WORKFLOW.format(oses=", ".join(oses))
        size = rng.randint(100, 200_000)
        for n in range(runs_per_repo):
            run_id = repo_id * 1000 + n
            created = start + timedelta(hours=rng.uniform(0, 24 * 60))
            for os_label in oses:
                for py in ("3.10", "3.11"):
                    job_id += 1
                    base = 60 + size / 2000 + (120 if os_label.startswith("windows") else 0)
                    duration = round(base * rng.lognormvariate(0, 0.2), 1)
                    queue = round(rng.expovariate(1 / 8), 1)
                    started = created + timedelta(seconds=queue)
                    rows.append(
                        {
                            "id": str(job_id),
                            "repo": f"fixture-org/repo-{r}",
                            "repo_id": repo_id,
                            "repo_language": "Python",
                            "repo_stars": rng.randint(0, 5000),
                            "repo_size_kb": size,
                            "repo_topics": ["ci"],
                            "repo_fork": False,
                            "repo_created_at": start - timedelta(days=400 + r),
                            "run_id": run_id,
                            "run_attempt": 1,
                            "run_number": n + 1,
                            "event": rng.choice(["push", "pull_request"]),
                            "head_branch": "main",
                            "is_default_branch": True,
                            "head_sha": hashlib.sha1(f"{run_id}".encode()).hexdigest(),
                            "head_commit_message": f"change {n}",
                            "workflow_id": repo_id * 10,
                            "workflow_path": ".github/workflows/ci.yml",
                            "workflow_name": "CI",
                            "workflow_yaml": yaml_text,
                            "workflow_sha256": hashlib.sha256(yaml_text.encode()).hexdigest(),
                            "job_id": job_id,
                            "job_name": f"test ({os_label}, {py})",
                            "job_key": "test",
                            "job_yaml": None,
                            "matrix": json.dumps({"os": os_label, "python": py}),
                            "runner_labels": [os_label],
                            "runner_os": "Windows" if os_label.startswith("windows") else "Linux",
                            "runner_image": None,
                            "needs": [],
                            "step_names": [
                                "Set up job",
                                "Run actions/checkout@v4",
                                "Run pytest -q",
                                "Complete job",
                            ],
                            "created_at": created,
                            "started_at": started,
                            "completed_at": started + timedelta(seconds=duration),
                            "conclusion": "success",
                            "history_duration_s": [],
                            "duration_s": duration,
                            "queue_s": queue,
                            "log_bytes": int(duration * 40),
                        }
                    )
    jobs = pl.DataFrame(rows, schema=job_table_schema())
    return jobs.with_columns(history_durations(jobs))


def main(argv: list[str] | None = None) -> int:
    """Write the fixture as a dataset folder: python -m gharuntime.fixture OUT_DIR."""
    from gharuntime.dataset import write_dataset

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write("usage: python -m gharuntime.fixture OUT_DIR\n")
        return 2
    manifest = write_dataset(
        fixture_jobs(),
        Path(args[0]),
        provenance={"kind": "fixture", "seed": 0},
        extra={"pretty_name": "GHARuntime fixture (synthetic, tiny)"},
    )
    sys.stdout.write(f"wrote {manifest['rows']} rows to {args[0]}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
