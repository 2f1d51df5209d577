"""`gharuntime diff OLD NEW`: what changed between two dataset releases."""

from __future__ import annotations

import click

from gharuntime.cli.errors import Refusal, error_line
from gharuntime.cli.output import echo_json, err_console, terminal_safe
from gharuntime.cli.progress import ProgressView
from gharuntime.dataset import DatasetError
from gharuntime.jsonout import strict_dumps
from gharuntime.paramtypes import check_endpoint
from gharuntime.release_diff import diff_datasets, open_side, render_markdown

__all__ = ["diff_command"]


@click.command("diff")
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON (for tools).")
@click.option(
    "--endpoint",
    envvar="HF_ENDPOINT",
    metavar="URL",
    callback=check_endpoint,
    help="The Hub for ORG/NAME ids [default: $HF_ENDPOINT, else https://huggingface.co]; an "
    "http(s) URL without user or password.",
)
def diff_command(old: str, new: str, as_json: bool, endpoint: str | None) -> None:
    """Say what changed between two releases of the dataset, OLD and NEW.

    Each is a dataset folder or a Hub id ORG/NAME[@REVISION] (downloaded and checked against
    its manifest first). Compares the data contract and columns, rows per config and split,
    repositories added and removed, jobs per repository, each target's median, p90 and share
    over an hour side by side with a drift figure (the two-sample Kolmogorov-Smirnov
    statistic), and the filter counts. Datasets of different contract major versions are
    compared as far as both hold the same things, and the output says so.

    \b
    Output: Markdown on stdout (paste it into release notes), or JSON with --json.
    Exit codes: 0 compared (whatever changed), 2 bad input: a folder that is not a dataset, a
    Hub id that does not resolve, unreadable files.
    \b
    Examples:
      gharuntime diff gharuntime/GHARuntime@v1.0 ./gharuntime-dataset
      gharuntime diff ./release-2025 ./release-2026 --json > changes.json
    """
    try:
        with ProgressView(first="reading the two datasets…"):
            sides = [open_side(spec, endpoint=endpoint) for spec in (old, new)]
            diff = diff_datasets(*sides)
    except DatasetError as exc:
        raise Refusal(error_line(exc, "diff failed")) from exc
    if as_json:
        echo_json(strict_dumps(diff, indent=2, ensure_ascii=False))
    else:
        click.echo(terminal_safe(render_markdown(diff)), nl=False)
    for note in diff["notes"]:
        err_console.print(f"note: {note}")
