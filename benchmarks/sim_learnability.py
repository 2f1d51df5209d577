"""How much of the simulated world's job duration the reference methods can learn, and how much
of it comes from the served repository fields alone.

Dumps a seeded world, builds it (the real build), and scores `median`, `group-median` and
`lightgbm` on the config track of each configuration (R² on log1p duration, from the eval
library), plus LightGBM again with `repo_size_kb` and `repo_language` blanked in every split: the
drop says how much the model reads off those served fields. The last line printed is one JSON
object with every figure.

    python benchmarks/sim_learnability.py                 # seed 1, scale small (~2 minutes)
    python benchmarks/sim_learnability.py --seed 2 --scale medium
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

from gharuntime.baselines.run import run_baseline
from gharuntime.builder.build import build
from gharuntime.dataset import load, read_manifest, write_dataset
from gharuntime.eval.api import evaluate_file
from gharuntime.sim import World
from gharuntime.sim.dump import dump_world
from gharuntime.source_kinds.raw import RawSource

METHODS = ("median", "group-median", "lightgbm")


def _r2(submission: Path, dataset: Path, resamples: int) -> float:
    result = evaluate_file(
        submission, dataset, options={"track": "config"}, resamples=resamples, seed=0
    )
    return float(result["metrics"]["duration_s"]["r2_log"]["value"])


def _blanked(dataset: Path, out: Path) -> Path:
    """The same rows with repo_size_kb and repo_language null (a model cannot read them)."""
    rows = pl.concat(
        [load(dataset, "temporal", s) for s in ("train", "validation", "test")], how="vertical"
    )
    rows = rows.with_columns(
        pl.lit(None, dtype=rows.schema["repo_size_kb"]).alias("repo_size_kb"),
        pl.lit(None, dtype=rows.schema["repo_language"]).alias("repo_language"),
    )
    manifest = read_manifest(dataset)
    write_dataset(rows, out, provenance=manifest["source"], build=manifest.get("build", {}))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--scale", default="small")
    parser.add_argument("--resamples", type=int, default=200)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="sim-learn-"))
    figures: dict[str, Any] = {"seed": args.seed, "scale": args.scale}
    try:
        t0 = time.perf_counter()
        stats = dump_world(World(args.seed, args.scale), work / "raw", logs=False)
        dataset = work / "ds"
        build(RawSource([work / "raw"]), dataset)
        blank = _blanked(dataset, work / "blank")
        figures["jobs_dumped"] = stats.jobs
        figures["rows"] = read_manifest(dataset)["rows"]
        for config in ("cross_repo", "temporal"):
            for method in METHODS:
                out = work / f"{config}-{method}.jsonl"
                run_baseline(method, dataset, config=config, track="config", out=out)
                figures[f"{config}.{method}.r2_log"] = round(_r2(out, dataset, args.resamples), 4)
            out = work / f"{config}-lightgbm-blank.jsonl"
            run_baseline("lightgbm", blank, config=config, track="config", out=out)
            figures[f"{config}.lightgbm_without_size_and_language.r2_log"] = round(
                _r2(out, blank, args.resamples), 4
            )
        figures["seconds"] = round(time.perf_counter() - t0, 1)
        figures["load_average"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for key, value in figures.items():
        print(f"{key:>55}: {value}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
