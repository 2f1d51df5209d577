"""`gharuntime pipeline`: the main job, end to end and offline, with progress."""

from __future__ import annotations

import time
from pathlib import Path

import click

from gharuntime.baselines.method import MethodError
from gharuntime.builder.build import BuildError
from gharuntime.cli.errors import Refusal, error_line
from gharuntime.cli.output import err_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.dataset import DatasetError
from gharuntime.eval.evaluate import InvalidSubmission
from gharuntime.leaderboard.registry import LeaderboardError
from gharuntime.pipeline import (
    PIPELINE_CONFIGS,
    PIPELINE_METHODS,
    PIPELINE_TRACKS,
    Step,
    pipeline_steps,
    plan_summary,
    run_pipeline,
)

__all__ = ["pipeline_command"]


_HELP = f"""Build from the simulated GitHub, fit every baseline on both tracks and both configs,
score each, and write the leaderboard, offline.

Stages: serve the seeded simulated GitHub on 127.0.0.1 → crawl it → build a (synthetic)
dataset and validate it → for {" and ".join(PIPELINE_CONFIGS)}, {" and ".join(PIPELINE_TRACKS)}
tracks: {plan_summary()} → gharuntime eval → gharuntime leaderboard.
Open OUT/leaderboard/index.html; OUT/leaderboard/README.md has the same tables.

Resumable: run it again over the same OUT after a kill or a failed method, and it keeps
every step already scored whose inputs are unchanged (dataset revision, code, parameters,
libraries: recorded in OUT/runs/CONFIG/TRACK/METHOD.step.json) and whose filed result is
still in OUT unchanged, and runs the rest; a step whose inputs or result changed runs again,
saying why. --fresh runs every step again. One pipeline at a time over an OUT.

\b
Exit codes: 0 done, 2 a stage failed (it says which), or another run is using OUT.
"""


@click.command("pipeline", help=_HELP)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("out"),
    show_default=True,
    help="Work folder: the dataset, runs/, results/ and leaderboard/ go here.",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Simulated world seed.")
@click.option(
    "--scale",
    type=click.Choice(["tiny", "small"]),
    default="small",
    show_default=True,
    help="Simulated world size (tiny 12 repositories, small 150).",
)
@click.option(
    "--resamples",
    type=click.IntRange(1, 100_000),
    default=1000,
    show_default=True,
    help="Bootstrap resamples of repositories for every interval.",
)
@click.option(
    "--fresh",
    is_flag=True,
    help="Run every step again, even those an earlier run over OUT scored with the same inputs.",
)
def pipeline_command(out: Path, seed: int, scale: str, resamples: int, fresh: bool) -> None:
    """Build, fit every baseline, score each and write the leaderboard, offline (the help is
    _HELP: its method list is made from the method registry)."""
    steps, skipped = pipeline_steps()
    err_console.print(
        f"pipeline: build ({scale}, seed {seed}), {len(steps)} method runs "
        f"({', '.join(m.name for m in PIPELINE_METHODS)}), eval, leaderboard → {out}/"
    )
    started = time.monotonic()

    def done(step: Step, index: int, total: int, summary: str) -> None:
        elapsed = time.monotonic() - started
        err_console.print(f"[{index}/{total}] {step.label}: {summary} ({elapsed:.0f} s elapsed)")

    try:
        with ProgressView(first="starting") as report:
            result = run_pipeline(
                out,
                seed=seed,
                scale=scale,
                resamples=resamples,
                progress=report,
                step_done=done,
                fresh=fresh,
            )
    except (
        BuildError,
        DatasetError,
        MethodError,
        InvalidSubmission,
        LeaderboardError,
        OSError,
    ) as exc:
        raise Refusal(error_line(exc, "pipeline failed")) from exc
    for line in skipped:
        err_console.print(f"skipped {line}")
    if result.kept:
        err_console.print(
            f"kept {len(result.kept)} of {len(result.kept) + len(result.ran)} steps scored by an "
            "earlier run with the same inputs (--fresh runs them again)"
        )
    took = ", ".join(f"{k} {v:.0f} s" for k, v in result.seconds.items())
    err_console.print(
        styled(
            ("done", "green"),
            f" in {time.monotonic() - started:.0f} s ({took}). Leaderboard: "
            f"{result.leaderboard.page} and {result.leaderboard.markdown}",
        )
    )
