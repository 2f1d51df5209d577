"""The temporal split is per repository; the composition says what each split holds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import polars as pl

from gharuntime.contract import TEMPORAL_MIN_RUNS
from gharuntime.splits import assign_temporal, composition, seen_in_train

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def _jobs(spec: dict[tuple[int, str], tuple[int, int]]) -> pl.DataFrame:
    """{(repo_id, repo): (runs, first day)}: two jobs per run (attempts 1 and 2), one run a day."""
    rows = []
    for (repo_id, repo), (n_runs, day0) in spec.items():
        for r in range(n_runs):
            for attempt in (1, 2):
                rows.append(
                    {
                        "repo": repo,
                        "repo_id": repo_id,
                        "run_id": repo_id * 10_000 + r,
                        "run_attempt": attempt,
                        "created_at": T0 + timedelta(days=day0 + r, hours=attempt),
                        "workflow_path": ".github/workflows/ci.yml",
                        "job_name": "test" if r % 2 else "lint",
                    }
                )
    return pl.DataFrame(rows)


def test_every_repository_is_split_in_its_own_time() -> None:
    # repo 1's history ends before repo 2's starts: a global time order would put repo 1 in
    # train only and repo 2 in test only.
    jobs = _jobs(
        {(1, "a/old"): (100, 0), (2, "b/new"): (50, 500), (3, "c/tiny"): (2, 0), (4, "d"): (5, 9)}
    )
    split = assign_temporal(jobs)
    frame = jobs.with_columns(split.alias("split"))
    for repo_id, n in ((1, 100), (2, 50)):
        per = frame.filter(pl.col("repo_id") == repo_id)
        runs = per.group_by("split").agg(pl.col("run_id").n_unique()).sort("split")
        got = dict(runs.iter_rows())
        assert got == {"train": 0.8 * n, "validation": 0.1 * n, "test": 0.1 * n}
        # no train run of the repository is later than its first test run
        last_train = per.filter(pl.col("split") == "train")["created_at"].max()
        first_test = per.filter(pl.col("split") == "test")["created_at"].min()
        assert last_train < first_test  # type: ignore[operator]
    # a repository below the threshold trains whole; a small one still has one run to test
    assert TEMPORAL_MIN_RUNS == 3
    assert set(frame.filter(pl.col("repo_id") == 3)["split"]) == {"train"}
    small = frame.filter(pl.col("repo_id") == 4).group_by("split").agg(pl.col("run_id").n_unique())
    assert dict(small.iter_rows()) == {"train": 3, "validation": 1, "test": 1}
    # every attempt of a run in one split
    assert frame.group_by("repo_id", "run_id").agg(pl.col("split").n_unique())["split"].max() == 1


def test_composition_lists_each_repository_and_the_seen_share() -> None:
    jobs = _jobs({(1, "a/old"): (20, 0), (2, "b/new"): (10, 100)})
    split = assign_temporal(jobs)
    comp = composition(jobs, {"temporal": split})["temporal"]
    test = {r["repo"]: r for r in comp["test"]}
    assert set(test) == {"a/old", "b/new"}
    assert test["a/old"]["runs"] == 2 and test["a/old"]["rows"] == 4
    assert test["b/new"]["first"] == "2024-04-19T01:00:00Z"  # day 109, attempt 1
    seen = comp["test_seen_in_train"]
    assert seen["test_rows"] == 6 and seen["share"] == 1.0

    # a test group that train never saw
    renamed = jobs.with_columns(
        pl.when((split == "test") & (pl.col("repo_id") == 2))
        .then(pl.lit("deploy"))
        .otherwise(pl.col("job_name"))
        .alias("job_name")
    )
    seen = seen_in_train(renamed, split)
    assert (seen["test_rows_seen"], seen["test_rows"]) == (4, 6)
    assert (seen["test_groups_seen"], seen["test_groups"]) == (2, 3)
