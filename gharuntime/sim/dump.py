"""`simulate dump`: write a world straight into a raw store, with no HTTP in between.

It writes exactly the records a complete crawl of the simulated GitHub would store (see
contract.RawKind): each repository, its workflows, every attempt of every completed run, their
jobs, each distinct workflow file once, which file each (path, head_sha) used, and logs on request.
Repositories are generated and written one at a time, a shard is committed only at a repository
boundary together with the list of repositories done, so memory stays bounded and an interrupted
dump resumes where it stopped. Several worker processes may share the work (one shard prefix each).
"""

from __future__ import annotations

import multiprocessing
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gharuntime.contract import RawKind
from gharuntime.errors import GharuntimeError
from gharuntime.progress import Progress
from gharuntime.rawstore import RawStoreWriter, connect_state
from gharuntime.sim.logs import job_log
from gharuntime.sim.payloads import Payloads
from gharuntime.sim.world import DAY, END, LOG_RETENTION_DAYS, RepoWorld, Scale, World

__all__ = ["DumpError", "DumpStats", "check_out", "dump_world", "redact", "repo_records"]

_SECRET = re.compile(
    r"(gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|(?<=AWS_SECRET_ACCESS_KEY=)\S+|(?<=://)[^:/\s]+:[^@\s]+(?=@))"
)


class DumpError(GharuntimeError):
    """The output folder holds something a dump must not overwrite or mix with."""


@dataclass
class DumpStats:
    """What a dump wrote (this call only; a resumed dump counts what it added)."""

    repos: int = 0
    runs: int = 0
    attempts: int = 0
    jobs: int = 0
    records: int = 0


def redact(text: str) -> str:
    """Mask what GitHub would have masked: tokens, secret keys, passwords in URLs."""
    return _SECRET.sub("***", text)


def repo_records(
    rw: RepoWorld, payloads: Payloads, *, logs: bool
) -> Iterator[tuple[RawKind, str, Any]]:
    """The raw records of one repository, as a complete crawl would store them."""
    m = rw.meta
    if m.private:
        return
    yield RawKind.REPOSITORY, str(m.id), payloads.repository(m)
    for wf in rw.workflows:
        yield RawKind.WORKFLOW, str(wf.id), payloads.workflow(m, wf)
    blobs: set[str] = set()
    refs: set[tuple[str, str]] = set()
    expired_before = END - LOG_RETENTION_DAYS * DAY
    for run in rw.runs:
        if run.latest.status != "completed":
            continue
        for att in run.attempts:
            yield RawKind.RUN, f"{run.id}:{att.number}", payloads.run(rw, run, att)
            for job in att.jobs:
                yield RawKind.JOB, str(job.id), payloads.job(rw, run, job)
                if logs:
                    if not job.steps:
                        body = {"job_id": job.id, "status": "missing", "bytes": None, "text": None}
                    elif job.completed < expired_before:
                        body = {"job_id": job.id, "status": "expired", "bytes": None, "text": None}
                    else:
                        text = job_log(job)
                        body = {
                            "job_id": job.id,
                            "status": "ok",
                            "bytes": len(text.encode()),
                            "text": redact(text),
                        }
                    yield RawKind.LOG, str(job.id), body
        path = run.workflow.path
        if (path, run.commit.sha) in refs:
            continue
        refs.add((path, run.commit.sha))
        found = rw.file_at(path, run.commit.sha)
        blob = found[1] if found else None
        yield (
            RawKind.WORKFLOW_REF,
            f"{m.id}:{path}:{run.commit.sha}",
            {"repo_id": m.id, "path": path, "head_sha": run.commit.sha, "blob_sha": blob},
        )
        if found and blob not in blobs:
            blobs.add(found[1])
            yield (
                RawKind.WORKFLOW_FILE,
                f"{m.id}:{path}:{found[1]}",
                payloads.content(m, path, found[0], found[1], run.commit.sha),
            )


_SETUP = """CREATE TABLE IF NOT EXISTS sim_dump_done (repo_index INTEGER PRIMARY KEY)"""


def _meta(world: World, logs: bool) -> dict[str, str]:
    sc = world.scale
    return {
        "source": "simulated",
        "api_url": "https://api.github.com",
        "synthetic": "1",
        "sim_seed": str(world.seed),
        "sim_scale": f"{sc.repos}/{sc.workflows_per_repo}/{sc.runs_per_workflow}/{sc.days}",
        "sim_logs": "1" if logs else "0",
    }


