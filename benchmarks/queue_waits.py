"""How long jobs waited (`queue_s`), per repository, split and month, apart for jobs with and
without `needs`: where a dataset's waits move between its splits, and why.

On gharuntime-real-apache (temporal) the validation split's own P10–P90 of `queue_s` holds 55%
of the test jobs (`dataset.split_shift` of any multi result), so no range calibrated on
validation reaches 80% there. This shows where the move is: in ozone's runs up to February 2023
every job with `needs` was created with its run, so its wait counts from the run's start and
includes the run time of the jobs it needs; from March 2023 such jobs are created when they can
start. Jobs without `needs` waited seconds throughout.

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
    for r in rows:
        print(
            f"{r['repo']:<14} {r['split']:<10} {r['month']}  needs={'yes' if r['needs'] else 'no ':<3}"
            f" {r['jobs']:>6,} jobs  p50 {r['p50_s']:>8,.1f} s  p90 {r['p90_s']:>9,.1f} s"
            f"  created with the run {100 * r['created_at_run_start']:5.1f}%",
            file=sys.stderr,
        )
    print(
        json.dumps(
            {
                "benchmark": "queue_waits",
                "dataset": shown(dataset),
                "config": args.config,
                "months": rows,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
