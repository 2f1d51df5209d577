"""The truth side: which dataset, which split, and what training saw."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gharuntime.dataset import DatasetError, load
from gharuntime.eval.truth import load_truth, resolve_dataset


def test_local_folder_resolves(fixture_dataset_master: Path) -> None:
    ref = resolve_dataset(str(fixture_dataset_master))
    assert ref.kind == "local" and ref.root == fixture_dataset_master.resolve()


@pytest.mark.parametrize("spec", ["gharuntime/gharuntime", "org/name@v1.0"])
def test_an_unreachable_hub_id_is_a_clear_error(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nothing listens on the endpoint, and the cache is empty (downloads: tests/test_hub_*.py)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(DatasetError, match="cannot be reached and that revision is not in the"):
        resolve_dataset(spec)


def test_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such folder"):
        resolve_dataset(str(tmp_path / "a" / "b" / "c"))


def test_truth_rows_and_seen_repositories(fixture_dataset_master: Path) -> None:
    truth = load_truth(resolve_dataset(str(fixture_dataset_master)), "cross_repo", "test")
    test = load(fixture_dataset_master, "cross_repo", "test")
    assert truth.ids.to_list() == test["id"].to_list()
    assert truth.rows > 0 and not truth.seen.any()  # cross_repo: test repos never train


def test_temporal_test_repositories_are_seen_in_training(fixture_dataset_master: Path) -> None:
    truth = load_truth(resolve_dataset(str(fixture_dataset_master)), "temporal", "test")
    train_repos = set(load(fixture_dataset_master, "temporal", "train")["repo_id"].to_list())
    assert truth.seen.tolist() == [int(r) in train_repos for r in truth.repo_id]


def test_training_median_comes_from_the_train_split(fixture_dataset_master: Path) -> None:
    truth = load_truth(resolve_dataset(str(fixture_dataset_master)), "temporal", "test")
    train = load(fixture_dataset_master, "temporal", "train")
    assert truth.train_median["duration_s"] == np.median(train["duration_s"].to_numpy())


def test_revision_is_the_content_revision_the_manifest_states(fixture_dataset_master: Path) -> None:
    import hashlib
    import json

    truth = load_truth(resolve_dataset(str(fixture_dataset_master)), "temporal", "test")
    manifest = (fixture_dataset_master / "manifest.json").read_bytes()
    assert truth.revision == json.loads(manifest)["revision"]
    assert truth.manifest_sha256 == hashlib.sha256(manifest).hexdigest() != truth.revision


def test_changed_split_file_is_refused(fixture_dataset: Path) -> None:
    victim = next((fixture_dataset / "data" / "temporal").glob("test-*.parquet"))
    victim.write_bytes(victim.read_bytes() + b"x")
    with pytest.raises(DatasetError, match="does not match the sha256"):
        load_truth(resolve_dataset(str(fixture_dataset)), "temporal", "test")
