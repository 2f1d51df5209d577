"""What `gharuntime eval` is asked, as one typed request, and the one call that answers it.

The command turns its options into an `EvalRequest` and calls `evaluate`; the rules (which
files the evaluation reads, what the metadata options declare, when the --gold self-check
passes) live here, where a caller from Python gets the same."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gharuntime.dataset import LocalDataset
from gharuntime.eval.api import (
    DEFAULT_CONFIG,
    DEFAULT_SPLIT,
    evaluate_file,
    evaluate_gold,
    input_files,
)
from gharuntime.eval.meta import META_FIELDS, MethodMeta
from gharuntime.eval.metrics import METRICS
from gharuntime.paths import output_file_problem
from gharuntime.progress import Progress

__all__ = ["EvalRequest", "evaluate", "gold_failures", "parse_inputs"]


def parse_inputs(text: str | None) -> tuple[str, ...] | None:
    """`repo, job_name,matrix` → ("repo", "job_name", "matrix"); None when not given."""
    if text is None:
        return None
    return tuple(i.strip() for i in text.split(",") if i.strip())


@dataclass(frozen=True)
class EvalRequest:
    """Score `submission` (and `vs`, on the same resamples) against `dataset`, or, with no
    submission, run the --gold self-check. `declared` is the metadata the caller gives
    (options, which override the submission's sidecar; None fields are not declared)."""

    dataset: LocalDataset | Path | str
    submission: Path | None = None
    declared: MethodMeta = field(default_factory=MethodMeta)
    vs: Path | None = None
    meta_path: Path | None = None
    quantiles: Path | None = None
    allow_partial: bool = False
    seed: int = 0  # of the bootstrap resamples
    resamples: int = 1000
    command: Sequence[str] | None = None  # recorded in the result's provenance

    @property
    def gold(self) -> bool:
        return self.submission is None

    def input_files(self) -> list[Path]:
        """Every file this evaluation may read: what its output must never be."""
        dataset = None if isinstance(self.dataset, LocalDataset) else self.dataset
        return input_files(
            self.submission,
            vs=self.vs,
            meta_path=self.meta_path,
            quantiles=self.quantiles,
            dataset=dataset,
        )

    def output_problem(self, out: Path) -> str | None:
        """Why `out` cannot take the result (it is a file this evaluation reads, by the
        readers' own rules), or None."""
        return output_file_problem(out, self.input_files())


def evaluate(request: EvalRequest, progress: Progress | None = None) -> dict[str, Any]:
    """The result document of `request` (gharuntime.eval.report's shape). Raises
    InvalidSubmission listing every problem, or DatasetError."""
    d = request.declared
    if request.submission is None:
        return evaluate_gold(
            request.dataset,
            track=d.track or "multi",
            config=d.config or DEFAULT_CONFIG,
            split=d.split or DEFAULT_SPLIT,
            seed=request.seed,
            resamples=request.resamples,
            progress=progress,
            command=request.command,
        )
    return evaluate_file(
        request.submission,
        request.dataset,
        options={k: getattr(d, k) for k in META_FIELDS},
        vs=request.vs,
        meta_path=request.meta_path,
        allow_partial=request.allow_partial,
        seed=request.seed,
        resamples=request.resamples,
        progress=progress,
        command=request.command,
        quantiles=request.quantiles,
    )


def gold_failures(result: dict[str, Any]) -> list[str]:
    """Ways the ground truth failed to score perfectly in a --gold result (empty: the
    self-check passed). A metric undefined on a constant truth may be null."""
    out = []
    for target, metrics in result["metrics"].items():
        for m in METRICS:
            got, want = metrics[m.name]["value"], m.perfect
            if got is None and m.undefined_when_constant:
                continue
            if got is None or not math.isclose(got, want, abs_tol=1e-9):
                out.append(f"{target} {m.name}: {got} (a perfect prediction gives {want})")
    return out
