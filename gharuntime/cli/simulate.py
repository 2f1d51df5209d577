"""`gharuntime simulate serve|dump`: the simulated GitHub, over HTTP or straight into a raw store."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from gharuntime.cli.errors import UsageProblem
from gharuntime.cli.output import err_console, out_console
from gharuntime.cli.progress import ProgressView
from gharuntime.jsonout import strict_dumps
from gharuntime.paramtypes import SEED, FiniteFloatRange, Text
from gharuntime.readfile import InputFileError, read_json
from gharuntime.sim.faults import Faults
from gharuntime.sim.world import SCALES, Scale, World

__all__ = ["simulate_command"]


def _scale_options(fn: Any) -> Any:
    for option in reversed(
        (
            click.option(
                "--seed",
                type=SEED,
                default=0,
                show_default=True,
                help="Seed of the world: same seed, same world.",
            ),
            click.option(
                "--scale",
                type=click.Choice(sorted(SCALES)),
                default="tiny",
                show_default=True,
                help="Preset size: tiny (12 repositories), small (150), medium (2,000), paper (27,000 ≈ 580,000 runs).",
            ),
            click.option(
                "--repos",
                type=click.IntRange(1, 1_000_000),
                help="Override the preset's number of repositories.",
            ),
            click.option(
                "--workflows-per-repo",
                type=FiniteFloatRange(0.5, 5),
                help="Override the mean workflows per repository.",
            ),
            click.option(
                "--runs-per-workflow",
                type=FiniteFloatRange(0.5, 10_000),
                help="Override the mean runs per workflow.",
            ),
            click.option(
                "--days",
                type=click.IntRange(1, 3650),
                help="Override the days of history before the world's end (2026-11-01).",
            ),
        )
    ):
        fn = option(fn)
    return fn


def make_world(
    seed: int,
    scale: str,
    repos: int | None,
    workflows_per_repo: float | None,
    runs_per_workflow: float | None,
    days: int | None,
) -> World:
    """The World the scale options describe."""
    base = SCALES[scale]
    return World(
        seed,
        Scale(
            repos or base.repos,
            workflows_per_repo or base.workflows_per_repo,
            runs_per_workflow or base.runs_per_workflow,
            days or base.days,
        ),
    )


def _tokens(path: Path | None) -> Mapping[str, str] | None:
    if path is None:
        return None
    try:
        data = read_json(path, 16 * 2**20)
    except InputFileError as exc:
        raise click.BadParameter(
            f"{path}: cannot read a JSON object of token → account ({exc})", param_hint="--tokens"
        ) from exc
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise click.BadParameter(
            f"{path}: expected a JSON object mapping each token to an account name",
            param_hint="--tokens",
        )
    return data


@click.group("simulate")
def simulate_command() -> None:
    """The simulated GitHub: a seeded world of repositories, workflows and runs.

    \b
    Examples:
      gharuntime simulate serve --seed 1 --scale small --port 8765
      gharuntime simulate dump --seed 1 --scale paper --out ./raw-sim
    """


@simulate_command.command("serve")
@_scale_options
@click.option(
    "--host", type=Text(255), default="127.0.0.1", show_default=True, help="Address to listen on."
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port (0: any free port).",
)
@click.option(
    "--tokens",
    "tokens_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="JSON file {token: account}; tokens of one account share its rate limit. Default: any token is its own account.",
)
@click.option(
    "--rate-limit",
    type=click.IntRange(1, 10**12),
    default=5000,
    show_default=True,
    help="Primary limit: requests per account per hour.",
)
@click.option(
    "--secondary",
    metavar="N/SECONDS",
    help="Secondary limit: at most N requests per SECONDS per account, e.g. 100/1.",
)
@click.option(
    "--faults",
    "faults_spec",
    default="",
    metavar="KIND=RATE,...",
    help="Fault injection, e.g. 'error_503=0.02,reset=0.01,truncate=0.01,repeat=0.05,expire=0.01,seed=7'.",
)
def serve_command(
    seed: int,
    scale: str,
    repos: int | None,
    workflows_per_repo: float | None,
    runs_per_workflow: float | None,
    days: int | None,
    host: str,
    port: int,
    tokens_file: Path | None,
    rate_limit: int,
    secondary: str | None,
    faults_spec: str,
) -> None:
    """Serve the world over GitHub's REST API (and the GraphQL blob query) until Ctrl-C.

    Point a crawler at the printed URL instead of https://api.github.com. The world's "now"
    is 2026-11-01T00:00Z; logs older than 90 days before it answer 410.

    \b
    Example:  gharuntime simulate serve --seed 1 --scale small --port 8765 --faults error_503=0.01
    """
    from gharuntime.sim.server import ServerConfig, SimServer

    if not host.strip():  # "" would listen everywhere yet print the URL http://:PORT
        raise click.BadParameter(
            "empty; pass an address to listen on, e.g. 127.0.0.1 (0.0.0.0: every interface)",
            param_hint="--host",
        )
    try:
        faults = Faults.parse(faults_spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--faults") from exc
    burst = None
    if secondary:
        try:
            n, _, s = secondary.partition("/")
            burst = (int(n), float(s))
            if not (0 < burst[0] <= 10**9 and 0 < burst[1] <= 86_400):
                raise ValueError("out of range")
        except ValueError as exc:
            raise click.BadParameter(
                f"{secondary!r}: expected N/SECONDS, e.g. 100/1", param_hint="--secondary"
            ) from exc
    world = make_world(seed, scale, repos, workflows_per_repo, runs_per_workflow, days)
    config = ServerConfig(
        tokens=_tokens(tokens_file), rate_limit=rate_limit, secondary=burst, faults=faults
    )
    try:
        server = SimServer(world, config, host, port)
    except (OSError, OverflowError, UnicodeError) as exc:
        raise UsageProblem(
            f"cannot listen on {host}:{port}: {getattr(exc, 'strerror', None) or exc}; "
            "pick another --port (0: any free port)"
        ) from exc
    out_console.print(server.url)
    sys.stdout.flush()
    err_console.print(
        f"simulated GitHub: {world.scale.repos} repositories, seed {seed}, at {server.url} (Ctrl-C stops)"
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        err_console.print(f"served {server.recorder.total} requests")


@simulate_command.command("dump")
@_scale_options
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Raw store folder to write (created; an interrupted dump of the same world resumes).",
)
@click.option(
    "--logs/--no-logs",
    default=False,
    show_default=True,
    help="Also store each job's log (redacted), as a crawl with logs would.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=None,
    help="Worker processes (default: the CPU count, at most 4).",
)
def dump_command(
    seed: int,
    scale: str,
    repos: int | None,
    workflows_per_repo: float | None,
    runs_per_workflow: float | None,
    days: int | None,
    out: Path,
    logs: bool,
    workers: int | None,
) -> None:
    """Write a world straight into the raw store format, with no HTTP in between.

    The records are exactly those a complete crawl of `simulate serve` would store (repository,
    workflow, run per attempt, job, workflow_file once per distinct blob, workflow_ref per
    (path, head_sha), and log with --logs), ready for `gharuntime build`. Streams one
    repository at a time; Ctrl-C and run again to resume.

    \b
    Example:  gharuntime simulate dump --seed 1 --scale paper --out ./raw-sim
    """
    import os

    from gharuntime.sim.dump import check_out, dump_world

    world = make_world(seed, scale, repos, workflows_per_repo, runs_per_workflow, days)
    try:
        resumed = check_out(world, out, logs=logs)  # a DumpError is refused as it is
    except OSError as exc:
        raise UsageProblem(
            f"cannot write a raw store at {out}: {exc.strerror or exc}; "
            "pass a writable --out folder"
        ) from exc
    if resumed:
        err_console.print(
            f"resuming: {resumed:,} of {world.scale.repos:,} repositories already in {out}"
        )
    n_workers = workers or max(1, min(4, os.cpu_count() or 1))
    started = time.perf_counter()
    with ProgressView() as progress:  # a DumpError is refused as it is
        stats = dump_world(
            world,
            out,
            logs=logs,
            workers=n_workers,
            progress=progress,
        )
    seconds = time.perf_counter() - started
    err_console.print(
        f"wrote {stats.records:,} records ({stats.repos:,} repositories, {stats.runs:,} runs, {stats.attempts:,} attempts, {stats.jobs:,} jobs) to {out} in {seconds:.1f} s"
    )
    out_console.print_json(
        strict_dumps({"out": str(out), "seconds": round(seconds, 2), **vars(stats)})
    )
