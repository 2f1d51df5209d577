"""Training time and accuracy of every reference method on every track, scored by the eval
library (RMSLE and within-2x with 95% repository-bootstrap intervals), and how much LightGBM
and XGBoost gain over the reference each must beat: group-median on the config track, last-run
on the history track (paired differences on the same resamples). On the multi track (--tracks
multi) each method predicts every target the dataset holds (those left out are named), the
figures are per target plus the multi summary (the mean RMSLE over the targets), and the
paired difference is the summary's.

Default: the fixture dataset (tiny, synthetic), so the script runs anywhere in a minute.
Full figure: --dataset DIR (a `gharuntime build` output). --results-dir keeps each result JSON
(e.g. leaderboard/results). The last line printed is one JSON object with every figure.

    python benchmarks/baselines.py
    python benchmarks/baselines.py --dataset out/dataset --results-dir leaderboard/results
    python benchmarks/baselines.py --dataset DIR --tracks multi --methods median,group-median
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import interval, shown

from gharuntime.baselines.method import ForbiddenInputError, MethodError
from gharuntime.baselines.methods import METHODS
from gharuntime.baselines.run import run_baseline
from gharuntime.dataset import write_dataset
from gharuntime.eval.api import evaluate_file
from gharuntime.fixture import fixture_jobs
from gharuntime.paths import write_atomic

REFERENCE = {"config": "group-median", "history": "last-run", "multi": "group-median"}
GBDT = ("lightgbm", "xgboost")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, help="dataset folder [default: the fixture]")
    parser.add_argument("--config", default="temporal")
    parser.add_argument("--tracks", default="config,history")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, help="folder for submissions and models [tmp]")
    parser.add_argument(
        "--results-dir",
        type=Path,
        help="keep each eval result JSON here, as LABEL/CONFIG-TRACK-METHOD.json",
    )
    parser.add_argument("--label", help="name of the dataset in --results-dir [folder name]")
    parser.add_argument(
        "--param", action="append", default=[], help="KEY=VALUE for lightgbm and xgboost"
    )
    parser.add_argument(
        "--tuned-tracks",
        help="comma-separated tracks the *-tuned methods run on [every track of --tracks]",
    )
    parser.add_argument(
        "--tuned-trials",
        type=int,
        help="Optuna trials of the *-tuned methods [their default, 20]",
    )
    args = parser.parse_args(argv)
    command = ["python", "benchmarks/baselines.py", *(argv if argv is not None else sys.argv[1:])]
    params = {k: json.loads(v) for k, _, v in (p.partition("=") for p in args.param)}
    work = args.work or Path(tempfile.mkdtemp(prefix="gharuntime-bench-"))
    dataset = args.dataset
    if dataset is None:
        dataset = work / "fixture-dataset"
        write_dataset(fixture_jobs(), dataset, provenance={"kind": "fixture", "seed": 0})
    rows: list[dict[str, Any]] = []
    comparisons: list[dict[str, Any]] = []
    for track in args.tracks.split(","):
        subs: dict[str, Path] = {}
        for name in args.methods.split(","):
            if name.endswith("-tuned") and args.tuned_tracks and track not in args.tuned_tracks:
                continue
            out = work / args.config / track / f"{name}.jsonl"
            try:
                t0 = time.perf_counter()
                run = run_baseline(
                    name,
                    dataset,
                    config=args.config,
                    track=track,
                    out=out,
                    model_dir=work / args.config / track / f"{name}.model",
                    seed=args.seed,
                    params=params
                    if name in GBDT
                    else {"trials": args.tuned_trials}
                    if name.endswith("-tuned") and args.tuned_trials
                    else None,
                )
                wall = time.perf_counter() - t0
            except (ForbiddenInputError, MethodError) as exc:  # e.g. tuning without validation
                print(f"{track:8} {name:13} refused: {str(exc).split(';')[0]}", file=sys.stderr)
                continue
            result = evaluate_file(out, dataset, resamples=args.resamples, seed=0, command=command)
            subs[name] = out
            if args.results_dir is not None:
                label = _slug(args.label or dataset.resolve().name)
                target = args.results_dir / label / f"{args.config}-{track}-{name}.json"
                write_atomic(target, json.dumps(result, indent=2) + "\n", mode=0o644)
            m = result["metrics"]["duration_s"]
            summary = (result.get("summary") or {}).get("metrics")
            row = {
                "track": track,
                "method": name,
                "fit_s": round(run.fit_seconds, 3),
                "predict_s": round(run.predict_seconds, 3),
                "wall_s": round(wall, 3),
                "test_rows": run.rows,
                "rmsle": interval(m["rmsle"]),
                "within_2x": interval(m["within_2x"]),
                "mae_s": interval(m["mae"]),
            }
            if summary:  # multi: every target's figures, and the summary over them
                row["targets"] = {
                    t: {"rmsle": interval(v["rmsle"]), "within_2x": interval(v["within_2x"])}
                    for t, v in result["metrics"].items()
                }
                row["left_out"] = result["targets"]["left_out"]
                row["summary_rmsle"] = interval(summary["rmsle"])
            rows.append(row)
            r, w = row["rmsle"], row["within_2x"]
            print(
                f"{track:8} {name:13} fit {run.fit_seconds:8.2f} s  "
                f"RMSLE {r['value']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]  "
                f"within-2x {w['value']:.1%} [{w['ci_low']:.1%}, {w['ci_high']:.1%}]",
                file=sys.stderr,
            )
            if summary:
                per = ", ".join(
                    f"{t} {v['rmsle']['value']:.3f}" for t, v in result["metrics"].items()
                )
                s = row["summary_rmsle"]
                print(
                    f"{'':8} {'':13} multi: mean RMSLE {s['value']:.3f} "
                    f"[{s['ci_low']:.3f}, {s['ci_high']:.3f}] over {per}"
                    + "".join(f"; {t} left out" for t in row["left_out"]),
                    file=sys.stderr,
                )
        ref = REFERENCE.get(track)
        for name in GBDT:
            if name not in subs or ref not in subs:
                continue
            result = evaluate_file(subs[name], dataset, vs=subs[ref], resamples=args.resamples)
            comparison = result["comparison"]
            # multi: the summary's difference (mean over the targets), else duration_s's
            diff = comparison.get("summary_difference") or comparison["difference"]["duration_s"]
            comp = {
                "track": track,
                "method": name,
                "reference": ref,
                "rmsle_diff": interval(diff["rmsle"]),
                "within_2x_diff": interval(diff["within_2x"]),
            }
            comparisons.append(comp)
            d = comp["rmsle_diff"]
            verdict = (
                "beats"
                if d["ci_high"] is not None and d["ci_high"] < 0
                else "does not clearly beat"
            )
            print(
                f"{track:8} {name} − {ref}: RMSLE {d['value']:+.3f} "
                f"[{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] → {verdict} {ref}",
                file=sys.stderr,
            )
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    print(
        json.dumps(
            {
                "benchmark": "baselines",
                "dataset": shown(dataset) if args.dataset else "fixture",
                "config": args.config,
                "resamples": args.resamples,
                "results": rows,
                "comparisons": comparisons,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
