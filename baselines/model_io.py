"""A fitted model as a folder: `model.json` (method, version, track, inputs, config, seed, the
dataset it was trained on, the learned state), the library's own model files, and
`importances.json` (per target, features by total gain).

Written into a temporary sibling folder and renamed into place, so a crash never leaves half a
model; an existing folder is replaced only if it is itself a model folder.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from gharuntime.baselines.method import Method, MethodError
from gharuntime.baselines.methods import METHODS
from gharuntime.paths import make_temp_dir, replace_folder
from gharuntime.readfile import InputFileError, read_json
from gharuntime.version import __version__

__all__ = ["IMPORTANCES_FILE", "MODEL_FILE", "MODEL_FORMAT", "load_model", "save_model"]

MODEL_FORMAT = "gharuntime-model/1"
MODEL_FILE = "model.json"
MAX_MODEL_JSON_BYTES = (
    256 * 2**20
)  # metadata and small tables; a fitted model's files sit beside it
IMPORTANCES_FILE = "importances.json"


def save_model(method: Method, folder: Path, provenance: dict[str, Any]) -> dict[str, Any]:
    """Write the fitted `method` to `folder`; returns the metadata written to model.json."""
    folder = folder.resolve()
    folder.parent.mkdir(parents=True, exist_ok=True)
    if folder.exists() and not (folder / MODEL_FILE).is_file() and any(folder.iterdir()):
        raise MethodError(
            f"{folder} exists and is not a model folder; refusing to replace it (choose another)"
        )
    tmp = make_temp_dir(folder)
    try:
        state = method.save_state(tmp)
        meta: dict[str, Any] = {
            "format": MODEL_FORMAT,
            "method": method.name,
            "method_version": method.version,
            "gharuntime_version": __version__,
            "track": method.track,
            "targets": list(method.targets),
            "inputs": list(method.inputs),
            "seed": method.seed,
            "config": method.config(),
            **provenance,
            "state": state,
        }
        (tmp / MODEL_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        importances = {
            target: [{"feature": f, "gain": g} for f, g in pairs]
            for target, pairs in method.importances().items()
        }
        (tmp / IMPORTANCES_FILE).write_text(
            json.dumps(importances, indent=2) + "\n", encoding="utf-8"
        )
        replace_folder(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return meta


def load_model(folder: Path) -> tuple[Method, dict[str, Any]]:
    """The fitted method saved in `folder`, and its metadata."""
    path = folder / MODEL_FILE
    if not os.path.lexists(path):
        raise MethodError(
            f"{folder}: not a model folder (no {MODEL_FILE}); "
            "train one with `gharuntime baseline NAME --model-out DIR`"
        )
    try:
        meta = read_json(path, MAX_MODEL_JSON_BYTES)
    except InputFileError as exc:
        raise MethodError(f"unreadable model metadata: {exc}") from None
    if not isinstance(meta, dict):
        raise MethodError(f"{path}: not a {MODEL_FORMAT} model (not a JSON object)")
    if meta.get("format") != MODEL_FORMAT:
        raise MethodError(
            f"{path}: not a {MODEL_FORMAT} model (format {ascii(meta.get('format'))[:60]})"
        )
    method = meta.get("method")
    if not isinstance(method, str) or not isinstance(meta.get("track"), str):
        raise MethodError(f"{path}: `method` and `track` must be strings")
    cls = METHODS.get(method)
    if cls is None:
        raise MethodError(f"{path}: unknown method {meta.get('method')!r}")
    if meta.get("method_version") != cls.version:
        raise MethodError(
            f"{path}: saved by {meta['method']} {meta.get('method_version')}, "
            f"this gharuntime has {cls.version}; retrain the model"
        )
    try:
        return cls.load_state(folder, meta), meta
    except MethodError:
        raise
    except Exception as exc:
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise MethodError(
            f"{folder}: damaged model folder ({type(exc).__name__}: {first}); retrain the model"
        ) from None
