"""One dataset reference type and one resolver: the names every layer exports are the same
objects, and the Hub client is the registered opener of Hub ids."""

from __future__ import annotations

from pathlib import Path

import pytest

import gharuntime
import gharuntime.dataset
import gharuntime.hub
import gharuntime.release_diff
from gharuntime.dataset_ref import HUB_ID, LocalDataset, hub_opener


def test_load_open_dataset_and_localdataset_are_one_each() -> None:
    assert gharuntime.load is gharuntime.dataset.load is gharuntime.hub.load
    assert gharuntime.open_dataset is gharuntime.dataset.open_dataset
    assert gharuntime.open_dataset is gharuntime.hub.open_dataset
    assert gharuntime.LocalDataset is gharuntime.hub.LocalDataset is LocalDataset
    assert gharuntime.hub.HUB_ID is HUB_ID


def test_the_hub_client_is_the_registered_opener() -> None:
    assert hub_opener() is gharuntime.hub.download  # the function, not its module


def test_a_diff_side_holds_the_one_reference(tmp_path: Path) -> None:
    from gharuntime.dataset import write_dataset
    from gharuntime.fixture import fixture_jobs

    write_dataset(fixture_jobs(seed=0), tmp_path / "d", provenance={"kind": "fixture", "seed": 0})
    side = gharuntime.release_diff.open_side(str(tmp_path / "d"))
    assert side.dataset == LocalDataset((tmp_path / "d").resolve())
    assert side.root == side.dataset.root and side.label == str(tmp_path / "d")


@pytest.mark.parametrize(
    ("spec", "kind", "shown", "named"),
    [
        (LocalDataset(Path("/data/sets/d")), "local", "/data/sets/d", "d"),
        (LocalDataset(Path("/c"), "org/name", "v1.0", "a" * 40), "hub", "org/name@v1.0", None),
        (LocalDataset(Path("/c"), "org/name"), "hub", "org/name", None),
    ],
)
def test_a_reference_names_itself(
    spec: LocalDataset, kind: str, shown: str, named: str | None
) -> None:
    """A result names a local dataset by its folder's name, never by a path of the machine
    that scored it; a Hub dataset by its id as asked for."""
    assert (spec.kind, spec.spec, spec.id) == (kind, shown, named or shown)


def test_a_name_that_is_neither_a_folder_nor_a_hub_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(gharuntime.DatasetError, match="not a Hub id"):
        gharuntime.open_dataset(tmp_path / "missing" / "a" / "b")
