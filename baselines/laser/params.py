"""Every LASER parameter typed and bounded in one table, checked when the method is made: a
bad value (`lr=abc`, `lr=Infinity`, `samples=0`, `temperature=NaN`) is refused before any data
is read or any step is trained, with the parameter's name and what it takes. `--param` values
arrive as JSON (`lr=1e-3`) or as text (`model=tiny`), so the types are checked, not assumed."""

from __future__ import annotations

from typing import Any, Final

from gharuntime.baselines.params import Spec, check_specs

__all__ = ["SPECS", "check_params"]


_BIG: Final = 10**9
SPECS: Final[dict[str, Spec]] = {
    "model": Spec("text"),
    "max_steps": Spec("int", 1, _BIG),
    "batch_size": Spec("int", 1, 65_536),
    "grad_accum": Spec("int", 1, 65_536),
    "lr": Spec("float", 0, 1, low_open=True, optional=True),
    "warmup_steps": Spec("int", 0, _BIG),
    "lr_schedule": Spec("choice", choices=("cosine", "constant")),
    "weight_decay": Spec("float", 0, 10),
    "budget": Spec("int", 1, 1_000_000),
    "encoding": Spec("choice", choices=("sci", "decimal")),
    "attention": Spec("choice", choices=("full", "sliding")),
    "sliding_window": Spec("int", 1, 1_000_000),
    "lora_r": Spec("int", 0, 4096),
    "lora_alpha": Spec("float", 0, 1e6, low_open=True, optional=True),
    "vocab_size": Spec("int", 300, 1_000_000),
    "samples": Spec("int", 1, 10_000),
    "temperature": Spec("float", 0, 100, low_open=True),
    "decode_batch_size": Spec("int", 1, 65_536),
    "precision": Spec("choice", choices=("auto", "fp32", "bf16")),
    "compile": Spec("bool"),
    "threads": Spec("int", 0, 4096),
    "train_fraction": Spec("float", 0, 1, low_open=True),
    "checkpoint_dir": Spec("text", optional=True),
    "checkpoint_every": Spec("int", 1, _BIG),
    "stop_after": Spec("int", 1, _BIG, optional=True),
    "validate_every": Spec("int", 0, _BIG),
    "validation_rows": Spec("int", 1, 1_000_000),
    "calibration": Spec("choice", choices=("conformal", "none")),
    "calibration_rows": Spec("int", 1, 10_000_000),
    "calibrate_by": Spec("choice", choices=("recency", "none")),
}
"""Every parameter but the codec's (checked by the codec itself when it is made)."""


def check_params(params: dict[str, Any]) -> None:
    """Raise MethodError naming every parameter whose value its Spec refuses."""
    check_specs("laser", SPECS, params)
