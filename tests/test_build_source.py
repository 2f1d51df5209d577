"""Every source behind one interface: a Source's read() gives Candidates, and one build serves
them all (the build_from_* shorthands are deprecated: each warns, and builds the same bytes)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gharuntime.builder.build import BuildError, BuildOptions, RawSource, build, build_from_raw
from gharuntime.dataset import read_manifest
from gharuntime.progress import Progress
from gharuntime.sim import World
from gharuntime.sim.dump import dump_world
from gharuntime.sources import Candidates, Source
from gharuntime.sources._columns import SourceError


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


def test_the_raw_shorthand_is_deprecated_and_builds_the_same_dataset(
    store: Path, tmp_path: Path
) -> None:
    one = build(RawSource([store]), tmp_path / "one", BuildOptions(conclusions=None))
    with pytest.warns(DeprecationWarning, match=r"build_from_raw is deprecated.*RawSource"):
        old = build_from_raw([store], tmp_path / "old", conclusions=None)
    assert old.manifest == one.manifest
    assert old.manifest["source"]["kind"] == "simulated"


@pytest.mark.parametrize("name", ["ghalogs", "api_json", "simulated"])
def test_every_other_shorthand_warns_before_it_builds(name: str, tmp_path: Path) -> None:
    from gharuntime.builder.api_build import build_from_api_json
    from gharuntime.builder.build import build_from_ghalogs
    from gharuntime.source_kinds.simulated import build_from_simulated

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "not-a-store.txt").write_text("x")  # each source refuses this folder
    calls = {
        "ghalogs": lambda: build_from_ghalogs(tmp_path / "in", tmp_path / "ds"),
        "api_json": lambda: build_from_api_json([tmp_path / "in"], tmp_path / "ds"),
        "simulated": lambda: build_from_simulated(
            tmp_path / "ds", tmp_path / "in", seed=0, scale="tiny"
        ),
    }
    with (
        pytest.warns(DeprecationWarning, match=f"build_from_{name} is deprecated"),
        pytest.raises(BuildError),
    ):
        calls[name]()
    assert not (tmp_path / "ds").exists()


def test_a_source_that_cannot_be_read_is_a_build_error(tmp_path: Path) -> None:
    class Broken:
        def read(self, progress: Progress | None = None) -> Candidates:
            raise SourceError(f"{tmp_path}: not a source")

    with pytest.raises(BuildError, match="not a source"):
        build(Broken(), tmp_path / "ds")
    with pytest.raises(BuildError, match=str(tmp_path)):
        build(RawSource([tmp_path]), tmp_path / "ds2")
    assert not (tmp_path / "ds").exists()
