"""Identity features: codes from the training vocabulary, repository-qualified names, the
validation split's unseen shares, and trees that learn a job's duration from its identity when
the configuration cannot tell jobs apart."""

from __future__ import annotations

import math
import zlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gharuntime.baselines.identity import (
    fit_identity,
    identity_masks,
    identity_matrix,
    name_tokens,
    unseen_shares,
)
from gharuntime.baselines.methods import make_method
from gharuntime.dataset import load

SMALL = {"n_estimators": 200, "early_stopping_rounds": 20, "learning_rate": 0.2}


def _rows(*specs: tuple[str, str, str]) -> pl.DataFrame:
    """Rows of (repo, workflow_path, job_name); the other identity inputs follow from them."""
    return pl.DataFrame(
        {
            "repo": [r for r, _, _ in specs],
            "repo_id": [zlib.crc32(r.encode()) for r, _, _ in specs],
            "workflow_name": ["CI" for _ in specs],
            "workflow_path": [w for _, w, _ in specs],
            "job_name": [j for _, _, j in specs],
            "job_key": [j.split(" ")[0] for _, _, j in specs],
            "matrix": ['{"check": "unit"}' if "unit" in j else None for _, _, j in specs],
            "runner_labels": [["ubuntu-latest"] for _ in specs],
        }
    )


def test_name_tokens_are_the_lower_case_words() -> None:
    assert name_tokens("Unit (grpc) / build-java 17", None, "ci.yml") == [
        "unit",
        "grpc",
        "build",
        "java",
        "ci",
        "yml",
    ]


def test_codes_come_from_training_and_qualified_names_do_not_cross_repositories() -> None:
    train = _rows(
        ("apache/ozone", "ci.yml", "unit (grpc)"),
        ("apache/ozone", "ci.yml", "unit (grpc)"),
        ("apache/ozone", "ci.yml", "lint"),
    )
    spec = fit_identity(train)
    names = spec.names()
    other = _rows(("apache/ratis", "ci.yml", "unit (grpc)"), ("apache/ozone", "ci.yml", "lint"))
    x = identity_matrix(other, spec)
    col = {n: x[:, names.index(n)] for n in spec.categorical_names()}
    # the most frequent training value gets code 0: ozone's `unit (grpc)`
    assert identity_matrix(train, spec)[0, names.index("id.job")] == 0.0
    # ratis was never in training: every repository-qualified column is unknown (NaN) ...
    for name in ("id.repo", "id.workflow", "id.job_key", "id.job"):
        assert math.isnan(col[name][0]), name
    # ... while the unqualified ones still say what kind of job it is
    assert col["id.workflow_name"][0] == 0.0
    assert col["matrix.check"][0] == 0.0
    assert col["id.job"][1] == 1.0  # ozone's lint, second most frequent
    # and the name words land in the same buckets whatever the repository
    bag = [names.index(n) for n in names if n.startswith("name#")]
    np.testing.assert_array_equal(x[0, bag], identity_matrix(train, spec)[0, bag])
    assert any(t == "grpc" for t in spec.bucket_tokens.values())


def test_unseen_shares_count_new_repositories_and_new_jobs() -> None:
    train = _rows(("a/x", "ci.yml", "test"), ("a/x", "ci.yml", "lint"))
    validation = _rows(
        ("a/x", "ci.yml", "test"),
        ("a/x", "ci.yml", "docs"),  # a new job of a known repository
        ("b/y", "ci.yml", "test"),  # a new repository
        ("a/x", "ci.yml", "lint"),
    )
    assert unseen_shares(train, validation) == {"repo": 0.25, "job": 0.5}
    # nothing to measure them on: half the rows learn without the qualified columns
    assert unseen_shares(train, None) == {"repo": 0.5, "job": 0.5}