def check_out(world: World, out: Path, *, logs: bool = False) -> int:
    """How many repositories of `world` are already dumped in `out` (0 for a new folder);
    raises DumpError for a folder that holds something else."""
    return len(_check_out(out, _meta(world, logs)))


def _check_out(out: Path, meta: dict[str, str]) -> set[int]:
    """Repositories already dumped into `out`; refuses a folder that holds something else."""
    if out.exists() and not out.is_dir():
        raise DumpError(f"{out} is a file; pass a folder for the raw store")
    if out.is_dir() and any(out.iterdir()) and not (out / "state.sqlite").is_file():
        raise DumpError(f"{out} is not empty and is not a raw store; pass an empty or new folder")
    con = connect_state(out)
    try:
        con.execute(_SETUP)
        stored = dict(con.execute("SELECT key, value FROM meta").fetchall())
        for key in ("source", "sim_seed", "sim_scale", "sim_logs"):
            if key in stored and stored[key] != meta[key]:
                raise DumpError(
                    f"{out} holds a dump with {key}={stored[key]}, not {meta[key]}; use another --out folder to dump a different world"
                )
        return {r[0] for r in con.execute("SELECT repo_index FROM sim_dump_done")}
    finally:
        con.close()


def _work(args: tuple[int, Scale, str, bool, int, int, int, Any]) -> DumpStats:
    seed, scale, out, logs, worker, workers, shard_records, queue = args
    world = World(seed, scale, cache_repos=1)
    return _dump_part(
        world,
        Path(out),
        logs,
        worker,
        workers,
        shard_records,
        lambda n: queue.put(n) if queue else None,
    )


def _dump_part(
    world: World,
    out: Path,
    logs: bool,
    worker: int,
    workers: int,
    shard_records: int,
    progress: Callable[[int], None],
) -> DumpStats:
    meta = _meta(world, logs)
    writer = RawStoreWriter(out, prefix=f"sim{worker:02d}", meta=meta)
    stats = DumpStats()
    try:
        done = {r[0] for r in writer.con.execute("SELECT repo_index FROM sim_dump_done")}
        payloads = Payloads()
        pending: list[int] = []
        for index in range(worker, world.scale.repos, workers):
            if index in done:
                continue
            rw = world._build_repo(index)
            for kind, key, body in repo_records(rw, payloads, logs=logs):
                writer.add(kind, key, body, rw.meta.id)
                stats.records += 1
            if not rw.meta.private:
                stats.repos += 1
                completed = [r for r in rw.runs if r.latest.status == "completed"]
                stats.runs += len(completed)
                stats.attempts += sum(len(r.attempts) for r in completed)
                stats.jobs += sum(len(a.jobs) for r in completed for a in r.attempts)
            pending.append(index)
            if writer.pending >= shard_records:
                writer.flush([("INSERT INTO sim_dump_done VALUES (?)", (i,)) for i in pending])
                progress(len(pending))
                pending = []
        writer.flush([("INSERT INTO sim_dump_done VALUES (?)", (i,)) for i in pending])
        progress(len(pending))
    finally:
        writer.con.close()
    return stats


DUMP_STAGE = "dumping repositories"
"""What `dump_world` reports its count of repositories as."""


def dump_world(
    world: World,
    out: Path,
    *,
    logs: bool = False,
    workers: int = 1,
    shard_records: int = 20000,
    progress: Progress | None = None,
) -> DumpStats:
    """Write `world` into the raw store at `out` (created, or resumed when it holds an earlier,
    interrupted dump of the same world). `progress("dumping repositories", done, total)` counts
    repositories."""
    meta = _meta(world, logs)
    already = _check_out(out, meta)
    total = world.scale.repos
    done = len(already)
    if progress:
        progress(DUMP_STAGE, done, total)

    def step(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(DUMP_STAGE, done, total)

    if workers <= 1:
        return _dump_part(world, out, logs, 0, 1, shard_records, step)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        queue = manager.Queue()
        with ctx.Pool(workers) as pool:
            jobs = [
                (world.seed, world.scale, str(out), logs, w, workers, shard_records, queue)
                for w in range(workers)
            ]
            result = pool.map_async(_work, jobs)
            while not result.ready():
                result.wait(0.2)
                while not queue.empty():
                    step(queue.get())
            while not queue.empty():
                step(queue.get())
            parts = result.get()
    stats = DumpStats()
    for part in parts:
        for field in ("repos", "runs", "attempts", "jobs", "records"):
            setattr(stats, field, getattr(stats, field) + getattr(part, field))
    return stats
