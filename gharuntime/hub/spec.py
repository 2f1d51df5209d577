"""Naming a dataset on the Hub: `ORG/NAME[@REVISION]`, the pinned official benchmark, the
endpoint, and the errors every Hub operation raises (secrets scrubbed)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Final

from gharuntime.dataset import DatasetError

__all__ = [
    "DATASET_ENV",
    "DEFAULT_DATASET",
    "DEFAULT_ENDPOINT",
    "HUB_ID",
    "HubError",
    "HubSpec",
    "default_dataset",
    "endpoint_url",
    "parse_spec",
    "scrub",
]

HUB_ID: Final = re.compile(r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<revision>[\w./-]+))?$")
"""A Hugging Face Hub dataset id with an optional revision: owner/name[@revision]."""

DEFAULT_DATASET: Final = "gharuntime/GHARuntime@v1.0"
"""The official benchmark `gharuntime eval` scores against when given no --dataset."""

DATASET_ENV: Final = "GHARUNTIME_DATASET"
DEFAULT_ENDPOINT: Final = "https://huggingface.co"


class HubError(DatasetError):
    """A Hub operation that failed: what, where, and how to fix it. Never carries a token."""


@dataclass(frozen=True)
class HubSpec:
    """A dataset repository and the revision asked for (a tag, branch or commit id)."""

    repo_id: str
    revision: str | None = None

    def __str__(self) -> str:
        return self.repo_id + (f"@{self.revision}" if self.revision else "")


def parse_spec(spec: str) -> HubSpec:
    """`ORG/NAME[@REVISION]` → HubSpec; raises HubError for anything else."""
    match = HUB_ID.match(spec.strip())
    if not match:
        raise HubError(
            f"{spec!r} is not a Hub dataset id; write ORG/NAME or ORG/NAME@REVISION "
            "(a tag, branch or commit id), e.g. gharuntime/GHARuntime@v1.0"
        )
    return HubSpec(match["repo"], match["revision"])


def default_dataset() -> str:
    """The benchmark to score against: $GHARUNTIME_DATASET, else the pinned DEFAULT_DATASET."""
    return os.environ.get(DATASET_ENV, "").strip() or DEFAULT_DATASET


def endpoint_url(endpoint: str | None) -> str:
    """The Hub to talk to: `endpoint`, else $HF_ENDPOINT, else huggingface.co."""
    return (endpoint or os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT).rstrip("/")


def scrub(text: str, token: str | None) -> str:
    """`text` with the token (and any token huggingface_hub would find) replaced by ***."""
    from huggingface_hub import get_token

    for secret in {token, get_token(), os.environ.get("HF_TOKEN")}:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
