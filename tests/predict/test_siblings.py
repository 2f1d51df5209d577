"""A new combination of a matrix whose other combinations have run: the config-track model
scaled to how those siblings ran (gharuntime.predict.siblings), basis `matrix siblings`."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from conftest import MATRIX_REPO, repo_job_rows

from gharuntime.cli.main import cli
from gharuntime.dataset import write_dataset
from gharuntime.fixture import fixture_jobs
from gharuntime.history import history_durations
from gharuntime.predict.learned import open_predict_models
from gharuntime.predict.siblings import MATRIX_SIBLINGS, anchor_on_siblings
from gharuntime.predict.workflow import RepoMeta, predict_workflow, repo_meta_from_json

# ---------------------------------------------------------------------------- the rule itself


def test_a_new_row_moves_by_the_median_log_ratio_and_widens_by_its_spread() -> None:
    """Rows 0-2 are `build` with history: their recent runs' medians are 2x, 4x and 8x what
    the config-track model says (log ratios ln2, ln4, ln8; median ln4, spread ln2). Row 3 is a new `build` combination
    (config 100 s -> 400 s; P10 50 -> 100, P90 200 -> 1,600); row 4 a new job of another key
    stays as it was; row 5 has history and is never moved."""
    keys = ["build", "build", "build", "build", "lint", "build"]
    known = np.array([True, True, True, False, False, False])
    new = np.array([False, False, False, True, True, False])
    config = np.array([10.0, 10.0, 10.0, 0.0, 0.0, 0.0])
    observed = np.array([20.0, 40.0, 80.0, 0.0, 0.0, 70.0])
    predicted = np.array([21.0, 41.0, 81.0, 100.0, 30.0, 55.0])
    levels = {
        "p10": np.array([1.0, 1.0, 1.0, 50.0, 15.0, 5.0]),
        "p90": np.array([1.0, 1.0, 1.0, 200.0, 60.0, 5.0]),
        "p50": np.array([1.0, 1.0, 1.0, 100.0, 30.0, 5.0]),
    }
    asked: list[list[int]] = []

    def config_of(rows: np.ndarray) -> np.ndarray:
        asked.append(rows.tolist())
        return config[rows]

    done = anchor_on_siblings(keys, new, known, observed, predicted, levels, config_of)
    assert asked == [[0, 1, 2]]
    assert [(a.row, a.siblings) for a in done] == [(3, (0, 1, 2))]
    assert math.isclose(done[0].log_ratio, math.log(4)) and math.isclose(
        done[0].spread, math.log(2)
    )
    assert np.allclose(predicted, [21.0, 41.0, 81.0, 400.0, 30.0, 55.0])
    assert np.allclose(levels["p50"], [1, 1, 1, 400.0, 30.0, 5.0])
    assert np.allclose(levels["p10"], [1, 1, 1, 100.0, 15.0, 5.0])
    assert np.allclose(levels["p90"], [1, 1, 1, 1600.0, 60.0, 5.0])


def test_the_siblings_predicted_alike_give_the_ratio_and_all_of_them_the_spread() -> None:
    """apache/ratis' case: the config-track model predicts the new compile (25) at 171 s, as it
    does compile (8), which ran 55 s; compile (17) and (21) it predicts at 65 and 67 s and they
    ran 67 and 70 s. The ratio is compile (8)'s (55/171); the spread is the largest distance
    of any sibling's ratio from it (compile (21)'s)."""
    config = np.array([171.0, 65.0, 67.0])
    observed = np.array([55.0, 67.0, 70.0, 0.0])
    predicted = np.array([60.0, 66.0, 69.0, 171.0])
    levels = {"p10": np.array([1.0, 1.0, 1.0, 51.0]), "p90": np.array([1.0, 1.0, 1.0, 252.0])}
    done = anchor_on_siblings(
        ["compile"] * 4, np.array([False, False, False, True]),
        np.array([True, True, True, False]), observed, predicted, levels,
        lambda rows: config[rows],
    )  # fmt: skip
    shift = math.log(55 / 171)
    spread = math.log(70 / 67) - shift
    assert math.isclose(done[0].log_ratio, shift) and math.isclose(done[0].spread, spread)
    assert math.isclose(predicted[3], 55.0)
    assert math.isclose(levels["p10"][3], 51.0 * math.exp(shift - spread))
    assert math.isclose(levels["p90"][3], 252.0 * math.exp(shift + spread))


def test_one_sibling_moves_the_range_without_widening_it_and_nothing_asks_no_model() -> None:
    keys = ["t", "t"]
    predicted = np.array([290.0, 100.0])
    levels = {"p10": np.array([1.0, 50.0]), "p99": np.array([1.0, 400.0])}
    done = anchor_on_siblings(
        keys, np.array([False, True]), np.array([True, False]), np.array([300.0, 0.0]),
        predicted, levels,
        lambda rows: np.array([100.0]),
    )  # fmt: skip
    assert done[0].spread == 0.0
    assert np.allclose(predicted, [290.0, 300.0])
    assert np.allclose(levels["p10"], [1.0, 150.0]) and np.allclose(levels["p99"], [1.0, 1200.0])

    def never(rows: np.ndarray) -> np.ndarray:
        raise AssertionError("the config-track model is not asked when no row has a sibling")

    none = anchor_on_siblings(
        ["a", "b"], np.array([True, False]), np.array([False, True]), predicted, predicted,
        levels, never,
    )  # fmt: skip
    assert none == []


# ------------------------------------------------------------------------ through `predict`

BUILD = {8: 3000.0, 11: 2000.0}  # java version -> duration of its runs (run k: + 10 k)
RUNS_AT = [datetime.fromisoformat(f"2026-01-{d:02d}T00:00:00+00:00") for d in range(2, 9)]
AT = "2026-01-20T00:00:00"
WORKFLOW = """name: CI
on: [push]
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        java: [VERSIONS]
    steps:
      - run: ./mvnw -B verify -Djava=${{ matrix.java }}
