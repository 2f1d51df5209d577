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


def test_recency_breakdown_and_its_coverage_on_a_hand_built_table() -> None:
    """Each test row's bucket is the days from its job group's latest train row; the result
    breaks the scores and the P10-P90 coverage down by it."""
    from datetime import UTC, datetime, timedelta

    import polars as pl

    from gharuntime.dataset import LocalDataset
    from gharuntime.eval.evaluate import Predictions, score
    from gharuntime.eval.meta import MethodMeta
    from gharuntime.eval.quantiles import ParsedQuantiles, QuantileLevels
    from gharuntime.eval.report import result_json
    from gharuntime.eval.truth import Truth

    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    train = pl.DataFrame(
        {
            "repo_id": [1, 1, 2],
            "workflow_path": ["ci.yml"] * 3,
            "job_name": ["a", "a", "b"],
            "created_at": [t0, t0 + timedelta(days=20), t0],
            **{t: [1.0] * 3 for t in TARGETS},
        }
    )
    days = [1, 25, 45, 200, 0, 0]  # after day 20 for group (1, a), day 0 for (2, b)
    split, _ = _frames([1, 1, 2, 2, 3, 3], [1, 2, 3, 4, 5, 6])
    split = split.with_columns(
        workflow_path=pl.lit("ci.yml"),
        job_name=pl.Series(["a", "a", "b", "b", "a", "z"]),
        created_at=pl.Series(
            [t0 + timedelta(days=20 + days[0]), t0 + timedelta(days=20 + days[1])]
            + [t0 + timedelta(days=d) for d in days[2:]]
        ),
        duration_s=pl.Series([10.0, 10.0, 10.0, 10.0, 10.0, 10.0]),
    )
    truth = Truth.from_frames(
        split, train, dataset=LocalDataset(Path("x")), config="temporal", split="test"
    )
    assert truth.recency is not None
    from gharuntime.recency import BUCKETS

    assert [BUCKETS[b] for b in truth.recency] == [
        "0-7 days",
        "7-30 days",
        "30-90 days",
        "over 90 days",
        "never",  # repository 3 never trained
        "never",
    ]
    # the range holds the truth on the first and the third row, misses the others
    lo = np.array([5.0, 20.0, 5.0, 20.0, 20.0, 1.0])
    hi = np.array([15.0, 30.0, 15.0, 30.0, 30.0, 2.0])
    levels = QuantileLevels((10.0, 50.0, 90.0))
    values = {
        t: np.stack([lo, (lo + hi) / 2, hi]) if t == "duration_s" else np.ones((3, 6))
        for t in TARGETS
    }
    method = Predictions(
        name="m",
        meta=MethodMeta(method="m", track="config", inputs=()),
        predictions={t: np.full(6, 10.0) for t in TARGETS},
        present=np.ones(6, dtype=bool),
        quantiles=ParsedQuantiles(Path("q"), "0" * 64, 6, levels, values),
    )
    result = result_json(score(truth, "config", [method], resamples=50))
    groups = result["breakdowns"]["duration_s"]["train_recency"]
    assert list(groups) == list(BUCKETS)
    assert [g["rows"] for g in groups.values()] == [1, 1, 1, 1, 2]
    coverage = {k: g["intervals"]["p10-p90"]["coverage"]["value"] for k, g in groups.items()}
    assert coverage == {
        "0-7 days": 1.0,
        "7-30 days": 0.0,
        "30-90 days": 1.0,
        "over 90 days": 0.0,
        "never": 0.0,
    }
    width = groups["never"]["intervals"]["p10-p90"]["log_width"]["value"]
    assert width == pytest.approx(np.mean(np.log1p([30.0, 2.0]) - np.log1p([20.0, 1.0])))
    # every other breakdown has the coverage of its groups too
    assert result["breakdowns"]["duration_s"]["runner_os"]["Linux"]["intervals"]["p10-p90"][
        "coverage"
    ]["value"] == pytest.approx(2 / 6)


def test_a_dataset_folders_truth_knows_each_rows_recency(fixture_dataset_master: Path) -> None:
    truth = load_truth(resolve_dataset(str(fixture_dataset_master)), "temporal", "test")
    assert truth.recency is not None and truth.recency.shape == (truth.rows,)
    cross = load_truth(resolve_dataset(str(fixture_dataset_master)), "cross_repo", "test")
    assert cross.recency is not None and (cross.recency == 4).all()  # test repos never train
