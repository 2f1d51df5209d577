"""Training throughput of LASER's loop against a bare forward/backward loop, same model and
batches, measured in the same run (goal: at least 90% of the bare loop's tokens/s).

Three loops, each from the same initial weights, on the same micro-batches (left-padded, the
order `train.micro_batches` gives), interleaved round by round (each going first in turn) so a change in machine load hits
all three alike; the median round counts:

- `laser`: `gharuntime.baselines.laser.train.train` (accelerate, checkpoint-free, lr schedule,
  gradient clipping, loss on target tokens through `logits_to_keep`);
- `bare`: a hand-written loop with the same loss (`target_loss`, the last layer at the kept
  positions as `train` runs it) and AdamW, nothing else;
- `bare_hf_labels`: the plain Hugging Face way, `model(..., labels=...)`, logits for every
  position; shows what computing logits only where targets are saves.

Tokens are non-padding tokens. Prints what it measured; the last line is one JSON object.

    python benchmarks/laser_train.py                    # tiny-256 (4 layers, 256 wide), CPU
    python benchmarks/laser_train.py --size tiny --steps 5 --rounds 3
    python benchmarks/laser_train.py --size small --batch 32 --length 1024 --steps 20  # a GPU
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import torch

from gharuntime.baselines.laser import kept_rows
from gharuntime.baselines.laser.models import ModelOptions, tiny_model, train_tokenizer
from gharuntime.baselines.laser.train import (
    Example,
    TrainConfig,
    collate,
    micro_batches,
    target_loss,
    train,
)


def _examples(vocab: int, n: int, length: int, target: int, seed: int) -> list[Example]:
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        size = int(torch.randint(length // 2, length + 1, (1,), generator=g))
        ids = torch.randint(2, vocab, (size,), generator=g).tolist()
        out.append(Example(tuple(ids), target))
    return out


def _batches(examples: list[Example], cfg: TrainConfig) -> list[list[int]]:
    per_epoch = micro_batches([len(e.input_ids) for e in examples], cfg.batch_size, cfg.seed, 0)
    return per_epoch[: cfg.max_steps * cfg.grad_accum]


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _bare(model: Any, examples: list[Example], cfg: TrainConfig, pad: int, hf: bool) -> float:
    """tokens/s of a bare loop over the batches `train` would use, in the precision `train`
    uses (bf16 autocast on a GPU that has it)."""
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.95))
    model.train()
    kept = not hf and kept_rows.install(model)
    device = next(model.parameters()).device
    bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    tokens = 0
    _sync()
    t0 = time.perf_counter()
    for idx in _batches(examples, cfg):
        # the full-sequence HF loss masks the pads by the attention mask: the left layout has one
        batch = collate([examples[i] for i in idx], pad, "left" if hf else "right")
        batch = {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
        autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16)
        if hf:
            labels = batch["input_ids"].clone()
            labels[batch["attention_mask"] == 0] = -100
            with autocast:
                out = model(
                    input_ids=batch["input_ids"],
                    attention_mask=batch["attention_mask"],
                    position_ids=batch["position_ids"],
                    labels=labels,
                    use_cache=False,
                )
            out.loss.backward()
        else:
            with autocast:
                loss, count = target_loss(model, batch, kept)
            (loss / count).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens += sum(len(examples[i].input_ids) for i in idx)
    _sync()
    return tokens / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="tiny-256", choices=["tiny", "tiny-256", "small"])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--length", type=int, default=256, help="longest prompt, tokens")
    ap.add_argument("--steps", type=int, default=8, help="optimizer steps per loop per round")
    ap.add_argument("--rounds", type=int, default=4, help="rounds (the first is a warm-up)")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    tokenizer = train_tokenizer(
        [f"step {i} duration_s=1.{i % 10}0e+0{i % 9}" for i in range(200)], 400
    )
    pad = tokenizer.pad_token_id
    examples = _examples(len(tokenizer), args.batch * args.steps, args.length, 12, seed=0)
    cfg = TrainConfig(max_steps=args.steps, batch_size=args.batch, lr=1e-4, warmup_steps=1)
    init = tiny_model(tokenizer, args.size, ModelOptions(max_positions=2 * args.length), seed=0)
    state = {k: v.clone() for k, v in init.state_dict().items()}
    device = "cuda" if torch.cuda.is_available() else "cpu"

    def fresh() -> Any:
        model = tiny_model(tokenizer, args.size, ModelOptions(max_positions=2 * args.length), 0)
        model.load_state_dict(state)
        return model.to(device)

    rounds: dict[str, list[float]] = {"laser": [], "bare": [], "bare_hf_labels": []}
    for r in range(args.rounds):
        loops = {
            "laser": lambda: train(fresh(), examples, pad, cfg).tokens_per_s,
            "bare": lambda: _bare(fresh(), examples, cfg, pad, hf=False),
            "bare_hf_labels": lambda: _bare(fresh(), examples, cfg, pad, hf=True),
        }
        names = list(loops)
        order = names[r % 3 :] + names[: r % 3]  # each loop goes first in turn
        speeds = {name: loops[name]() for name in order}
        tag = "warm-up" if r == 0 else f"round {r}"
        print(f"{tag}: " + ", ".join(f"{k} {v:,.0f} tok/s" for k, v in speeds.items()))
        if r > 0 or args.rounds == 1:
            for k, v in speeds.items():
                rounds[k].append(v)
    med = {k: statistics.median(v) for k, v in rounds.items()}
    load = os.getloadavg()
    result = {
        "benchmark": "laser_train",
        "model": args.size,
        "parameters": sum(p.numel() for p in init.parameters()),
        "device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
        "precision": "bf16" if device == "cuda" and torch.cuda.is_bf16_supported() else "fp32",
        "threads": torch.get_num_threads(),
        "batch": args.batch,
        "max_prompt_tokens": args.length,
        "steps_per_round": args.steps,
        "rounds_counted": len(rounds["laser"]),
        "laser_tokens_per_s": round(med["laser"], 1),
        "bare_tokens_per_s": round(med["bare"], 1),
        "bare_hf_labels_tokens_per_s": round(med["bare_hf_labels"], 1),
        "ratio_vs_bare": round(med["laser"] / med["bare"], 3),
        "ratio_vs_bare_hf_labels": round(med["laser"] / med["bare_hf_labels"], 3),
        "goal_ratio": 0.9,
        "load_average": [round(x, 2) for x in load],
    }
    print(
        f"laser loop {result['ratio_vs_bare']:.1%} of the bare loop with the same loss, "
        f"{result['ratio_vs_bare_hf_labels']:.1%} of a plain labels= loop (load {load[0]:.1f})"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
