"""Evaluation end to end: check a submission (metadata, track, every line), align it with the
truth, and score it, with the same repository resamples for every method."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import repeat
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from gharuntime.contract import PRIMARY_TARGET, TRACKS
from gharuntime.errors import GharuntimeError
from gharuntime.eval.bootstrap import Bootstrap, Cell, CellResult, MeanCell, run_cells
from gharuntime.eval.meta import MethodMeta, check_meta, merge_meta, read_sidecar
from gharuntime.eval.metrics import GroupSums, TargetTerms
from gharuntime.eval.provenance import result_path
from gharuntime.eval.quantiles import (
    IntervalTerms,
    ParsedQuantiles,
    interval_terms,
    read_quantiles,
)
from gharuntime.eval.submission import read_submission
from gharuntime.eval.submission_files import SubmissionFiles
from gharuntime.eval.truth import Truth
from gharuntime.problems import ProblemLog
from gharuntime.progress import Progress
from gharuntime.readfile import InputFileError
from gharuntime.recency import BUCKETS as RECENCY_BUCKETS
from gharuntime.targets import TargetsHeld

__all__ = [
    "BREAKDOWNS",
    "InvalidSubmission",
    "Predictions",
    "Scores",
    "TargetScores",
    "gold_methods",
    "groups",
    "prepare_submission",
    "resolve_meta",
    "score",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

BREAKDOWNS: Final = ("runner_os", "duration_decile", "repo_seen_in_training", "train_recency")
"""The breakdowns of every score; `train_recency`: the days from the latest train-split row of
the row's job group to the row (gharuntime.recency.BUCKETS), where a regime change shows."""
_OS_ORDER: Final = ("Linux", "Windows", "macOS")


class InvalidSubmission(GharuntimeError):
    """A submission that cannot be scored; `problems` says every reason."""

    def __init__(self, problems: ProblemLog) -> None:
        super().__init__(f"{problems.total} problem(s) in the submission")
        self.problems = problems


@dataclass(frozen=True)
class Predictions:
    """One set of predictions, aligned with the truth's rows, and where it came from."""

    name: str
    meta: MethodMeta
    predictions: dict[str, FloatArray]  # target -> per row; NaN where missing
    present: BoolArray
    source: dict[str, Any] = field(default_factory=dict)
    quantiles: ParsedQuantiles | None = None  # its quantile sidecar, when it has one


def resolve_meta(
    submission: Path,
    options: Mapping[str, Any],
    log: ProblemLog,
    meta_path: Path | None = None,
    notices: list[str] | None = None,
) -> MethodMeta:
    """The submission's metadata: its sidecar (or `meta_path`) overlaid with `options`; a
    sidecar found under an old name adds its deprecation notice to `notices`."""
    where = str(submission)
    sidecar_path = meta_path or SubmissionFiles(submission).find_meta(notices)
    sidecar = read_sidecar(sidecar_path, log) if sidecar_path else {}
    meta = merge_meta(sidecar, options, log, where)
    check_meta(meta, log, where)
    return meta


