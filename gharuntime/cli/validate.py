"""`gharuntime validate DATASET_DIR`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from gharuntime.cli.output import err_console, out_console
from gharuntime.validation import validate_folder

__all__ = ["validate_command"]


@click.command("validate")
@click.argument("dataset_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--json", "as_json", is_flag=True, help="Print the problems as a JSON list on stdout."
)
def validate_command(dataset_dir: Path, as_json: bool) -> None:
    """Check a dataset folder against the GHARuntime data contract.

    Checks the manifest (schema version, every file present, sha256 and row counts), the dataset
    card's front matter, each Parquet file's columns and types, that ids are unique, that required
    values are present, and that splits are disjoint: no run in two temporal splits, no
    repository in two cross_repo splits. Every problem is reported with its file and row.

    \b
    Exit codes: 0 valid, 1 problems found, 2 usage error.
    Example:  gharuntime validate ./gharuntime-dataset
    """
    if not dataset_dir.exists():
        raise click.BadParameter(f"{dataset_dir} does not exist", param_hint="DATASET_DIR")
    with err_console.status("validating…") as status:
        problems = validate_folder(dataset_dir, progress=lambda f: status.update(f"checking {f}"))
    if as_json:
        out_console.print_json(
            json.dumps([{"where": p.where, "message": p.message} for p in problems])
        )
    if not problems:
        err_console.print(f"[green]valid[/green]: {dataset_dir} follows the contract")
        return
    for p in problems:
        err_console.print(f"[red]problem[/red] {p.where}: {p.message}", markup=True)
    err_console.print(f"{len(problems)} problem(s) in {dataset_dir}")
    sys.exit(1)
