"""gharuntime.predict.wait: each job's wait for a runner (median and P90 of queue_s) where the
model predicts queue_s, the queue at --at counted from the repository's dataset, the run's wall
clock (wait + critical path) with its range, the wait in a review, and --wait refused (exit 2)
for a model without it."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli
from gharuntime.predict.wait import queue_load, wall_clock
from gharuntime.predict.workflow import JobPrediction

REPO = "fixture-org/repo-1"
CI = ".github/workflows/ci.yml"
WORKFLOW = """name: CI
on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
  test:
    needs: lint
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    steps:
      - run: pytest -q
"""
DOCS_JOB = """  docs:
    runs-on: macos-latest
    steps:
      - run: mkdocs build --strict
"""
INSIDE = "2026-01-01T19:00:55"  # fixture-org/repo-1's first run: 4 jobs created 19:00:48
SMALL = {"n_estimators": 40, "early_stopping_rounds": 10, "learning_rate": 0.2}


@pytest.fixture(scope="module")
def multi_model(fixture_dataset_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LightGBM trained on the multi track (duration_s, queue_s, log_bytes)."""
    from gharuntime.baselines.run import run_baseline

    folder = tmp_path_factory.mktemp("multi")
    run_baseline(
        "lightgbm", fixture_dataset_master, config="temporal", track="multi",
        out=folder / "m.jsonl", model_dir=folder / "m", params=SMALL,
    )  # fmt: skip
    return folder / "m"


def _job(key: str, duration: float, wait: dict[str, float], needs: tuple[str, ...] = ()) -> Any:
    return JobPrediction(
        key=key, name=key, runner_labels=("ubuntu-latest",), runner_os="Linux", matrix=None,
        needs=needs, predicted={"duration_s": duration}, wait=wait,
    )  # fmt: skip


def test_the_wall_clock_is_each_jobs_wait_then_its_run_along_the_longest_chain() -> None:
    """lint waits 10 s and runs 100 s, then test waits 20 s and runs 50 s (180 s); docs, beside
    them, waits 500 s and runs 10 s (510 s): the wall clock is the longer chain."""
    jobs = [
        _job("lint", 100.0, {"p50": 10.0}),
        _job("test", 50.0, {"p50": 20.0}, needs=("lint",)),
        _job("docs", 10.0, {"p50": 30.0}),
    ]
    clock = wall_clock(jobs)
    assert clock is not None
    assert clock.estimate == pytest.approx(180.0)
    assert clock.p10 == clock.p90 == pytest.approx(180.0)  # no range given: every draw alike
    slow_docs = [*jobs[:2], _job("docs", 10.0, {"p50": 500.0})]
    later = wall_clock(slow_docs)
    assert later is not None and later.estimate == pytest.approx(510.0)
    assert wall_clock([_job("a", 100.0, {})]) is None  # no wait, no wall clock


def test_the_jobs_of_a_run_wait_in_one_queue() -> None:
    """Twenty jobs side by side, each waiting P10 10 s, median 100 s, P90 1,000 s and running
    no time: drawn together, the run's wall clock spans the one wait's P10–P90; drawn
    independently, the longest of twenty waits would put its P10 near the P90."""
    wait = {"p10": 10.0, "p50": 100.0, "p90": 1000.0}
    clock = wall_clock([_job(f"j{i}", 0.0, wait) for i in range(20)])
    assert clock is not None
    assert clock.p10 == pytest.approx(10.0, rel=0.1)
    assert clock.p50 == pytest.approx(100.0, rel=0.1)
    assert clock.p90 == pytest.approx(1000.0, rel=0.25)  # 2,000 draws: a few % of sampling


def _hand_count(rows: pl.DataFrame, at: datetime, which: pl.Expr) -> tuple[int, int]:
    """Queued and running at `at` among the jobs `which` picks, counted one by one."""
    mine = rows.filter(which).to_dicts()
    queued = sum(1 for r in mine if r["created_at"] < at <= r["started_at"])
    running = sum(1 for r in mine if r["started_at"] < at <= r["completed_at"])
    return queued, running


