"""Assign job rows to the splits of each dataset config (rules in contract.CONFIGS)."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from gharuntime.contract import SPLIT_FRACTIONS, cross_repo_bucket

__all__ = ["assign_cross_repo", "assign_splits", "assign_temporal"]


def assign_temporal(jobs: pl.DataFrame) -> pl.Series:
    """Split per run by the run's first job creation time, so every attempt of a run stays in one
    split and training never sees the future of test runs."""
    runs = (
        jobs.group_by("repo_id", "run_id")
        .agg(pl.col("created_at").min().alias("first"))
        .sort("first", "repo_id", "run_id")
    )
    n = runs.height
    n_train = round(n * SPLIT_FRACTIONS["train"])
    n_val = round(n * (SPLIT_FRACTIONS["train"] + SPLIT_FRACTIONS["validation"])) - n_train
    labels = ["train"] * n_train + ["validation"] * n_val + ["test"] * (n - n_train - n_val)
    runs = runs.with_columns(pl.Series("split", labels, dtype=pl.String))
    joined = jobs.select("repo_id", "run_id").join(
        runs.select("repo_id", "run_id", "split"),
        on=["repo_id", "run_id"],
        how="left",
        maintain_order="left",
    )
    return joined["split"]


def assign_cross_repo(jobs: pl.DataFrame, fixed: Mapping[int, str] | None = None) -> pl.Series:
    """Split per repository by a stable hash of its id, or as `fixed` ({repo_id: split}) says."""
    ids = jobs["repo_id"].unique().sort().to_list()
    fixed = fixed or {}
    mapping = pl.DataFrame(
        {"repo_id": ids, "split": [fixed.get(int(i)) or cross_repo_bucket(int(i)) for i in ids]},
        schema={"repo_id": pl.Int64, "split": pl.String},
    )
    return jobs.select("repo_id").join(mapping, on="repo_id", how="left", maintain_order="left")[
        "split"
    ]


def assign_splits(
    jobs: pl.DataFrame, cross_repo: Mapping[int, str] | None = None
) -> dict[str, pl.Series]:
    """The split of every row, per config (`cross_repo` fixes some repositories' split)."""
    return {"temporal": assign_temporal(jobs), "cross_repo": assign_cross_repo(jobs, cross_repo)}
