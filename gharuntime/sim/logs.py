"""Job logs in GitHub's format: one `<RFC 3339 time with 7 decimals>Z <text>` line per output
line, steps wrapped in `##[group]` / `##[endgroup]`. The line count of each step comes from the
cost model (tests and builds print the most); the text is drawn from the job id, so the same job
always has the same log. Now and then a log leaks something GitHub would have masked (a token, a
password), which a crawler's redaction must catch."""

from __future__ import annotations

import random
from collections.abc import Sequence

from gharuntime.logarchive import write_archive
from gharuntime.sim.world import Job, iso

__all__ = ["attempt_log_archive", "job_log", "step_logs"]

_FILLER = {
    "install": (
        "Collecting {w}",
        "  Downloading {w}-1.{n}.0.tar.gz ({n} kB)",
        "Installing collected packages: {w}",
        "added {n} packages in {n}s",
    ),
    "build": (
        "Compiling {w} v0.{n}.0",
        "[{n}/{m}] Building CXX object src/{w}.o",
        "   Finished release [optimized] target(s)",
        "  {w} -> dist/{w}-{n}.whl",
    ),
    "test": (
        "tests/test_{w}.py::test_{w}_{n} PASSED",
        "ok   github.com/org/{w}\t0.{n}s",
        "  ✓ {w} handles {n} items ({n} ms)",
        "test {w}::case_{n} ... ok",
    ),
    "integration": (
        "[integration] {w} suite: {n} passed",
        "connecting to service at localhost:{n}",
    ),
    "lint": ("{w}.py:{n}:1: checked", "All checks passed!"),
    "docker": ("#{n} [{w} {n}/{m}] RUN make {w}", "#{n} DONE {n}.{m}s"),
    "checkout": (
        "Syncing repository: {w}",
        "Receiving objects: {n}% ({n}/{m})",
        "HEAD is now at {m}",
    ),
}
_WORDS = (
    "parser",
    "config",
    "client",
    "server",
    "utils",
    "cache",
    "models",
    "router",
    "engine",
    "schema",
    "worker",
    "auth",
)
_SECRETS = (
    "Using token ghp_{r36}",
    "export AWS_SECRET_ACCESS_KEY={r40}",  # AWS secret keys are 40 characters
    "curl -H 'Authorization: Bearer ghs_{r36}' https://api.example.com",
    "DATABASE_URL=postgres://admin:{r12}@db.internal:5432/app",
)
_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _stamp(t: float) -> str:
    return f"{iso(t)[:-1]}.{int(t % 1 * 10**7):07d}Z"


def job_log(job: Job) -> str:
    """The full text GitHub would serve for a job's log."""
    rng = random.Random(job.id)
    out: list[str] = []
    leak_at = rng.randrange(len(job.steps)) if job.steps and rng.random() < 0.05 else -1
    for i, step in enumerate(job.steps):
        if step.started is None or step.conclusion == "skipped":
            continue
        start = step.started
        span = max(0.001, (step.completed or start) - start)
        n = max(2, step.lines)
        frac = 0.0
        out.append(f"{_stamp(start)} ##[group]{step.name}")
        templates = _FILLER.get(step.category, ("{w}: done", "Processing {w} ({n})"))
        for k in range(n - 2):
            frac = span * (k + 1) / n
            text = rng.choice(templates).format(
                w=rng.choice(_WORDS), n=rng.randrange(1, 999), m=rng.randrange(1000, 9999)
            )
            out.append(f"{_stamp(start + frac)} {text}")
        if i == leak_at:
            secret = rng.choice(_SECRETS).format(
                r36="".join(rng.choices(_ALNUM, k=36)),
                r12="".join(rng.choices(_ALNUM, k=12)),
                r40="".join(rng.choices(_ALNUM, k=40)),
            )
            out.append(f"{_stamp(start + frac)} {secret}")
        if step.conclusion == "failure":
            out.append(f"{_stamp(start + span)} ##[error]Process completed with exit code 1.")
        out.append(f"{_stamp(start + span)} ##[endgroup]")
    return "\ufeff" + "\n".join(out) + "\n" if out else ""


def step_logs(job: Job) -> list[tuple[str, str]]:
    """(step name, its lines) for every step that ran: the per-step files of a log archive."""
    out: list[tuple[str, str]] = []
    current: list[str] = []
    name = ""
    for line in job_log(job).removeprefix("\ufeff").splitlines():
        text = line.split(" ", 1)[1] if " " in line else ""
        if text.startswith("##[group]"):
            name, current = text.removeprefix("##[group]"), [line]
        elif text == "##[endgroup]":
            current.append(line)
            out.append((name, "\ufeff" + "\n".join(current) + "\n"))
            current = []
        else:
            current.append(line)
    return out


def attempt_log_archive(jobs: Sequence[Job]) -> bytes:
    """The zip GitHub serves for a run attempt's logs: every job that ran, in order."""
    return write_archive([(job.name, job_log(job), step_logs(job)) for job in jobs])
