"""LASER decoding latency: constrained + prefilled decoding against plain unconstrained
generation of the same output, same model and prompts, measured in one run, at prompt lengths
256, 1,024 and 2,048 tokens, with each side's validity rate. Goal: at least 40% lower latency at
1,024 tokens with 100% valid outputs.

The model is LASER's own `tiny` decoder, untrained (latency needs no training); `--model
tiny-256`, `--model random --layers L --width W` (a random Llama of another size),
`smollm2-135m` or a Hugging Face causal-LM folder time others. Both tracks' layouts are measured by default: config (one
target) and multi (three). The machine's load average is printed with the figures, and the last
line is one JSON object with everything.

    python benchmarks/laser_decode.py
    python benchmarks/laser_decode.py --model random --layers 12 --width 768 --device cuda
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--layers", type=int, help="--model random only [4]")
    parser.add_argument("--width", type=int, help="--model random only [256]")
    parser.add_argument("--prompt-lengths", default="256,1024,2048")
    parser.add_argument("--tracks", default="config,multi")
    parser.add_argument("--encoding", default="sci")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--threads", type=int)
    args = parser.parse_args(argv)

    import torch

    from gharuntime.baselines.laser.bench import load_setup, run_bench

    if args.threads:
        torch.set_num_threads(args.threads)
    lengths = [int(x) for x in args.prompt_lengths.split(",")]
    load_before = os.getloadavg()
    report: dict[str, Any] = {"bench": "laser_decode", "runs": []}
    for track in args.tracks.split(","):
        setup = load_setup(args.model, layers=args.layers, width=args.width, track=track)
        result = run_bench(
            setup,
            prompt_lengths=lengths,
            track=track,
            encoding=args.encoding,
            prompts_per_length=args.prompts,
            batch_size=args.batch_size,
            repeats=args.repeats,
            device=args.device,
            dtype=args.dtype,
            progress=lambda m, _done, _total: print(m, file=sys.stderr, flush=True),
        )
        report["runs"].append(result)
        print(f"\n{track} track, {result['model']}, {result['device_name']} {result['dtype']}:")
        print(
            "prompt  constrained_s  plain_s  prompt_pass_s  lower_latency  decode_only  valid(c/p)"
        )
        for r in result["results"]:
            decode_only = r["decode_only_reduction"]
            print(
                f"{r['prompt_tokens']:>6}  {r['constrained_s']:>13.3f}  {r['plain_s']:>7.3f}  "
                f"{r['prefill_s']:>13.3f}  {r['latency_reduction']:>13.1%}  "
                f"{'-' if decode_only is None else f'{decode_only:.1%}':>11}  "
                f"{r['constrained_valid']:.0%}/{r['plain_valid']:.0%}"
            )
    load_after = os.getloadavg()
    report["load_average_before"] = [round(x, 2) for x in load_before]
    report["load_average_after"] = [round(x, 2) for x in load_after]
    report["goal_met"] = {r["track"]: r["goal"]["met"] for r in report["runs"]}
    print(f"\nload average before {load_before}, after {load_after}")
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
