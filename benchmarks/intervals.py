"""Calibration of every reference method's quantiles: the P10–P90 coverage (nominal 80%), its
mean log width, the mean pinball loss and the share at or below each level, each with its 95%
repository-bootstrap interval, as `gharuntime eval` scores the quantile sidecar. With
--objective, LightGBM and XGBoost are also fitted with `intervals=objective` (one quantile model
per level) beside their default split-conformal quantiles, to compare the two.

Goal (issue 27): LightGBM's P10–P90 coverage within 0.75–0.85 on gharuntime-sim-small,
temporal/config. The last line printed is one JSON object with every figure.

    gharuntime build --source simulated --seed 1 --scale small --out sim-small
    python benchmarks/intervals.py --dataset sim-small --objective
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import shown

from gharuntime.baselines.run import run_baseline
from gharuntime.eval.api import evaluate_file

GOAL = (0.75, 0.85)
DEFAULT_METHODS = "median,group-median,lightgbm,xgboost"


def _est(block: dict[str, Any]) -> list[float | None]:
    return [block["value"], block["ci_low"], block["ci_high"]]


def _fmt(e: list[float | None], pct: bool = False) -> str:
    if e[0] is None:
        return "—"
    f = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.3f}")
    return f"{f(e[0])} [{f(e[1] or 0.0)}, {f(e[2] or 0.0)}]"


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    block = result["intervals"]["metrics"]["duration_s"]
    central = block["central"]["p10-p90"]
    return {
        "rmsle": result["metrics"]["duration_s"]["rmsle"]["value"],
        "coverage_p10_p90": _est(central["coverage"]),
        "log_width_p10_p90": _est(central["log_width"]),
        "mean_pinball": _est(block["mean_pinball"]),
        "share_at_or_below": {k: _est(v["calibration"]) for k, v in block["levels"].items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True, help="a `gharuntime build` folder")
    parser.add_argument("--configs", default="temporal,cross_repo")
    parser.add_argument("--methods", default=DEFAULT_METHODS, help="also: laser, last-run")
    parser.add_argument("--track", default="config")
    parser.add_argument("--objective", action="store_true", help="also intervals=objective")
    parser.add_argument("--laser-steps", type=int, default=150, help="LASER's max_steps")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--work", type=Path, help="folder for submissions and models [tmp]")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="gharuntime-intervals-"))
    runs: list[tuple[str, str, dict[str, Any]]] = []
    for method in args.methods.split(","):
        params: dict[str, Any] = {"max_steps": args.laser_steps} if method == "laser" else {}
        runs.append((method, method, params))
        if args.objective and method in ("lightgbm", "xgboost"):
            runs.append((f"{method}-objective", method, {"intervals": "objective"}))
    figures: dict[str, dict[str, Any]] = {}
    for config in args.configs.split(","):
        figures[config] = {}
        print(f"\n{config}/{args.track} (P10–P90 nominal 80%)", flush=True)
        for label, method, params in runs:
            sub = work / f"{config}-{label}.jsonl"
            t0 = time.perf_counter()
            run = run_baseline(
                method, args.dataset, config=config, track=args.track, out=sub, params=params
            )
            result = evaluate_file(sub, args.dataset, resamples=args.resamples)
            f = _figures(result)
            f["fit_seconds"] = round(run.fit_seconds, 2)
            f["wall_seconds"] = round(time.perf_counter() - t0, 2)
            figures[config][label] = f
            shares = ", ".join(f"{k} {100 * v[0]:.1f}%" for k, v in f["share_at_or_below"].items())
            print(
                f"  {label:20s} RMSLE {f['rmsle']:.3f}  coverage {_fmt(f['coverage_p10_p90'], True)}"
                f"  log width {_fmt(f['log_width_p10_p90'])}  pinball {_fmt(f['mean_pinball'])}"
                f"  at or below: {shares}  (fit {run.fit_seconds:.1f} s)",
                flush=True,
            )
    goal: dict[str, Any] = {"range": list(GOAL)}
    lgb = figures.get("temporal", {}).get("lightgbm")
    if lgb:
        cov = lgb["coverage_p10_p90"][0]
        goal |= {"lightgbm_temporal_coverage": cov, "met": GOAL[0] <= cov <= GOAL[1]}
        print(f"\ngoal: LightGBM temporal P10–P90 coverage {cov:.3f} in {GOAL}: {goal['met']}")
    print(json.dumps({"dataset": shown(args.dataset), "goal": goal, "figures": figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
