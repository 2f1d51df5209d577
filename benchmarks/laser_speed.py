"""LASER's speed on the real dataset, old against new in one process on the same rows (issue #41).

Three parts, each interleaving its two sides round by round (each side going first in turn) so
a change in the machine's load hits both alike; medians of the rounds count:

- `predict`: ms per job of constrained decoding with --samples draws (16) on real prompts (the
  temporal test split of --dataset, serialized as `fit`/`predict` do, within the budget), prompt
  pass included: `decoder="reference"` (the prompt's KV cache copied per draw, grown by
  `torch.cat`) against `decoder="shared"` (the default). The model is a `tiny` LASER fitted
  for --fit-steps steps on the temporal train split (part `fit`); both sides must write the same
  texts (same seed), which is checked and reported.
- `train`: tokens/s of `train.train` for `tiny` and `tiny-256` on examples of real rows, fp32
  against bf16 autocast (`precision=bf16`), same batches and initial weights.
- `fit`: tokens trained per second of `Laser.fit` wall time (loading excluded; tokenizer,
  serialization, tokenization and training included) on --train-fraction of the temporal train
  split, against a bare forward/backward/AdamW loop on the same examples, model and batches.

Non-padding tokens throughout. The load average before and after is recorded (the figures of a
loaded machine are not an idle one's); so are the dataset's name and revision (never its path)
and the git commit the script ran at, with `git_dirty` when the tree had uncommitted changes
(run committed figures from a clean commit). The last line printed is one JSON object; --out
writes it to a file too (benchmarks/results/laser_speed-real-apache.json).

    python benchmarks/laser_speed.py --dataset "$GHARUNTIME_REAL_DATASET" \
        --out benchmarks/results/laser_speed-real-apache.json

Without --dataset, `$GHARUNTIME_REAL_DATASET` names the dataset folder; with neither it exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _common import MissingDataset, real_dataset, refuse

from gharuntime.baselines.laser import kept_rows
from gharuntime.baselines.laser.decoding import (
    constrained_generate,
    prompt_token_ids_many,
)
from gharuntime.baselines.laser.method import Laser
from gharuntime.baselines.laser.models import ModelOptions, tiny_model
from gharuntime.baselines.laser.train import (
    Example,
    TrainConfig,
    collate,
    micro_batches,
    target_loss,
    train,
)
from gharuntime.dataset import load, read_manifest

ROOT = Path(__file__).resolve().parents[1]


def _git() -> dict[str, Any]:
    """The commit this script ran at and whether the tree had uncommitted changes to tracked
    files (None where git or the repository is not at hand)."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60
            )
        except OSError:
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": commit, "git_dirty": None if status is None else bool(status)}


def _timed(work: Any) -> tuple[float, float, float]:
    """(amount `work()` returns, wall seconds, CPU seconds of this process). On 2 cores shared
    with other work the wall time swings tenfold within seconds; the process's CPU time is what
    the work itself costs, so both are reported and the ratios are given for both."""
    w0, c0 = time.perf_counter(), time.process_time()
    amount = float(work())
    return amount, time.perf_counter() - w0, time.process_time() - c0


def _interleaved(sides: dict[str, Any], rounds: int) -> dict[str, dict[str, float]]:
    """Per side, the median over `rounds` rounds (after a warm-up round) of amount per wall
    second and per CPU second; `sides` return the amount of work done (tokens, jobs)."""
    values: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []} for k in sides}
    names = list(sides)
    for r in range(rounds + 1):
        order = names[r % len(names) :] + names[: r % len(names)]
        got = {k: _timed(sides[k]) for k in order}
        shown = {k: f"{a / w:,.1f}/s wall, {a / c:,.1f}/cpu-s" for k, (a, w, c) in got.items()}
        print(("warm-up" if r == 0 else f"round {r}") + ": " + json.dumps(shown), flush=True)
        if r:
            for k, (a, w, c) in got.items():
                values[k]["wall"].append(a / w)
                values[k]["cpu"].append(a / c)
    return {k: {kind: statistics.median(v) for kind, v in d.items()} for k, d in values.items()}


def _bare(model: Any, examples: list[Example], cfg: TrainConfig, pad: int) -> int:
    """A bare fp32 loop over the micro-batches `train` uses; returns the tokens it trained."""
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95))
    model.train()
    kept = kept_rows.install(model)  # the last layer at the kept positions, as `train` does
    batches = micro_batches([len(e.input_ids) for e in examples], cfg.batch_size, cfg.seed, 0)
    tokens = 0
    for idx in batches[: cfg.max_steps]:
        batch = collate([examples[i] for i in idx], pad)
        loss, count = target_loss(model, batch, kept)
        (loss / count).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens += sum(len(examples[i].input_ids) for i in idx)
    return tokens


def _ratio(new: dict[str, float], old: dict[str, float]) -> dict[str, float]:
    return {kind: round(new[kind] / old[kind], 3) for kind in ("wall", "cpu")}


