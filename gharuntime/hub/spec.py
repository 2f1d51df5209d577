"""Naming a dataset on the Hub: `ORG/NAME[@REVISION]`, the pinned official benchmark, the
endpoint, and the errors every Hub operation raises (secrets scrubbed)."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils._validators import validate_repo_id

from gharuntime.dataset import DatasetError
from gharuntime.dataset_ref import HUB_ID
from gharuntime.redact import redact

__all__ = [
    "DATASET_ENV",
    "DEFAULT_DATASET",
    "DEFAULT_ENDPOINT",
    "HUB_ID",
    "HubError",
    "HubSpec",
    "check_token",
    "default_dataset",
    "endpoint_problem",
    "endpoint_url",
    "parse_spec",
    "scrub",
]

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
    try:
        validate_repo_id(match["repo"])
    except HFValidationError as exc:
        raise HubError(
            f"{match['repo']!r} is not a Hub dataset id ({exc})",
            fix="write ORG/NAME as the Hub shows it, e.g. gharuntime/GHARuntime",
        ) from None
    revision = match["revision"]
    if revision is not None and not _revision_ok(revision):
        raise HubError(
            f"{revision!r} is not a revision: a tag, branch (parts between '/' not empty, not "
            "starting with '.', no '..', not ending in '.lock') or commit id",
            where=match["repo"],
            fix="write ORG/NAME@REVISION with a tag, branch or commit id, e.g. @v1.0",
        )
    return HubSpec(match["repo"], revision)


def _revision_ok(revision: str) -> bool:
    """git's rules for a ref name (git check-ref-format), as far as HUB_ID's characters go: a
    revision never leaves the cache folder it names (`../../x` did)."""
    if ".." in revision or revision.endswith((".", "/")):
        return False
    return all(
        part and not part.startswith(".") and not part.endswith(".lock")
        for part in revision.split("/")
    )


def default_dataset() -> str:
    """The benchmark to score against: $GHARUNTIME_DATASET, else the pinned DEFAULT_DATASET."""
    return os.environ.get(DATASET_ENV, "").strip() or DEFAULT_DATASET


def endpoint_problem(url: str) -> str | None:
    """Why `url` cannot be the Hub endpoint (None when it can). Never quotes a URL that holds a
    user or password: it would show in every error message."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError:
        return "is not a URL; give e.g. https://huggingface.co"
    if parts.username is not None or parts.password is not None:
        return (
            "holds a user or password; remove it from the URL and give the token by $HF_TOKEN "
            "or `hf auth login`"
        )
    if any(ord(ch) <= 0x20 or ord(ch) >= 0x7F for ch in url):
        return f"{url!a} holds spaces, control or non-ASCII characters"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http(s) URL; give e.g. https://huggingface.co"
    if parts.query or parts.fragment:
        return f"{url!r}: an endpoint has no ?query or #fragment"
    return None


def endpoint_url(endpoint: str | None) -> str:
    """The Hub to talk to: `endpoint`, else $HF_ENDPOINT, else huggingface.co; raises HubError
    for a URL that is not http(s) or carries credentials (refused, never echoed)."""
    url = (endpoint or os.environ.get("HF_ENDPOINT", "").strip() or DEFAULT_ENDPOINT).rstrip("/")
    problem = endpoint_problem(url)
    if problem:
        where = "--endpoint" if endpoint else "$HF_ENDPOINT"
        raise HubError(f"the Hub endpoint ({where}) {problem}")
    return url


def check_token(token: str | None) -> None:
    """Refuse a token an HTTP header cannot carry (non-ASCII, control characters, spaces),
    given or found in $HF_TOKEN, before any request; the message never quotes it."""
    for secret, where in ((token, "the token given"), (os.environ.get("HF_TOKEN"), "$HF_TOKEN")):
        if secret is not None and any(not 0x21 <= ord(ch) <= 0x7E for ch in secret):
            raise HubError(
                f"{where} holds a space, a control or a non-ASCII character, which an HTTP "
                "header cannot carry; set it to the token exactly as the Hub shows it"
            )


def scrub(text: str, token: str | None) -> str:
    """`text` with the token (and any token huggingface_hub would find) replaced by ***, and
    any user or password in a URL too."""
    from huggingface_hub import get_token

    secrets = {token, os.environ.get("HF_TOKEN")}
    with contextlib.suppress(OSError, UnicodeError):  # an unreadable token file: none more
        secrets.add(get_token())
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return redact(text)
