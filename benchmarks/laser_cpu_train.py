"""LASER's training throughput on a CPU, today's setting against the candidates (issue #41 item 1).

Every side trains the same model (`tiny` or `tiny-256`, the same seeded initial weights) with
`train.train` on the same real examples (a seeded sample of the temporal train split of
--dataset, serialized and tokenized as `fit` does), 8 jobs an optimizer step, for --steps
steps after --warmup steps that are not timed (torch.compile compiles in those). Each side is
its own fresh process or processes, so no side inherits another's threads or caches:

- `fp32 1x2 left`: one process, 2 threads, float32, left-padded batches (`padding="left"`)
  and the last layer at every position (`last_layer="full"`): the training as it was before
  issue #41, the reference;
- `fp32 1x2`: the same with right-padded batches and the last layer at the kept positions only
  (`last_layer="kept"`; both the defaults since);
- `bf16 1x2 full`: one process, 2 threads, bf16 autocast (`precision=auto` on avx512_bf16),
  right-padded, the last layer at every position;
- `bf16 1x2`: the same with the last layer at the kept positions (the default training);
- `bf16 2x1`: two processes of one thread each (`accelerate launch`, gloo), micro-batches of 4
  jobs, so a step is still 8 jobs (the DDP rule: P processes x micro-batch = jobs a step);
- `bf16 1x2 compiled`: one process with `compile=True` (torch.compile of the training forward,
  dynamic shapes; it compiles during the untimed steps).

Sides run interleaved round by round, each going first in turn; the median of --rounds rounds
counts. Tokens are non-padding tokens of all processes. The load average is printed; the last
line is one JSON object.

    python benchmarks/laser_cpu_train.py --dataset work/gharuntime-real-apache
    python benchmarks/laser_cpu_train.py --sizes tiny --rounds 1 --steps 10   # a quick look

Without --dataset, `$GHARUNTIME_REAL_DATASET` names the dataset folder; with neither it exits 2.
(`worker` is the child process of a side; not for use by hand.)
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import MissingDataset, positive, real_dataset, refuse, shown

from gharuntime.errors import GharuntimeError

JOBS_PER_STEP = 8


@dataclass(frozen=True)
class Side:
    name: str
    precision: str
    processes: int
    compile: bool = False
    padding: str = "right"
    last_layer: str = "kept"

    @property
    def threads(self) -> int:
        return max(1, (os.cpu_count() or 2) // self.processes)


SIDES = (
    Side("fp32 1x2 left", "fp32", 1, padding="left", last_layer="full"),
    Side("fp32 1x2", "fp32", 1),
    Side("bf16 1x2 full", "bf16", 1, last_layer="full"),
    Side("bf16 1x2", "bf16", 1),
    Side("bf16 2x1", "bf16", 2),
    Side("bf16 1x2 compiled", "bf16", 1, compile=True),
)
REFERENCE = "fp32 1x2 left"


def _prepare(dataset: Path, rows: int, tokenizer: Path | None, work: Path) -> dict[str, Any]:
    """Tokenizer and examples of a seeded sample of the temporal train split, saved in `work`."""
    import numpy as np
    from transformers import AutoTokenizer

    from gharuntime.baselines.laser.method import Laser
    from gharuntime.dataset import load

    method = Laser("config", seed=0)
    sample = method.training_rows(load(dataset, "temporal", "train"))
    keep = np.sort(np.random.default_rng(0).permutation(sample.height)[:rows]).tolist()
    sample = sample[keep]
    texts = method.target_texts(sample)
    if tokenizer is not None:
        tok = AutoTokenizer.from_pretrained(tokenizer)
    else:
        tok = method.split_tokenizer(sample, texts)
    tok.save_pretrained(work / "tokenizer")
    examples = method.training_examples(sample, tok, texts)
    (work / "examples.pkl").write_bytes(pickle.dumps(examples))
    lengths = [len(e.input_ids) for e in examples]
    return {"jobs": len(examples), "mean_tokens": round(float(np.mean(lengths)), 1)}


def cmd_worker(args: argparse.Namespace) -> int:
    """One side in this process (one of several under accelerate launch): train --warmup steps
    untimed, then --steps timed; rank 0 writes what the timed training reports."""
    import torch
    from transformers import AutoTokenizer

    from gharuntime.baselines.laser.models import ModelOptions, tiny_model
    from gharuntime.baselines.laser.train import TrainConfig, train
    from gharuntime.baselines.launch import finish, is_primary

    torch.set_num_threads(args.threads)
    tok = AutoTokenizer.from_pretrained(args.work / "tokenizer")
    examples = pickle.loads((args.work / "examples.pkl").read_bytes())
    model = tiny_model(tok, args.size, ModelOptions(model=args.size), 0)
    common = {
        "batch_size": args.micro_batch,
        "lr": 1e-3,
        "warmup_steps": 2,
        "precision": args.precision,
        "compile": args.compile,
        "padding": args.padding,
        "last_layer": args.last_layer,
        "lr_schedule": "constant",
    }
    train(model, examples, tok.pad_token_id, TrainConfig(max_steps=args.warmup, **common))
    timed = train(
        model, examples, tok.pad_token_id, TrainConfig(max_steps=args.steps, seed=1, **common)
    )
    if is_primary():
        summary = {**timed.summary(), "threads": torch.get_num_threads()}
        args.out.write_text(json.dumps(summary) + "\n", encoding="utf-8")
    finish()
    return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_side(side: Side, size: str, args: argparse.Namespace, out: Path) -> dict[str, Any]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ACCELERATE_", "MASTER_"))
        and k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")
    }
    env.update(OMP_NUM_THREADS=str(side.threads), HF_HUB_OFFLINE="1")
    cmd = [sys.executable]
    if side.processes > 1:
        env["ACCELERATE_USE_CPU"] = "true"
        cmd += [
            "-m", "accelerate.commands.launch", "--multi_gpu",
            "--num_processes", str(side.processes), "--num_machines", "1",
            "--mixed_precision", "no", "--dynamo_backend", "no",
            "--main_process_port", str(_free_port()),
        ]  # fmt: skip
    cmd += [
        __file__, "worker", "--work", str(args.work), "--size", size,
        "--precision", side.precision, "--threads", str(side.threads),
        "--micro-batch", str(JOBS_PER_STEP // side.processes),
        "--steps", str(args.steps), "--warmup", str(args.warmup), "--out", str(out),
        "--padding", side.padding, "--last-layer", side.last_layer,
    ] + (["--compile"] if side.compile else [])  # fmt: skip
    out.unlink(missing_ok=True)
    t0 = time.perf_counter()
    run = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if run.returncode != 0 or not out.is_file():
        raise SystemExit(f"side {side.name} ({size}) failed:\n{run.stderr[-4000:]}")
    return {**json.loads(out.read_text()), "process_seconds": time.perf_counter() - t0}


def cmd_run(args: argparse.Namespace) -> int:
    args.work.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    data = _prepare(args.dataset, args.rows, args.tokenizer, args.work)
    print(f"examples: {data}", flush=True)
    sides = [s for s in SIDES if args.only is None or s.name in args.only.split(",")]
    figures: dict[str, Any] = {}
    for size in args.sizes.split(","):
        speeds: dict[str, list[float]] = {s.name: [] for s in sides}
        losses: dict[str, list[float]] = {s.name: [] for s in sides}
        for r in range(args.rounds):
            order = sides[r % len(sides) :] + sides[: r % len(sides)]
            for side in order:
                got = _run_side(side, size, args, args.work / "side.json")
                speeds[side.name].append(got["tokens_per_s"])
                losses[side.name].append(got["last_loss"])
                print(
                    f"{size} round {r + 1} {side.name}: {got['tokens_per_s']:,.0f} tokens/s "
                    f"(last loss {got['last_loss']:.3f}, {got['process_seconds']:.0f} s in all)",
                    flush=True,
                )
        med = {k: statistics.median(v) for k, v in speeds.items()}
        ref = med.get(REFERENCE)
        figures[size] = {
            "tokens_per_s": {k: round(v, 1) for k, v in med.items()},
            "rounds": {k: [round(x, 1) for x in v] for k, v in speeds.items()},
            "last_loss": {k: [round(x, 4) for x in v] for k, v in losses.items()},
            **({"vs_" + REFERENCE.replace(" ", "_"): {k: round(v / ref, 3) for k, v in med.items()}}
               if ref else {}),
        }  # fmt: skip
        print(f"{size}: {json.dumps(figures[size]['tokens_per_s'])}", flush=True)
    result = {
        "benchmark": "laser_cpu_train",
        "dataset": shown(args.dataset),
        "examples": data,
        "jobs_per_step": JOBS_PER_STEP,
        "steps": args.steps,
        "warmup_steps": args.warmup,
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
        "goal": 1.5,
        "sizes": figures,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(result))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    run = sub.add_parser("run", help="every side, interleaved (the default)")
    worker = sub.add_parser("worker", help="one side (the child process)")
    for p in (ap, run):
        p.add_argument(
            "--dataset", type=Path, help="the real dataset folder [$GHARUNTIME_REAL_DATASET]"
        )
        p.add_argument("--tokenizer", type=Path, help="a saved tokenizer folder (else trained)")
        p.add_argument("--rows", type=positive, default=2000, help="training jobs sampled")
        p.add_argument("--sizes", default="tiny,tiny-256")
        p.add_argument("--only", help="comma-separated side names")
        p.add_argument("--rounds", type=positive, default=3)
        p.add_argument("--work", type=Path, default=Path("work/laser_cpu_train"))
    for p in (ap, run, worker):
        p.add_argument("--steps", type=positive, default=24, help="timed optimizer steps")
        p.add_argument("--warmup", type=positive, default=4, help="untimed steps first")
    worker.add_argument("--work", type=Path, required=True)
    worker.add_argument("--size", required=True)
    worker.add_argument("--precision", required=True)
    worker.add_argument("--threads", type=int, required=True)
    worker.add_argument("--micro-batch", type=int, required=True)
    worker.add_argument("--compile", action="store_true")
    worker.add_argument("--padding", choices=("right", "left"), default="right")
    worker.add_argument("--last-layer", choices=("kept", "full"), default="kept")
    worker.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.cmd == "worker":
        return cmd_worker(args)
    try:
        args.dataset = real_dataset(args.dataset)
    except MissingDataset as exc:
        return refuse(str(exc))
    sizes, names = args.sizes.split(","), [s.name for s in SIDES]
    bad = [x for x in sizes if x not in ("tiny", "tiny-256", "small")]
    bad += [x for x in (args.only.split(",") if args.only else []) if x not in names]
    if bad:
        print(
            f"error: unknown {', '.join(map(repr, bad))}; --sizes takes tiny, tiny-256, small "
            f"and --only the sides {', '.join(names)}",
            file=sys.stderr,
        )
        return 2
    try:
        return cmd_run(args)
    except GharuntimeError as exc:  # a dataset without the temporal train split, say
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
