"""`gharuntime build`: a raw store, a GHALogs dump or a crawl → a dataset folder."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from gharuntime.build.filters import DEFAULT_CONCLUSIONS
from gharuntime.build.pipeline import BuildError, BuildResult, build_from_ghalogs, build_from_raw
from gharuntime.cli.output import err_console, out_console
from gharuntime.contract import CONFIGS, SPLITS

__all__ = ["build_command"]

SOURCES = ("raw", "ghalogs", "simulated", "github")


class _Bar:
    """Renders the library's progress(stage, done, total) callback as one rich progress bar."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID = progress.add_task("starting", total=None)

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        self.progress.update(
            self.task,
            description=f"{stage} ({done:,})" if done else stage,
            completed=done,
            total=total,
        )


def _conclusions(text: str) -> tuple[str, ...] | None:
    if text.strip().lower() == "all":
        return None
    values = tuple(v.strip() for v in text.split(",") if v.strip())
    if not values:
        raise click.BadParameter("give conclusions to keep, e.g. success or success,failure")
    return values


def _summary(result: BuildResult, seconds: float) -> None:
    m = result.manifest
    table = Table(title=f"dataset written to {result.out}", show_edge=False)
    table.add_column("config")
    for split in SPLITS:
        table.add_column(split, justify="right")
    for config in CONFIGS:
        table.add_row(config, *(f"{m['splits'][config][s]:,}" for s in SPLITS))
    err_console.print(table)
    err_console.print(
        f"{m['rows']:,} jobs, {m['runs']:,} runs, {m['repositories']:,} repositories "
        f"from {m['build'].get('candidates', 0):,} candidate jobs in {seconds:.1f} s"
    )
    removed = ", ".join(f"{k} {v:,}" for k, v in result.filters.items() if v)
    err_console.print(f"filters removed: {removed or 'nothing'}")
    keys = m["build"].get("job_keys", {})
    if keys:
        err_console.print("job keys: " + ", ".join(f"{k} {v:,}" for k, v in keys.items()))
    counts = result.problems.counts
    if counts:
        err_console.print("[yellow]input problems[/yellow] (details in manifest.json):")
        for kind, n in sorted(counts.items()):
            example = (result.problems.examples.get(kind) or [""])[0]
            err_console.print(f"  {kind}: {n:,}" + (f"  e.g. {example}" if example else ""))
    else:
        err_console.print("input problems: none")


@click.command("build")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--raw",
    "raw",
    multiple=True,
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="A raw store (crawl output or `simulate dump`); more stores may follow: --raw A B C.",
)
@click.option(
    "--source",
    type=click.Choice(SOURCES),
    default=None,
    help="What PATHS are: raw stores (default) or a GHALogs dump folder.",
)
@click.option(
    "--logs",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    default=None,
    help="GHALogs only: the folder of per-run log archives (adds labels, step names, exact times).",
)
@click.option(
    "--out",
    "-o",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("gharuntime-dataset"),
    show_default=True,
    help="Dataset folder to write (replaced only once the new one is complete and valid).",
)
@click.option(
    "--conclusions",
    default=",".join(DEFAULT_CONCLUSIONS),
    show_default=True,
    help="Job conclusions to keep, comma separated, or 'all'.",
)
@click.option(
    "--rows-per-file",
    type=click.IntRange(min=1_000),
    default=250_000,
    show_default=True,
    help="Rows per Parquet file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON on stdout.")
def build_command(
    paths: tuple[Path, ...],
    raw: tuple[Path, ...],
    source: str | None,
    logs: Path | None,
    out: Path,
    conclusions: str,
    rows_per_file: int,
    as_json: bool,
) -> None:
    """Build the GHARuntime dataset folder from a raw store or the GHALogs dump.

    Reads the source as a stream, resolves each job to its workflow YAML key, applies the filters
    (each counted in the data card), adds history features, splits per the data contract and
    writes zstd Parquet, manifest.json and a dataset card. The folder at --out is replaced only
    when the new one is complete and passes `gharuntime validate`.

    \b
    Examples:
      gharuntime build --raw ./crawl-a ./crawl-b --out ./gharuntime-dataset
      gharuntime build --source ghalogs ./ghalogs --logs ./ghalogs/logs --out ./ghalogs-dataset
    \b
    Exit codes: 0 built; 1 built, but some input records could not be read (see the summary);
    2 bad usage or a source that cannot be built.
    """
    kind = source or "raw"
    roots = [*raw, *paths]
    if kind in ("simulated", "github"):
        raise click.UsageError(
            f"--source {kind} needs the crawler (gharuntime.crawler), which this build of "
            "gharuntime does not have yet; crawl to a raw store and pass it with --raw DIR"
        )
    if not roots:
        raise click.UsageError(
            "give a source: --raw DIR [DIR ...] or --source ghalogs DIR (see --help)"
        )
    if kind == "ghalogs" and (raw or len(paths) != 1):
        raise click.UsageError(
            "--source ghalogs takes exactly one dump folder: --source ghalogs DIR"
        )
    if logs is not None and kind != "ghalogs":
        raise click.UsageError("--logs is for --source ghalogs only")
    keep = _conclusions(conclusions)
    started = time.monotonic()
    try:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        ) as bar:
            report = _Bar(bar)
            result = (
                build_from_ghalogs(
                    roots[0],
                    out,
                    logs=logs,
                    conclusions=keep,
                    progress=report,
                    rows_per_file=rows_per_file,
                )
                if kind == "ghalogs"
                else build_from_raw(
                    roots,
                    out,
                    conclusions=keep,
                    progress=report,
                    rows_per_file=rows_per_file,
                )
            )
    except BuildError as exc:
        err_console.print(f"[red]build failed[/red]: {exc}")
        err_console.print(f"nothing was written; any earlier dataset at {out} is unchanged")
        sys.exit(2)
    _summary(result, time.monotonic() - started)
    if as_json:
        out_console.print_json(json.dumps(_plain(result.manifest)))
    if result.lost_input:
        err_console.print(
            f"[yellow]warning[/yellow]: {result.lost_input:,} input record(s) could not be read or "
            "placed; the dataset lacks them (exit code 1)"
        )
        sys.exit(1)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
