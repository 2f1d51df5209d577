"""LASER's figures on a GPU in one run: training throughput, decoding latency and accuracy.

For a machine lent for minutes: every stage has a time limit, writes what it measured to OUT as
soon as it has it, and a failed stage is recorded and skipped, so one run brings back all it
could. The stages run the project's own code, not copies of it:

0. padding: one forward and backward of a left-padded batch of a random SIZE model in bf16, with
   transformers' plain SDPA masks and with LASER's (`models.SAFE_SDPA`, no fully masked row): are
   the real tokens' logits and the gradients finite? The suspected cause of the NaN loss of an
   earlier bf16 run on a GPU, checked directly (seconds);
1. training throughput: `benchmarks/laser_train.py --size SIZE` (LASER's loop against a bare
   loop of the same model and batches, bf16 on a GPU that has it);
2. decoding latency: `gharuntime laser bench --json` with a random SIZE-shaped model at prompt
   lengths 256, 1,024 and 2,048, batch 1 and batch 8, config and multi tracks;
3. accuracy: `gharuntime baseline laser` (model SIZE trained from scratch) on each --configs
   config of --dataset, config track; the submissions are scored where the dataset's other
   results are (`gharuntime eval SUB --dataset DS --vs lightgbm.jsonl`). The step count is chosen
   from stage 1's measured tokens/s so training takes about --train-seconds, and is recorded.

    python benchmarks/laser_device.py --dataset out/sim-small --out runs/gpu --train-seconds 100

The last line printed is one JSON object (also written to OUT/laser_device.json).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from _common import shown

from gharuntime.paths import write_atomic

HERE = Path(__file__).resolve().parent
SIZES = {"small": (8, 512), "tiny-256": (4, 256), "tiny": (2, 128)}  # layers, width


def _last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            parsed: dict[str, Any] = json.loads(line)
            return parsed
    raise ValueError("no JSON line in the output")


def _run(cmd: list[str], timeout: float, log: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    log.write_text(f"$ {' '.join(cmd)}\n{proc.stdout}\n--- stderr ---\n{proc.stderr}")
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return {**_last_json(proc.stdout), "wall_s": round(time.perf_counter() - t0, 1)}


class Report:
    """The figures so far, rewritten to OUT/laser_device.json after every stage."""

    def __init__(self, out: Path, args: argparse.Namespace) -> None:
        self.path = out / "laser_device.json"
        self.doc: dict[str, Any] = {
            "benchmark": "laser_device",
            "args": {k: shown(v) if isinstance(v, Path) else str(v) for k, v in vars(args).items()},
            "stages": {},
        }

    def stage(self, name: str, value: Any) -> None:
        self.doc["stages"][name] = value
        write_atomic(self.path, json.dumps(self.doc, indent=2) + "\n")
        print(f"{name}: {json.dumps(value)[:400]}", flush=True)


def padding_probe(size: str, batch: int, length: int) -> dict[str, Any]:
    """Stage 0: are a left-padded batch's logits and gradients finite in bf16, with plain SDPA
    masks and with LASER's? Rows have lengths from length/4 to length (the first one full)."""
    import torch

    from gharuntime.baselines.laser.models import ModelOptions, tiny_model, train_tokenizer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    # the vocabulary only has to be a real one: the probe feeds random ids
    tokenizer = train_tokenizer(["runs-on: ubuntu-latest steps: run pytest 0123456789"], 300)
    vocab = len(tokenizer)
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(length // 4, length + 1, (batch,), generator=g)
    lengths[0] = length
    ids = torch.randint(2, vocab, (batch, length), generator=g).to(device)
    mask = (torch.arange(length)[None, :] >= (length - lengths)[:, None]).long().to(device)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    real = mask.bool()
    out: dict[str, Any] = {"device": device, "batch": batch, "length": length, "size": size}
    for name in ("plain_sdpa", "laser_sdpa"):
        model = tiny_model(tokenizer, size, ModelOptions(), seed=0).to(device)  # LASER's masks
        if name == "plain_sdpa":
            model.set_attn_implementation("sdpa")  # transformers' own masks
        with torch.autocast(device_type=device, dtype=torch.bfloat16):
            logits = model(input_ids=ids, attention_mask=mask, position_ids=positions).logits
        logits = logits.float()
        logits[real].logsumexp(-1).mean().backward()
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        out[name] = {
            "attention": model.config._attn_implementation,
            "real_rows_with_nan_logits": int((~torch.isfinite(logits[real]).all(-1)).sum()),
            "real_rows": int(real.sum()),
            "finite_gradients": all(bool(torch.isfinite(x).all()) for x in grads),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--size", default="small", choices=sorted(SIZES))
    ap.add_argument("--configs", default="temporal,cross_repo")
    ap.add_argument("--stages", default="padding,train,decode,accuracy")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--budget", type=int, default=512, help="prompt tokens")
    ap.add_argument("--train-seconds", type=float, default=100.0, help="per accuracy run")
    ap.add_argument(
        "--tokens-per-example",
        type=float,
        default=370.0,
        help="mean tokens of one training example (sim-small at budget 512: 361 measured)",
    )
    ap.add_argument("--min-steps", type=int, default=300)
    ap.add_argument("--max-steps", type=int, default=6000)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--lengths", default="256,1024,2048", help="decoding: prompt tokens")
    ap.add_argument("--train-length", type=int, default=1024, help="training bench: tokens")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    report = Report(args.out, args)
    stages = set(args.stages.split(","))
    layers, width = SIZES[args.size]
    gharuntime = [sys.executable, "-c", "from gharuntime.cli.main import main; main()"]
    tokens_per_s: float | None = None

    if "padding" in stages:
        try:
            report.stage("padding", padding_probe(args.size, args.batch, args.budget))
        except Exception:
            report.stage("padding", {"error": traceback.format_exc()[-3000:]})

    if "train" in stages:
        cmd = [sys.executable, str(HERE / "laser_train.py"), "--size", args.size]
        cmd += [
            "--batch",
            str(args.batch),
            "--length",
            str(args.train_length),
            "--steps",
            "20",
            "--rounds",
            "4",
        ]
        try:
            fig = _run(cmd, 240, args.out / "train.log")
            tokens_per_s = float(fig["laser_tokens_per_s"])
            report.stage("train", fig)
        except Exception as exc:  # a failed stage is recorded, the rest runs
            report.stage("train", {"error": repr(exc)[-2000:]})

    if "decode" in stages:
        figs: dict[str, Any] = {}
        for track in ("config", "multi"):
            for batch in (1, 8):
                name = f"{track}-batch{batch}"
                cmd = [*gharuntime, "laser", "bench", "--json", "--layers", str(layers)]
                cmd += ["--width", str(width), "--track", track, "--batch-size", str(batch)]
                cmd += ["--prompts", str(max(8, batch)), "--repeats", "3"]
                cmd += ["--prompt-lengths", args.lengths]
                try:
                    figs[name] = _run(cmd, 150, args.out / f"decode-{name}.log")
                except Exception as exc:
                    figs[name] = {"error": repr(exc)[-2000:]}
                report.stage("decode", figs)

    if "accuracy" in stages:
        from gharuntime.baselines.run import run_baseline

        speed = tokens_per_s or 50_000.0
        steps = int(args.train_seconds * speed / (args.batch * args.tokens_per_example))
        steps = max(args.min_steps, min(args.max_steps, steps))
        runs: dict[str, Any] = {"steps": steps, "from_tokens_per_s": speed}
        for config in args.configs.split(","):
            sub = args.out / f"laser-{args.size}-{config}.jsonl"
            params = {
                "model": args.size,
                "max_steps": steps,
                "batch_size": args.batch,
                "budget": args.budget,
                "lr": args.lr,
                "warmup_steps": max(20, steps // 20),
                "decode_batch_size": 64,
            }
            t0 = time.perf_counter()
            try:
                res = run_baseline(
                    "laser", args.dataset, config=config, track="config", out=sub, params=params
                )
                runs[config] = {
                    "submission": sub.name,
                    "fit_s": round(res.fit_seconds, 1),
                    "predict_s": round(res.predict_seconds, 1),
                    "training": res.meta["method_config"].get("training"),
                }
            except Exception:
                runs[config] = {"error": traceback.format_exc()[-3000:]}
            runs[config]["wall_s"] = round(time.perf_counter() - t0, 1)
            report.stage("accuracy", runs)

    print(json.dumps(report.doc))


if __name__ == "__main__":
    main()
