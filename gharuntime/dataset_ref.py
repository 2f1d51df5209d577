"""The one reference to an opened dataset, `LocalDataset`, and the two ways a person names one:
a folder, or a Hub id ORG/NAME[@REVISION] (`HUB_ID`).

It sits below both the dataset layer and the Hub client, so every reader (eval, baselines, diff,
reproduce) takes the same type without importing the Hub. `gharuntime.dataset.open_dataset` is
the one resolver; it opens a Hub id through the opener the Hub client registers here when it is
imported (`gharuntime` imports it), because the Hub client itself is built on the dataset layer
and the dataset layer may not import it back."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

if TYPE_CHECKING:
    from gharuntime.progress import Progress

__all__ = ["HUB_ID", "HubOpener", "LocalDataset", "hub_opener", "register_hub_opener"]

HUB_ID: Final = re.compile(
    r"^(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)(?:@(?P<revision>[\w./-]+))?\Z", re.ASCII
)
"""A Hugging Face Hub dataset id with an optional revision: owner/name[@revision]."""


@dataclass(frozen=True)
class LocalDataset:
    """A dataset opened for reading, the one reference every reader takes (`open_dataset`
    makes it): the folder on disk; for one from the Hub, the id, the revision asked for and
    the exact commit it resolved to."""

    root: Path
    repo_id: str | None = None
    revision: str | None = None
    commit: str | None = None

    @property
    def spec(self) -> str:
        """ORG/NAME@REVISION as asked for (the folder's path for a local folder)."""
        if self.repo_id is None:
            return str(self.root)
        return self.repo_id + (f"@{self.revision}" if self.revision else "")

    @property
    def id(self) -> str:
        """How results name it: the Hub id as asked for, else the folder's name (the name the
        leaderboard files it under; never a path of the machine that scored it, and nothing
        opens it: a re-run takes its dataset from the user)."""
        if self.repo_id is None:
            return self.root.name or str(self.root)
        return self.spec

    @property
    def kind(self) -> str:
        """ "hub" for a Hub id, "local" for a folder."""
        return "local" if self.repo_id is None else "hub"


class HubOpener(Protocol):
    """Downloads ORG/NAME[@REVISION], checks it against its manifest, and returns it opened
    (`gharuntime.hub.download`)."""

    def __call__(
        self,
        spec: str,
        *,
        endpoint: str | None = None,
        token: str | None = None,
        progress: Progress | None = None,
    ) -> LocalDataset: ...


_opener: list[HubOpener] = []


def register_hub_opener(opener: HubOpener) -> None:
    """Make `opener` the one that opens Hub ids (the Hub client calls this on import)."""
    _opener[:] = [opener]


def hub_opener() -> HubOpener | None:
    """The registered Hub opener, None before the Hub client is imported."""
    return _opener[0] if _opener else None
