"""Every source behind one interface: a Source's read() gives Candidates, and one build serves
them all; every kind's Source is built the one way, `build(config.source(), out, options)`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from gharuntime.builder.build import BuildError, BuildOptions, build
from gharuntime.dataset import read_manifest
from gharuntime.progress import Progress
from gharuntime.sim import World
from gharuntime.sim.dump import dump_world
from gharuntime.source_kinds import (
    ApiJsonConfig,
    GhalogsConfig,
    RawConfig,
    RawSource,
    SimulatedConfig,
)
from gharuntime.sources import Candidates, Source
from gharuntime.sources._columns import SourceError
from gharuntime.sources.base import CardHook, CardText


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sim") / "raw"
    dump_world(World(seed=5, scale="tiny"), out, logs=False)
    return out


def test_a_raw_source_reads_candidates_of_one_shape(store: Path) -> None:
    found = RawSource([store]).read()
    assert isinstance(found, Candidates) and found.frame.height > 0
    assert found.provenance["kind"] == "simulated" and found.provenance["synthetic"] is True
    assert found.build["records"] > 0 and found.texts is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.frame = found.frame.head(0)  # type: ignore[misc]


def test_any_source_builds_as_its_wrapper_does(store: Path, tmp_path: Path) -> None:
    class Wrapped:
        """A Source of one's own: the raw store's candidates, read through another object."""

        def read(self, progress: Progress | None = None) -> Candidates:
            return RawSource([store]).read(progress)

    source: Source = Wrapped()
    mine = build(source, tmp_path / "mine")
    theirs = build(RawSource([store]), tmp_path / "theirs")
    assert mine.rows == theirs.rows > 0
    assert (
        read_manifest(tmp_path / "mine")["revision"]
        == read_manifest(tmp_path / "theirs")["revision"]
    )


@pytest.mark.parametrize("kind", ["raw", "ghalogs", "api-json", "simulated"])
def test_every_kind_refuses_a_folder_that_is_not_its_source(kind: str, tmp_path: Path) -> None:
    """What the deleted build_from_* shorthands were tested for, through the one entry point:
    each kind's Source, built by `build`, refuses a folder of something else (BuildError) and
    writes nothing."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "not-a-store.txt").write_text("x")  # each source refuses this folder
    configs = {
        "raw": RawConfig((tmp_path / "in",)),
        "ghalogs": GhalogsConfig(tmp_path / "in"),
        "api-json": ApiJsonConfig((tmp_path / "in",)),
        "simulated": SimulatedConfig(tmp_path / "in"),
    }
    with pytest.raises(BuildError):
        build(configs[kind].source(), tmp_path / "ds", BuildOptions(conclusions=None))
    assert not (tmp_path / "ds").exists()
    assert [p.name for p in (tmp_path / "in").iterdir()] == ["not-a-store.txt"]


def test_a_source_that_cannot_be_read_is_a_build_error(tmp_path: Path) -> None:
    class Broken:
        def read(self, progress: Progress | None = None) -> Candidates:
            raise SourceError(f"{tmp_path}: not a source")

    with pytest.raises(BuildError, match="not a source"):
        build(Broken(), tmp_path / "ds")
    with pytest.raises(BuildError, match=str(tmp_path)):
        build(RawSource([tmp_path]), tmp_path / "ds2")
    assert not (tmp_path / "ds").exists()


def test_the_card_says_what_the_source_says_of_itself(store: Path, tmp_path: Path) -> None:
    """One hook, whatever the source: a Source of one's own tells the card its provenance,
    front matter, limitations and citation; one that says nothing gets a generic paragraph."""

    def mine(provenance: Mapping[str, Any]) -> CardText:
        return CardText(
            f"Rows of the `{provenance['kind']}` archive, read by hand.",
            source_datasets=("my-archive",),
            tags=("hand-read",),
            limitations=("- Only what the archive kept.",),
            citation="\nCite the archive too.",
        )

    class Told:
        def __init__(self, card: CardHook | None) -> None:
            self.card = card

        def read(self, progress: Progress | None = None) -> Candidates:
            found = RawSource([store]).read(progress)
            provenance = {**found.provenance, "kind": "my-archive", "synthetic": False}
            return dataclasses.replace(found, provenance=provenance, card=self.card)

    build(Told(mine), tmp_path / "told")
    card = (tmp_path / "told" / "README.md").read_text()
    assert "Rows of the `my-archive` archive, read by hand." in card
    assert "source_datasets:\n- my-archive" in card and "- hand-read" in card
    assert "- Only what the archive kept." in card and "Cite the archive too." in card
    assert "synthetic" not in card.split("---")[1]  # the raw stores' own text is not used
    build(Told(None), tmp_path / "untold")
    card = (tmp_path / "untold" / "README.md").read_text()
    assert "from a source of kind `my-archive`" in card
