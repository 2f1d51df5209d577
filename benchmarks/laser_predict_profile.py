"""Where LASER's prediction time goes: torch's profiler over one constrained decoding run.

LASER's `tiny` decoder (untrained: the cost does not depend on the weights) decodes --prompts
prompts of --length tokens with --samples draws each, in one batch, on --threads threads; the
shares of CPU time of the top operators are printed (self time, all threads together). A
profile, not a speed claim; on a loaded machine the shares move from run to run.

    python benchmarks/laser_predict_profile.py --model tiny --prompts 16 --length 400 --samples 16
    python benchmarks/laser_predict_profile.py --decoder reference   # the cache copied per draw

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

from gharuntime.baselines.laser.bench import _fixture_prompts, bench_prompts, load_setup
from gharuntime.baselines.laser.decoding import constrained_generate
from gharuntime.baselines.laser.encoding import codec_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--length", type=int, default=400)
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--decoder", default="shared", choices=["shared", "reference"])
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    setup = load_setup(args.model)
    prompts = bench_prompts(setup.tokenizer, _fixture_prompts("config"), args.length, args.prompts)
    codec = codec_for("sci", ["duration_s", "queue_s", "log_bytes"])

    def run() -> None:
        constrained_generate(
            setup.model,
            setup.tokenizer,
            prompts,
            codec,
            samples=args.samples,
            batch_size=args.prompts,
            decoder=args.decoder,
        )

    run()  # warm-up
    t0 = time.perf_counter()
    with torch.profiler.profile() as prof:
        run()
    wall = time.perf_counter() - t0
    events = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)
    total = sum(e.self_cpu_time_total for e in events) or 1.0
    shares = {e.key: round(e.self_cpu_time_total / total, 3) for e in events[: args.top]}
    for name, share in shares.items():
        print(f"{share:6.1%}  {name}")
    figures = {
        "benchmark": "laser_predict_profile",
        "model": args.model,
        "prompts": args.prompts,
        "length": args.length,
        "samples": args.samples,
        "decoder": args.decoder,
        "threads": args.threads,
        "profiled_wall_s": round(wall, 2),
        "self_cpu_share": shares,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