def _rounded(d: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {k: {kind: round(v, 1) for kind, v in x.items()} for k, x in d.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--dataset", type=Path, help="the real dataset folder [$GHARUNTIME_REAL_DATASET]"
    )
    ap.add_argument("--out", type=Path, help="also write the JSON object to this file")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--train-fraction", type=float, default=0.01)
    ap.add_argument("--fit-steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--train-steps", type=int, default=8, help="steps per side per round")
    ap.add_argument("--jobs", type=int, default=32, help="test jobs decoded per side per round")
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3, help="rounds per part (after a warm-up)")
    args = ap.parse_args(argv)
    try:
        args.dataset = real_dataset(args.dataset)
    except MissingDataset as exc:
        return refuse(str(exc))
    manifest = read_manifest(args.dataset)
    git_before = _git()
    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    train_split = load(args.dataset, "temporal", "train")
    params = {
        "model": "tiny",
        "max_steps": args.fit_steps,
        "batch_size": args.batch,
        "train_fraction": args.train_fraction,
        "threads": args.threads,
    }
    fitted: list[Laser] = []

    # --- fit against the bare loop -------------------------------------------------------
    def fit() -> int:
        method = Laser("config", **params)
        method.fit(train_split)
        fitted[:] = [method]
        return int(method.train_summary["tokens"])

    Laser("config", **params).fit(train_split)  # first: the bare loop needs its tokenizer
    fit()
    method = fitted[0]
    examples = method.training_examples(method.training_rows(train_split), method.tokenizer)
    pad = method.tokenizer.pad_token_id

    def bare() -> int:
        cfg = TrainConfig(max_steps=args.fit_steps, batch_size=args.batch, lr=1e-3)
        model = tiny_model(method.tokenizer, "tiny", method._model_options(), 0)
        return _bare(model, examples, cfg, pad)

    fits = _interleaved({"fit": fit, "bare": bare}, args.rounds)

    # --- training throughput: fp32 against bf16 autocast ---------------------------------
    training: dict[str, Any] = {}
    for size in ("tiny", "tiny-256"):
        state = tiny_model(method.tokenizer, size, ModelOptions(model=size), 0).state_dict()

        def run(precision: str, size: str = size, state: Any = state) -> int:
            model = tiny_model(method.tokenizer, size, ModelOptions(model=size), 0)
            model.load_state_dict(state)
            cfg = TrainConfig(
                max_steps=args.train_steps, batch_size=args.batch, precision=precision
            )
            return train(model, examples, pad, cfg).tokens

        med = _interleaved({"fp32": lambda: run("fp32"), "bf16": lambda: run("bf16")}, args.rounds)
        training[size] = {
            "tokens_per_s": _rounded(med),
            "bf16_vs_fp32": _ratio(med["bf16"], med["fp32"]),
        }
        print(f"train {size}: {training[size]}", flush=True)

    # --- prediction: reference against shared ---------------------------------------------
    test = load(args.dataset, "temporal", "test")
    pick = np.sort(np.random.default_rng(0).permutation(test.height)[: args.jobs]).tolist()
    prompts = method._prompts(test[pick], method.tokenizer)
    texts: dict[str, list[list[str]]] = {}

    def decode(decoder: str) -> int:
        texts[decoder] = constrained_generate(
            method.model,
            method.tokenizer,
            prompts,
            method.codec,
            samples=args.samples,
            seed=1,
            batch_size=16,
            decoder=decoder,
        )
        return len(prompts)

    jobs = _interleaved(
        {"reference": lambda: decode("reference"), "shared": lambda: decode("shared")},
        args.rounds,
    )
    ms = {k: {kind: 1000.0 / v for kind, v in d.items()} for k, d in jobs.items()}
    load_after = os.getloadavg()
    mean_prompt = np.mean([len(x) for x in prompt_token_ids_many(method.tokenizer, prompts)])
    git_after = _git()
    result = {
        "benchmark": "laser_speed",
        "dataset": {"name": args.dataset.resolve().name, "revision": manifest["revision"]},
        "git_commit": git_before["git_commit"],
        "git_dirty": (
            None
            if git_before["git_dirty"] is None
            else bool(git_before["git_dirty"] or git_after["git_dirty"])
            or git_after["git_commit"] != git_before["git_commit"]
        ),
        "threads": torch.get_num_threads(),
        "device": method.train_summary.get("device"),
        "auto_precision": method.train_summary.get("precision"),
        "fit": {
            "train_fraction": args.train_fraction,
            "steps": args.fit_steps,
            "tokens_per_s": _rounded(fits),
            "summary": method.train_summary,
        },
        "train": training,
        "predict": {
            "jobs": len(prompts),
            "samples": args.samples,
            "mean_prompt_tokens": round(float(mean_prompt), 1),
            "ms_per_job": _rounded(ms),
            "same_predictions": texts["reference"] == texts["shared"],
        },
        "ratios": {
            "fit_vs_bare": _ratio(fits["fit"], fits["bare"]),
            "train_tiny_bf16_vs_fp32": training["tiny"]["bf16_vs_fp32"],
            "train_tiny256_bf16_vs_fp32": training["tiny-256"]["bf16_vs_fp32"],
            "predict_reference_vs_shared_ms": _ratio(ms["reference"], ms["shared"]),
        },
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
    }
    line = json.dumps(result)
    if args.out is not None:
        tmp = args.out.with_name(f".{args.out.name}.tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        tmp.replace(args.out)
    print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
