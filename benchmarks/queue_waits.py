"""How long jobs waited (`queue_s`), per repository, split and month, apart for jobs with and
without `needs`: where a dataset's waits move between its splits, and why.

On gharuntime-real-apache (temporal) the validation split's own P10–P90 of `queue_s` holds 55%
of the test jobs (`dataset.split_shift` of any multi result), so no range calibrated on
validation reaches 80% there. This shows where the move is: in ozone's runs up to February 2023
every job with `needs` was created with its run, so its wait counts from the run's start and
includes the run time of the jobs it needs; from March 2023 such jobs are created when they can
start. Jobs without `needs` waited seconds throughout.

It also answers whether a build that measured the wait for a runner instead (from the later of
the job's creation and the completion of the jobs it `needs` in the same run attempt) would
remove the move: `shift` gives, for `queue_s` and for that wait, the validation split's P10,
P50 and P90, the test split's, and the share of test jobs inside validation's P10–P90 (below
its P10, above its P90). A job whose needed jobs are not all in the dataset keeps its creation
as the start of its wait.

    python benchmarks/record.py benchmarks/results/queue_waits-real-apache.json -- \\
        python benchmarks/queue_waits.py --dataset "$GHARUNTIME_REAL_DATASET"

The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import polars as pl
from _common import MissingDataset, real_dataset, refuse, shown

from gharuntime.dataset import load

SPLITS = ("train", "validation", "test")
AT_START_S = 5
"""A job created within this many seconds of its run's first job was created with the run (not
when the jobs it needs finished)."""


def months(dataset: Path, config: str) -> list[dict[str, Any]]:
    """One row per repository, split, month and has-`needs`: jobs, median and P90 of queue_s,
    and the share of the jobs created with their run (within AT_START_S of its first job)."""
    frames = []
    for split in SPLITS:
        columns = ["repo", "run_id", "created_at", "needs", "queue_s"]
        rows = load(dataset, config, split, columns=columns)
        frames.append(rows.with_columns(pl.lit(split).alias("split")))
    jobs = pl.concat(frames)
    # a run's jobs are in one split; its start: when its first job was created
    start = pl.col("created_at").min().over("repo", "run_id")
    jobs = jobs.with_columns(
        ((pl.col("created_at") - start).dt.total_seconds() <= AT_START_S).alias("at_start")
    ).filter(pl.col("queue_s").is_not_null())
    table = (
        jobs.with_columns(
            pl.col("created_at").dt.strftime("%Y-%m").alias("month"),
            (pl.col("needs").list.len().fill_null(0) > 0).alias("needs"),
        )
        .group_by("repo", "split", "month", "needs")
        .agg(
            pl.len().alias("jobs"),
            pl.col("queue_s").median().alias("p50_s"),
            pl.col("queue_s").quantile(0.9, "linear").alias("p90_s"),
            pl.col("at_start").mean().alias("created_at_run_start"),
        )
        .sort("repo", "month", "split", "needs")
    )
    return [
        {
            **r,
            "p50_s": round(r["p50_s"], 1),
            "p90_s": round(r["p90_s"], 1),
            "created_at_run_start": round(r["created_at_run_start"], 4),
        }
        for r in table.iter_rows(named=True)
    ]


def _jobs(dataset: Path, config: str) -> pl.DataFrame:
    """Every job of the config's splits with `wait_s`: started_at minus the later of created_at
    and the last completion of the jobs it needs in its run attempt (same workflow file)."""
    columns = [
        "id", "repo", "run_id", "run_attempt", "workflow_path", "job_key", "needs",
        "created_at", "started_at", "completed_at", "queue_s",
    ]  # fmt: skip
    jobs = pl.concat(
        load(dataset, config, split, columns=columns).with_columns(pl.lit(split).alias("split"))
        for split in SPLITS
    )
    attempt = ["repo", "run_id", "run_attempt", "workflow_path"]
    done = jobs.group_by(*attempt, "job_key").agg(pl.col("completed_at").max().alias("done"))
    needed = (
        jobs.select("id", *attempt, "needs")
        .explode("needs")
        .drop_nulls("needs")
        .join(done, left_on=[*attempt, "needs"], right_on=[*attempt, "job_key"], how="left")
        .group_by("id")
        .agg(pl.col("done").max().alias("needs_done"))
    )
    ready = pl.max_horizontal("created_at", "needs_done")
    return (
        jobs.join(needed, on="id", how="left")
        .with_columns(
            ((pl.col("started_at") - ready).dt.total_milliseconds() / 1000).alias("wait_s")
        )
        .filter(pl.col("queue_s").is_not_null())
    )


def shift(jobs: pl.DataFrame) -> dict[str, Any]:
    """Per measure (queue_s, wait_s): validation's and test's P10/P50/P90 and the share of test
    jobs inside, below and above validation's P10–P90 (eval's `dataset.split_shift` rule)."""
    out: dict[str, Any] = {}
    for measure in ("queue_s", "wait_s"):
        val = jobs.filter(pl.col("split") == "validation")[measure]
        test = jobs.filter(pl.col("split") == "test")[measure]
        if val.len() == 0 or test.len() == 0:
            continue
        q = [float(val.quantile(p, "linear") or 0.0) for p in (0.1, 0.5, 0.9)]
        out[measure] = {
            "validation_p10_p50_p90_s": [round(v, 1) for v in q],
            "test_p10_p50_p90_s": [
                round(float(test.quantile(p, "linear") or 0.0), 1) for p in (0.1, 0.5, 0.9)
            ],
            "test_inside": round(float(((test >= q[0]) & (test <= q[2])).mean() or 0.0), 4),
            "test_below": round(float((test < q[0]).mean() or 0.0), 4),
            "test_above": round(float((test > q[2]).mean() or 0.0), 4),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, help="a dataset folder [$GHARUNTIME_REAL_DATASET]")
    parser.add_argument("--config", default="temporal", choices=("temporal", "cross_repo"))
    args = parser.parse_args(argv)
    try:
        dataset = real_dataset(args.dataset)
    except MissingDataset as exc:
        return refuse(str(exc))
    rows = months(dataset, args.config)
    moved = shift(_jobs(dataset, args.config))
    for r in rows:
        print(
            f"{r['repo']:<14} {r['split']:<10} {r['month']}  needs={'yes' if r['needs'] else 'no ':<3}"
            f" {r['jobs']:>6,} jobs  p50 {r['p50_s']:>8,.1f} s  p90 {r['p90_s']:>9,.1f} s"
            f"  created with the run {100 * r['created_at_run_start']:5.1f}%",
            file=sys.stderr,
        )
    for measure, m in moved.items():
        print(
            f"{measure}: validation P10/P50/P90 {m['validation_p10_p50_p90_s']} s, test "
            f"{m['test_p10_p50_p90_s']} s; test inside validation's P10-P90 "
            f"{100 * m['test_inside']:.1f}% (below {100 * m['test_below']:.1f}%, above "
            f"{100 * m['test_above']:.1f}%)",
            file=sys.stderr,
        )
    print(
        json.dumps(
            {
                "benchmark": "queue_waits",
                "dataset": shown(dataset),
                "config": args.config,
                "months": rows,
                "shift": moved,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