def test_masks_follow_the_shares_and_a_new_repository_is_a_new_job() -> None:
    none = identity_masks(1000, {"repo": 0.0, "job": 0.0}, seed=1)
    assert not none["repo"].any() and not none["job"].any()
    every = identity_masks(1000, {"repo": 1.0, "job": 1.0}, seed=1)
    assert every["repo"].all()
    some = identity_masks(20_000, {"repo": 0.1, "job": 0.3}, seed=1)
    assert abs(some["repo"].mean() - 0.1) < 0.01 and abs(some["job"].mean() - 0.3) < 0.015
    assert not (some["repo"] & ~some["job"]).any()


def _identity_only(frame: pl.DataFrame) -> pl.DataFrame:
    """The fixture with durations that only a job's identity tells: each (repo, workflow, job)
    group gets its own duration, and every repository the same metadata."""
    key = pl.concat_str(["repo", "workflow_path", "job_name"], separator="|")
    per_group = key.hash(seed=7) % 3000 + 10
    return frame.with_columns(
        duration_s=per_group.cast(pl.Float64),
        repo_stars=pl.lit(100, dtype=pl.Int64),
        repo_size_kb=pl.lit(1000, dtype=pl.Int64),
        repo_language=pl.lit("Python"),
        repo_created_at=pl.col("repo_created_at").min(),
    )


@pytest.fixture(scope="module")
def identity_splits(fixture_dataset_master: Path) -> dict[str, pl.DataFrame]:
    return {
        s: _identity_only(load(fixture_dataset_master, "temporal", s))
        for s in ("train", "validation", "test")
    }


def _rmsle(pred: np.ndarray, truth: np.ndarray) -> float:
    return float(np.sqrt(np.mean((np.log1p(pred) - np.log1p(truth)) ** 2)))


@pytest.mark.parametrize("name", ["lightgbm", "xgboost"])
def test_trees_learn_what_only_the_identity_tells(name: str, identity_splits: dict) -> None:
    train, val, test = (
        identity_splits["train"],
        identity_splits["validation"],
        identity_splits["test"],
    )
    truth = test["duration_s"].to_numpy()
    scores = {}
    for label, extra in (("blind", {"identity": False, "target_encoding": False}), ("id", {})):
        m = make_method(name, "config", params={**SMALL, **extra})
        m.fit(train, val)
        scores[label] = _rmsle(m.predict_rows(test)["duration_s"], truth)
    gm = make_method("group-median", "config")
    gm.fit(train, val)
    scores["group-median"] = _rmsle(gm.predict_rows(test)["duration_s"], truth)
    assert scores["id"] < 0.5 * scores["blind"], scores
    assert scores["id"] < scores["group-median"] + 0.15, scores


def test_cross_repo_validation_hides_the_qualified_columns_in_training(
    fixture_dataset_master: Path,
) -> None:
    train = load(fixture_dataset_master, "cross_repo", "train")
    val = load(fixture_dataset_master, "cross_repo", "validation")
    m = make_method("lightgbm", "config", params=SMALL)
    m.fit(train, val)
    assert m.shares == {"repo": 1.0, "job": 1.0}  # type: ignore[attr-defined]
    gains = dict(m.importances()["duration_s"])
    for name in ("id.repo", "id.workflow", "id.job_key", "id.job", "enc_repo_mean"):
        assert gains[name] == 0.0, name  # never seen in training, so never split on


def test_new_job_share_is_a_floor_on_the_rows_that_learn_as_a_new_job(
    fixture_dataset_master: Path,
) -> None:
    """Temporal validation that knows every job gives a share of 0, so without a floor the trees
    never see a job without its identity; `new_job_share` sets that floor (learn uses it)."""
    train = load(fixture_dataset_master, "temporal", "train")
    val = load(fixture_dataset_master, "temporal", "validation")
    measured = make_method("lightgbm", "config", params=SMALL)
    measured.fit(train, val)
    floored = make_method("lightgbm", "config", params={**SMALL, "new_job_share": 0.3})
    floored.fit(train, val)
    job = measured.shares["job"]  # type: ignore[attr-defined]
    assert job < 0.3
    assert floored.shares == {**measured.shares, "job": 0.3}  # type: ignore[attr-defined]
    # recorded when set; at its default the config is what results recorded before it existed
    assert floored.config()["new_job_share"] == 0.3
    assert "new_job_share" not in measured.config()
