"""Calibration of every reference method's quantiles: the P10–P90 coverage (nominal 80%), its
mean log width, the mean pinball loss and the share at or below each level, each with its 95%
bootstrap interval, as `gharuntime eval` scores the quantile sidecar, and the coverage by how
recently the job's group last ran in training (eval's `train_recency` breakdown). With
--objective, LightGBM and XGBoost are also fitted with `intervals=objective` (one quantile model
per level) beside their default split-conformal quantiles, to compare the two.

With --study, each conformal tree's fitted model is calibrated again, from the same validation
residuals, three ways (gharuntime.baselines.intervals), and each is scored on the test split:

- `pooled`: one offset per level over every validation row (the trees' calibration before
  issue 48: "before");
- `recent-window`: pooled over the latest quarter of the validation rows only (a shift-aware
  alternative: the newest errors);
- `recency`: per recency stratum of the job group (the default since issue 48: "after"; equal
  to eval's figure, which the script checks).

A LASER row (--methods laser) is scored with and without its calibration (`raw`: the draws' own
P10/P90). Goal (issue 48): P10–P90 coverage within --goal (70–90%) on every row whose config
has a validation split. The last line printed is one JSON object with every figure.

    gharuntime build --source simulated --seed 1 --scale small --out sim-small
    python benchmarks/intervals.py --dataset sim-small --objective
    OMP_NUM_THREADS=1 python benchmarks/intervals.py --dataset "$GHARUNTIME_REAL_DATASET" \\
        --tracks config,history --methods lightgbm,xgboost,catboost --study
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from _common import shown

from gharuntime.baselines.gbdt import GBDT
from gharuntime.baselines.intervals import fit_calibration, row_strata
from gharuntime.baselines.method import QUANTILE_LEVELS, ForbiddenInputError
from gharuntime.baselines.model_io import load_model
from gharuntime.baselines.run import run_baseline
from gharuntime.contract import TRACKS
from gharuntime.dataset import load
from gharuntime.eval.api import evaluate_file
from gharuntime.recency import BUCKETS, GroupClock

DEFAULT_METHODS = "median,group-median,lightgbm,xgboost"
TARGET = "duration_s"
RECENT_SHARE = 0.25  # the recent-window variant: the latest quarter of the validation rows


def _est(block: dict[str, Any]) -> list[float | None]:
    return [block["value"], block["ci_low"], block["ci_high"]]


def _fmt(e: list[float | None], pct: bool = False) -> str:
    if e[0] is None:
        return "—"
    f = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.3f}")
    return f"{f(e[0])} [{f(e[1] or 0.0)}, {f(e[2] or 0.0)}]"


def _figures(result: dict[str, Any]) -> dict[str, Any]:
    block = result["intervals"]["metrics"][TARGET]
    central = block["central"]["p10-p90"]
    groups = result["breakdowns"][TARGET].get("train_recency", {})
    calibration = (result["meta"].get("extra") or {}).get("calibration", {}).get(TARGET)
    return {
        "rmsle": result["metrics"][TARGET]["rmsle"]["value"],
        "coverage_p10_p90": _est(central["coverage"]),
        "log_width_p10_p90": _est(central["log_width"]),
        "mean_pinball": _est(block["mean_pinball"]),
        "share_at_or_below": {k: _est(v["calibration"]) for k, v in block["levels"].items()},
        "coverage_by_recency": {
            g: [e["intervals"]["p10-p90"]["coverage"]["value"], e["rows"]]
            for g, e in groups.items()
            if "intervals" in e
        },
        "calibration": _calibration_summary(calibration),
    }


def _calibration_summary(record: Any) -> dict[str, Any] | None:
    """What calibrated the ranges: method, strata, source and rows (offsets left out)."""
    if not isinstance(record, dict):
        return None
    keep = {k: record[k] for k in ("method", "by", "source", "rows", "why") if k in record}
    if isinstance(record.get("strata"), dict):
        keep["strata_rows"] = {k: v.get("rows") for k, v in record["strata"].items()}
    return keep


def _coverage(y: np.ndarray, lo: np.ndarray, hi: np.ndarray, buckets: np.ndarray) -> dict[str, Any]:
    """P10-P90 coverage of the range, rounded to 0.1 s as the submission writer rounds it (so
    the `recency` variant's figure is eval's), overall and per recency bucket."""
    lo, hi = np.round(lo, 1), np.round(hi, 1)
    inside = (lo <= y) & (y <= hi)
    return {
        "coverage": round(float(inside.mean()), 5),
        "log_width": round(float(np.mean(np.log1p(hi) - np.log1p(lo))), 4),
        "by_recency": {
            b: round(float(inside[buckets == i].mean()), 4)
            for i, b in enumerate(BUCKETS)
            if (buckets == i).any()
        },
    }


def _tree_study(
    model_dir: Path, dataset: Path, config: str, track: str, buckets: np.ndarray
) -> dict[str, Any]:
    """The conformal tree's point predictions on validation and test, calibrated pooled, on
    the recent window and per recency stratum; each variant's test coverage."""
    method, _ = load_model(model_dir)
    if not isinstance(method, GBDT):
        return {}
    val = load(dataset, config, "validation")
    test = load(dataset, config, "test")
    yv = val[TARGET].cast(pl.Float64).to_numpy()
    ok = np.isfinite(yv)
    val = val.filter(pl.Series(ok))
    yv_log = np.log1p(yv[ok])
    pv = np.log1p(method.predict_rows(val)[TARGET])
    pt = np.log1p(method.predict_rows(test)[TARGET])
    y = test[TARGET].cast(pl.Float64).to_numpy()
    uses_history = TRACKS[track].uses_history
    clock = getattr(method, "clock", None)
    order = np.argsort(val["created_at"].to_numpy(), kind="stable")
    recent = np.sort(order[-max(1, round(RECENT_SHARE * len(order))) :])
    variants = {
        "pooled": (fit_calibration(yv_log, dict.fromkeys(QUANTILE_LEVELS, pv), QUANTILE_LEVELS,
                                   strata=None, source="validation"), None),
        "recent-window": (fit_calibration(yv_log[recent], dict.fromkeys(QUANTILE_LEVELS, pv[recent]),
                                          QUANTILE_LEVELS, strata=None, source="validation"), None),
        "recency": (fit_calibration(yv_log, dict.fromkeys(QUANTILE_LEVELS, pv), QUANTILE_LEVELS,
                                    strata=row_strata(val, clock, uses_history), source="validation"),
                    row_strata(test, clock, uses_history)),
    }  # fmt: skip
    out: dict[str, Any] = {"validation_rows": int(ok.sum()), "recent_rows": int(recent.shape[0])}
    for name, (cal, strata) in variants.items():
        levels = cal.adjust({"p10": pt, "p90": pt}, strata)
        lo, hi = (
            np.clip(np.expm1(levels["p10"]), 0, None),
            np.clip(np.expm1(levels["p90"]), 0, None),
        )
        out[name] = _coverage(y, lo, hi, buckets)
    return out


