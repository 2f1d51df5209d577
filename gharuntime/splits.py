"""Assign job rows to the splits of each dataset config (rules in contract.CONFIGS), and say
what each split holds per repository (the manifest's `composition`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from gharuntime.contract import SPLIT_FRACTIONS, SPLITS, TEMPORAL_MIN_RUNS, cross_repo_bucket

__all__ = [
    "GROUP",
    "assign_cross_repo",
    "assign_splits",
    "assign_temporal",
    "composition",
    "seen_in_train",
]

GROUP = ("repo_id", "workflow_path", "job_name")
"""A job's group: the rows a per-group median (the `group-median` baseline) pools."""


def assign_temporal(jobs: pl.DataFrame, min_runs: int = TEMPORAL_MIN_RUNS) -> pl.Series:
    """Split each repository's own runs by the run's first job creation time, so every attempt
    of a run stays in one split, training never sees the future of a repository's test runs,
    and every repository with `min_runs` runs or more is in the test split: of n runs, the
    latest max(1, round(0.1 n)) test, the max(1, round(0.1 n)) before them validate, the rest
    train. A repository with fewer runs goes to train whole."""
    f_val, f_test = SPLIT_FRACTIONS["validation"], SPLIT_FRACTIONS["test"]
    n = pl.col("n")
    runs = (
        jobs.group_by("repo_id", "run_id")
        .agg(pl.col("created_at").min().alias("first"))
        .sort("repo_id", "first", "run_id", nulls_last=True)
        .with_columns(
            pl.int_range(pl.len()).over("repo_id").alias("i"),
            pl.len().over("repo_id").alias("n"),
        )
        .with_columns(
            n_test=pl.max_horizontal((n * f_test + 0.5).floor().cast(pl.Int64), pl.lit(1)),
            n_val=pl.max_horizontal((n * f_val + 0.5).floor().cast(pl.Int64), pl.lit(1)),
        )
        .with_columns(
            pl.when(n < min_runs)
            .then(pl.lit("train"))
            .when(pl.col("i") >= n - pl.col("n_test"))
            .then(pl.lit("test"))
            .when(pl.col("i") >= n - pl.col("n_test") - pl.col("n_val"))
            .then(pl.lit("validation"))
            .otherwise(pl.lit("train"))
            .alias("split")
        )
    )
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


def _iso(v: Any) -> str | None:
    return v.isoformat().replace("+00:00", "Z") if v is not None else None


def seen_in_train(jobs: pl.DataFrame, assignment: pl.Series) -> dict[str, Any]:
    """How many test rows belong to a job group (repository, workflow path, job name) that the
    train split holds: on such rows a per-group median is a lookup of the job's own past, so a
    table over them measures forecasting known jobs, not generalization."""
    frame = jobs.select(GROUP).with_columns(assignment.alias("split"))
    train = frame.filter(pl.col("split") == "train").select(GROUP).unique()
    test = frame.filter(pl.col("split") == "test")
    seen = test.join(train, on=list(GROUP), how="semi", nulls_equal=True)
    groups = test.select(GROUP).unique()
    seen_groups = seen.select(GROUP).unique()
    return {
        "test_rows": test.height,
        "test_rows_seen": seen.height,
        "share": round(seen.height / test.height, 4) if test.height else None,
        "test_groups": groups.height,
        "test_groups_seen": seen_groups.height,
    }


def composition(jobs: pl.DataFrame, splits: Mapping[str, pl.Series]) -> dict[str, dict[str, Any]]:
    """Per config: rows, runs and time range of each repository in each split, and the share of
    test rows whose job group is in train."""
    out: dict[str, dict[str, Any]] = {}
    for config, assignment in splits.items():
        frame = jobs.select("repo", "repo_id", "run_id", "created_at").with_columns(
            assignment.alias("split")
        )
        per = (
            frame.group_by("split", "repo_id")
            .agg(
                pl.col("repo").drop_nulls().first().alias("repo"),
                pl.len().alias("rows"),
                pl.col("run_id").n_unique().alias("runs"),
                pl.col("created_at").min().alias("first"),
                pl.col("created_at").max().alias("last"),
            )
            .sort("split", "repo_id")
        )
        block: dict[str, Any] = {}
        for split in SPLITS:
            block[split] = [
                {
                    "repo": r["repo"],
                    "repo_id": int(r["repo_id"]),
                    "rows": int(r["rows"]),
                    "runs": int(r["runs"]),
                    "first": _iso(r["first"]),
                    "last": _iso(r["last"]),
                }
                for r in per.filter(pl.col("split") == split).iter_rows(named=True)
            ]
        block["test_seen_in_train"] = seen_in_train(jobs, assignment)
        out[config] = block
    return out
