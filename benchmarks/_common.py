"""What the benchmark scripts share, so none reaches into `tests/` or into another script:
where the real dataset is, how a figure names a file, the parts of a scored metric a figure
keeps, passes over a train split as optimizer steps, and another script's run.

A script imports it as `_common` (Python puts the script's own folder first on its path).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

from gharuntime.dataset import load
from gharuntime.eval.provenance import result_path

__all__ = [
    "HERE",
    "REAL_DATASET_ENV",
    "MissingDataset",
    "interval",
    "positive",
    "real_dataset",
    "refuse",
    "run_script",
    "shown",
    "steps_for_epochs",
]

HERE: Final = Path(__file__).resolve().parent
REAL_DATASET_ENV: Final = "GHARUNTIME_REAL_DATASET"
"""Names the real dataset folder (gharuntime-real-apache, built by benchmarks/real_apache.py)
for the scripts that measure on real jobs, when no --dataset is given."""


class MissingDataset(Exception):
    """Neither --dataset nor $GHARUNTIME_REAL_DATASET names a dataset folder; says which."""


def real_dataset(given: Path | None) -> Path:
    """The real dataset folder: `given` (--dataset), else $GHARUNTIME_REAL_DATASET.
    MissingDataset, with the reason and the fix, when neither names a dataset folder (one
    holding the manifest.json `gharuntime build` writes)."""
    how = (
        f"pass --dataset DIR or set {REAL_DATASET_ENV}=DIR (a dataset folder: "
        "benchmarks/real_apache.py builds gharuntime-real-apache)"
    )
    if given is not None:
        folder, where = given, f"--dataset {given}"
    elif os.environ.get(REAL_DATASET_ENV):
        folder = Path(os.environ[REAL_DATASET_ENV])
        where = f"{REAL_DATASET_ENV}={folder}"
    else:
        raise MissingDataset(f"no real dataset: {how}")
    if not (folder / "manifest.json").is_file():
        raise MissingDataset(f"no dataset folder at {folder} ({where}: no manifest.json); {how}")
    return folder


def refuse(reason: str) -> int:
    """Say why a script stops (stderr) and give its exit status, 2."""
    print(f"error: {reason}", file=sys.stderr)
    return 2


def shown(path: Path | str) -> str:
    """How a figure names a file or folder: relative to the current directory, as a result
    does (gharuntime.eval.provenance.result_path), never a folder of this machine."""
    return result_path(path)


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def interval(metric: dict[str, Any]) -> dict[str, Any]:
    """A scored metric's value and 95% interval, as a figure keeps them."""
    return {k: metric.get(k) for k in ("value", "ci_low", "ci_high")}


def steps_for_epochs(dataset: Path, config: str, epochs: float, batch_size: int) -> int:
    """Steps of `batch_size` jobs that pass `epochs` times over the config's train split."""
    rows = load(dataset, config, "train", columns=["id"]).height
    return max(1, math.ceil(epochs * rows / batch_size))


def run_script(name: str, argv: list[str]) -> Any:
    """Run benchmarks/NAME (a script of its own process, in the current directory, its log on
    stderr) and return the one JSON object it prints last; SystemExit when it fails."""
    done = subprocess.run(
        [sys.executable, str(HERE / name), *argv], stdout=subprocess.PIPE, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmarks/{name} exited {done.returncode}")
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else None
