"""Every LASER parameter in one table (`SPECS`, the method's `param_specs`): its default, kind,
bounds and help, checked when the method is made: a bad value (`lr=abc`, `lr=Infinity`,
`samples=0`, `temperature=NaN`) is refused before any data is read or any step is trained, with
the parameter's name and what it takes. `--param` values arrive as JSON (`lr=1e-3`) or as text
(`model=tiny`), so the types are checked, not assumed. The codec's parameters (None: the
codec's own default) are bounded here too; how they combine (exp_min ≤ exp_max, digits enough
for the range) the codec checks when it is made."""

from __future__ import annotations

from typing import Any, Final

from gharuntime.baselines.method import MethodError
from gharuntime.baselines.params import ParamSpec, ParamTable

__all__ = ["CODEC_PARAMS", "SPECS", "check_params"]


_BIG: Final = 10**9
CODEC_PARAMS: Final = (
    "mantissa_digits",
    "exp_min",
    "exp_max",
    "exp_width",
    "int_digits",
    "frac_digits",
)
"""The codec's parameters (gharuntime.baselines.laser.encoding), handed to it when given."""

SPECS: Final = ParamTable(
    ParamSpec(
        "model",
        "text",
        "tiny",
        help="tiny | tiny-256 | small | smollm2-135m | a folder | a Hub id",
    ),
    ParamSpec("max_steps", "int", 300, low=1, high=_BIG, help="training steps"),
    ParamSpec(
        "batch_size", "int", 8, low=1, high=65_536, help="jobs per micro-batch (of each process)"
    ),
    ParamSpec(
        "grad_accum",
        "int",
        1,
        low=1,
        high=65_536,
        help="micro-batches per optimizer step (and process)",
    ),
    ParamSpec(
        "lr",
        "float",
        None,
        low=0,
        high=1,
        low_open=True,
        optional=True,
        help="learning rate; null: 1e-3 from scratch, 2e-4 with LoRA, 5e-5 full fine-tuning",
    ),
    ParamSpec("warmup_steps", "int", 20, low=0, high=_BIG, help="linear warm-up steps"),
    ParamSpec(
        "lr_schedule",
        "choice",
        "cosine",
        choices=("cosine", "constant"),
        help="cosine decays to 10% of lr at max_steps",
    ),
    ParamSpec("weight_decay", "float", 0.0, low=0, high=10, help="AdamW weight decay"),
    ParamSpec("budget", "int", 512, low=1, high=1_000_000, help="prompt tokens at most"),
    ParamSpec(
        "encoding",
        "choice",
        "sci",
        choices=("sci", "decimal"),
        help="how targets are written: scientific notation or plain decimals",
    ),
    ParamSpec(
        "attention",
        "choice",
        "full",
        choices=("full", "sliding"),
        help="sliding: every layer attends to the last sliding_window tokens (architectures "
        "with a sliding window)",
    ),
    ParamSpec(
        "sliding_window", "int", 128, low=1, high=1_000_000, help="tokens of sliding attention"
    ),
    ParamSpec("lora_r", "int", 0, low=0, high=4096, help="LoRA rank; 0: train every weight"),
    ParamSpec(
        "lora_alpha",
        "float",
        None,
        low=0,
        high=1e6,
        low_open=True,
        optional=True,
        help="LoRA alpha; null: 2 × lora_r",
    ),
    ParamSpec(
        "vocab_size", "int", 2000, low=300, high=1_000_000, help="the tiny models' tokenizer"
    ),
    ParamSpec(
        "samples",
        "int",
        16,
        low=1,
        high=10_000,
        help="draws per job, the median predicted; 1: greedy (fast, biased low)",
    ),
    ParamSpec("temperature", "float", 1.0, low=0, high=100, low_open=True, help="of the draws"),
    ParamSpec("decode_batch_size", "int", 16, low=1, high=65_536, help="jobs decoded at once"),
    ParamSpec(
        "precision",
        "choice",
        "auto",
        choices=("auto", "fp32", "bf16"),
        help="auto: bf16 where this device measured faster (train.PRECISION_BY_DEVICE), else fp32",
    ),
    # torch.compile the training forward: with right-padded batches no faster than eager
    # bf16 on a 2-core CPU, and 10-50 s of compiling (benchmarks/laser_cpu_train.py)
    ParamSpec("compile", "bool", False, help="torch.compile the training forward"),
    ParamSpec("threads", "int", 0, low=0, high=4096, help="torch CPU threads; 0: torch's own"),
    ParamSpec(
        "train_fraction",
        "float",
        1.0,
        low=0,
        high=1,
        low_open=True,
        help="share of the training rows, a seeded sample",
    ),
    ParamSpec(
        "checkpoint_dir",
        "text",
        None,
        optional=True,
        help="folder of training checkpoints; a rerun continues from the last",
    ),
    ParamSpec("checkpoint_every", "int", 50, low=1, high=_BIG, help="steps between checkpoints"),
    ParamSpec(
        "stop_after",
        "int",
        None,
        low=1,
        high=_BIG,
        optional=True,
        help="stop after this many steps, as a kill would (tests)",
    ),
    ParamSpec(
        "validate_every",
        "int",
        0,
        low=0,
        high=_BIG,
        help="every K steps, greedy RMSLE on a validation sample; the best step's weights "
        "are kept (0: off)",
    ),
    ParamSpec("validation_rows", "int", 256, low=1, high=1_000_000, help="that validation sample"),
    ParamSpec(
        "calibration",
        "choice",
        "conformal",
        choices=("conformal", "none"),
        help="after training, the draws' P10/P90 (and a P99) get split-conformal offsets "
        "fitted on validation jobs; none: the raw P10/P90 of the draws",
    ),
    ParamSpec(
        "calibration_rows",
        "int",
        2048,
        low=1,
        high=10_000_000,
        help="validation jobs decoded for the calibration (spread over the recency strata)",
    ),
    ParamSpec(
        "calibrate_by",
        "choice",
        "recency",
        choices=("recency", "none"),
        help="offsets per recency stratum of the job group (recency) or one pooled offset (none)",
    ),
    ParamSpec(
        "mantissa_digits",
        "int",
        None,
        low=1,
        high=17,
        optional=True,
        help="sci: significant digits (null: 3)",
    ),
    ParamSpec(
        "exp_min",
        "int",
        None,
        low=-999,
        high=999,
        optional=True,
        help="sci: least exponent (null: -2)",
    ),
    ParamSpec(
        "exp_max",
        "int",
        None,
        low=-999,
        high=999,
        optional=True,
        help="sci: largest exponent (null: 9)",
    ),
    ParamSpec(
        "exp_width",
        "int",
        None,
        low=1,
        high=3,
        optional=True,
        help="sci: exponent digits (null: 2)",
    ),
    ParamSpec(
        "int_digits",
        "int",
        None,
        low=1,
        high=15,
        optional=True,
        help="decimal: integer digits (null: 7)",
    ),
    ParamSpec(
        "frac_digits",
        "int",
        None,
        low=0,
        high=6,
        optional=True,
        help="decimal: fraction digits (null: 1)",
    ),
)
"""Every LASER parameter, in the order the method's config records them."""


def check_params(params: dict[str, Any]) -> None:
    """Raise MethodError naming every parameter whose value its spec refuses."""
    problems = SPECS.problems(params)
    if problems:
        raise MethodError(f"laser: bad --param: {problems}")
