"""LASER's training loop: next-token loss on the target tokens only, on `accelerate`.

Each example is `prompt + TARGET_SEPARATOR` (no loss) followed by the encoded targets and the
end-of-sequence token (loss). The model computes logits only for the few positions that predict
a target token (`logits_to_keep`), never the vocabulary projection of the whole prompt; and by
default (`last_layer="kept"`) its last decoder layer runs at those positions only
(`kept_rows.py`: the other positions feed it keys and values, nothing else of theirs is read),
which halves a 2-layer model's work for the same loss and gradients. `last_layer="full"` runs
it everywhere (the reference; also what a layout `kept_rows` does not serve gets).

- Padding: batches are right-padded (`padding="right"`, the default). A pad then follows every
  real token, so no real token can see one: no padding mask is needed, attention is causal
  alone, and SDPA skips the keys above the diagonal. The logits kept are the span of positions
  that predict some row's targets. `padding="left"` (every row's targets at the end, an explicit
  padding mask and position ids) is the layout before issue #41, kept as the benchmark's
  reference; both give the same loss to float rounding (tested).

- Order: the examples of each epoch are shuffled by `(seed, epoch)`, grouped by length within
  windows of 16 micro-batches (less padding), and the micro-batches shuffled again; the order is
  a pure function of the seed and the step, so a resumed run sees the same batches.
- Gradient accumulation: `grad_accum` micro-batches per optimizer step and process; the loss is
  the sum over target tokens divided by the step's target-token count (all processes' micro-batches
  together), so neither accumulation nor the process count changes it.
- Learning rate: linear warm-up over `warmup_steps`, then (`lr_schedule="cosine"`, the default)
  a cosine decay to `min_lr_ratio` of the peak at `max_steps`, or (`"constant"`) the peak held.
  A cosine schedule depends on `max_steps`, so a checkpoint resumes only the same step count.
- A step whose gradient is not finite (NaN or inf) changes no weight and is counted
  (`skipped_steps`); more than 10% of the steps (and more than 10) ends the training with an
  error that says so.
- Precision: `precision="auto"` reads `PRECISION_BY_DEVICE` for this device (`device_kind()`):
  bf16 autocast on a CUDA device with bf16, and on a CPU where it measured faster (see the
  table); float32 otherwise. The choice is part of the checkpoint's fingerprint and recorded in
  the summary (`precision`, `device`).
- Several processes: `accelerate launch --multi_gpu --num_processes P --num_machines 1 SCRIPT`
  with a SCRIPT that calls `train()` (on a machine without GPUs, ACCELERATE_USE_CPU=true in front
  runs it on gloo; `--cpu --num_processes P` starts one process, not P, unless through mpirun).
  Optimizer step s uses micro-batches s*P*grad_accum ... (s+1)*P*grad_accum-1 of the stream,
  process r taking every P-th one from the r-th. Every process knows every micro-batch, so the
  step's target-token count (the loss's divisor) needs no communication; each process scales its
  loss by P and accelerate's DDP wrapper averages the gradients. P processes with grad_accum=A
  therefore train the same model as one process with grad_accum=P*A (up to float rounding), and
  a checkpoint resumes under any P and A with the same product. Losses and token counts are the
  whole step's, progress is reported by the main process only, and a process launched as one of
  several that accelerate runs alone (`--multi_gpu` without a GPU or ACCELERATE_USE_CPU) is
  refused. Verified on CPU with P=2 (tests/baselines/laser/test_train_ddp.py): the weights of 1 process with
  twice the accumulation, equal on both ranks, a killed run resumed under 2 or 1 process; and
  `gharuntime baseline laser` as a whole (`baselines/laser/processes.py`: the tokenizer trained
  once, prediction split, files written by the main process). Not run on GPUs (nccl).
- Checkpoints: every `checkpoint_every` steps `accelerator.save_state` into
  `checkpoint_dir/step-N` (written under a temporary name, then renamed), `latest.json` names it.
  Rerun the same training with the same `checkpoint_dir` and it resumes after the last complete
  checkpoint; a checkpoint of a different training (other data or settings) is refused.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gharuntime.baselines.laser import kept_rows
from gharuntime.baselines.laser.kept_rows import KEPT_POSITIONS
from gharuntime.baselines.laser.processes import check_launch
from gharuntime.baselines.method import MethodError
from gharuntime.paths import replace_folder, write_atomic
from gharuntime.progress import Progress, say

__all__ = [
    "PRECISION_BY_DEVICE",
    "Example",
    "TrainConfig",
    "TrainResult",
    "collate",
    "device_kind",
    "make_example",
    "micro_batches",
    "target_loss",
    "train",
]

LATEST = "latest.json"
WINDOW = 16  # micro-batches per length-sorting window


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters of one training; `stop_after` ends it early as a kill would (tests)."""

    max_steps: int = 200
    batch_size: int = 8
    grad_accum: int = 1
    lr: float = 1e-3
    weight_decay: float = 0.0
    warmup_steps: int = 10
    lr_schedule: str = "cosine"  # cosine | constant
    min_lr_ratio: float = 0.1
    max_grad_norm: float = 1.0
    precision: str = "auto"  # auto | fp32 | bf16
    compile: bool = False  # torch.compile the training forward (dynamic shapes)
    padding: str = "right"  # right | left (the layout before issue #41: the reference)
    last_layer: str = "kept"  # kept (only the kept positions; see kept_rows.py) | full
    seed: int = 0
    checkpoint_dir: str | None = None
    checkpoint_every: int = 50
    stop_after: int | None = None

    def check(self) -> None:
        for name in ("max_steps", "batch_size", "grad_accum", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise MethodError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.padding not in ("right", "left"):
            raise MethodError(f"padding must be right or left, not {self.padding!r}")
        if self.last_layer not in ("kept", "full"):
            raise MethodError(f"last_layer must be kept or full, not {self.last_layer!r}")
        if self.precision not in ("auto", "fp32", "bf16"):
            raise MethodError(f"precision must be auto, fp32 or bf16, not {self.precision!r}")
        if not self.lr > 0:
            raise MethodError(f"lr must be positive, not {self.lr}")
        if self.lr_schedule not in ("cosine", "constant"):
            raise MethodError(f"lr_schedule must be cosine or constant, not {self.lr_schedule!r}")
        if not 0.0 <= self.min_lr_ratio <= 1.0:
            raise MethodError(f"min_lr_ratio must be within [0, 1], not {self.min_lr_ratio}")

    def lr_at(self, step: int) -> float:
        """The learning rate of optimizer step `step` (0-based)."""
        if step < self.warmup_steps:
            return self.lr * (step + 1) / self.warmup_steps
        if self.lr_schedule == "constant":
            return self.lr
        span = max(1, self.max_steps - 1 - self.warmup_steps)  # the last step is at the floor
        progress = min(1.0, (step - self.warmup_steps) / span)
        cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
        return self.lr * (self.min_lr_ratio + (1.0 - self.min_lr_ratio) * cosine)

    def fingerprint_fields(self) -> dict[str, Any]:
        """What must match for a checkpoint to be resumed (not where or when to stop)."""
        d = asdict(self)
        for k in (
            "checkpoint_dir",
            "checkpoint_every",
            "stop_after",
            "compile",
            "padding",
            "last_layer",
        ):
            d.pop(k)  # compile, padding and last_layer change how fast, not what is trained
        if self.lr_schedule == "constant":  # the step count changes nothing before the end
            d.pop("max_steps")
        return d


@dataclass(frozen=True)
class Example:
    """Token ids of prompt + separator + targets + eos; the last `target_len` carry the loss."""

    input_ids: tuple[int, ...]
    target_len: int


@dataclass
class TrainResult:
    """What a training did: its steps (including resumed ones), losses, tokens and time."""

    steps: int
    resumed_from: int
    losses: list[float] = field(default_factory=list)  # per step run in this call
    tokens: int = 0  # non-padding tokens processed in this call (by all processes)
    target_tokens: int = 0
    seconds: float = 0.0
    precision: str = "fp32"
    device: str = "cpu"  # device_kind(): the row of PRECISION_BY_DEVICE precision=auto read
    compiled: bool = False
    last_layer: str = "full"  # kept: the last layer ran at the kept positions only
    processes: int = 1
    stopped_early: bool = False
    skipped_steps: int = 0  # steps whose gradient was not finite: no update
    validation: list[tuple[int, float]] = field(default_factory=list)  # (step, score)
    best_step: int | None = None  # the step whose weights the model holds after validation

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "steps": self.steps,
            "resumed_from": self.resumed_from,
            "first_loss": self.losses[0] if self.losses else None,
            "last_loss": self.losses[-1] if self.losses else None,
            "tokens": self.tokens,
            "target_tokens": self.target_tokens,
            "seconds": round(self.seconds, 3),
            "tokens_per_s": round(self.tokens_per_s, 1),
            "precision": self.precision,
            "device": self.device,
            "compiled": self.compiled,
            "last_layer": self.last_layer,
            "processes": self.processes,
            "skipped_steps": self.skipped_steps,
            **(
                {
                    "validation_by_step": [[k, round(v, 5)] for k, v in self.validation],
                    "best_step": self.best_step,
                }
                if self.validation
                else {}
            ),
        }


