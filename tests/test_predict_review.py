"""`gharuntime predict NEW.yml --base OLD.yml | --base-ref REV`: a workflow change reviewed job by
job before it merges, and docs/ci's script that writes it to a pull request's job summary."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli

ROOT = Path(__file__).resolve().parents[1]

OLD = """name: CI
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
        python: ["3.10", "3.11"]
    steps:
      - uses: actions/setup-python@v5
      - run: pytest -q
"""
# 3.10 dropped and 3.12 added to the matrix, lint moved to macOS, a docs job added
NEW = (
    OLD.replace('python: ["3.10", "3.11"]', 'python: ["3.11", "3.12"]').replace(
        "  lint:\n    runs-on: ubuntu-latest", "  lint:\n    runs-on: macos-latest"
    )
    + """  docs:
    name: "docs | <b>site</b>"
    runs-on: ubuntu-latest
    steps:
      - run: mkdocs build --strict
"""
)


@pytest.fixture()
def model(lightgbm_model: Path) -> Path:
    return lightgbm_model  # tests/conftest.py


def _files(tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "old.yml", tmp_path / "ci.yml"
    old.write_text(OLD)
    new.write_text(NEW)
    return old, new


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["predict", *args, "--at", "2026-03-02"])


CI = ".github/workflows/ci.yml"


def _plain(workflow: Path, model: Path) -> dict[str, Any]:
    done = _run(str(workflow), "--model", str(model), "--json", "--path", CI)
    assert done.exit_code == 0, done.output
    doc: dict[str, Any] = json.loads(done.output)
    return doc


def test_each_job_is_added_removed_or_changed_with_the_runs_deltas(
    model: Path, tmp_path: Path
) -> None:
    old, new = _files(tmp_path)
    done = _run(
        str(new), "--model", str(model), "--base", str(old), "--format", "json", "--path", CI
    )
    assert done.exit_code == 0, done.output
    review = json.loads(done.output)["reviews"][0]
    status = {job["name"]: job["status"] for job in review["jobs"]}
    assert (
        status["test (ubuntu-latest, 3.10)"] == status["test (windows-latest, 3.10)"] == "removed"
    )
    assert status["test (ubuntu-latest, 3.12)"] == status["test (windows-latest, 3.12)"] == "added"
    assert status["docs | <b>site</b>"] == "added"
    assert status["lint"] == "changed"  # another runner: another time and rate
    assert status["test (ubuntu-latest, 3.11)"] == "unchanged"
    assert review["counts"] == {"added": 3, "removed": 2, "changed": 1, "unchanged": 2}
    # the deltas are the two files' own predictions, each made alone
    before, after = _plain(old, model), _plain(new, model)
    for key in ("total_job_s", "critical_path_s"):
        assert review[key]["before"] == before[key] and review[key]["after"] == after[key]
        assert review[key]["delta"] == pytest.approx(after[key] - before[key], abs=0.11)
    assert review["bill"]["cost_usd_before"] == pytest.approx(before["cost_usd"], abs=1e-3)
    assert review["bill"]["cost_usd_after"] == pytest.approx(after["cost_usd"], abs=1e-3)
    lint_before = next(j for j in before["jobs"] if j["name"] == "lint")
    lint = next(j for j in review["jobs"] if j["name"] == "lint")
    assert lint["before"]["duration_s"] == lint_before["duration_s"]
    assert lint["after"]["runner_labels"] == ["macos-latest"]


def test_markdown_is_a_table_for_a_pull_request_with_names_escaped(
    model: Path, tmp_path: Path
) -> None:
    old, new = _files(tmp_path)
    done = _run(
        str(new), "--model", str(model), "--base", str(old), "--format", "markdown", "--path", CI
    )
    assert done.exit_code == 0, done.output
    text = done.output
    assert text.startswith("### ")
    assert "| job | change | basis | before (P10–P90) | after (P10–P90) |" in text
    assert "docs \\| &lt;b&gt;site&lt;/b&gt;" in text and "<b>" not in text
    assert "| test (ubuntu-latest, 3.11) |" not in text  # unchanged jobs are counted, not listed
    assert "3 job(s) added, 2 removed, 1 changed, 2 unchanged" in text
    one = _run(str(new), "--model", str(model), "--format", "markdown")
    assert one.exit_code == 0 and "| job | runs on | time (P10–P90) |" in one.output


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def _repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose second commit changes ci.yml and adds nightly.yml."""
    repo = tmp_path / "repo"
    flows = repo / ".github" / "workflows"
    flows.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (flows / "ci.yml").write_text(OLD)
    (flows / "old.yml").write_text(OLD)
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    (flows / "ci.yml").write_text(NEW)
    (flows / "nightly.yml").write_text(OLD)
    (flows / "old.yml").unlink()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "change")
    return repo, base


