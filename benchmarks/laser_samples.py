"""Greedy decoding against the median of K draws, on one fitted LASER model folder.

Loads the model (`gharuntime baseline laser ... --model-out DIR`), predicts one split of the
dataset it was fitted on with each `samples` value (1 = greedy), and prints RMSLE of duration_s,
the number of distinct predictions and the predict time of each. The model's weights are the
same in every row: only the decoding differs.

    python benchmarks/laser_samples.py --model runs/laser.model --dataset out/sim-small \
        --config temporal --split test --samples 1,8,16

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from _common import shown

from gharuntime.baselines.method import MethodError
from gharuntime.baselines.model_io import load_model
from gharuntime.dataset import load


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="a LASER model folder")
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--config", default="temporal")
    parser.add_argument("--split", default="test")
    parser.add_argument("--samples", default="1,8,16", help="comma-separated K values")
    args = parser.parse_args(argv)
    try:
        method, meta = load_model(args.model)
    except MethodError as exc:
        raise SystemExit(f"error: {exc}") from None
    if meta.get("method") != "laser":
        raise SystemExit(f"{args.model}: a {meta.get('method')!r} model, not a LASER one")
    rows = load(args.dataset, args.config, args.split)
    actual = rows["duration_s"].to_numpy()
    runs = []
    for k in (int(x) for x in args.samples.split(",")):
        method.params["samples"] = k  # decoding only: the weights stay as fitted
        t0 = time.perf_counter()
        predicted = method.predict(rows)["duration_s"]
        seconds = time.perf_counter() - t0
        rmsle = float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(actual)) ** 2)))
        run = {
            "samples": k,
            "rmsle": round(rmsle, 4),
            "distinct_predictions": len(set(predicted.tolist())),
            "predict_s": round(seconds, 1),
        }
        print(
            f"samples={k}: RMSLE {run['rmsle']:.3f}, {run['distinct_predictions']} distinct "
            f"predictions, {run['predict_s']} s",
            flush=True,
        )
        runs.append(run)
    median = float(np.median(load(args.dataset, args.config, "train")["duration_s"].to_numpy()))
    baseline = float(np.sqrt(np.mean((np.log1p(median) - np.log1p(actual)) ** 2)))
    print(f"the training median: RMSLE {baseline:.3f}")
    figures = {
        "benchmark": "laser_samples",
        "model": shown(args.model),
        "dataset": shown(args.dataset),
        "config": args.config,
        "split": args.split,
        "rows": rows.height,
        "runs": runs,
        "training_median_rmsle": round(baseline, 4),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
