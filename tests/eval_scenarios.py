"""Varied eval inputs (ties, null truths, missing predictions, few repositories, several
targets and methods, both Spearman paths, medians outside the first window) and every number
`score` gives for them, as JSON: what tests/eval/test_equivalence.py compares with the scores
the code gave before issue #31's speed-ups."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from gharuntime.contract import TRACKS
from gharuntime.dataset import LocalDataset
from gharuntime.eval.evaluate import Predictions, score
from gharuntime.eval.meta import MethodMeta
from gharuntime.eval.truth import Truth

__all__ = ["SCENARIOS", "scores_json"]

Scenario = tuple[Truth, str, list[Predictions], int]


def _truth(rng: np.random.Generator, rows: int, repos: int, nulls: float) -> Truth:
    repo = np.sort(rng.integers(0, repos, rows)) + 7
    size = rng.lognormal(3.5, 1.0, repos + 7)[repo]
    duration = np.round(size * rng.lognormal(0, 0.4, rows), 0)  # whole seconds: many ties
    frame = pl.DataFrame(
        {
            "id": [f"j{i}" for i in range(rows)],
            "repo_id": repo.astype(np.int64),
            "run_id": (np.arange(rows) // 4).astype(np.int64),
            "runner_os": rng.choice(
                ["Linux", "Windows", "macOS", None], p=[0.6, 0.2, 0.1, 0.1], size=rows
            ),
            "duration_s": np.where(rng.random(rows) < nulls, np.nan, duration),
            "queue_s": np.round(rng.exponential(5.0, rows), 1),
            "log_bytes": (duration * 37).astype(np.int64),
        }
    ).with_columns(pl.col("duration_s").fill_nan(None))
    train = frame.filter(pl.col("repo_id") % 3 != 0).select(
        "repo_id", "duration_s", "queue_s", "log_bytes"
    )
    return Truth.from_frames(
        frame,
        train,
        dataset=LocalDataset(Path("scenario")),
        config="temporal",
        split="test",
    )


def _method(
    rng: np.random.Generator, truth: Truth, track: str, name: str, missing: float
) -> Predictions:
    targets = TRACKS[track].targets
    predictions = {
        t: np.round(
            np.nan_to_num(truth.targets[t], nan=30.0) * rng.lognormal(0, 0.5, truth.rows), 1
        )
        for t in targets
    }
    present = rng.random(truth.rows) >= missing
    for t in targets:
        predictions[t][~present] = np.nan
    return Predictions(
        name=name,
        meta=MethodMeta(method=name, track=track),
        predictions=predictions,
        present=present,
    )


def _small() -> Scenario:  # exact Spearman per resample (rows x resamples under the limit)
    rng = np.random.default_rng(11)
    truth = _truth(rng, 3_000, 60, nulls=0.05)
    return truth, "config", [_method(rng, truth, "config", "a", 0.02)], 150


def _large() -> Scenario:  # approximate Spearman; the median's window and its full search
    rng = np.random.default_rng(12)
    truth = _truth(rng, 120_000, 900, nulls=0.01)
    return truth, "config", [_method(rng, truth, "config", "a", 0.0)], 120


def _few_repositories() -> Scenario:  # fewer than 5 repositories: resampled by run
    rng = np.random.default_rng(13)
    truth = _truth(rng, 2_000, 3, nulls=0.0)
    return truth, "config", [_method(rng, truth, "config", "a", 0.1)], 100


def _multi() -> Scenario:  # several targets, two methods sharing the resamples
    rng = np.random.default_rng(14)
    truth = _truth(rng, 20_000, 400, nulls=0.02)
    track = "multi"
    methods = [_method(rng, truth, track, "a", 0.0), _method(rng, truth, track, "b", 0.05)]
    return truth, track, methods, 80


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "small": _small,
    "large": _large,
    "few_repositories": _few_repositories,
    "multi": _multi,
}


def _summary(v: Any) -> list[Any]:
    """A resample array's fingerprint that survives the BLAS kernel: the matrix product of
    the weights sums in an order each CPU's kernel picks, so the last bit of a value may differ
    between machines. Count and NaNs exactly; first three, sum, sum of squares, min and max as
    floats, compared to 1e-12 relative."""
    a = np.asarray(v, dtype=np.float64)
    ok = a[np.isfinite(a)]
    stats = [float(x) for x in a[:3]]
    if ok.shape[0]:
        stats += [float(ok.sum()), float((ok * ok).sum()), float(ok.min()), float(ok.max())]
    return [int(a.shape[0]), int(a.shape[0] - ok.shape[0]), *stats]


def _cell(cell: Any) -> dict[str, Any]:
    """The cell's numbers: points as floats, each metric's resamples as their fingerprint."""
    return {
        "rows": cell.rows,
        "repositories": cell.repositories,
        "point": {k: float(v) for k, v in sorted(cell.point.items())},
        "resamples": {k: _summary(v) for k, v in sorted(cell.resamples.items())},
        "spearman_exact": cell.spearman_exact,
    }


def scores_json(
    truth: Truth, track: str, methods: list[Predictions], resamples: int
) -> dict[str, Any]:
    """Every point estimate and resample value of every cell, as exact float reprs."""
    scores = score(truth, track, methods, seed=3, resamples=resamples)
    out: dict[str, Any] = {}
    for method, targets in zip(scores.methods, scores.targets, strict=True):
        for t, ts in targets.items():
            out[f"{method.name}/{t}/overall"] = _cell(ts.overall)
            for name, gs in ts.breakdowns.items():
                for g, cell in gs.items():
                    out[f"{method.name}/{t}/{name}={g}"] = _cell(cell)
    return out
