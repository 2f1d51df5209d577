"""LASER trained and scored on real jobs: `gharuntime-real-apache`, both configs, on the config
track or (--track multi) on every target the dataset holds (duration_s and queue_s: it has no
log_bytes), one template `duration_s=…;queue_s=…` per job.

Each config trains the `tiny` LASER model (or --model) for --max-steps steps; where the config
has a validation split (temporal), the validation RMSLE of greedy decodes on a seeded sample
is measured every --validate-every steps and the best step's weights are kept, so the training
length is chosen on validation, never on test (cross_repo's validation split is empty: ozone
trains, ratis tests, so it trains --max-steps and keeps the last). The submission is scored
with the eval library (1000 repository-bootstrap resamples) into
--results-dir/gharuntime-real-apache/CONFIG-config-laser.json, and, with --vs-dir (a
benchmarks/baselines.py --work folder of the same dataset), paired against every tree's
submission there on the same resamples (`gharuntime eval --vs`).

    python benchmarks/laser_real.py --dataset work/gharuntime-real-apache --work work/laser \
        --results-dir leaderboard/results --vs-dir work/bench

Without --dataset, `$GHARUNTIME_REAL_DATASET` names the dataset folder; with neither it exits 2.

--epochs E (instead of --max-steps) trains ceil(E x train rows / --batch-size) steps, the rows
counted in the config's train split (jobs without YAML, which LASER drops, count too, so the
reported `epochs`, from the examples LASER kept, can be slightly above E). Each config keeps
its checkpoints in --work/CONFIG/checkpoints (every 250 steps): run the same command again
after a kill and it resumes from the last one; give each run of a curve its own --work.

On multi the result is --results-dir/gharuntime-real-apache/CONFIG-multi-laser.json (the
submission laser-multi.jsonl, checkpoints in checkpoints-multi/, so one --work holds both
tracks), paired with the trees of --vs-dir/CONFIG/multi/ on the multi summary. With
--single-dir (a --work folder of a config-track run of this script, the same budget), its
duration_s alone is scored against that single-target LASER's on the same resamples: does
training on several targets help or hurt duration (`vs_single_target`, A − B: negative helps)?

    python benchmarks/laser_real.py --dataset DIR --config temporal --track multi --epochs 1 \
        --work work/laser-multi --results-dir leaderboard/results --vs-dir work/bench \
        --single-dir work/laser

Stated per config: examples, tokens, epochs, steps, best step, wall time. The last line printed
is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import MissingDataset, interval, real_dataset, refuse, shown, steps_for_epochs

from gharuntime.baselines.run import run_baseline
from gharuntime.eval.api import evaluate_file
from gharuntime.eval.submission_files import SubmissionFiles, write_submission_files
from gharuntime.paths import write_atomic

LABEL = "gharuntime-real-apache"
TREES = ("lightgbm", "xgboost", "catboost", "lightgbm-tuned", "xgboost-tuned", "group-median")


def _vs_single(multi: Path, single: Path, args: argparse.Namespace, config: str) -> dict[str, Any]:
    """The multi submission's duration_s, as a config-track submission, against the
    single-target LASER's (`single`) on the same resamples: A − B of duration_s."""
    records = [json.loads(x) for x in multi.read_text(encoding="utf-8").splitlines() if x]
    meta = json.loads(SubmissionFiles(multi).meta.read_text(encoding="utf-8"))
    meta = {**meta, "track": "config", "method": "laser-multi-duration", "targets": ["duration_s"]}
    meta.pop("targets_left_out", None)
    alone = multi.with_name(multi.stem + "-duration.jsonl")
    write_submission_files(
        alone,
        [str(r["id"]) for r in records],
        {"duration_s": np.array([float(r["duration_s"]) for r in records])},
        meta,
    )
    paired = evaluate_file(alone, args.dataset, vs=single, resamples=args.resamples)
    diff = paired["comparison"]["difference"]["duration_s"]
    return {
        "single": shown(single),
        "multi_duration_rmsle": interval(paired["metrics"]["duration_s"]["rmsle"]),
        "single_duration_rmsle": interval(paired["comparison"]["metrics"]["duration_s"]["rmsle"]),
        "rmsle_diff": interval(diff["rmsle"]),
        "within_2x_diff": interval(diff["within_2x"]),
        "config": config,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset", type=Path, help="the real dataset folder [$GHARUNTIME_REAL_DATASET]"
    )
    parser.add_argument("--config", action="append", choices=["temporal", "cross_repo"])
    parser.add_argument("--work", type=Path, required=True, help="submissions, models, logs")
    parser.add_argument("--results-dir", type=Path, help="e.g. leaderboard/results")
    parser.add_argument("--vs-dir", type=Path, help="a benchmarks/baselines.py --work folder")
    parser.add_argument("--track", choices=["config", "multi"], default="config")
    parser.add_argument(
        "--single-dir",
        type=Path,
        help="multi: a --work folder of a config-track run, to pair duration_s against",
    )
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--max-steps", type=int, default=1500)
    parser.add_argument(
        "--epochs", type=float, help="train this many passes over the train split (not --max-steps)"
    )
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--validate-every", type=int, default=250)
    parser.add_argument("--validation-rows", type=int, default=256)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads [default]")
    parser.add_argument("--decode-batch-size", type=int, default=64)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args(argv)
    if args.epochs is not None and not args.epochs > 0:
        parser.error(f"--epochs must be above 0, got {args.epochs}")
    try:
        args.dataset = real_dataset(args.dataset)
    except MissingDataset as exc:
        return refuse(str(exc))
    command = ["python", "benchmarks/laser_real.py", *(argv if argv is not None else sys.argv[1:])]
    figures: dict[str, Any] = {"benchmark": "laser_real", "dataset": shown(args.dataset)}
    track = args.track
    suffix = "" if track == "config" else f"-{track}"
    for config in args.config or ["temporal", "cross_repo"]:
        out = args.work / config / f"laser{suffix}.jsonl"
        max_steps = args.max_steps
        if args.epochs is not None:
            max_steps = steps_for_epochs(args.dataset, config, args.epochs, args.batch_size)
        params = {
            "model": args.model,
            "max_steps": max_steps,
            "batch_size": args.batch_size,
            "validate_every": args.validate_every,
            "validation_rows": args.validation_rows,
            "threads": args.threads,
            "decode_batch_size": args.decode_batch_size,
            "checkpoint_dir": shown(args.work / config / f"checkpoints{suffix}"),
            "checkpoint_every": 250,
        }

        def say(
            message: str, _done: int = 0, _total: int | None = None, config: str = config
        ) -> None:
            print(f"{config}: {message}", file=sys.stderr, flush=True)

        t0 = time.perf_counter()
        run = run_baseline(
            "laser",
            args.dataset,
            config=config,
            track=track,
            out=out,
            model_dir=args.work / config / f"laser{suffix}.model",
            params=params,
            progress=say,
        )
        wall = time.perf_counter() - t0
        meta = json.loads(SubmissionFiles(out).meta.read_text(encoding="utf-8"))
        training = (meta.get("method_config") or {}).get("training") or {}
        result = evaluate_file(out, args.dataset, resamples=args.resamples, command=command)
        if args.results_dir is not None:
            target = args.results_dir / LABEL / f"{config}-{track}-laser.json"
            write_atomic(target, json.dumps(result, indent=2) + "\n", mode=0o644)
        d = result["metrics"]["duration_s"]
        examples = int(training.get("examples") or 0)
        steps = int(training.get("steps") or 0)
        row: dict[str, Any] = {
            "config": config,
            "examples": examples,
            "steps": steps,
            "best_step": training.get("best_step"),
            "validation_by_step": training.get("validation_by_step"),
            "epochs": round(steps * args.batch_size / examples, 4) if examples else None,
            "tokens": training.get("tokens"),
            "tokens_per_s": training.get("tokens_per_s"),
            "fit_s": round(run.fit_seconds, 1),
            "predict_s": round(run.predict_seconds, 1),
            "wall_s": round(wall, 1),
            "test_rows": run.rows,
            "rmsle": interval(d["rmsle"]),
            "within_2x": interval(d["within_2x"]),
            "requested_epochs": args.epochs,
            "max_steps": max_steps,
            "track": track,
            "vs": {},
        }
        if result.get("summary"):
            row["targets"] = {t: interval(v["rmsle"]) for t, v in result["metrics"].items()}
            row["left_out"] = result["targets"]["left_out"]
            row["summary_rmsle"] = interval(result["summary"]["metrics"]["rmsle"])
        for tree in TREES:
            other = args.vs_dir / config / track / f"{tree}.jsonl" if args.vs_dir else None
            if other is None or not other.is_file():
                continue
            paired = evaluate_file(out, args.dataset, vs=other, resamples=args.resamples)
            comparison = paired["comparison"]
            diff = comparison.get("summary_difference") or comparison["difference"]["duration_s"]
            row["vs"][tree] = {"rmsle_diff": interval(diff["rmsle"])}
        single = args.single_dir / config / "laser.jsonl" if args.single_dir else None
        if track != "config" and single is not None and single.is_file():
            row["vs_single_target"] = _vs_single(out, single, args, config)
        figures[config] = row
        r = row["rmsle"]
        say(
            f"RMSLE {r['value']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] after {steps} steps "
            f"({row['epochs']} epoch, best step {row['best_step']}), {wall:.0f} s"
        )
    figures["loadavg_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