def test_the_queue_at_the_time_asked_counts_the_earlier_jobs(fixture_dataset_master: Path) -> None:
    from gharuntime.dataset import load

    rows = pl.concat(
        [load(fixture_dataset_master, "temporal", s) for s in ("train", "validation", "test")]
    )
    repo_id = int(rows.filter(pl.col("repo") == REPO)["repo_id"][0])
    at = datetime.fromisoformat(INSIDE).replace(tzinfo=timezone.utc)
    load = queue_load(fixture_dataset_master, REPO, repo_id, at)
    assert load.counts is not None
    repo = _hand_count(rows, at, pl.col("repo_id") == repo_id)
    org = _hand_count(rows, at, pl.col("repo").str.starts_with("fixture-org/"))
    assert repo == (3, 1)  # 4 jobs created at 19:00:48, one of them started at 19:00:52
    got = load.counts
    assert (got["repo_queued"], got["repo_running"]) == repo
    assert (got["org_queued"], got["org_running"]) == org
    assert "3 queued and 1 running of fixture-org/repo-1" in load.words
    # after the dataset's last job of the repository, who was queued is not in it: unknown
    late = queue_load(
        fixture_dataset_master, REPO, repo_id, datetime(2027, 1, 1, tzinfo=timezone.utc)
    )
    assert late.counts is None and late.events is None
    assert "is outside" in late.words and "2027-01-01" in late.words
    assert queue_load(None, REPO, repo_id, at).counts is None


def _write(tmp_path: Path, text: str = WORKFLOW) -> Path:
    path = tmp_path / CI
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _predict(*args: str, at: str = "2026-03-02") -> Any:
    return CliRunner().invoke(cli, ["predict", *args, "--at", at])