"""


def _build_rows(jobs: pl.DataFrame) -> pl.DataFrame:
    runs = [
        (f"build ({java})", "build", json.dumps({"java": java}), created, base + 10 * k, 200 + k)
        for java, base in BUILD.items()
        for k, created in enumerate(RUNS_AT)
    ]
    return repo_job_rows(jobs, MATRIX_REPO, runs, 8_000_000)


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`learn --from-dataset` of the fixture jobs plus MATRIX_REPO's `build (8)` and
    `build (11)`, seven runs each."""
    jobs = fixture_jobs()
    jobs = pl.concat([jobs, _build_rows(jobs)]).drop("history_duration_s")
    jobs = jobs.with_columns(history_durations(jobs))
    dataset = tmp_path_factory.mktemp("datasets") / "siblings"
    write_dataset(jobs, dataset, provenance={"kind": "fixture", "seed": 0})
    out = tmp_path_factory.mktemp("learned") / "siblings"
    done = CliRunner().invoke(cli, ["learn", "--from-dataset", str(dataset), "--out", str(out)])
    assert done.exit_code == 0, done.output
    return out


def _predict(model: Path, workflow: Path, *more: str) -> Any:
    args = ["predict", str(workflow), "--model", str(model), "--repo", MATRIX_REPO]
    args += ["--path", ".github/workflows/ci.yml", "--at", AT, *more]
    return CliRunner().invoke(cli, args)


def _jobs(model: Path, workflow: Path) -> dict[str, dict[str, Any]]:
    done = _predict(model, workflow, "--json")
    assert done.exit_code == 0, done.output
    return {j["name"]: j for j in json.loads(done.output)["jobs"]}


def test_a_new_java_version_is_predicted_from_its_siblings(learned: Path, tmp_path: Path) -> None:
    workflow = tmp_path / "ci.yml"
    workflow.write_text(WORKFLOW.replace("VERSIONS", "8, 11, 25"), encoding="utf-8")
    jobs = _jobs(learned, workflow)
    assert [jobs[f"build ({v})"]["basis"] for v in (8, 11)] == ["history", "history"]
    new = jobs["build (25)"]
    assert new["basis"] == MATRIX_SIBLINGS
    # the same rows through the library: with the history and fallback, and the fallback alone
    models = open_predict_models(learned, repo=MATRIX_REPO)
    assert models.history is not None and models.fallback is not None
    meta = repo_meta_from_json(models.history.meta, RepoMeta(event="push"))
    at = datetime.fromisoformat(AT).replace(tzinfo=timezone.utc)
    text = workflow.read_text(encoding="utf-8")
    path = ".github/workflows/ci.yml"
    both = predict_workflow(
        text, models.method, path=path, meta=meta, at=at, history=models.history,
        fallback=models.fallback, history_path=path,
    )  # fmt: skip
    alone = predict_workflow(text, models.fallback, path=path, meta=meta, at=at)
    mine = {j.name: j for j in both.jobs}
    config = {j.name: j for j in alone.jobs}
    assert mine["build (25)"].basis == MATRIX_SIBLINGS
    assert new["duration_s"] == round(mine["build (25)"].predicted["duration_s"], 1)
    ran = {8: 3040.0, 11: 2040.0}  # the median of the 5 latest runs (k = 2..6: base + 10 k)
    assert [float(np.median(mine[f"build ({v})"].history)) for v in (8, 11)] == list(ran.values())
    ratios = [
        math.log(ran[v]) - math.log(config[f"build ({v})"].predicted["duration_s"]) for v in (8, 11)
    ]
    shift, spread = float(np.median(ratios)), abs(ratios[0] - ratios[1]) / 2
    expected = config["build (25)"].predicted["duration_s"] * math.exp(shift)
    assert mine["build (25)"].predicted["duration_s"] == pytest.approx(expected, rel=1e-9)
    p90 = config["build (25)"].quantiles["p90"] * math.exp(shift + spread)
    assert mine["build (25)"].quantiles["p90"] == pytest.approx(p90, rel=1e-9)
    # its siblings ran 2,000-3,060 s and the config-track model says a few hundred: moved up
    assert new["duration_s"] > 2 * config["build (25)"].predicted["duration_s"]
    # every format names the basis
    markdown = _predict(learned, workflow, "--format", "markdown")
    assert markdown.exit_code == 0 and MATRIX_SIBLINGS in markdown.output
    table = _predict(learned, workflow)
    assert table.exit_code == 0 and "siblings" in table.output


def test_a_new_job_with_no_sibling_stays_a_config_fallback(learned: Path, tmp_path: Path) -> None:
    workflow = tmp_path / "ci.yml"
    text = WORKFLOW.replace("VERSIONS", "8, 25").replace("  build:", "  package:")
    workflow.write_text(text, encoding="utf-8")
    jobs = _jobs(learned, workflow)
    assert {j["basis"] for j in jobs.values()} == {"config fallback"}


def test_a_model_that_gives_no_number_leaves_the_row_as_it_was() -> None:
    predicted = np.array([100.0, float("nan")])
    levels = {"p10": np.array([50.0, 1.0])}
    done = anchor_on_siblings(
        ["k", "k"], np.array([False, True]), np.array([True, False]), np.array([100.0, 0.0]),
        predicted, levels, lambda rows: np.array([float("nan")]),
    )  # fmt: skip
    assert done == [] and np.isnan(predicted[1]) and levels["p10"][1] == 1.0
