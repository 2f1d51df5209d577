"""`gharuntime validate DATASET_DIR`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from gharuntime.cli.output import err_console, out_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.dataset import open_dataset
from gharuntime.dataset_ref import HUB_ID
from gharuntime.jsonout import strict_dumps
from gharuntime.validation import validate_folder

__all__ = ["validate_command"]


@click.command("validate")
@click.argument("dataset_dir", metavar="DATASET_DIR|ORG/NAME[@REVISION]")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the problems as a JSON list on stdout."
)
def validate_command(dataset_dir: str, as_json: bool) -> None:
    """Check a dataset folder against the GHARuntime data contract.

    Checks the manifest (schema version, every file present, sha256 and row counts), the dataset
    card's front matter, each Parquet file's columns and types, that ids are unique, that required
    values are present, and that splits are disjoint: no run in two temporal splits, no
    repository in two cross_repo splits, and that croissant.json (the Croissant metadata) still
    describes the data: every Parquet file with its sha256, the contract's fields and types.
    Every problem is reported with its file and row.

    A Hub id (ORG/NAME[@REVISION]) is downloaded first and checked against its manifest.

    \b
    Exit codes: 0 valid, 1 problems found, 2 usage error or a download that failed.
    Example:  gharuntime validate ./gharuntime-dataset
    """
    if not Path(dataset_dir).exists() and not HUB_ID.match(dataset_dir):
        raise click.BadParameter(f"{dataset_dir} does not exist", param_hint="DATASET_DIR")
    with ProgressView(first="validating…") as progress:
        # a DatasetError is refused as it is; links leading out are listed as problems
        root = open_dataset(dataset_dir, refuse_links=False).root
        problems = validate_folder(root, progress=progress)
    if as_json:
        out_console.print_json(
            strict_dumps([{"where": p.where, "message": p.message} for p in problems])
        )
    if not problems:
        err_console.print(styled(("valid", "green"), f": {dataset_dir} follows the contract"))
        return
    for p in problems:
        err_console.print(styled(("problem", "red"), f" {p.where}: {p.message}"))
    err_console.print(f"{len(problems)} problem(s) in {dataset_dir}")
    sys.exit(1)