def prepare_submission(
    submission: Path,
    meta: MethodMeta,
    truth: Truth,
    log: ProblemLog,
    *,
    allow_partial: bool = False,
    progress: Progress | None = None,
    quantiles: Path | None = None,
) -> Predictions:
    """Read and check `submission` against `truth`, and its quantile sidecar (`quantiles`, else
    the one `SubmissionFiles` names, when that file exists); raises InvalidSubmission with every
    problem of both (including any already in `log`)."""
    where = str(submission)
    if meta.config is not None and meta.config != truth.config:
        log.add("metadata", where, f"made for config {meta.config!r}, scored on {truth.config!r}")
    if meta.split is not None and meta.split != truth.split:
        log.add("metadata", where, f"made for split {meta.split!r}, scored on {truth.split!r}")
    if meta.dataset_revision is not None and meta.dataset_revision != truth.revision:
        log.add(
            "revision_mismatch",
            where,
            f"made for dataset revision {meta.dataset_revision!r}, but {truth.dataset.spec} is at "
            f"revision {truth.revision!r} (gharuntime.dataset.dataset_revision: its data files, schema and conclusion policy); predict on that "
            "revision or pass the dataset it was made for",
        )
    if meta.track not in TRACKS:
        raise InvalidSubmission(log)
    if not submission.is_file():
        exists = submission.exists()
        log.add("unreadable", where, "not a regular file" if exists else "no such file")
        raise InvalidSubmission(log)
    held = truth.held(meta.track)
    targets = held.held
    try:
        parsed = read_submission(
            submission,
            truth.ids,
            targets,
            meta.track,
            log,
            allow_partial=allow_partial,
            progress=progress,
            left_out=held.left_out,
        )
    except OSError as exc:
        log.add("unreadable", where, f"cannot read: {exc.strerror or exc}")
        raise InvalidSubmission(log) from exc
    sidecar = quantiles if quantiles is not None else SubmissionFiles(submission).quantiles
    parsed_q = None
    if quantiles is not None and not os.path.lexists(sidecar):
        log.add("unreadable", str(sidecar), "no such quantile sidecar")
    elif os.path.lexists(sidecar):  # a FIFO or folder there is refused by the reader, not skipped
        try:
            parsed_q = read_quantiles(
                sidecar,
                truth.ids,
                targets,
                meta.track,
                parsed.present,
                log,
                left_out=tuple(held.left_out),
            )
        except InputFileError as exc:
            log.add("unreadable", str(sidecar), str(exc))
        except OSError as exc:
            log.add("unreadable", str(sidecar), f"cannot read: {exc.strerror or exc}")
    if log:
        raise InvalidSubmission(log)
    return Predictions(
        name=meta.method or submission.name,
        meta=meta,
        predictions=parsed.predictions,
        present=parsed.present,
        source={
            "path": result_path(submission),
            "sha256": parsed.sha256,
            "lines": parsed.lines,
            "records": parsed.records,
            "missing": parsed.missing,
            "allow_partial": allow_partial,
        },
        quantiles=parsed_q,
    )


def gold_methods(truth: Truth, track: str) -> list[Predictions]:
    """The self-check pair: the ground truth itself, and the training median of each target
    the dataset holds predicted for every record."""
    targets = truth.held(track).held
    present = np.ones(truth.rows, dtype=bool)
    base = MethodMeta(track=track, config=truth.config, split=truth.split, inputs=())
    gold = Predictions(
        name="ground truth",
        meta=replace(base, method="ground-truth"),
        predictions={t: np.nan_to_num(truth.targets[t], nan=0.0) for t in targets},
        present=present,
        source={"kind": "gold"},
    )
    median = Predictions(
        name="constant training median",
        meta=replace(base, method="constant-train-median"),
        predictions={  # 0 where training has no value of the target
            t: np.full(truth.rows, np.nan_to_num(truth.train_median[t], nan=0.0)) for t in targets
        },
        present=present,
        source={
            "kind": "constant",
            "values": {  # null where training has no value
                t: truth.train_median[t] if np.isfinite(truth.train_median[t]) else None
                for t in targets
            },
        },
    )
    return [gold, median]


def groups(truth: Truth) -> dict[str, dict[str, BoolArray]]:
    """Row masks of every breakdown group, in display order; empty groups left out."""
    present_os = set(truth.runner_os.unique().to_list())
    order = [o for o in _OS_ORDER if o in present_os] + sorted(present_os - {*_OS_ORDER, "unknown"})
    if "unknown" in present_os:
        order.append("unknown")
    y = truth.targets[PRIMARY_TARGET]
    decile = np.searchsorted(truth.decile_edges(), y, side="right")
    out: dict[str, dict[str, BoolArray]] = {
        "runner_os": {o: (truth.runner_os == o).to_numpy() for o in order},
        "duration_decile": {f"D{d + 1}": (decile == d) & np.isfinite(y) for d in range(10)},
        "repo_seen_in_training": {"seen": truth.seen, "unseen": ~truth.seen},
    }
    if truth.recency is not None:
        out["train_recency"] = {b: truth.recency == i for i, b in enumerate(RECENCY_BUCKETS)}
    return {k: {g: m for g, m in v.items() if m.any()} for k, v in out.items()}


