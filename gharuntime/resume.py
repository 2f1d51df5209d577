"""Step records: what each step of a long run was run with, so a rerun over the same folder keeps
the steps whose inputs are unchanged and runs the rest.

A step's inputs are everything its result depends on: the method, its parameters, the config,
track and resamples, the dataset's revision, the code (a hash of every source file of the
installed package) and the versions of the numeric libraries. They are hashed into one
fingerprint, written beside the step's outputs as `NAME.step.json` after its outputs are
written (last, atomically: a step killed before it has no record and runs again). The record
names every file the step wrote relative to the run's folder, with its sha256: a copied or moved
folder checks its own files, never the ones it was copied from. A step is kept only when its
record's fingerprint equals the new one and every output it names is still there, byte for
byte; anything else runs again (the caller says why) and replaces them, so results from
different inputs are never mixed. The record holds no summary: what a kept step says of itself
is read from its verified outputs.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from gharuntime.eval.provenance import library_versions
from gharuntime.paths import contained, write_atomic
from gharuntime.readfile import InputFileError, read_json
from gharuntime.revision import sha256_file

__all__ = [
    "RECORD_SUFFIX",
    "Rerun",
    "StepRecord",
    "changed_inputs",
    "check_step",
    "code_fingerprint",
    "files_under",
    "fingerprint",
    "fit_inputs",
    "step_inputs",
    "write_record",
]

RECORD_SUFFIX: Final = ".step.json"
RECORD_VERSION: Final = 1
"""The version of the inputs' own layout (part of every fingerprint, the journals' too)."""
RECORD_FORMAT: Final = "gharuntime-step/2"
"""The record file's layout: 2 names every output relative to the run's folder, with its hash."""
MAX_RECORD_BYTES: Final = 16 * 2**20

# The folders setup.py maps under gharuntime (setup.py's MAPPED): each is part of the code.
_MAPPED: Final = ("crawler", "baselines", "leaderboard", "data_cards")
# Every module, and the data files that change what a step writes (the price table, the card,
# the result schema, the page template); not what a checkout keeps beside them (the committed
# results and the pages rendered from them), so a checkout and an install agree.
_DATA_FILES: Final = frozenset(
    {
        "billing/prices.yml",
        "data_cards/template.md",
        "leaderboard/result.schema.json",
        "leaderboard/template.html",
    }
)


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """sha256 over the installed package's files (path inside the package and bytes), whether
    the package runs from a wheel, a strict editable install or a source checkout."""
    gharuntime = importlib.import_module("gharuntime")
    roots: dict[str, list[str]] = {"": list(gharuntime.__path__)}
    for name in _MAPPED:
        roots[name] = list(importlib.import_module(f"gharuntime.{name}").__path__)
    files: dict[str, Path] = {}
    for prefix, paths in roots.items():
        for root in map(Path, paths):
            for path in root.rglob("*"):
                relative = path.relative_to(root).as_posix()
                # the installed tree holds the mapped folders itself; a checkout beside it
                key = f"{prefix}/{relative}" if prefix else relative
                if "__pycache__" in path.parts or not path.is_file():
                    continue
                if path.suffix == ".py" or key in _DATA_FILES:
                    files.setdefault(key, path)
    digest = hashlib.sha256()
    for key in sorted(files):
        digest.update(key.encode("utf-8") + b"\0")
        digest.update(hashlib.sha256(files[key].read_bytes()).digest())
    return digest.hexdigest()


def _inputs(**fields: Any) -> dict[str, Any]:
    """`fields` with what every recorded input set carries: the record version, the code's
    hash and the library versions (fingerprints sort keys, so their order is free)."""
    return {
        "record_version": RECORD_VERSION,
        **fields,
        "code_sha256": code_fingerprint(),
        "libraries": library_versions(),
    }


def step_inputs(
    *,
    method: str,
    params: dict[str, Any],
    config: str,
    track: str,
    resamples: int,
    dataset_revision: str,
) -> dict[str, Any]:
    """Everything a step's result depends on, as JSON."""
    return _inputs(
        method=method,
        params=params,
        config=config,
        track=track,
        resamples=resamples,
        dataset_revision=dataset_revision,
    )


