"""A review's renamed and moved jobs: a removed and an added job that run the same steps are one
job `moved` (old and new name in every format) that keeps its history, within a file and into a
called workflow, matrix members from history included; other removed and added jobs stay so."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from conftest import MATRIX_REPO

from gharuntime.billing import JobTime, default_prices, price_jobs
from gharuntime.cli.main import cli
from gharuntime.predict.request import PredictRequest, run_predict
from gharuntime.predict.review import review_workflows
from gharuntime.predict.workflow import JobPrediction, WorkflowPrediction

TEST = """  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        python: ["3.10", "3.11"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - run: pip install -e .[test]
      - run: pytest -q
"""
BASIC = """  basic:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        check: ${{ fromJSON(vars.CHECKS) }}
    steps:
      - run: ./check.sh ${{ matrix.check }}
"""
DOCS = """  docs:
    runs-on: ubuntu-latest
    steps:
      - run: mkdocs build --strict
"""
BASE = "name: CI\non: [push]\njobs:\n" + TEST + BASIC + DOCS
# `test` renamed (its steps named, an action bumped: the same steps), `docs` replaced by a job
# that runs something else
RENAMED = (
    "name: CI\non: [push]\njobs:\n"
    + TEST.replace("  test:", "  unit-tests:")
    .replace("      - run: pytest -q", "      - name: Run the tests\n        run: pytest   -q")
    .replace("actions/checkout@v4", "actions/checkout@v5")
    + BASIC
    + DOCS.replace("docs:", "site:").replace("mkdocs build --strict", "sphinx-build docs site")
)
CALLER = "name: CI\non: [push]\njobs:\n  CI:\n    uses: ./.github/workflows/called.yml\n"
CALLED = "name: full\non:\n  workflow_call:\njobs:\n" + TEST + BASIC + DOCS
AT = "2026-03-01"
COMBOS = [f"({o}, {p})" for o in ("ubuntu-latest", "windows-latest") for p in ("3.10", "3.11")]


def _review(learned: Path, new: Path, base: Path, fmt: str, *more: str) -> Any:
    """The review in `fmt`; its JSON: the one workflow shown (the file itself)."""
    args = ["predict", str(new), "--model", str(learned), "--repo", MATRIX_REPO, "--at", AT]
    done = CliRunner().invoke(cli, [*args, "--base", str(base), "--format", fmt, *more])
    assert done.exit_code == 0, done.output
    if fmt != "json":
        return done.output
    (shown,) = json.loads(done.output)["reviews"]
    return shown


def _sides(learned: Path, new: Path, base: Path) -> dict[str, Any]:
    """Each reviewed job by its new name: (status, old name, before, after) as JobPredictions."""
    request = PredictRequest(
        new, learned, repo=MATRIX_REPO, base=base, at=datetime.fromisoformat(AT)
    )
    review = run_predict(request).review
    assert review is not None
    (shown,) = review.reviews
    return {j.name: j for j in shown.jobs}


def _layout(tmp_path: Path, **files: str) -> dict[str, Path]:
    """Files under a repository's .github/workflows/ (the workflow the history knows is ci.yml),
    and the base file outside it."""
    (tmp_path / "repo" / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / "base.yml").write_text(BASE)
    out = {"base": tmp_path / "base.yml"}
    for name, text in files.items():
        path = tmp_path / "repo" / ".github" / "workflows" / f"{name}.yml"
        path.write_text(text)
        out[name] = path
    return out


def test_a_renamed_job_is_moved_and_keeps_its_history(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    files = _layout(tmp_path, ci=RENAMED)
    doc = _review(learned_from_dataset, files["ci"], files["base"], "json")
    rows = {j["name"]: j for j in doc["jobs"]}
    for combo in COMBOS:
        row = rows[f"unit-tests {combo}"]
        assert row["status"] == "moved" and row["old_name"] == f"test {combo}"
        assert f"test {combo}" not in rows  # not also removed
    assert rows["site"]["status"] == "added" and rows["docs"]["status"] == "removed"
    assert rows["site"]["old_name"] is None
    assert doc["counts"] == {
        "added": 1,
        "removed": 1,
        "moved": 4,
        "changed": 0,
        "unchanged": 2,  # basic (lint) and basic (unit): its matrix from history
    }
    sides = _sides(learned_from_dataset, files["ci"], files["base"])
    for combo in COMBOS:
        moved = sides[f"unit-tests {combo}"]
        assert moved.before is not None and moved.after is not None
        assert moved.before.basis == "history" and moved.after.basis == "history"
        assert moved.after.history == moved.before.history and len(moved.after.history) == 5
    assert sides["site"].after is not None and sides["site"].after.basis == "config fallback"


def test_jobs_moved_into_a_called_workflow_keep_their_history(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    """As apache/ozone moved its jobs from post-commit.yml into a ci.yml it calls: the runs
    stay recorded under the caller, each job as `CI / <job>`."""
    files = _layout(tmp_path, ci=CALLER, called=CALLED)
    doc = _review(learned_from_dataset, files["ci"], files["base"], "json")
    rows = {j["name"]: j for j in doc["jobs"]}
    assert doc["counts"]["added"] == doc["counts"]["removed"] == 0
    assert doc["counts"]["moved"] == 7
    assert {rows[f"CI / test {c}"]["old_name"] for c in COMBOS} == {f"test {c}" for c in COMBOS}
    assert rows["CI / basic (unit)"]["old_name"] == "basic (unit)"
    assert rows["CI / basic (lint)"]["old_name"] == "basic (lint)"
    assert rows["CI / docs"]["old_name"] == "docs"
    sides = _sides(learned_from_dataset, files["ci"], files["base"])
    for name in ("CI / basic (unit)", "CI / basic (lint)", *(f"CI / test {c}" for c in COMBOS)):
        moved = sides[name]
        assert moved.before is not None and moved.after is not None
        assert moved.after.basis == moved.before.basis != "config fallback"
        assert moved.after.history == moved.before.history and moved.after.history
    assert sides["CI / basic (unit)"].after.basis == "from-history matrix"  # type: ignore[union-attr]


def test_markdown_and_the_table_show_moved_with_both_names(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    files = _layout(tmp_path, ci=RENAMED)
    markdown = _review(learned_from_dataset, files["ci"], files["base"], "markdown")
    line = next(x for x in markdown.splitlines() if "unit-tests (ubuntu-latest, 3.10)" in x)
    assert line.startswith("| test (ubuntu-latest, 3.10) → unit-tests (ubuntu-latest, 3.10) |")
    assert "| moved |" in line
    assert "4 moved (renamed, same steps)" in markdown
    table = _review(learned_from_dataset, files["ci"], files["base"], "table")
    assert "moved" in table
    assert "1 added, 1 removed, 4 moved, 0 changed" in " ".join(table.split())


def test_several_alike_pair_by_name_and_different_matrix_values_do_not(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    job = "  {key}:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make all\n"
    old = "on: [push]\njobs:\n" + job.format(key="lint-a") + job.format(key="lint-b")
    new = "on: [push]\njobs:\n" + job.format(key="check-b") + job.format(key="check-a")
    base, ci = tmp_path / "base.yml", tmp_path / "ci.yml"
    base.write_text(old + TEST)
    ci.write_text(new + TEST.replace('"3.10", "3.11"', '"3.12"'))
    doc = _review(learned_from_dataset, ci, base, "json", "--path", ".github/workflows/ci.yml")
    rows = {j["name"]: j for j in doc["jobs"]}
    assert rows["check-a"]["old_name"] == "lint-a" and rows["check-b"]["old_name"] == "lint-b"
    # the matrix values changed: GitHub shows other jobs, none moved
    assert rows["test (ubuntu-latest, 3.12)"]["status"] == "added"
    assert rows["test (ubuntu-latest, 3.10)"]["status"] == "removed"
    assert doc["counts"]["moved"] == 2


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str]) -> str:
    for name, text in files.items():
        path = repo / ".github" / "workflows" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "change")
    return _git(repo, "rev-parse", "HEAD")


def test_a_move_into_a_called_workflow_reviewed_through_its_caller_keeps_its_history(
    learned_from_dataset: Path, tmp_path: Path
) -> None:
    """As the PR script reviews it: the new reusable `called.yml` against the base commit is
    shown through `ci.yml`, the caller GitHub records the runs under; there the jobs moved out
    of `ci.yml` keep the runs of their old names under that identity (history, and the matrix
    from history), in JSON and Markdown."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    base = _commit(repo, {"ci.yml": BASE})
    _commit(repo, {"ci.yml": CALLER, "called.yml": CALLED})
    args = [
        str(repo / ".github" / "workflows" / "called.yml"),
        "--model",
        str(learned_from_dataset),
    ]
    args += ["--repo", MATRIX_REPO, "--at", AT, "--base-ref", base]
    done = CliRunner().invoke(cli, ["predict", *args, "--format", "json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.output)
    assert doc["shown"] == "callers" and doc["callers"] == [".github/workflows/ci.yml"]
    assert isinstance(doc["beyond_noise"], bool)
    (review,) = doc["reviews"]
    assert review["workflow"] == ".github/workflows/ci.yml"
    assert review["counts"] == {"added": 0, "removed": 0, "moved": 7, "changed": 0, "unchanged": 0}
    rows = {j["name"]: j for j in review["jobs"]}
    for combo in COMBOS:
        row = rows[f"CI / test {combo}"]
        assert row["old_name"] == f"test {combo}"
        assert row["basis"] == row["before"]["basis"] == row["after"]["basis"] == "history"
    for check in ("unit", "lint"):
        row = rows[f"CI / basic ({check})"]
        assert row["old_name"] == f"basic ({check})"
        assert row["basis"] == row["after"]["basis"] == "from-history matrix"
    markdown = CliRunner().invoke(cli, ["predict", *args, "--format", "markdown"]).output
    line = next(x for x in markdown.splitlines() if "CI / basic (unit) |" in x)
    assert line.startswith("| basic (unit) → CI / basic (unit) | moved | from-history matrix |")


def _renamed(key: str) -> JobPrediction:
    return JobPrediction(
        key=key,
        name=key,
        runner_labels=("ubuntu-latest",),
        runner_os="Linux",
        matrix=None,
        needs=(),
        predicted={"duration_s": 600.0},
        quantiles={"p10": 300.0, "p90": 1200.0, "p99": 2000.0},
        steps="same steps",
    )


def test_a_moved_job_is_one_row_of_the_delta_range() -> None:
    """A job renamed with the same prediction moves nothing: its two names take one draw, so
    every run-level Δ and its P10–P90 is exactly 0 (drawn apart, as a removed and an added job,
    the range would be minutes wide)."""
    sides = []
    for key in ("lint", "check"):
        job = _renamed(key)
        cost = price_jobs(
            [JobTime(job.runner_labels, 600.0, 300.0, 1200.0)], default_prices(), public=False
        )
        sides.append((WorkflowPrediction("ci.yml", [job], 600.0, 600.0, {}), cost))
    review = review_workflows(*sides[0], *sides[1])
    assert [(j.status, j.old_name, j.name) for j in review.jobs] == [("moved", "lint", "check")]
    for measure in review.measures().values():
        assert measure.delta == measure.p10 == measure.p90 == 0.0
