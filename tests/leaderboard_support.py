"""Results for the leaderboard tests: submissions of known quality on the fixture dataset, scored
by the real `gharuntime eval` (result_version 2), filed by the real `add`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from gharuntime.cli.main import cli
from gharuntime.dataset import load
from gharuntime.eval import evaluate_file, write_result
from gharuntime.leaderboard import add_result

RESAMPLES = 200


def leaderboard_cli(*args: str) -> Result:
    """`gharuntime leaderboard ARGS`, run in-process."""
    return CliRunner().invoke(cli, ["leaderboard", *args])


def relative_files(folder: Path) -> list[str]:
    """Every file under `folder`, as sorted POSIX paths relative to it."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


# method -> (config, track, per-record log-factor pattern): prediction = truth * exp(pattern)
METHODS: dict[str, tuple[str, str, str]] = {
    "exact-ish": ("temporal", "config", "small"),
    "alternating": ("temporal", "config", "alternating"),
    "opposite": ("temporal", "config", "opposite"),
    "double": ("temporal", "config", "double"),
    "last-guess": ("temporal", "history", "small"),
    "constant": ("temporal", "history", "constant"),
}


def _factors(pattern: str, n: int) -> np.ndarray:
    i = np.arange(n)
    if pattern == "small":
        return np.where(i % 2 == 0, 0.05, -0.05)
    if pattern == "alternating":
        return np.where(i % 2 == 0, 0.4, -0.4)
    if pattern == "opposite":
        return np.where(i % 2 == 0, -0.4, 0.4)
    if pattern == "double":
        return np.full(n, np.log(2.5))
    raise ValueError(pattern)


def write_submission(path: Path, dataset: Path, config: str, pattern: str, drop: int = 0) -> Path:
    rows = load(dataset, config, "test")
    y = rows["duration_s"].to_numpy().astype(float)
    if pattern == "constant":
        p = np.full(y.shape[0], float(np.median(load(dataset, config, "train")["duration_s"])))
    else:
        p = y * np.exp(_factors(pattern, y.shape[0]))
    lines = [
        json.dumps({"id": rid, "duration_s": round(float(v), 2)})
        for rid, v in zip(rows["id"].to_list(), p, strict=True)
    ]
    path.write_text("".join(line + "\n" for line in lines[drop:]), encoding="utf-8")
    return path


QUANTILE_SPREAD: dict[str, float] = {"exact-ish": 0.3, "double": 0.3}
"""Methods that also write a quantile sidecar: P10/P90 at the prediction × exp(∓spread). The
exact-ish predictions sit within 5% of the truth, so their P10–P90 covers every job; `double`
predicts 2.5× the truth, so its P10 is above every job (coverage 0)."""


def write_quantiles(sub: Path, spread: float) -> None:
    lines = []
    for line in sub.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        p = float(rec["duration_s"])
        q = {"p10": p * np.exp(-spread), "p50": p, "p90": p * np.exp(spread)}
        row = {"id": rec["id"], **{f"duration_s_{k}": round(float(v), 2) for k, v in q.items()}}
        lines.append(json.dumps(row))
    sub.with_name(sub.stem + ".quantiles.jsonl").write_text("\n".join(lines) + "\n")


def score(
    tmp: Path, dataset: Path, method: str, config: str, track: str, pattern: str, **kw: Any
) -> Path:
    """Score a submission of `pattern` as `method`, with timing in its sidecar; the result's path."""
    sub = write_submission(tmp / f"{method}.jsonl", dataset, config, pattern, kw.pop("drop", 0))
    if method in QUANTILE_SPREAD:
        write_quantiles(sub, QUANTILE_SPREAD[method])
    (tmp / f"{method}.meta.json").write_text(
        json.dumps(
            {
                "method": method,
                "method_version": "1.0",
                "track": track,
                "config": config,
                "timing": {"fit_seconds_per_1000_jobs": 1.5, "predict_seconds_per_1000_jobs": 0.02},
            }
        )
    )
    result = evaluate_file(sub, dataset, resamples=kw.pop("resamples", RESAMPLES), **kw)
    out = tmp / f"{method}.result.json"
    write_result(result, out)
    return out


@pytest.fixture(scope="session")
def scored_results(
    fixture_dataset_master: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """One result file per method of METHODS (not yet filed)."""
    tmp = tmp_path_factory.mktemp("scored")
    # the dataset's folder name is its name on the leaderboard
    dataset = tmp / "gharuntime-fixture"
    shutil.copytree(fixture_dataset_master, dataset)
    return {m: score(tmp, dataset, m, c, t, p) for m, (c, t, p) in METHODS.items()}


@pytest.fixture(scope="session")
def results_master(
    scored_results: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A results folder holding every scored result, filed by `add_result`."""
    results = tmp_path_factory.mktemp("registry") / "results"
    for path in scored_results.values():
        add_result(path, results)
    return results


@pytest.fixture()
def results_dir(results_master: Path, tmp_path: Path) -> Path:
    """A private copy of the results folder that a test may change."""
    dst = tmp_path / "results"
    shutil.copytree(results_master, dst)
    return dst


@pytest.fixture(scope="session")
def reproducible(
    fixture_dataset_master: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Path]:
    """A result `leaderboard reproduce` re-runs in a second: the median baseline on the fixture
    dataset (folder `gharuntime-fixture`), scored by the real `eval` with 50 resamples (a
    quantile sidecar, breakdowns, per-resample values: every section a result has).
    {"dataset": its folder, "result": the result file}; copy the result before changing it."""
    tmp = tmp_path_factory.mktemp("reproducible")
    dataset = tmp / "gharuntime-fixture"
    shutil.copytree(fixture_dataset_master, dataset)
    sub, result = tmp / "median.jsonl", tmp / "temporal-config-median.json"
    made = CliRunner().invoke(
        cli, ["baseline", "median", "--dataset", str(dataset), "--out", str(sub)]
    )
    assert made.exit_code == 0, made.output
    scored = CliRunner().invoke(
        cli,
        ["eval", str(sub), "--dataset", str(dataset), "--resamples", "50", "--out", str(result)],
    )
    assert scored.exit_code == 0, scored.output
    return {"dataset": dataset, "result": result}
