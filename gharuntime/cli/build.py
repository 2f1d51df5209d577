"""`gharuntime build`: a raw store, a GHALogs dump or a crawl → a dataset folder."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from gharuntime.builder.build import BuildError, BuildResult, build_from_ghalogs, build_from_raw
from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir
from gharuntime.builder.filters import DEFAULT_CONCLUSIONS
from gharuntime.cli.crawl_options import crawl_selection_options
from gharuntime.cli.errors import Refusal, error_line
from gharuntime.cli.output import err_console, out_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.cli.types import SEED, Text
from gharuntime.contract import CONFIGS, SPLITS
from gharuntime.jsonout import finite, strict_dumps
from gharuntime.paths import output_folder_problem
from gharuntime.progress import Progress
from gharuntime.release_diff import DatasetSide
from gharuntime.sim.world import SCALES

__all__ = ["build_command"]

SOURCES = ("raw", "ghalogs", "api-json", "simulated", "github")


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
        err_console.print(styled(("input problems", "yellow"), " (details in manifest.json):"))
        for kind, n in sorted(counts.items()):
            example = (result.problems.examples.get(kind) or [""])[0]
            err_console.print(f"  {kind}: {n:,}" + (f"  e.g. {example}" if example else ""))
    else:
        err_console.print("input problems: none")


@click.command("build")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, exists=True))
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
    help="What PATHS are: raw stores (default), a GHALogs dump folder, or files, folders or git "
    "repositories of GitHub jobs and runs API JSON (api-json).",
)
@click.option(
    "--yaml-git",
    multiple=True,
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    help="api-json: a git repository (bare or not) of the project whose workflow YAML to read "
    "at each run's head_sha; repeat for several projects.",
)
@click.option(
    "--cross-repo",
    "cross_repo",
    multiple=True,
    metavar="OWNER/NAME=SPLIT",
    help="api-json: fix a repository's cross_repo split (train, validation or test), e.g. "
    "--cross-repo apache/ozone=train --cross-repo apache/ratis=test.",
)
@click.option(
    "--logs",
    type=click.Path(path_type=Path, exists=True, file_okay=False),
    default=None,
    help="GHALogs only: the folder of per-run log archives (adds runner labels and the runner's start and end times).",
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
    type=Text(1000),
    default=",".join(DEFAULT_CONCLUSIONS),
    show_default=True,
    help="Job conclusions to keep, comma separated, or 'all'.",
)
@click.option(
    "--rows-per-file",
    type=click.IntRange(1_000, 100_000_000),
    default=250_000,
    show_default=True,
    help="Rows per Parquet file.",
)
@click.option(
    "--crawl-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="simulated/github: raw store the crawl writes and the build reads (default: OUT.raw "
    "beside --out); rerunning with the same folder continues the crawl.",
)
@click.option("--seed", type=SEED, default=0, show_default=True, help="simulated: world seed.")
@click.option(
    "--scale",
    type=click.Choice(sorted(SCALES)),
    default="tiny",
    show_default=True,
    help="simulated: world size (tiny 12 repositories ... paper 27,000).",
)
@click.option(
    "--crawl-logs/--no-crawl-logs",
    default=False,
    help="simulated/github: also download each job's log (fills log_bytes).",
)
@crawl_selection_options("github")
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=min(os.cpu_count() or 1, 4),
    show_default="the CPU count, at most 4",
    help="Processes that parse workflow YAML (the slowest part of a large build).",
)
@click.option(
    "--previous",
    metavar="OLD",
    default=None,
    help="The previous release (a dataset folder or ORG/NAME[@REVISION]): the card gets a "
    "section on what changed since it, as `gharuntime diff OLD NEW` prints it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON on stdout.")
def build_command(
    paths: tuple[Path, ...],
    raw: tuple[Path, ...],
    source: str | None,
    yaml_git: tuple[Path, ...],
    cross_repo: tuple[str, ...],
    logs: Path | None,
    out: Path,
    conclusions: str,
    rows_per_file: int,
    crawl_dir: Path | None,
    seed: int,
    scale: str,
    crawl_logs: bool,
    repos_file: Path | None,
    search: str | None,
    max_repos: int | None,
    since: str | None,
    until: str | None,
    max_runs_per_workflow: int | None,
    token_file: Path | None,
    api_url: str,
    max_retries: int,
    workers: int,
    previous: str | None,
    as_json: bool,
) -> None:
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
    kind = source or "raw"
    roots = [*raw, *paths]
    if kind in ("simulated", "github") and roots:
        raise click.UsageError(f"--source {kind} crawls first; it takes no PATHS or --raw")
    if kind == "github" and (repos_file is None) == (search is None):
        raise click.UsageError(
            "--source github needs exactly one of --repos FILE or --search QUERY"
        )
    if kind not in ("simulated", "github") and not roots:
        raise click.UsageError(
            "give a source: --raw DIR [DIR ...] or --source ghalogs DIR (see --help)"
        )
    if kind == "ghalogs" and (raw or len(paths) != 1):
        raise click.UsageError(
            "--source ghalogs takes exactly one dump folder: --source ghalogs DIR"
        )
    if kind != "api-json":
        for path in paths:
            if not path.is_dir():
                raise click.BadParameter(
                    f"{path} is a file; --source {kind} reads a folder (only --source api-json "
                    "takes files)",
                    param_hint="PATHS",
                )
    if logs is not None and kind != "ghalogs":
        raise click.UsageError("--logs is for --source ghalogs only")
    if (yaml_git or cross_repo) and kind != "api-json":
        raise click.UsageError("--yaml-git and --cross-repo are for --source api-json only")
    fixed: dict[str, str] = {}
    for item in cross_repo:
        name, sep, split = item.rpartition("=")
        if not sep or not name or split not in SPLITS:
            raise click.BadParameter(
                f"{item!r}: write OWNER/NAME=SPLIT with SPLIT one of {', '.join(SPLITS)}",
                param_hint="--cross-repo",
            )
        fixed[name] = split
    keep = _conclusions(conclusions)
    if out.exists() and (
        not out.is_dir() or (any(out.iterdir()) and not (out / "manifest.json").is_file())
    ):
        raise click.BadParameter(
            f"{out} exists and is not a dataset folder; choose another --out (an earlier "
            "dataset there would be replaced, anything else is never touched)",
            param_hint="--out",
        )
    before = None
    if previous is not None:
        from gharuntime.cli.diff import open_side
        from gharuntime.dataset import DatasetError

        try:
            before = open_side(previous)
        except DatasetError as exc:
            raise click.BadParameter(str(exc), param_hint="--previous") from None
    # the folder replaced at --out is never one the build reads (a --previous release, a source)
    problem = output_folder_problem(
        out,
        [
            *roots,
            *yaml_git,
            logs,
            crawl_dir,  # the crawl's own store, read back to build
            repos_file,
            token_file,
            before.root if before is not None else None,
        ],
    )
    if problem:
        raise click.BadParameter(problem, param_hint="--out")
    started = time.monotonic()
    try:
        with ProgressView(first="starting") as report:
            crawl_into = crawl_dir or out.with_name(out.name + ".raw")
            if kind == "github":  # build_from_simulated claims its folder itself
                claim_crawl_dir(crawl_into, f"the API at {api_url}")
            if kind == "simulated":
                from gharuntime.builder.crawled import build_from_simulated

                result = build_from_simulated(
                    out,
                    crawl_into,
                    seed=seed,
                    scale=scale,
                    logs=crawl_logs,
                    conclusions=keep,
                    progress=report,
                    workers=workers,
                    previous=before,
                )
            elif kind == "github":
                result = _build_github(
                    out,
                    crawl_into,
                    keep,
                    report,
                    repos_file=repos_file,
                    search=search,
                    max_repos=max_repos,
                    since=since,
                    until=until,
                    max_runs_per_workflow=max_runs_per_workflow,
                    logs=crawl_logs,
                    token_file=token_file,
                    api_url=api_url,
                    max_retries=max_retries,
                    workers=workers,
                    previous=before,
                )
            else:
                result = _build_local(
                    kind,
                    roots,
                    out,
                    logs,
                    keep,
                    report,
                    rows_per_file=rows_per_file,
                    workers=workers,
                    yaml_git=yaml_git,
                    cross_repo=fixed,
                    previous=before,
                )
    except (BuildError, CrawlDirError) as exc:
        raise Refusal(
            error_line(exc, "build failed"),
            f"nothing was written; any earlier dataset at {out} is unchanged",
        ) from exc
    _summary(result, time.monotonic() - started)
    for note in result.notes:
        err_console.print(styled(("note", "yellow"), f": {note}"))
    if as_json:
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


def _build_local(
    kind: str,
    roots: list[Path],
    out: Path,
    logs: Path | None,
    keep: tuple[str, ...] | None,
    report: Progress | None,
    *,
    rows_per_file: int,
    workers: int,
    yaml_git: tuple[Path, ...] = (),
    cross_repo: dict[str, str] | None = None,
    previous: DatasetSide | None = None,
) -> BuildResult:
    if kind == "api-json":
        from gharuntime.builder.api_build import build_from_api_json

        return build_from_api_json(
            roots,
            out,
            yaml_git=yaml_git,
            cross_repo=cross_repo,
            conclusions=keep,
            progress=report,
            rows_per_file=rows_per_file,
            workers=workers,
            previous=previous,
        )
    if kind == "ghalogs":
        return build_from_ghalogs(
            roots[0],
            out,
            logs=logs,
            conclusions=keep,
            progress=report,
            rows_per_file=rows_per_file,
            previous=previous,
        )
    return build_from_raw(
        roots,
        out,
        conclusions=keep,
        progress=report,
        rows_per_file=rows_per_file,
        previous=previous,
    )


def _build_github(
    out: Path,
    raw: Path,
    keep: tuple[str, ...] | None,
    report: Progress | None,
    *,
    repos_file: Path | None,
    search: str | None,
    max_repos: int | None,
    since: str | None,
    until: str | None,
    max_runs_per_workflow: int | None,
    logs: bool,
    token_file: Path | None,
    api_url: str,
    max_retries: int,
    workers: int,
    previous: DatasetSide | None = None,
) -> BuildResult:
    """Crawl with the crawler's own option handling (tokens, dates), then build."""
    from gharuntime.builder.crawled import build_from_crawl
    from gharuntime.crawler.assembly import crawl_window, load_tokens, make_client, read_repos
    from gharuntime.crawler.crawl import CrawlOptions

    repos = read_repos(repos_file) if repos_file is not None else None
    since, until = crawl_window(since, until)
    opts = CrawlOptions(
        repos=repos,
        search=search,
        max_repos=max_repos,
        since=since,
        until=until,
        max_runs_per_workflow=max_runs_per_workflow,
        logs=logs,
    )
    tokens = load_tokens(token_file)
    if not tokens:
        err_console.print(
            styled(
                ("no token", "yellow"),
                ": unauthenticated requests get 60 an hour; pass --token-file or set GITHUB_TOKEN",
            )
        )
    client = make_client(api_url, tokens, max_retries=max_retries)
    return build_from_crawl(
        out,
        raw,
        opts,
        client,
        conclusions=keep,
        progress=report,
        workers=workers,
        previous=previous,
    )