def test_base_ref_reads_the_file_from_git(model: Path, tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    ci = repo / ".github/workflows/ci.yml"
    by_ref = _run(str(ci), "--model", str(model), "--base-ref", base, "--format", "json")
    assert by_ref.exit_code == 0, by_ref.output
    old = tmp_path / "old.yml"
    old.write_text(OLD)
    by_file = _run(str(ci), "--model", str(model), "--base", str(old), "--format", "json")
    jobs = json.loads(by_ref.output)["reviews"][0]["jobs"]
    assert jobs == json.loads(by_file.output)["reviews"][0]["jobs"]
    new = _run(
        str(repo / ".github/workflows/nightly.yml"), "--model", str(model), "--base-ref", base,
        "--format", "json",
    )  # fmt: skip
    assert new.exit_code == 0, new.output
    added = json.loads(new.output)["reviews"][0]["jobs"]
    assert {j["status"] for j in added} == {"added"}


def test_what_cannot_be_reviewed_is_exit_2_with_the_fix(model: Path, tmp_path: Path) -> None:
    repo, base = _repo(tmp_path)
    ci = repo / ".github/workflows/ci.yml"
    not_a_workflow = tmp_path / "list.yml"
    not_a_workflow.write_text("- a\n- b\n")
    outside = tmp_path / "outside" / "ci.yml"
    outside.parent.mkdir()
    outside.write_text(NEW)
    cases = [
        (["--base", str(not_a_workflow)], str(not_a_workflow)),
        (["--base-ref", "no-such-branch"], "no such revision"),
        (["--base-ref", "--help"], "not a git revision"),
        (["--base", str(ci), "--base-ref", base], "not both"),
    ]
    for extra, words in cases:
        done = _run(str(ci), "--model", str(model), *extra)
        assert done.exit_code == 2, (extra, done.output)
        assert words in done.output and "Traceback" not in done.output
    done = _run(str(outside), "--model", str(model), "--base-ref", base)
    assert done.exit_code == 2 and "not inside a git repository" in done.output
    assert "fix:" in done.output


@pytest.mark.skipif(shutil.which("bash") is None, reason="the script is a bash script")
def test_the_pull_request_script_writes_the_job_summary(model: Path, tmp_path: Path) -> None:
    """docs/ci/review-workflows.sh run as GitHub runs it: the variables GitHub sets for a
    pull_request event (the payload's base sha), in the checkout, with gharuntime on PATH."""
    repo, base = _repo(tmp_path)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base}}}))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step's summary\n")
    shutil.copytree(model, repo / ".github" / "gharuntime-model")
    env = {
        **os.environ,
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_WORKSPACE": str(repo),
        "GHARUNTIME_ARGS": "--at 2026-03-02",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", str(ROOT / "docs/ci/review-workflows.sh")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = summary.read_text()
    assert text.startswith("earlier step's summary\n")  # appended, never replaced
    assert "### .github/workflows/ci.yml: predicted time and cost of this change" in text
    assert "### .github/workflows/nightly.yml: predicted time and cost of this change" in text
    assert "### .github/workflows/old.yml: removed by this change" in text
    assert "3 job(s) added, 2 removed, 1 changed, 2 unchanged" in text
    no_model = subprocess.run(
        ["bash", str(ROOT / "docs/ci/review-workflows.sh")],
        capture_output=True,
        text=True,
        env={**env, "GHARUNTIME_MODEL": str(tmp_path / "none")},
        check=False,
    )
    assert no_model.returncode == 2 and "no model folder" in no_model.stderr


def test_every_flag_has_its_words_for_the_tables() -> None:
    from gharuntime.predict.workflow import FLAG_WORDS, FLAGS

    assert set(FLAG_WORDS) == set(FLAGS)
