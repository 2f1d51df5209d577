"""`gharuntime build`: a raw store, a GHALogs dump or a crawl → a dataset folder. The source
options are the kinds' own (gharuntime.source_kinds); this command adds what every build takes
and turns the values into one request."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.table import Table

from gharuntime.builder.build import BuildError, BuildResult
from gharuntime.builder.crawl_dir import CrawlDirError
from gharuntime.builder.filters import DEFAULT_CONCLUSIONS
from gharuntime.cli.errors import Refusal, error_line
from gharuntime.cli.output import err_console, out_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.contract import CONFIGS, SPLITS
from gharuntime.jsonout import finite, strict_dumps
from gharuntime.paramtypes import Text
from gharuntime.source_kinds import SOURCES, config_from_options
from gharuntime.source_kinds import options as source_options
from gharuntime.source_kinds.request import BuildRequest, parse_conclusions, run_build

__all__ = ["build_command"]


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
        err_console.print(styled(("input problems", "yellow"), " (details in manifest.json):"))
        for kind, n in sorted(counts.items()):
            example = (result.problems.examples.get(kind) or [""])[0]
            err_console.print(f"  {kind}: {n:,}" + (f"  e.g. {example}" if example else ""))
    else:
        err_console.print("input problems: none")


_OWN: tuple[tuple[int, click.Parameter], ...] = (
    (
        25,
        click.Option(
            ["--source", "kind"],  # the source kind's name; a Source is what its config makes,
            # the manifest's `source` section the provenance the build records
            # (docs/maintainer/development.md)
            type=click.Choice(list(SOURCES)),
            default=None,
            help="What to build from (default raw): "
            + "; ".join(f"{kind}: {config.summary}" for kind, config in SOURCES.items())
            + ". An option the source does not use is refused.",
        ),
    ),
    (
        55,
        click.Option(
            ["--out", "-o"],
            type=click.Path(path_type=Path, file_okay=False),
            default=Path("gharuntime-dataset"),
            show_default=True,
            help="Dataset folder to write (replaced only once the new one is complete and valid).",
        ),
    ),
    (
        56,
        click.Option(
            ["--conclusions"],
            type=Text(1000),
            default=",".join(DEFAULT_CONCLUSIONS),
            show_default=True,
            help="Job conclusions to keep, comma separated, or 'all'.",
        ),
    ),
    (
        57,
        click.Option(
            ["--rows-per-file"],
            type=click.IntRange(1_000, 100_000_000),
            default=250_000,
            show_default=True,
            help="Rows per Parquet file.",
        ),
    ),
    (
        300,
        click.Option(
            ["--previous"],
            metavar="OLD",
            default=None,
            help="The previous release (a dataset folder or ORG/NAME[@REVISION]): the card gets "
            "a section on what changed since it, as `gharuntime diff OLD NEW` prints it.",
        ),
    ),
    (
        301,
        click.Option(
            ["--json", "as_json"], is_flag=True, help="Print the manifest as JSON on stdout."
        ),
    ),
)
"""The build's own options (every source takes them), each with the rank that places it among
the source kinds' options in --help (gharuntime.source_kinds.base.SourceOption)."""


def _params() -> list[click.Parameter]:
    """The command's parameters: its own and every source kind's, in --help's order."""
    ranked = [*_OWN, *((o.rank, o.param) for o in source_options())]
    return [param for _, param in sorted(ranked, key=lambda pair: pair[0])]


@click.command("build", params=_params())
@click.pass_context
def build_command(ctx: click.Context, /, **options: Any) -> None:
    """Build the GHARuntime dataset folder from a raw store or the GHALogs dump.

    Reads the source as a stream, resolves each job to its workflow YAML key, applies the filters
    (each counted in the data card), adds history features, splits per the data contract and
    writes zstd Parquet, manifest.json and a dataset card. The folder at --out is replaced only
    when the new one is complete and passes `gharuntime validate`.

    \b
    Sources:
      --raw DIR [DIR ...]         raw stores (crawl shards, `simulate dump`), read together
      --source ghalogs DIR        the published GHALogs dump (runs.json.gz, repositories.json.gz)
      --source api-json PATH...   files, folders or git repositories of jobs/runs API JSON
                                  (.json, .jsonl, .ndjson, each also .gz; job and run records
                                  found by their fields in any shape: one object a file, lists,
                                  pages, JSON Lines), with --yaml-git GITDIR for the YAML
      --source simulated          serve the seeded simulated GitHub on 127.0.0.1, crawl it with
                                  the real crawler, build (a synthetic dataset; says so)
      --source github             crawl GitHub (--repos FILE or --search QUERY), then build
    \b
    Examples:
      gharuntime build --source simulated --seed 1 --scale small --out ./gharuntime-sim
      gharuntime build --raw ./crawl-a ./crawl-b --out ./gharuntime-dataset
      gharuntime build --source ghalogs ./ghalogs --logs ./ghalogs/logs --out ./ghalogs-dataset
      gharuntime build --source api-json ozone-build-results.git --yaml-git ozone.git --out ./o
      GITHUB_TOKEN=... gharuntime build --source github --repos repos.txt --out ./gharuntime-gh
      gharuntime build --raw ./crawl-2026 --previous gharuntime/GHARuntime@v1.0 --out ./v2
    \b
    Exit codes: 0 built; 1 built, but some input records could not be read (see the summary);
    2 bad usage or a source that cannot be built.
    """
    given = {
        p.name
        for p in ctx.command.params
        if p.name and ctx.get_parameter_source(p.name) is ParameterSource.COMMANDLINE
    }
    out: Path = options["out"]
    config = config_from_options(options["kind"] or "raw", out, options, given)
    for warning in config.warnings():
        err_console.print(styled(("warning", "yellow"), f": {warning}"))
    request = BuildRequest(
        config,
        out,
        parse_conclusions(options["conclusions"]),
        options["rows_per_file"],
        previous=options["previous"],
    )
    started = time.monotonic()
    try:
        with ProgressView(first="starting") as report:
            result = run_build(request, report)
    except (BuildError, CrawlDirError) as exc:
        raise Refusal(
            error_line(exc, "build failed"),
            f"nothing was written; any earlier dataset at {out} is unchanged",
        ) from exc
    _summary(result, time.monotonic() - started)
    for note in result.notes:
        err_console.print(styled(("note", "yellow"), f": {note}"))
    if options["as_json"]:
        out_console.print_json(strict_dumps(_plain(result.manifest)))
    if result.lost_input:
        err_console.print(
            styled(
                ("warning", "yellow"),
                f": {result.lost_input:,} input record(s) could not be read or placed; the "
                "dataset lacks them (exit code 1)",
            )
        )
        sys.exit(1)


def _plain(value: Any) -> Any:
    return finite(json.loads(json.dumps(value, default=str)))