def test_a_multi_track_model_shows_each_jobs_wait_in_every_format(
    multi_model: Path, tmp_path: Path
) -> None:
    workflow = _write(tmp_path)
    done = _predict(str(workflow), "--model", str(multi_model), "--json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    for job in doc["jobs"]:
        wait = job["wait_s"]
        assert 0 <= wait["p10"] <= wait["median"] <= wait["p90"] <= wait["p99"], job["name"]
    # the wall clock: each job's median wait and its duration along the longest chain
    jobs = {j["name"]: j for j in doc["jobs"]}
    lint = jobs["lint"]["wait_s"]["median"] + jobs["lint"]["duration_s"]
    tests = [j for n, j in jobs.items() if n.startswith("test")]
    want = lint + max(j["wait_s"]["median"] + j["duration_s"] for j in tests)
    clock = doc["wall_clock_s"]
    assert clock["estimate"] == pytest.approx(want, abs=0.5)
    assert clock["p10"] < clock["p90"] and "wait + critical path" in clock["rule"]
    assert doc["wait"]["target"] == "queue_s"
    # no dataset of the repository's jobs: the queue counts are unknown, and it says so
    assert doc["wait"]["queue"]["known"] is False
    assert "no dataset of the repository's jobs" in doc["wait"]["queue"]["words"]
    table = _predict(str(workflow), "--model", str(multi_model)).output
    assert "wait P90" in table and "wall clock" in table
    median = _human(jobs["lint"]["wait_s"]["median"])
    assert median in next(line for line in table.splitlines() if line.lstrip().startswith("lint"))
    markdown = _predict(str(workflow), "--model", str(multi_model), "--format", "markdown").output
    assert "| wait (P90) |" in markdown and "wall clock" in markdown
    # --no-wait leaves it out
    plain = json.loads(
        _predict(str(workflow), "--model", str(multi_model), "--no-wait", "--json").output
    )
    assert plain["wait"] is None and plain["wall_clock_s"] is None
    assert all(j["wait_s"] is None for j in plain["jobs"])
    assert (
        "wait P90" not in _predict(str(workflow), "--model", str(multi_model), "--no-wait").output
    )


def _human(seconds: float) -> str:
    from gharuntime.predict.workflow import human_seconds

    return human_seconds(seconds)


def test_history_from_gives_a_multi_track_model_the_queue_at_the_time(
    multi_model: Path, fixture_dataset_master: Path, tmp_path: Path
) -> None:
    workflow = _write(tmp_path)
    args = [str(workflow), "--model", str(multi_model), "--history-from",
            str(fixture_dataset_master), "--repo", REPO, "--json"]  # fmt: skip
    inside = _predict(*args, at=INSIDE)
    assert inside.exit_code == 0, inside.output
    queue = json.loads(inside.output)["wait"]["queue"]
    assert queue["known"] is True
    assert (queue["counts"]["repo_queued"], queue["counts"]["repo_running"]) == (3, 1)
    late = json.loads(_predict(*args, at="2027-01-01").output)["wait"]["queue"]
    assert late["known"] is False and late["counts"] is None
    # the durations still come from the model alone: no history-track basis
    assert all("basis" not in j for j in json.loads(inside.output)["jobs"])


def test_a_wait_asked_of_a_model_without_queue_s_is_exit_2_with_the_fix(
    lightgbm_model: Path, tmp_path: Path
) -> None:
    workflow = _write(tmp_path)
    done = _predict(str(workflow), "--model", str(lightgbm_model), "--wait")
    assert done.exit_code == 2, done.output
    assert "Traceback" not in done.output
    assert str(lightgbm_model) in done.output  # where
    assert "predicts duration_s only" in done.output and "no queue_s" in done.output  # what
    assert "--track multi" in done.output and "drop --wait" in done.output  # the fix
    # without --wait the same model predicts as before, with no wait
    quiet = _predict(str(workflow), "--model", str(lightgbm_model), "--json")
    assert quiet.exit_code == 0 and json.loads(quiet.output)["wait"] is None


def test_a_folder_learnt_before_the_wait_model_is_refused_a_wait(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old"
    shutil.copytree(learned_from_dataset, old)
    doc = json.loads((old / "learn.json").read_text())
    del doc["models"]["multi"]
    (old / "learn.json").write_text(json.dumps(doc))
    shutil.rmtree(old / "multi")
    workflow = _write(tmp_path)
    args = [str(workflow), "--model", str(old), "--repo", REPO]
    done = _predict(*args, "--wait")
    assert done.exit_code == 2, done.output
    assert "no model of queue_s" in done.output and "learn again" in done.output
    assert _predict(*args).exit_code == 0  # predicts durations as before
    # a multi/ that holds a duration-only model is refused, naming it
    shutil.copytree(learned_from_dataset / "config", old / "multi")
    doc["models"]["multi"] = {"folder": "multi"}
    (old / "learn.json").write_text(json.dumps(doc))
    bad = _predict(*args)
    assert bad.exit_code == 2 and "not one of queue_s" in bad.output


def test_a_learned_folder_gives_the_wait_and_the_queue_from_its_dataset(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    workflow = _write(tmp_path)
    args = [str(workflow), "--model", str(learned_from_dataset), "--repo", REPO, "--json"]
    done = _predict(*args, at=INSIDE)
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert "multi/" in doc["wait"]["model"]
    assert doc["wait"]["queue"]["known"] is True
    assert doc["wait"]["queue"]["counts"]["repo_queued"] == 3
    assert all(j["wait_s"]["median"] is not None for j in doc["jobs"])
    assert doc["wall_clock_s"]["estimate"] >= doc["critical_path_s"]
    # the durations are the two duration models' as before: the wait changes none of them
    without = json.loads(_predict(*args, "--no-wait", at=INSIDE).output)
    for a, b in zip(doc["jobs"], without["jobs"], strict=True):
        assert (a["duration_s"], a["p10"], a["p90"]) == (b["duration_s"], b["p10"], b["p90"])


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_a_review_shows_the_wait_on_both_sides_and_the_wall_clock_delta(
    multi_model: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    workflow = _write(repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    workflow.write_text(WORKFLOW + DOCS_JOB)
    args = [str(workflow), "--model", str(multi_model), "--base-ref", base]
    done = _predict(*args, "--format", "json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    (review,) = doc["reviews"]
    docs = next(j for j in review["jobs"] if j["name"] == "docs")
    assert docs["before"] is None and docs["after"]["wait_s"]["median"] > 0
    kept = next(j for j in review["jobs"] if j["name"] == "lint")
    assert kept["before"]["wait_s"] == kept["after"]["wait_s"]
    clock = review["wall_clock_s"]
    assert clock["delta"] == pytest.approx(clock["after"] - clock["before"], abs=0.2)
    # docs runs beside the chain lint → test: the wall clock grows only if it is longer
    docs_chain = docs["after"]["wait_s"]["median"] + docs["after"]["duration_s"]
    assert clock["after"] == pytest.approx(max(clock["before"], docs_chain), abs=0.5)
    assert clock["delta_p10"] <= clock["delta_p90"]
    assert doc["wait"]["target"] == "queue_s"
    markdown = _predict(*args, "--format", "markdown").output
    assert "| wait before (P90) | wait after (P90) |" in markdown
    assert "wall clock (each job's wait + the critical path)" in markdown
    table = _predict(*args).output
    assert "wait before" in table and "wait after" in table
    # a workflow compared with itself: every Δ 0, the wall clock's too
    same = json.loads(_predict(str(workflow), "--model", str(multi_model), "--base",
                               str(workflow), "--format", "json").output)  # fmt: skip
    assert same["reviews"][0]["wall_clock_s"]["delta"] == 0.0


def test_wait_draws_take_the_runs_one_score() -> None:
    from gharuntime.predict.wait import wait_draws

    z = np.array([-1.2815515655446004, 0.0, 1.2815515655446004])
    jobs = [_job("a", 1.0, {"p10": 10.0, "p50": 100.0, "p90": 1000.0}), _job("b", 1.0, {})]
    drawn = wait_draws(jobs, z)
    assert drawn[0] == pytest.approx([10.0, 100.0, 1000.0])
    assert list(drawn[1]) == [0.0, 0.0, 0.0]
