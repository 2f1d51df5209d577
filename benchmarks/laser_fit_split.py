"""A real LASER `fit` on a whole real train split against a bare training loop (issue #41 item 1:
the fit runs at >= 80% of the bare loop's tokens/s, the run is the model, not the overhead).

1. `Laser.fit` on the whole temporal train split of --dataset (and its validation split, scored
   --validations times a run, as a long run would be), --epochs epochs of 8-job steps, with a
   checkpoint every --checkpoint-every steps: tokenizer training, serialization, tokenization,
   validation and checkpoints all inside the timed wall clock. Loading the Parquet is not.
2. The bare loop: forward, `target_loss`, backward, AdamW, nothing else (no accelerate, no
   schedule, no clipping, no checkpoint), from the same initial weights, in the precision the
   fit chose, with the last layer at the kept positions as the fit's, on the fit's own
   examples, over the first --bare-steps micro-batches of the fit's order; --bare-rounds rounds, the median counts. The tokens are the same kind (non-padding).

ratio = (tokens the fit trained / fit wall seconds) / bare tokens per second. Run it on an idle
machine: the whole split is one epoch of ~31M tokens, about 25 minutes of `tiny` on 2 cores.
The last line is one JSON object (also written to --json).

    python benchmarks/laser_fit_split.py --dataset work/gharuntime-real-apache \\
        --json benchmarks/results/laser_fit_split-real-apache.json

Without --dataset, `$GHARUNTIME_REAL_DATASET` names the dataset folder; with neither it exits 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _common import MissingDataset, positive, real_dataset, refuse, shown

from gharuntime.errors import GharuntimeError

GOAL = 0.8


def _bare_tokens_per_s(method: Any, examples: list[Any], steps: int, precision: str) -> float:
    import torch

    from gharuntime.baselines.laser import kept_rows
    from gharuntime.baselines.laser.models import tiny_model
    from gharuntime.baselines.laser.train import collate, micro_batches, target_loss

    model = tiny_model(method.tokenizer, str(method.params["model"]), method._model_options(), 0)
    model.train()
    kept = kept_rows.install(model)  # as `train` does by default
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95))
    batches = micro_batches([len(e.input_ids) for e in examples], 8, method.seed, 0)[:steps]
    pad = method.tokenizer.pad_token_id
    tokens = 0
    t0 = time.perf_counter()
    for idx in batches:
        batch = collate([examples[i] for i in idx], pad)
        with torch.autocast("cpu", torch.bfloat16, enabled=precision == "bf16"):
            loss, count = target_loss(model, batch, kept)
        (loss / count).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens += sum(len(examples[i].input_ids) for i in idx)
    return tokens / (time.perf_counter() - t0)


def _epochs(text: str) -> float:
    value = float(text)
    if not 0 < value <= 1000:
        raise argparse.ArgumentTypeError(f"must be a number of epochs in (0, 1000], not {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--dataset", type=Path, help="the real dataset folder [$GHARUNTIME_REAL_DATASET]"
    )
    ap.add_argument("--model", default="tiny", choices=["tiny", "tiny-256"])
    ap.add_argument("--epochs", type=_epochs, default=1.0)
    ap.add_argument("--threads", type=positive, default=2)
    ap.add_argument("--validations", type=positive, default=8)
    ap.add_argument("--checkpoint-every", type=positive, default=1000)
    ap.add_argument("--bare-steps", type=positive, default=400)
    ap.add_argument("--bare-rounds", type=positive, default=2)
    ap.add_argument("--work", type=Path, default=Path("work/laser_fit_split"))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    try:
        args.dataset = real_dataset(args.dataset)
    except MissingDataset as exc:
        return refuse(str(exc))

    try:
        return _run(args)
    except GharuntimeError as exc:  # no temporal validation split, no job_yaml, ...
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    import numpy as np
    import torch

    from gharuntime.baselines.laser.method import Laser
    from gharuntime.dataset import load

    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    train = load(args.dataset, "temporal", "train")
    validation = load(args.dataset, "temporal", "validation")
    jobs = Laser("config").training_rows(train).height
    steps = max(1, math.ceil(jobs / 8 * args.epochs))
    params = {
        "model": args.model,
        "max_steps": steps,
        "batch_size": 8,
        "threads": args.threads,
        "validate_every": max(1, steps // args.validations),
        "checkpoint_dir": str(args.work / "checkpoints"),
        "checkpoint_every": args.checkpoint_every,
    }
    method = Laser("config", seed=0, **params)
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / "fit.log"

    def progress(message: str, _done: int = 0, _total: int | None = None) -> None:
        with log.open("a", encoding="utf-8") as f:  # a few hundred lines a run
            f.write(f"{time.strftime('%H:%M:%S')} {message}\n")

    t0 = time.perf_counter()
    method.fit(train, validation, progress=progress)
    fit_s = time.perf_counter() - t0
    summary = method.train_summary
    if summary.get("resumed_from"):
        print("error: the fit resumed from a checkpoint; its wall time is not a whole run's; "
              f"delete {args.work} and run again", file=sys.stderr)  # fmt: skip
        return 2
    fit_tps = summary["tokens"] / fit_s

    examples = method.training_examples(method.training_rows(train), method.tokenizer)
    bare = [
        _bare_tokens_per_s(method, examples, args.bare_steps, summary["precision"])
        for _ in range(args.bare_rounds)
    ]
    bare_tps = statistics.median(bare)
    result = {
        "benchmark": "laser_fit_split",
        "dataset": shown(args.dataset),
        "model": args.model,
        "threads": torch.get_num_threads(),
        "jobs": jobs,
        "epochs": args.epochs,
        "steps": steps,
        "fit_wall_s": round(fit_s, 1),
        "fit_tokens": summary["tokens"],
        "fit_tokens_per_s": round(fit_tps, 1),
        "loop_tokens_per_s": summary["tokens_per_s"],
        "serialize_s": summary["serialize_s"],
        "train_s": summary["train_s"],
        "precision": summary["precision"],
        "device": summary["device"],
        "validation_by_step": summary.get("validation_by_step"),
        "best_step": summary.get("best_step"),
        "bare_tokens_per_s": round(bare_tps, 1),
        "bare_rounds": [round(x, 1) for x in bare],
        "bare_steps": args.bare_steps,
        "ratio_fit_vs_bare": round(fit_tps / bare_tps, 3),
        "goal": GOAL,
        "mean_tokens": round(float(np.mean([len(e.input_ids) for e in examples])), 1),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    line = json.dumps(result)
    if args.json is not None:
        args.json.write_text(line + "\n", encoding="utf-8")
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
