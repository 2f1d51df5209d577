"""One call from files to a result document: what `gharuntime eval` does, for code that wants
the same (the baselines, the leaderboard)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from gharuntime.contract import CONFIGS, SPLITS
from gharuntime.dataset import LocalDataset
from gharuntime.eval.evaluate import (
    InvalidSubmission,
    Predictions,
    gold_methods,
    prepare_submission,
    resolve_meta,
    score,
)
from gharuntime.eval.meta import MethodMeta, check_meta
from gharuntime.eval.provenance import add_provenance, check_not_empty
from gharuntime.eval.report import result_json
from gharuntime.eval.submission_files import SubmissionFiles
from gharuntime.eval.truth import load_truth, resolve_dataset
from gharuntime.problems import ProblemLog
from gharuntime.progress import Progress, say

__all__ = ["DEFAULT_CONFIG", "DEFAULT_SPLIT", "evaluate_file", "evaluate_gold", "input_files"]

DEFAULT_CONFIG: Final = "temporal"
DEFAULT_SPLIT: Final = "test"


def _dataset(dataset: LocalDataset | Path | str) -> LocalDataset:
    return dataset if isinstance(dataset, LocalDataset) else resolve_dataset(str(dataset))


def input_files(
    submission: Path | str | None,
    *,
    vs: Path | str | None = None,
    meta_path: Path | None = None,
    quantiles: Path | str | None = None,
    dataset: Path | str | None = None,
) -> list[Path]:
    """Every file `evaluate_file` with these arguments may read, named by the rules its readers
    use (the metadata and quantile sidecars beside each submission, the dataset's manifest):
    what an output must never be (`gharuntime.paths.output_file_problem`)."""
    out: list[Path] = []
    for path, sidecar in ((submission, quantiles), (vs, None)):
        if path is None:
            continue
        files = SubmissionFiles(Path(path))
        out += files.readable()
        if sidecar is not None:
            out.append(Path(sidecar))
    if meta_path is not None:
        out.append(meta_path)
    if dataset is not None and Path(dataset).is_dir():
        out.append(Path(dataset) / "manifest.json")
    return out


def evaluate_file(
    submission: Path | str,
    dataset: LocalDataset | Path | str,
    *,
    options: Mapping[str, Any] | None = None,
    vs: Path | str | None = None,
    meta_path: Path | None = None,
    allow_partial: bool = False,
    seed: int = 0,
    resamples: int = 1000,
    progress: Progress | None = None,
    command: Sequence[str] | None = None,
    quantiles: Path | str | None = None,
) -> dict[str, Any]:
    """Check and score `submission` (and `vs`, on the same resamples) against `dataset`.

    A quantile sidecar (`quantiles`, else the one beside it that
    gharuntime.eval.submission_files names; for `vs` always that one) is checked and scored
    too: the result's `intervals`. Metadata read under an old sidecar name is reported in the
    result's `warnings` (and through `progress`).

    `options` are metadata fields (method, track, config, split, inputs, ...) that fill in or
    override the sidecar; `command` (an argv list) is recorded in the result's provenance.
    Raises InvalidSubmission listing every problem of both files, or
    gharuntime.dataset.DatasetError when the dataset cannot be read or the split is empty.
    """
    paths = [Path(submission)] + ([Path(vs)] if vs is not None else [])
    logs = [ProblemLog() for _ in paths]
    notices: list[str] = []
    meta = resolve_meta(paths[0], dict(options or {}), logs[0], meta_path, notices)
    config = meta.config or DEFAULT_CONFIG
    split = meta.split or DEFAULT_SPLIT
    if config not in CONFIGS or split not in SPLITS:
        raise InvalidSubmission(logs[0])  # check_meta said which; no split to read
    truth = load_truth(_dataset(dataset), config, split)
    check_not_empty(truth.rows, config, split)
    metas = [meta]
    if vs is not None:
        agree = {"track": meta.track, "config": config, "split": split}
        metas.append(resolve_meta(paths[1], agree, logs[1], notices=notices))
    for notice in notices:
        say(progress, notice)
    methods: list[Predictions] = []
    sidecars = [Path(quantiles) if quantiles is not None else None, None]
    for path, m, log, sidecar in zip(paths, metas, logs, sidecars[: len(paths)], strict=True):
        with contextlib.suppress(InvalidSubmission):  # its problems are in `log`
            methods.append(
                prepare_submission(
                    path,
                    m,
                    truth,
                    log,
                    allow_partial=allow_partial,
                    progress=progress,
                    quantiles=sidecar,
                )
            )
    if any(logs):
        combined = ProblemLog()
        for log in logs:
            combined.extend(log)
        raise InvalidSubmission(combined)
    track = meta.track
    assert track is not None  # resolve_meta reported a missing track
    result = add_provenance(
        result_json(
            score(truth, track, methods, seed=seed, resamples=resamples, progress=progress)
        ),
        command,
    )
    if notices:
        result["warnings"] = [*result.get("warnings", []), *notices]
    return result


def evaluate_gold(
    dataset: LocalDataset | Path | str,
    *,
    track: str = "multi",
    config: str = DEFAULT_CONFIG,
    split: str = DEFAULT_SPLIT,
    seed: int = 0,
    resamples: int = 1000,
    progress: Progress | None = None,
    command: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The self-check: the ground truth (scores must be perfect) compared with the constant
    training median."""
    truth = load_truth(_dataset(dataset), config, split)
    check_not_empty(truth.rows, config, split)
    check = ProblemLog()
    check_meta(MethodMeta(track=track), check, "--track")
    if check:
        raise InvalidSubmission(check)
    return add_provenance(
        result_json(
            score(
                truth,
                track,
                gold_methods(truth, track),
                seed=seed,
                resamples=resamples,
                progress=progress,
            )
        ),
        command,
    )