def fit_inputs(
    *,
    method: str,
    method_version: str,
    params: dict[str, Any],
    seed: int,
    config: str,
    track: str,
    dataset_revision: str,
) -> dict[str, Any]:
    """Everything one fit depends on, as JSON: what keys a resumable fit's journal (the tuned
    trees' Optuna studies, gharuntime.baselines.journal), with the same code and library parts
    as a step's inputs."""
    return _inputs(
        method=method,
        method_version=method_version,
        params=params,
        seed=seed,
        config=config,
        track=track,
        dataset_revision=dataset_revision,
    )


def changed_inputs(before: Any, now: dict[str, Any]) -> list[str]:
    """The top-level keys whose values differ (all of them when `before` is not a dict)."""
    if not isinstance(before, dict):
        return sorted(now)
    return sorted(k for k in {*before, *now} if before.get(k) != now.get(k))


def fingerprint(inputs: dict[str, Any]) -> str:
    """sha256 of the inputs' canonical JSON: equal exactly when the inputs are."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class StepRecord:
    """A finished step that can be kept: its inputs and the files it wrote, each verified."""

    inputs: dict[str, Any]
    outputs: tuple[Path, ...]
    """Every file the step wrote (under the run's folder), the first its result."""

    @property
    def result(self) -> Path:
        return self.outputs[0]


@dataclass(frozen=True)
class Rerun:
    """A step recorded earlier that cannot be kept, and why (to say when it runs again)."""

    reason: str


def files_under(folder: Path) -> list[Path]:
    """Every regular file under `folder`, sorted: the outputs of a step that writes a folder."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _relative(path: Path, root: Path) -> str:
    """`path` as the record names it: relative to the run's folder, so a copied or moved folder
    checks its own files (ValueError for a path outside it: a caller's bug)."""
    return path.resolve().relative_to(root.resolve()).as_posix()


def write_record(
    record_path: Path, inputs: dict[str, Any], root: Path, outputs: Sequence[Path]
) -> None:
    """Record a finished step (call it after its outputs are written: the record comes last).
    `outputs` are the files it wrote inside `root` (the run's folder), its result first; each
    is named relative to `root` with its sha256."""
    if not outputs:
        raise ValueError("a step record needs the step's outputs")
    doc = {
        "format": RECORD_FORMAT,
        "fingerprint": fingerprint(inputs),
        "inputs": inputs,
        "outputs": {_relative(p, root): sha256_file(p) for p in outputs},
    }
    write_atomic(record_path, json.dumps(doc, indent=2, allow_nan=False) + "\n", mode=0o644)


def _check(doc: Any, inputs: dict[str, Any], root: Path) -> StepRecord | Rerun:
    if not isinstance(doc, dict) or doc.get("format") != RECORD_FORMAT:
        return Rerun("its record is not one this gharuntime writes")
    if doc.get("fingerprint") != fingerprint(inputs):
        changed = changed_inputs(doc.get("inputs"), inputs)
        return Rerun(f"its inputs changed ({', '.join(changed) or 'the record was edited'})")
    listed = doc.get("outputs")
    if not isinstance(listed, dict) or not listed:
        return Rerun("its record lists no outputs")
    outputs: list[Path] = []
    for rel, digest in listed.items():
        shown = ascii(str(rel)[:200])
        path = contained(root, str(rel))
        if path is None:
            return Rerun(f"its record names {shown}, outside {root}")
        if not os.path.lexists(path):
            return Rerun(f"{shown} is missing")
        try:
            got = sha256_file(path)
        except OSError:
            return Rerun(f"{shown} cannot be read")
        if got != digest:
            return Rerun(f"{shown} changed since the step wrote it")
        outputs.append(path)
    return StepRecord(inputs, tuple(outputs))


def check_step(record_path: Path, inputs: dict[str, Any], root: Path) -> StepRecord | Rerun | None:
    """The step's record when the step can be kept: same fingerprint, and every output it
    wrote still inside `root` (the run's folder, wherever it was copied), byte for byte. A Rerun
    saying why for a record that cannot be kept (unreadable, other inputs, an output removed,
    edited or outside `root`); None when the step was never recorded."""
    if not os.path.lexists(record_path):
        return None
    try:
        doc = read_json(record_path, MAX_RECORD_BYTES)
    except InputFileError:
        return Rerun("its record cannot be read")
    return _check(doc, inputs, root)
