"""Job logs: GitHub's timestamped line format, sizes that follow the steps, and now and then a
secret GitHub would have masked (for the crawler's redaction to catch)."""

from __future__ import annotations

import re

from gharuntime.sim import World
from gharuntime.sim.logs import job_log

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ")


def _jobs(world: World, limit: int) -> list:  # type: ignore[type-arg]
    out = []
    for rw in world.repos():
        for run in rw.runs:
            out.extend(j for j in run.latest.jobs if j.status == "completed" and j.steps)
            if len(out) >= limit:
                return out[:limit]
    return out


def test_every_line_is_timestamped(sim_world: World) -> None:
    text = job_log(_jobs(sim_world, 1)[0]).lstrip("\ufeff")
    lines = text.splitlines()
    assert lines and all(LINE.match(line) for line in lines)
    assert "##[group]Set up job" in lines[0]


def test_same_job_same_log(sim_world: World) -> None:
    job = _jobs(sim_world, 3)[2]
    assert job_log(job) == job_log(job)


def test_longer_jobs_print_more(sim_world: World) -> None:
    jobs = sorted(_jobs(sim_world, 200), key=lambda j: j.completed - j.started)
    short = sum(len(job_log(j)) for j in jobs[:40])
    long = sum(len(job_log(j)) for j in jobs[-40:])
    assert long > 3 * short


def test_some_logs_leak_a_secret(sim_world: World) -> None:
    leaks = [
        j
        for j in _jobs(sim_world, 400)
        if re.search(r"gh[ps]_[A-Za-z0-9]{36}|AWS_SECRET_ACCESS_KEY=|://admin:", job_log(j))
    ]
    assert 0 < len(leaks) < 60
