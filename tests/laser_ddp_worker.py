"""One rank of a LASER training for tests/baselines/laser/test_train_ddp.py, under `accelerate launch` or plain.

    python tests/laser_ddp_worker.py OUT CONFIG_JSON

trains the `tiny` model on a small fixed set of examples through `train()` (the loop the
`laser` method uses) with `TrainConfig(**CONFIG_JSON)`, then writes, per process,
OUT/rank-R.json (rank, process count, the examples' digest, the TrainResult, the progress
messages this rank received) and OUT/rank-R.pt (the trained weights). Not a test module itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import torch

from gharuntime.baselines.laser.models import ModelOptions, tiny_model, train_tokenizer
from gharuntime.baselines.laser.train import Example, TrainConfig, make_example, train

# 42 examples: 11 micro-batches of 4 a epoch (the last one of 2), an odd count, so the two
# processes' shares of an epoch differ and a step crosses the epoch boundary. Targets of 1 to 4
# digits: the micro-batches of one step hold different numbers of target tokens.
N = 42
PROMPTS = [f"job build-{i % 7} on ubuntu, {'step ' * (i % 5)}{i % 3} needs\n" for i in range(N)]
TARGETS = [f"duration_s={(i * 7919) % 10 ** (1 + i % 4)}" for i in range(N)]


def setup() -> tuple[Any, list[Example], Any]:
    """(tokenizer, examples, a fresh seeded `tiny` model): the same in every process."""
    tokenizer = train_tokenizer(PROMPTS + TARGETS, 300)
    examples = [
        make_example(tokenizer.encode(p), tokenizer.encode(t), tokenizer.eos_token_id, None)
        for p, t in zip(PROMPTS, TARGETS, strict=True)
    ]
    return tokenizer, examples, tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)


def main(out: Path, config: dict[str, Any]) -> None:
    torch.set_num_threads(1)  # two ranks on two cores; the same in the one-process reference
    rank = int(os.environ.get("RANK", "0"))
    tokenizer, examples, model = setup()
    digest = hashlib.sha256(json.dumps([e.input_ids for e in examples]).encode()).hexdigest()
    said: list[str] = []
    result = train(
        model,
        examples,
        tokenizer.pad_token_id,
        TrainConfig(**config),
        lambda message, _done, _total: said.append(message),
    )
    torch.save(
        {k: v.detach().clone() for k, v in model.state_dict().items()}, out / f"rank-{rank}.pt"
    )
    report = {
        "rank": rank,
        "processes": result.processes,
        "examples": digest,
        "said": said,
        "summary": result.summary(),
        "losses": result.losses,
        "steps": result.steps,
        "resumed_from": result.resumed_from,
        "stopped_early": result.stopped_early,
        "training": model.training,
    }
    (out / f"rank-{rank}.json").write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), json.loads(sys.argv[2]))