def make_example(
    prompt_ids: Sequence[int], target_ids: Sequence[int], eos_id: int, max_length: int | None
) -> Example:
    """One training example; the prompt is cut from the left if the whole exceeds max_length
    (the serializer's budget normally prevents that)."""
    ids = [*prompt_ids, *target_ids, eos_id]
    if max_length is not None and len(ids) > max_length:
        ids = ids[len(ids) - max_length :]
    return Example(tuple(ids), len(target_ids) + 1)


def micro_batches(
    lengths: Sequence[int], batch_size: int, seed: int, epoch: int
) -> list[list[int]]:
    """The micro-batches (lists of example indices) of one epoch, deterministic in (seed, epoch)."""
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    window = batch_size * WINDOW
    batches: list[list[int]] = []
    lens = np.asarray(lengths)
    for start in range(0, len(order), window):
        chunk = order[start : start + window]
        chunk = chunk[np.argsort(lens[chunk], kind="stable")]
        batches.extend(chunk[i : i + batch_size].tolist() for i in range(0, len(chunk), batch_size))
    perm = rng.permutation(len(batches))
    return [batches[i] for i in perm]


class _BatchStream:
    """Micro-batch number k of the whole training, epoch after epoch."""

    def __init__(self, examples: Sequence[Example], batch_size: int, seed: int) -> None:
        self.lengths = [len(e.input_ids) for e in examples]
        self.batch_size, self.seed = batch_size, seed
        self._epoch, self._batches = -1, [[0]]

    def __getitem__(self, k: int) -> list[int]:
        per_epoch = math.ceil(len(self.lengths) / self.batch_size)
        epoch, index = divmod(k, per_epoch)
        if epoch != self._epoch:
            self._epoch = epoch
            self._batches = micro_batches(self.lengths, self.batch_size, self.seed, epoch)
        return self._batches[index]


