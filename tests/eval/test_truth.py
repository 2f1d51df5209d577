"""The truth side: which dataset, which split, and what training saw."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gharuntime.contract import TARGETS
from gharuntime.dataset import DatasetError, load
from gharuntime.eval.truth import load_truth, resolve_dataset


def test_local_folder_resolves(fixture_dataset_master: Path) -> None:
    ref = resolve_dataset(str(fixture_dataset_master))
    assert ref.kind == "local" and ref.root == fixture_dataset_master.resolve()


@pytest.mark.parametrize("spec", ["gharuntime/gharuntime", "org/name@v1.0"])
def test_an_unreachable_hub_id_is_a_clear_error(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nothing listens on the endpoint, and the cache is empty (downloads: tests/hub/)
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


def _frames(repos: list[int], runs: list[int]):  # type: ignore[no-untyped-def]
    import polars as pl

    n = len(repos)
    split = pl.DataFrame(
        {
            "id": [f"j{i}" for i in range(n)],
            "repo_id": repos,
            "run_id": runs,
            "runner_os": ["Linux"] * n,
            **{t: [float(i + 1)] * n for i, t in enumerate(TARGETS)},
        }
    )
    train = split.select(["repo_id", *TARGETS])
    return split, train


def test_a_split_of_few_repositories_is_resampled_by_run() -> None:
    from gharuntime.dataset import LocalDataset
    from gharuntime.eval.truth import MIN_REPOSITORY_CLUSTERS, Truth

    ref = LocalDataset(Path("x"))
    # one repository, six runs of two jobs: six clusters, one repository
    split, train = _frames([7] * 12, [r // 2 for r in range(12)])
    truth = Truth.from_frames(split, train, dataset=ref, config="temporal", split="test")
    assert truth.cluster_by == "run_id" and truth.cluster_ids.tolist() == list(range(6))
    assert truth.repo_ids.tolist() == [7] and truth.cluster.tolist() == [r // 2 for r in range(12)]
    # enough repositories: resampled by repository, as before
    repos = list(range(MIN_REPOSITORY_CLUSTERS))
    split, train = _frames(repos, [100 + r for r in repos])
    truth = Truth.from_frames(split, train, dataset=ref, config="temporal", split="test")
    assert truth.cluster_by == "repo_id" and truth.cluster_ids.tolist() == repos


def test_truth_counts_the_rows_whose_job_group_is_in_train() -> None:
    import polars as pl

    from gharuntime.dataset import LocalDataset
    from gharuntime.eval.truth import Truth

    split, _ = _frames([1, 1, 2, 2], [10, 11, 20, 21])
    split = split.with_columns(
        workflow_path=pl.lit("ci.yml"), job_name=pl.Series(["a", "b", "a", "c"])
    )
    train = (
        split.head(2)
        .with_columns(repo_id=pl.Series([1, 2]), job_name=pl.Series(["a", "c"]))
        .select("repo_id", "workflow_path", "job_name", *TARGETS)
    )
    ref = LocalDataset(Path("x"))
    truth = Truth.from_frames(split, train, dataset=ref, config="temporal", split="test")
    assert truth.group_seen == 2  # (1, a) and (2, c) ran in train; (1, b) and (2, a) did not
    bare = Truth.from_frames(
        split.drop("job_name"), train, dataset=ref, config="temporal", split="test"
    )
    assert bare.group_seen is None  # the rows do not say


def test_one_repository_gets_intervals_of_nonzero_width() -> None:
    """A repository bootstrap over one repository resamples the same rows every time."""
    from gharuntime.dataset import LocalDataset
    from gharuntime.eval.evaluate import Predictions, score
    from gharuntime.eval.meta import MethodMeta
    from gharuntime.eval.report import result_json
    from gharuntime.eval.truth import Truth

    rng = np.random.default_rng(0)
    n = 60
    split, train = _frames([7] * n, [r // 3 for r in range(n)])
    split = split.with_columns(duration_s=rng.lognormal(4, 1, n))
    truth = Truth.from_frames(
        split, train, dataset=LocalDataset(Path("x")), config="temporal", split="test"
    )
    method = Predictions(
        name="m",
        meta=MethodMeta(method="m", track="config", inputs=()),
        predictions={t: np.full(n, 50.0) for t in TARGETS},
        present=np.ones(n, dtype=bool),
    )
    result = result_json(score(truth, "config", [method], resamples=200))
    rmsle = result["metrics"]["duration_s"]["rmsle"]
    assert rmsle["ci_high"] - rmsle["ci_low"] > 0.05
    assert result["bootstrap"]["cluster"] == "run_id" and result["bootstrap"]["clusters"] == 20
    assert result["dataset"]["repositories"] == 1