@dataclass(frozen=True)
class TargetScores:
    """One method's scores on one target: overall and per breakdown group."""

    overall: CellResult
    breakdowns: dict[str, dict[str, CellResult]]
    without_truth: int  # rows whose truth is null (not scored on this target)
    intervals: CellResult | None = None  # the quantile sidecar's metrics, when there is one
    interval_breakdowns: dict[str, dict[str, CellResult]] = field(default_factory=dict)
    """Per breakdown group: the coverage and log width of each central interval."""


@dataclass(frozen=True)
class Scores:
    """Scores of every method, from one shared set of resamples."""

    truth: Truth
    track: str
    bootstrap: Bootstrap
    methods: list[Predictions]
    targets: list[dict[str, TargetScores]]  # per method: target -> scores
    held: TargetsHeld  # the track's targets scored (those the dataset holds), and the others


def _group_sums(
    terms: TargetTerms,
    has_truth: BoolArray,
    gs: dict[str, BoolArray],
    cluster: npt.NDArray[np.int64],
    clusters: int,
) -> list[GroupSums]:
    """The per-cluster sums of each group of one breakdown, over the rows with a truth."""
    labels = np.full(has_truth.shape[0], -1, dtype=np.int64)
    for i, m in enumerate(gs.values()):
        labels[m & has_truth] = i
    return terms.group_sums(labels, len(gs), cluster, clusters)


_Slots = tuple[int, dict[str, dict[str, int]], int, int | None, dict[str, dict[str, int]]]
"""Where one target's cells sit: overall, per breakdown group, rows without truth, the
intervals, the intervals per breakdown group."""


