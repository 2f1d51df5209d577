"""`gharuntime publish DATASET_DIR --repo-id ORG/NAME` and `gharuntime download ORG/NAME[@REV]`."""

from __future__ import annotations

from pathlib import Path

import click

from gharuntime.cli.errors import Refusal, error_line
from gharuntime.cli.output import err_console, out_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.dataset import DatasetError
from gharuntime.hub import download, publish
from gharuntime.paramtypes import check_endpoint

__all__ = ["download_command", "publish_command"]


_ENDPOINT = click.option(
    "--endpoint",
    envvar="HF_ENDPOINT",
    metavar="URL",
    callback=check_endpoint,
    help="The Hub to talk to [default: $HF_ENDPOINT, else https://huggingface.co]; an http(s) "
    "URL without user or password (the token comes from $HF_TOKEN or `hf auth login`).",
)


@click.command("publish")
@click.argument("dataset_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--repo-id", required=True, metavar="ORG/NAME", help="Dataset repository on the Hub.")
@click.option("--tag", metavar="TAG", help="Tag the published commit, e.g. v1.0 (never moved).")
@click.option("--private", is_flag=True, help="Create the repository private.")
@_ENDPOINT
def publish_command(
    dataset_dir: Path, repo_id: str, tag: str | None, private: bool, endpoint: str | None
) -> None:
    """Publish a dataset folder to the Hugging Face Hub as one commit, and tag it.

    The folder is validated first (an invalid one is refused). Data, manifest, card,
    croissant.json and figures go up in a single commit on main; publishing an unchanged folder uploads nothing new. The
    token comes from $HF_TOKEN or `hf auth login` and is never printed.

    \b
    Exit codes: 0 published, 2 invalid folder, refused tag or Hub error (nothing half-published).
    Example:
      HF_TOKEN=... gharuntime publish out/dataset --repo-id gharuntime/GHARuntime --tag v1.0
    """
    try:
        with ProgressView(first="publishing…") as progress:
            result = publish(
                dataset_dir,
                repo_id,
                tag=tag,
                private=private,
                endpoint=endpoint,
                progress=progress,
            )
    except DatasetError as exc:
        raise Refusal(error_line(exc, "publish failed")) from exc
    what = (
        f"{len(result.changed)} file(s) changed, {len(result.deleted)} deleted"
        if result.changed or result.deleted
        else "nothing changed; no new upload"
    )
    err_console.print(styled(("published", "green"), f" {dataset_dir} ({what})"))
    out_console.print(f"commit {result.commit}", highlight=False)
    if result.tag:
        out_console.print(f"tag    {result.tag}", highlight=False)
    out_console.print(f"url    {result.url}", highlight=False, soft_wrap=True)


@click.command("download")
@click.argument("dataset", metavar="ORG/NAME[@REVISION]")
@click.option(
    "--to",
    type=click.Path(path_type=Path, file_okay=False),
    help="Also copy the checked folder here [default: use it in the Hub cache].",
)
@click.option("--force", is_flag=True, help="Download every file again, even if cached.")
@_ENDPOINT
def download_command(dataset: str, to: Path | None, force: bool, endpoint: str | None) -> None:
    """Download a dataset revision (tag, branch or commit id; default main) from the Hub.

    Files go to the huggingface_hub cache (HF_HOME); every file is then checked against the
    sha256 in manifest.json, and a corrupted or missing one is an error naming it (nothing is
    used). With HF_HUB_OFFLINE=1 the cache answers. Prints the folder and the exact commit.

    \b
    Exit codes: 0 downloaded and checked, 2 not found, unreachable or corrupted.
    Example:
      gharuntime download gharuntime/GHARuntime@v1.0 --to ./gharuntime-v1.0
    """
    try:
        with ProgressView(first=f"downloading {dataset}…") as progress:
            got = download(
                dataset,
                to=to,
                endpoint=endpoint,
                force=force,
                progress=progress,
            )
    except DatasetError as exc:
        raise Refusal(error_line(exc, "download failed")) from exc
    err_console.print(
        styled(("checked", "green"), f" every file of {got.spec} against manifest.json")
    )
    out_console.print(f"commit {got.commit}", highlight=False)
    out_console.print(f"folder {got.root}", highlight=False, soft_wrap=True)