def collate(examples: Sequence[Example], pad_id: int, padding: str = "right") -> dict[str, Any]:
    """One micro-batch: input ids (padded on the `padding` side), the positions whose logits
    are kept, their labels (the next tokens) and the loss mask over them (the positions that
    predict a target token). Left padding adds the attention mask and position ids."""
    import torch

    width = max(len(e.input_ids) for e in examples)
    ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    if padding == "left":  # every row's targets end at the last column
        lo, hi = width - 1 - max(e.target_len for e in examples), width - 1
    else:  # row r's targets end at its own length
        lo = min(len(e.input_ids) - e.target_len for e in examples) - 1
        hi = max(len(e.input_ids) for e in examples) - 1
    target = torch.zeros((len(examples), hi - lo), dtype=torch.bool)
    for row, e in enumerate(examples):
        n = len(e.input_ids)
        start = width - n if padding == "left" else 0
        ids[row, start : start + n] = torch.tensor(e.input_ids, dtype=torch.long)
        end = start + n - 1 - lo  # the last position predicting a target token, plus one
        target[row, end - e.target_len : end] = True
    batch: dict[str, Any] = {
        "input_ids": ids,
        "keep": torch.arange(lo, hi),
        "labels": ids[:, lo + 1 : hi + 1],
        "target_mask": target,
    }
    if padding == "left":  # a row's real tokens are its last n columns
        lengths = torch.tensor([len(e.input_ids) for e in examples])
        mask = (torch.arange(width) >= width - lengths[:, None]).long()
        batch["attention_mask"] = mask
        batch["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)
    return batch


def target_loss(model: Any, batch: dict[str, Any], kept: bool = False) -> tuple[Any, int]:
    """(sum of the target tokens' cross-entropy, their count) for one collated batch.

    `kept`: the model's last layer runs at the kept positions only (`kept_rows.install` must
    have said yes for it); the same loss to float rounding, less work."""
    import torch

    inputs: dict[str, Any] = {
        k: batch[k] for k in ("input_ids", "attention_mask", "position_ids") if k in batch
    }
    if kept:
        inputs[KEPT_POSITIONS] = batch["keep"]
    out = model(**inputs, logits_to_keep=0 if kept else batch["keep"], use_cache=False)
    mask = batch["target_mask"]
    logits = out.logits.float()[mask]
    loss = torch.nn.functional.cross_entropy(logits, batch["labels"][mask], reduction="sum")
    return loss, int(mask.sum())


def _fingerprint(
    config: TrainConfig, examples: Sequence[Example], model: Any, processes: int, precision: str
) -> str:
    fields = config.fingerprint_fields()
    fields["precision"] = precision  # what "auto" chose here: a resume keeps it
    fields["grad_accum"] *= processes  # micro-batches per step: P processes x A = 1 x P*A
    h = hashlib.sha256(json.dumps(fields, sort_keys=True).encode())
    h.update(str(sum(p.numel() for p in model.parameters())).encode())
    h.update(str(sum(p.numel() for p in model.parameters() if p.requires_grad)).encode())
    for e in examples:
        h.update(np.asarray(e.input_ids, dtype=np.int64).tobytes())
        h.update(e.target_len.to_bytes(4, "little"))
    return h.hexdigest()


def _read_latest(folder: Path) -> dict[str, Any] | None:
    path = folder / LATEST
    if not path.is_file():
        return None
    try:
        latest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MethodError(f"{path}: unreadable checkpoint index: {exc}; delete it") from exc
    if not isinstance(latest, dict) or not (folder / str(latest.get("dir"))).is_dir():
        raise MethodError(f"{path}: names a checkpoint that is not there; delete {folder}")
    return latest


PRECISION_BY_DEVICE: dict[str, str] = {
    "cuda-bf16": "bf16",
    "cuda": "fp32",
    "cpu-avx512_bf16": "bf16",
    "cpu": "fp32",
}
"""What `precision="auto"` trains in, by `device_kind()`. On `cpu-avx512_bf16` bf16 measured
1.71x (`tiny`) and 1.70x (`tiny-256`) the float32 training before issue #41, against float32's
1.60x and 1.29x (`benchmarks/laser_cpu_train.py`, both with the kept positions; see
docs/laser/method.md). `precision=fp32|bf16` overrides it; the summary records both the device
kind and the choice."""


def device_kind() -> str:
    """`cuda-bf16`, `cuda`, `cpu-avx512_bf16` (oneDNN runs bf16 matrix products natively) or
    `cpu`: the key of `PRECISION_BY_DEVICE`."""
    import torch

    if torch.cuda.is_available():
        return "cuda-bf16" if torch.cuda.is_bf16_supported() else "cuda"
    try:
        native = bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        native = False
    return "cpu-avx512_bf16" if native else "cpu"


def _precision(config: TrainConfig) -> str:
    if config.precision == "auto":
        return PRECISION_BY_DEVICE[device_kind()]
    return config.precision


def train(
    model: Any,
    examples: Sequence[Example],
    pad_id: int,
    config: TrainConfig,
    progress: Progress | None = None,
    evaluate: Callable[[Any], float] | None = None,
    evaluate_every: int = 0,
) -> TrainResult:
    """Train `model` in place for `config.max_steps` optimizer steps (resuming from the
    checkpoint folder when it holds this training); returns what was done.

    With `evaluate` (a score of the model, lower is better: LASER's validation RMSLE) and
    `evaluate_every` K, the model is scored every K steps and at the last, and ends holding the
    trainable weights of its best-scoring step: the training length is chosen on validation.
    The scores restart at a resume (the best weights before a kill are not in the checkpoint)."""
    import torch
    from accelerate import Accelerator
    from accelerate.utils import set_seed

    config.check()
    if not examples:
        raise MethodError("no training examples")
    precision = _precision(config)
    # autocast by hand, not accelerate's mixed_precision: accelerate keeps one process-wide
    # state and refuses a second training in another precision in the same process
    accelerator = Accelerator(mixed_precision="no")
    procs, rank = accelerator.num_processes, accelerator.process_index
    check_launch(procs, accelerator.distributed_type)
    progress = progress if accelerator.is_main_process else None
    set_seed(config.seed)
    fingerprint = _fingerprint(config, examples, model, procs, precision)
    # the last layer at the kept positions only, where the model's layout allows it
    kept = config.last_layer == "kept" and kept_rows.install(model)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        params, lr=config.lr, weight_decay=config.weight_decay, betas=(0.9, 0.95)
    )
    model, optimizer = accelerator.prepare(model, optimizer)
    model.train()
    # compiled as a wrapper, so the caller's model (predicted with next) is left uncompiled;
    # dynamic shapes: every micro-batch has its own width, and one graph serves them all
    forward = _compiled(model) if config.compile else model

    start = 0
    ckpt = Path(config.checkpoint_dir) if config.checkpoint_dir else None
    if ckpt is not None:
        latest = _read_latest(ckpt)
        if latest is not None:
            if latest.get("fingerprint") != fingerprint:
                raise MethodError(
                    f"{ckpt} holds a checkpoint of a different training (other data, model or "
                    "settings); delete it or choose another checkpoint_dir"
                )
            accelerator.load_state(str(ckpt / latest["dir"]))
            start = int(latest["step"])
            say(progress, f"resuming from the checkpoint at step {start}")

    stream = _BatchStream(examples, config.batch_size, config.seed)
    result = TrainResult(
        steps=start,
        resumed_from=start,
        precision=precision,
        device=device_kind(),
        processes=procs,
        compiled=config.compile,
        last_layer="kept" if kept else "full",
    )
    device = accelerator.device
    pending: list[Any] = []  # this call's step losses not yet read back from the device
    best: tuple[float, int, dict[str, Any]] | None = None  # score, step, trainable weights
    t0 = time.perf_counter()
    for step in range(start, config.max_steps):
        if config.stop_after is not None and step - start >= config.stop_after:
            result.stopped_early = True
            break
        lr = config.lr_at(step)
        for group in optimizer.param_groups:
            group["lr"] = lr
        first = step * config.grad_accum * procs  # this step's micro-batches, all processes'
        everyone = [stream[first + k] for k in range(config.grad_accum * procs)]
        n_target = sum(examples[i].target_len for idx in everyone for i in idx)
        batches = [
            collate([examples[i] for i in idx], pad_id, config.padding)
            for idx in everyone[rank::procs]
        ]
        total: Any = 0.0
        for m, batch in enumerate(batches):
            moved = {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}
            last = m == len(batches) - 1
            ctx = accelerator.no_sync(model) if not last else nullcontext()
            with ctx, torch.autocast(device.type, torch.bfloat16, enabled=precision == "bf16"):
                loss_sum, _ = target_loss(forward, moved, kept)
                loss = loss_sum * procs / n_target  # DDP averages the processes' gradients
            accelerator.backward(loss)
            total = total + loss.detach()  # stays on the device: no sync per micro-batch
        result.tokens += sum(len(examples[i].input_ids) for idx in everyone for i in idx)
        result.target_tokens += n_target
        if config.max_grad_norm > 0:
            norm = accelerator.clip_grad_norm_(params, config.max_grad_norm)
        else:
            norm = torch.linalg.vector_norm(
                torch.stack([p.grad.detach().float().norm() for p in params if p.grad is not None])
            )
        if math.isfinite(float(norm)):  # one sync a step: a NaN/inf gradient must not land
            optimizer.step()
        else:  # skipped, as a loss scaler skips an overflow; counted and bounded below
            result.skipped_steps += 1
            if result.skipped_steps > max(10, (step + 1 - start) // 10):
                raise MethodError(
                    f"training diverged: {result.skipped_steps} of {step + 1 - start} steps had "
                    f"a non-finite gradient (precision {precision}); lower lr (now {config.lr}) "
                    "or use precision=fp32"
                )
        optimizer.zero_grad(set_to_none=True)
        pending.append(total)
        result.steps = step + 1
        if (step + 1) % 10 == 0 or step + 1 == config.max_steps:
            _read_losses(accelerator, pending, result.losses)  # one device sync per 10 steps
            say(
                progress, f"step {step + 1}/{config.max_steps}: target loss {result.losses[-1]:.4f}"
            )
        if ckpt is not None and (
            (step + 1) % config.checkpoint_every == 0 or step + 1 == config.max_steps
        ):
            _checkpoint(accelerator, ckpt, step + 1, fingerprint)
        if (
            evaluate is not None
            and evaluate_every > 0
            and ((step + 1) % evaluate_every == 0 or step + 1 == config.max_steps)
        ):
            best = _validate(accelerator.unwrap_model(model), evaluate, step + 1, best, result)
            say(
                progress,
                f"step {step + 1}: validation {result.validation[-1][1]:.4f} "
                f"(best {best[0]:.4f} at step {best[1]})",
            )
    _read_losses(accelerator, pending, result.losses)  # every process stops at the same step
    result.seconds = time.perf_counter() - t0
    accelerator.wait_for_everyone()
    model = accelerator.unwrap_model(model)
    if best is not None:
        result.best_step = best[1]
        if best[1] != result.steps:  # back to the weights of the best validation step
            with torch.no_grad():
                for name, p in model.named_parameters():
                    if name in best[2]:
                        p.copy_(best[2][name])
            say(progress, f"kept the weights of step {best[1]} (best validation score)")
    model.eval()
    accelerator.free_memory()
    return result


def _compiled(model: Any) -> Any:
    """`torch.compile(model, dynamic=True)`. Importing torch's compiler makes torch warn about
    its own deprecated `torch.jit.script_method` (torch/utils/mkldnn.py); that warning is
    torch's business, not the user's, so it is silenced here and nowhere else."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", "`torch.jit.script_method` is deprecated", DeprecationWarning
        )
        return torch.compile(model, dynamic=True)


def _validate(
    model: Any,
    evaluate: Callable[[Any], float],
    step: int,
    best: tuple[float, int, dict[str, Any]] | None,
    result: TrainResult,
) -> tuple[float, int, dict[str, Any]]:
    """Score the model at `step` (eval mode, no gradients) and keep a copy of its trainable
    weights when the score is the best so far (lower is better; ties keep the earlier)."""
    import torch

    model.eval()
    with torch.no_grad():
        score = float(evaluate(model))
    model.train()
    result.validation.append((step, score))
    if best is None or (math.isfinite(score) and not score >= best[0]):
        weights = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        return score, step, weights
    return best


def _read_losses(accelerator: Any, pending: list[Any], losses: list[float]) -> None:
    """Move the step losses still on the device into `losses`: the mean over the processes of
    their losses (each scaled by the process count) is the step's loss."""
    if not pending:
        return
    import torch

    values = torch.stack([torch.as_tensor(x, device=accelerator.device) for x in pending])
    if accelerator.num_processes > 1:
        values = accelerator.reduce(values, "mean")
    losses.extend(float(x) for x in values.tolist())
    pending.clear()


class _TiedWeightsNotice(logging.Filter):
    """Drops accelerate's "Removed shared tensor {'lm_head.weight'} while saving" notice.

    LASER's models tie lm_head to the input embeddings on purpose (`tie_word_embeddings`), so
    safetensors stores the shared tensor once and the tie is restored on load: the notice is
    true of every checkpoint and would print once per checkpoint, burying our progress lines.
    Any other warning of that logger still passes.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)  # accelerate prefixes "[RANK N] "
        return not ("Removed shared tensor" in message and "while saving" in message)


@contextmanager
def _without_tied_weights_notice() -> Iterator[None]:
    logger = logging.getLogger("accelerate.utils.other")
    notice = _TiedWeightsNotice()
    logger.addFilter(notice)
    try:
        yield
    finally:
        logger.removeFilter(notice)


def _checkpoint(accelerator: Any, folder: Path, step: int, fingerprint: str) -> None:
    """Save the training state as folder/step-N (temp name, then rename) and point latest.json
    at it; older checkpoints are removed once the new one is in place."""
    name = f"step-{step}"
    tmp = folder / f".{name}.tmp"
    if accelerator.is_main_process:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
    accelerator.wait_for_everyone()
    with _without_tied_weights_notice():
        accelerator.save_state(str(tmp))
    accelerator.wait_for_everyone()
    if not accelerator.is_main_process:
        return
    replace_folder(tmp, folder / name)
    write_atomic(
        folder / LATEST,
        json.dumps({"step": step, "dir": name, "fingerprint": fingerprint}) + "\n",
    )
    for old in folder.glob("step-*"):
        if old.name != name:
            shutil.rmtree(old, ignore_errors=True)