def score(
    truth: Truth,
    track: str,
    methods: Sequence[Predictions],
    *,
    seed: int = 0,
    resamples: int = 1000,
    progress: Progress | None = None,
) -> Scores:
    """Point estimates and bootstrap resamples of every metric for every method, target and
    breakdown group, all from the same resamples."""
    boot = Bootstrap.for_repositories(seed, resamples, truth.cluster_ids)
    # the resamples are drawn beside the per-group sums (numpy draws without the GIL), once
    # for the point and the interval cells
    drawer = ThreadPoolExecutor(max_workers=1)
    drawn = drawer.submit(lambda: list(boot.weights()))
    drawer.shutdown(wait=False)
    masks = groups(truth)
    held = truth.held(track)
    targets = held.held
    cells: list[Cell | MeanCell] = []
    layout: list[dict[str, _Slots]] = []
    for method in methods:
        failed = ~method.present
        per_target: dict[str, _Slots] = {}
        for t in targets:
            y = truth.targets[t]
            p = method.predictions[t]
            has_truth = np.isfinite(y)
            terms = TargetTerms(y, p, failed)

            def add(group: GroupSums, mask: BoolArray) -> int:
                # clusters are repositories unless the split has too few (then runs)
                repos = (
                    None
                    if truth.cluster_by == "repo_id"
                    else int(np.unique(truth.repo_id[mask]).shape[0])
                )
                cells.append(Cell.from_group(group, boot.clusters, repositories=repos))
                return len(cells) - 1

            # the breakdowns are independent, and numpy releases the GIL in their sorts and
            # gathers: threads use every core (the sums are the same whichever thread runs)
            everyone = {"all": has_truth}
            with ThreadPoolExecutor(max_workers=min(len(masks), os.cpu_count() or 1)) as pool:
                done = pool.map(
                    _group_sums,
                    repeat(terms),
                    repeat(has_truth),
                    [everyone, *masks.values()],
                    repeat(truth.cluster),
                    repeat(boot.clusters),
                )
                (whole,), *partitions = list(done)
            overall = add(whole, has_truth)
            by_group: dict[str, dict[str, int]] = {}
            for (name, gs), parts in zip(masks.items(), partitions, strict=True):
                by_group[name] = {
                    g: add(part, m & has_truth)
                    for (g, m), part in zip(gs.items(), parts, strict=True)
                }
            interval_cell = None
            interval_groups: dict[str, dict[str, int]] = {}
            if method.quantiles is not None:
                rows = np.flatnonzero(has_truth)
                it = interval_terms(
                    y[rows],
                    method.quantiles.values[t][:, rows],
                    failed[rows],
                    method.quantiles.levels,
                )
                repos = int(np.unique(truth.repo_id[rows]).shape[0])
                cells.append(
                    MeanCell(it.names, it.values, truth.cluster[rows], boot.clusters, repos)
                )
                interval_cell = len(cells) - 1
                interval_groups = _interval_groups(it, rows, masks, truth, boot.clusters, cells)
            per_target[t] = (
                overall,
                by_group,
                int(np.count_nonzero(~has_truth)),
                interval_cell,
                interval_groups,
            )
        layout.append(per_target)
    # the interval cells run on their own: stacked with the point cells they would change the
    # matrix product's width, and so the last bits of the point metrics
    point = [i for i, c in enumerate(cells) if isinstance(c, Cell)]
    means = [i for i, c in enumerate(cells) if not isinstance(c, Cell)]
    results: list[CellResult] = [None] * len(cells)  # type: ignore[list-item]
    for indices, stage in ((point, "bootstrap"), (means, "bootstrap: intervals")):
        if not indices and stage != "bootstrap":
            continue

        finished = run_cells(
            boot,
            [cells[i] for i in indices],
            progress=progress,
            stage=stage,
            weights=drawn.result(),
        )
        for i, r in zip(indices, finished, strict=True):
            results[i] = r
    scored = [
        {
            t: TargetScores(
                overall=results[overall],
                breakdowns={
                    name: {g: results[i] for g, i in gs.items()} for name, gs in by_group.items()
                },
                without_truth=without,
                intervals=results[iv] if iv is not None else None,
                interval_breakdowns={
                    name: {g: results[i] for g, i in gs.items()} for name, gs in by_iv.items()
                },
            )
            for t, (overall, by_group, without, iv, by_iv) in per_target.items()
        }
        for per_target in layout
    ]
    return Scores(
        truth=truth,
        track=track,
        bootstrap=boot,
        methods=list(methods),
        targets=scored,
        held=held,
    )


def _interval_groups(
    terms: IntervalTerms,
    rows: npt.NDArray[np.int64],
    masks: dict[str, dict[str, BoolArray]],
    truth: Truth,
    clusters: int,
    cells: list[Cell | MeanCell],
) -> dict[str, dict[str, int]]:
    """A cell per breakdown group of the central intervals' coverage and log width (the terms
    of `rows`, the rows with a truth), appended to `cells`; their indexes by group."""
    keep = [i for i, n in enumerate(terms.names) if n.startswith(("coverage:", "log_width:"))]
    names = [terms.names[i] for i in keep]
    values = terms.values[keep]
    out: dict[str, dict[str, int]] = {}
    for name, gs in masks.items():
        out[name] = {}
        for g, mask in gs.items():
            inside = mask[rows]
            if not inside.any():
                continue
            sub = rows[inside]
            repos = int(np.unique(truth.repo_id[sub]).shape[0])
            cells.append(MeanCell(names, values[:, inside], truth.cluster[sub], clusters, repos))
            out[name][g] = len(cells) - 1
    return out