def _laser_raw(model_dir: Path, dataset: Path, config: str, buckets: np.ndarray) -> dict[str, Any]:
    """A LASER model's test coverage with its calibration taken away (the draws' P10/P90)."""
    method, _ = load_model(model_dir)
    method.calibrations = {}  # type: ignore[attr-defined]
    test = load(dataset, config, "test")
    method.predict_rows(test)
    q = method.quantiles()
    if not q:
        return {}
    y = test[TARGET].cast(pl.Float64).to_numpy()
    return {"raw": _coverage(y, q["p10"][TARGET], q["p90"][TARGET], buckets)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True, help="a `gharuntime build` folder")
    parser.add_argument("--configs", default="temporal,cross_repo")
    parser.add_argument("--methods", default=DEFAULT_METHODS, help="also: catboost, laser, ...")
    parser.add_argument("--tracks", default="config", help="comma-separated: config,history")
    parser.add_argument("--objective", action="store_true", help="also intervals=objective")
    parser.add_argument("--study", action="store_true", help="calibration variants, see above")
    parser.add_argument("--laser-steps", type=int, default=150, help="LASER's max_steps")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--goal", default="0.70,0.90", help="LOW,HIGH P10–P90 coverage")
    parser.add_argument("--work", type=Path, help="folder for submissions and models [tmp]")
    args = parser.parse_args(argv)
    goal = tuple(float(v) for v in args.goal.split(","))
    work = args.work or Path(tempfile.mkdtemp(prefix="gharuntime-intervals-"))
    runs: list[tuple[str, str, dict[str, Any]]] = []
    for method in args.methods.split(","):
        params: dict[str, Any] = {"max_steps": args.laser_steps} if method == "laser" else {}
        runs.append((method, method, params))
        if args.objective and method in ("lightgbm", "xgboost"):
            runs.append((f"{method}-objective", method, {"intervals": "objective"}))
    figures: dict[str, dict[str, dict[str, Any]]] = {}
    verdicts: list[dict[str, Any]] = []
    for config in args.configs.split(","):
        train = load(args.dataset, config, "train")
        has_validation = load(args.dataset, config, "validation").height > 0
        buckets = GroupClock.from_frame(train).buckets(load(args.dataset, config, "test"))
        for track in args.tracks.split(","):
            block = figures.setdefault(config, {}).setdefault(track, {})
            print(f"\n{config}/{track} (P10–P90 nominal 80%)", flush=True)
            for label, method, params in runs:
                sub = work / f"{config}-{track}-{label}.jsonl"
                model_dir = work / f"{config}-{track}-{label}.model"
                t0 = time.perf_counter()
                try:
                    run = run_baseline(
                        method, args.dataset, config=config, track=track, out=sub,
                        model_dir=model_dir, params=params,
                    )  # fmt: skip
                except ForbiddenInputError:  # last-run reads history: not on config
                    continue
                result = evaluate_file(sub, args.dataset, resamples=args.resamples)
                if not result.get("intervals"):
                    print(f"  {label:20s} no ranges", flush=True)
                    continue
                f = _figures(result)
                f["fit_seconds"] = round(run.fit_seconds, 2)
                f["wall_seconds"] = round(time.perf_counter() - t0, 2)
                conformal = (f["calibration"] or {}).get("method") == "split-conformal"
                if args.study and has_validation and conformal and method != "laser":
                    f["study"] = _tree_study(model_dir, args.dataset, config, track, buckets)
                    after = f["study"].get("recency", {}).get("coverage")
                    if after is not None and (f["calibration"] or {}).get("by") == "recency":
                        assert abs(after - f["coverage_p10_p90"][0]) < 1e-4, (after, f)
                if args.study and method == "laser":
                    f["study"] = _laser_raw(model_dir, args.dataset, config, buckets)
                block[label] = f
                cov = f["coverage_p10_p90"][0]
                verdicts.append(
                    {
                        "config": config,
                        "track": track,
                        "method": label,
                        "coverage": cov,
                        "validation_split": has_validation,
                        "met": (goal[0] <= cov <= goal[1]) if has_validation else None,
                    }
                )
                shares = ", ".join(
                    f"{k} {100 * v[0]:.1f}%" for k, v in f["share_at_or_below"].items()
                )
                recency = ", ".join(
                    f"{g} {100 * c:.1f}% ({n:,})" for g, (c, n) in f["coverage_by_recency"].items()
                )
                print(
                    f"  {label:20s} RMSLE {f['rmsle']:.3f}  coverage "
                    f"{_fmt(f['coverage_p10_p90'], True)}  log width "
                    f"{_fmt(f['log_width_p10_p90'])}  pinball {_fmt(f['mean_pinball'])}"
                    f"  at or below: {shares}  (fit {run.fit_seconds:.1f} s)\n"
                    f"  {'':20s} by recency: {recency}",
                    flush=True,
                )
                for name, v in (f.get("study") or {}).items():
                    if isinstance(v, dict):
                        print(
                            f"  {'':20s} {name:14s} coverage {100 * v['coverage']:.1f}%  log "
                            f"width {v['log_width']:.3f}",
                            flush=True,
                        )
    scored = [v for v in verdicts if v["validation_split"]]
    summary = {
        "range": list(goal),
        "rows": verdicts,
        "met_everywhere_with_validation": all(v["met"] for v in scored) if scored else None,
    }
    print(f"\ngoal: P10–P90 coverage in {goal} on every row with a validation split: "
          f"{summary['met_everywhere_with_validation']}")  # fmt: skip
    print(json.dumps({"dataset": shown(args.dataset), "goal": summary, "figures": figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
