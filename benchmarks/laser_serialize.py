"""How fast LASER writes its training prompts: serialize_job row by row (the old path) against
serialize_batch (prompts.py), on the same rows, in the same run, with the same tokenizer.

Reads the train split of a built dataset (--dataset, else the real one `$GHARUNTIME_REAL_DATASET`
names; with neither it exits 2), trains the tiny model's BPE tokenizer on it the way `fit`
does, then times, for SAMPLE rows: the old path (serialize_job with prompt_token_counter, then
prompt_token_ids per prompt, every YAML cache cleared first) and the new one (serialize_batch
with TokenCounter, then prompt_token_ids_many), checks the prompts and ids are identical, and
times the new path alone on the whole split. Also the tokenizer-free pass fit makes to train
that tokenizer (estimate_tokens). Goal (issue #31): >= 20x faster, <= 0.5 ms per job.

    python benchmarks/laser_serialize.py                     # $GHARUNTIME_REAL_DATASET
    python benchmarks/laser_serialize.py --dataset DIR --config temporal --sample 2000

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from _common import MissingDataset, real_dataset, refuse, shown


def _clear_caches() -> None:
    from gharuntime.baselines.laser import serialize

    for fn in (serialize._workflow_context, serialize._job_text, serialize._job_from_workflow):
        fn.cache_clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, help="a dataset folder [$GHARUNTIME_REAL_DATASET]")
    parser.add_argument("--config", default="temporal")
    parser.add_argument("--track", default="config")
    parser.add_argument("--budget", type=int, default=512)
    parser.add_argument("--sample", type=int, default=3000, help="rows timed on both paths")
    parser.add_argument("--vocab", type=int, default=2000)
    parser.add_argument(
        "--tokenizer-rows",
        type=int,
        default=None,
        help="rows whose prompts train the BPE tokenizer (default: the whole split, as fit does; "
        "a few minutes on the real one. Fewer keeps the benchmark short, but the old path's "
        "cost depends on the tokenizer: 2.2 ms/job with 5,000 rows, 11.5 with all 67,856)",
    )
    args = parser.parse_args(argv)
    try:
        args.dataset = real_dataset(args.dataset)
    except MissingDataset as exc:
        return refuse(str(exc))

    from gharuntime.baselines.laser.decoding import (
        prompt_token_counter,
        prompt_token_ids,
        prompt_token_ids_many,
    )
    from gharuntime.baselines.laser.models import train_tokenizer
    from gharuntime.baselines.laser.prompts import (
        EstimateCounter,
        TokenCounter,
        prompt_rows,
        serialize_batch,
    )
    from gharuntime.baselines.laser.serialize import serialize_job
    from gharuntime.dataset import load

    frame = load(args.dataset, args.config, "train")
    rows = list(frame.iter_rows(named=True))
    sample = rows[: args.sample]
    head = frame.head(args.sample)
    kw = {"track": args.track, "budget": args.budget}
    print(
        f"{len(rows):,} {args.config} training rows of {shown(args.dataset)}; "
        f"{len(sample):,} timed on both paths",
        file=sys.stderr,
    )

    # the tokenizer-free pass (fit trains the tiny tokenizer on these prompts)
    _clear_caches()
    t = time.perf_counter()
    est_old = [serialize_job(r, **kw) for r in sample]
    est_old_s = time.perf_counter() - t
    t = time.perf_counter()
    est_new = serialize_batch(sample, **kw, count=EstimateCounter())
    est_new_s = time.perf_counter() - t
    assert est_new == est_old, "estimate-budgeted prompts differ"

    t = time.perf_counter()
    everything = serialize_batch(rows[: args.tokenizer_rows], **kw, count=EstimateCounter())
    tokenizer = train_tokenizer(everything, args.vocab)
    print(f"tokenizer trained in {time.perf_counter() - t:.1f} s", file=sys.stderr)

    _clear_caches()
    count = prompt_token_counter(tokenizer)
    t, c = time.perf_counter(), time.process_time()  # both from the frame, as fit does
    old = [serialize_job(r, **kw, count_tokens=count) for r in head.iter_rows(named=True)]
    old_ids = [prompt_token_ids(tokenizer, p) for p in old]
    old_s, old_cpu = time.perf_counter() - t, time.process_time() - c
    counter = TokenCounter(tokenizer)
    t, c = time.perf_counter(), time.process_time()
    new = serialize_batch(prompt_rows(head, args.track), **kw, count=counter)
    new_ids = counter.ids(new)
    new_s, new_cpu = time.perf_counter() - t, time.process_time() - c
    assert new_ids == prompt_token_ids_many(tokenizer, new), "joined unit ids differ"
    same = new == old and new_ids == old_ids
    assert same, "prompts or their token ids differ"
    exact = TokenCounter(tokenizer, additive=False)  # the path for tokenizers that may join lines
    t = time.perf_counter()
    waves = serialize_batch(sample, **kw, count=exact)
    waves_s = time.perf_counter() - t
    assert waves == old, "exactly counted prompts differ"

    t, c = time.perf_counter(), time.process_time()
    fresh = TokenCounter(tokenizer)
    whole = serialize_batch(prompt_rows(frame, args.track), **kw, count=fresh)
    whole_ids = fresh.ids(whole)
    whole_s, whole_cpu = time.perf_counter() - t, time.process_time() - c
    mean_tokens = sum(map(len, whole_ids)) / max(1, len(whole_ids))
    cut = sum(
        a != b
        for a, b in zip(
            old, [serialize_job(r, **kw | {"budget": 10**9}) for r in sample], strict=True
        )
    )

    n = len(sample)
    ms = {
        "old_ms_per_job": 1e3 * old_s / n,
        "new_ms_per_job": 1e3 * new_s / n,
        "exact_waves_ms_per_job": 1e3 * waves_s / n,
        "whole_split_ms_per_job": 1e3 * whole_s / len(rows),
        "old_cpu_ms_per_job": 1e3 * old_cpu / n,
        "new_cpu_ms_per_job": 1e3 * new_cpu / n,
        "whole_split_cpu_ms_per_job": 1e3 * whole_cpu / len(rows),
        "estimate_old_ms_per_job": 1e3 * est_old_s / n,
        "estimate_new_ms_per_job": 1e3 * est_new_s / n,
    }
    speedup = old_s / new_s
    speedup_cpu = old_cpu / new_cpu  # steadier when other work shares the machine
    print(f"{'old':>22}: {ms['old_ms_per_job']:8.3f} ms/job (serialize_job + prompt_token_ids)")
    print(
        f"{'new':>22}: {ms['new_ms_per_job']:8.3f} ms/job (serialize_batch + ids, additive={counter.additive})"
    )
    print(
        f"{'speed-up':>22}: {speedup:8.1f}x wall, {speedup_cpu:.1f}x CPU (goal >= 20x, <= 0.5 ms/job)"
    )
    print(
        f"{'CPU':>22}: {ms['old_cpu_ms_per_job']:.3f} -> {ms['new_cpu_ms_per_job']:.3f} ms/job; "
        f"whole split {ms['whole_split_cpu_ms_per_job']:.3f} ms/job"
    )
    print(f"{'exact counting':>22}: {ms['exact_waves_ms_per_job']:8.3f} ms/job (other tokenizers)")
    print(
        f"{'whole split (new)':>22}: {ms['whole_split_ms_per_job']:8.3f} ms/job over {len(rows):,} rows"
    )
    print(
        f"{'estimate pass':>22}: {ms['estimate_old_ms_per_job']:.3f} -> {ms['estimate_new_ms_per_job']:.3f} ms/job"
    )
    print(f"{'prompts cut':>22}: {cut} of {n}; mean prompt {mean_tokens:.0f} tokens")
    print(f"{'load average':>22}: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(
        json.dumps(
            {
                "dataset": shown(args.dataset),
                "config": args.config,
                "train_rows": len(rows),
                "sample": n,
                "budget": args.budget,
                **{k: round(v, 4) for k, v in ms.items()},
                "speedup": round(speedup, 1),
                "speedup_cpu": round(speedup_cpu, 1),
                "identical": same,
                "additive": counter.additive,
                "cut_in_sample": cut,
                "mean_prompt_tokens": round(mean_tokens, 1),
                "goal_met": speedup >= 20 and ms["whole_split_ms_per_job"] <= 0.5,
                "goal_met_cpu": speedup_cpu >= 20 and ms["whole_split_cpu_ms_per_job"] <= 0.5,
                "load_average": round(os.getloadavg()[0], 2),
                "cpus": os.cpu_count(),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
