"""Step records: what each step of a long run was run with, so a rerun over the same folder keeps
the steps whose inputs are unchanged and runs the rest.

A step's inputs are everything its result depends on: the method, its parameters, the config,
track and resamples, the dataset's revision, the code (a hash of every source file of the
installed package) and the versions of the numeric libraries. They are hashed into one
fingerprint, written beside the step's outputs as `NAME.step.json` after its result is filed
(written last, atomically: a step killed before it has no record and runs again). A step is kept
only when its record's fingerprint equals the new one and the filed result is still the file the
record names, byte for byte; anything else runs again and replaces it, so results from
different inputs are never mixed.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from gharuntime.eval.provenance import library_versions
from gharuntime.paths import write_atomic

__all__ = [
    "RECORD_SUFFIX",
    "StepRecord",
    "changed_inputs",
    "code_fingerprint",
    "fingerprint",
    "fit_inputs",
    "kept_record",
    "step_inputs",
    "write_record",
]

RECORD_SUFFIX: Final = ".step.json"
RECORD_VERSION: Final = 1

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
    """A finished step: its inputs, the result it filed (and that file's hash), its summary."""

    inputs: dict[str, Any]
    result: Path
    result_sha256: str
    summary: str


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_record(record_path: Path, inputs: dict[str, Any], result: Path, summary: str) -> None:
    """Record a finished step (call it after its result is filed: the record comes last)."""
    doc = {
        "fingerprint": fingerprint(inputs),
        "inputs": inputs,
        "result": str(result.resolve()),
        "result_sha256": _sha256(result),
        "summary": summary,
    }
    write_atomic(record_path, json.dumps(doc, indent=2, allow_nan=False) + "\n", mode=0o644)


def kept_record(record_path: Path, inputs: dict[str, Any]) -> StepRecord | None:
    """The step's record when the step can be kept: same fingerprint, and its filed result still
    there, unchanged. None (run it again) for anything else: no record, an unreadable or foreign
    one, other inputs, a result removed or edited since."""
    try:
        if not record_path.is_file():
            return None
        doc = json.loads(record_path.read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("fingerprint") != fingerprint(inputs):
            return None
        result = Path(str(doc["result"]))
        if not result.is_file() or _sha256(result) != doc.get("result_sha256"):
            return None
        return StepRecord(inputs, result, str(doc["result_sha256"]), str(doc.get("summary", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
