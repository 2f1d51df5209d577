"""The Hugging Face Hub: publish a dataset folder as a tagged release, download a pinned
revision checked against its manifest, and open `ORG/NAME[@REVISION]` wherever a dataset folder
is taken. Tested against real servers on 127.0.0.1: `gharuntime.sim.hub` (accepts uploads) and
olah (serves a git repository as a Hub)."""

from gharuntime.hub.download import LocalDataset, download, load, open_dataset, verify_folder
from gharuntime.hub.publish import PublishResult, publish
from gharuntime.hub.spec import (
    DATASET_ENV,
    DEFAULT_DATASET,
    HUB_ID,
    HubError,
    HubSpec,
    default_dataset,
    endpoint_url,
    parse_spec,
)

__all__ = [
    "DATASET_ENV",
    "DEFAULT_DATASET",
    "HUB_ID",
    "HubError",
    "HubSpec",
    "LocalDataset",
    "PublishResult",
    "default_dataset",
    "download",
    "endpoint_url",
    "load",
    "open_dataset",
    "parse_spec",
    "publish",
    "verify_folder",
]
