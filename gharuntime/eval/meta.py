"""A method's metadata: who made the predictions, for which track, config and split, from which
inputs. It comes from a sidecar file beside the submission (`preds.meta.json` for
`preds.jsonl`, named by gharuntime.eval.submission_files) and from command-line options; a method declares its track, and eval refuses
inputs that the track forbids."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from gharuntime.contract import COLUMN_BY_NAME, CONFIGS, SPLITS, TRACKS, Role, input_columns
from gharuntime.problems import ProblemLog
from gharuntime.readfile import InputFileError, read_json

__all__ = [
    "META_FIELDS",
    "MethodMeta",
    "check_meta",
    "merge_meta",
    "read_sidecar",
]

META_FIELDS: Final = (
    "method",
    "method_version",
    "track",
    "inputs",
    "dataset",
    "dataset_revision",
    "config",
    "split",
    "seed",
)
_MUST_AGREE: Final = ("track", "config", "split", "dataset_revision")
"""Fields where a sidecar and an option that disagree mean the submission is for something else."""


@dataclass(frozen=True)
class MethodMeta:
    """What a submission says about itself. None means not declared."""

    method: str | None = None
    method_version: str | None = None
    track: str | None = None
    inputs: tuple[str, ...] | None = None
    dataset: str | None = None
    dataset_revision: str | None = None
    config: str | None = None
    split: str | None = None
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in META_FIELDS}
        out["inputs"] = list(self.inputs) if self.inputs is not None else None
        if self.extra:
            out["extra"] = dict(self.extra)
        return out


def read_sidecar(path: Path, log: ProblemLog) -> dict[str, Any]:
    """The sidecar's fields, type-checked; problems go to `log`."""
    where = str(path)
    try:
        data = read_json(path, 16 * 2**20)
    except InputFileError as exc:
        log.add("metadata", where, f"unreadable metadata file: {exc}")
        return {}
    if not isinstance(data, dict):
        log.add("metadata", where, "metadata must be a JSON object like {'method': 'lgbm', ...}")
        return {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in META_FIELDS:
            out.setdefault("extra", {})[key] = value
            continue
        if value is None:
            continue
        if key == "inputs":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                log.add("metadata", where, "'inputs' must be a list of column names")
                continue
            out[key] = tuple(value)
        elif key == "seed":
            if isinstance(value, bool) or not isinstance(value, int):
                log.add("metadata", where, f"'seed' must be an integer, not {value!r}")
                continue
            out[key] = value
        elif not isinstance(value, str):
            log.add("metadata", where, f"{key!r} must be a string, not {value!r}")
        else:
            out[key] = value
    return out


def merge_meta(
    sidecar: Mapping[str, Any], options: Mapping[str, Any], log: ProblemLog, where: str
) -> MethodMeta:
    """Options fill in or override the sidecar, except that track, config, split and
    dataset_revision must agree when both give them."""
    merged = dict(sidecar)
    for key, value in options.items():
        if value is None:
            continue
        old = merged.get(key)
        if key in _MUST_AGREE and old is not None and old != value:
            log.add(
                "metadata",
                where,
                f"the metadata says {key} {old!r} but the command line says {value!r}; "
                "predictions made for one cannot be scored as the other",
            )
        merged[key] = value
    return replace(MethodMeta(), **merged)


def check_meta(meta: MethodMeta, log: ProblemLog, where: str) -> None:
    """The declared track exists and the declared inputs are inputs that track allows."""
    if meta.track is None:
        log.add(
            "metadata",
            where,
            f"no track declared; say which one the method competes in with --track "
            f"({', '.join(TRACKS)}) or 'track' in the metadata file",
        )
        return
    if meta.track not in TRACKS:
        log.add("metadata", where, f"unknown track {meta.track!r}; one of {', '.join(TRACKS)}")
        return
    if meta.config is not None and meta.config not in CONFIGS:
        log.add("metadata", where, f"unknown config {meta.config!r}; one of {', '.join(CONFIGS)}")
    if meta.split is not None and meta.split not in SPLITS:
        log.add("metadata", where, f"unknown split {meta.split!r}; one of {', '.join(SPLITS)}")
    allowed = set(input_columns(meta.track))
    for name in meta.inputs or ():
        column = COLUMN_BY_NAME.get(name)
        if column is None:
            log.add("forbidden_input", where, f"input {name!r} is not a column of the job table")
        elif column.role is not Role.INPUT:
            log.add(
                "forbidden_input",
                where,
                f"input {name!r} is a {column.role.value} column; no method may read it",
            )
        elif name not in allowed:
            uses = [t for t in TRACKS if name in input_columns(t)]
            log.add(
                "forbidden_input",
                where,
                f"input {name!r} is not allowed on track {meta.track!r}; "
                f"it is allowed on {', '.join(uses)}",
            )
