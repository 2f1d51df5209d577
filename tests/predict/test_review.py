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
from gharuntime.predict.review import STEPS_UNSEEN_WORDS

ROOT = Path(__file__).resolve().parents[2]

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
    assert review["counts"] == {
        "added": 3,
        "removed": 2,
        "moved": 0,
        "changed": 1,
        "unchanged": 2,
    }
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
        (["--base-ref", "--output=" + str(tmp_path / "x")], "not a git revision"),
        (["--base-ref", "HEAD:.github"], "not a git revision"),
        (["--base-ref", "a\x1bb"], "control character"),
        (["--base", str(ci), "--base-ref", base], "not both"),
    ]
    for extra, words in cases:
        done = _run(str(ci), "--model", str(model), *extra)
        assert done.exit_code == 2, (extra, done.output)
        assert words in done.output and "Traceback" not in done.output
    assert not (tmp_path / "x").exists()
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
    assert "### ` .github/workflows/old.yml `: removed by this change" in text  # a code span
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


# --- identity, the base at its revision, callers -------------------------------------------


def _commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    """Write (or, for None, delete) files in `repo` and commit them; the commit's sha."""
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _new_repo(tmp_path: Path, name: str = "repo") -> Path:
    repo = tmp_path / name
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    return repo


def _review(*args: str) -> dict[str, Any]:
    done = _run(*args, "--format", "json")
    assert done.exit_code == 0, done.output
    doc: dict[str, Any] = json.loads(done.output)
    return doc


def test_a_workflow_compared_with_itself_changes_nothing(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base side is the same workflow (same identity) to the model: 0 changed, Δ 0, typed
    as the path the model knows (`.github/workflows/ci.yml`, which the fixture's repositories
    ran) or any other way."""
    repo = _new_repo(tmp_path)
    _commit(repo, {CI: NEW}, "ci")
    monkeypatch.chdir(repo)
    bases = (["--base-ref", "HEAD"], ["--base-ref", "main"], ["--base", CI])
    for ci, base in [(CI, b) for b in bases] + [(str(repo / CI), b) for b in bases]:
        doc = _review(ci, "--model", str(model), *base)
        (review,) = doc["reviews"]
        assert review["counts"]["changed"] == review["counts"]["added"] == 0, base
        assert review["counts"]["removed"] == review["counts"]["moved"] == 0
        for key in ("total_job_s", "critical_path_s"):
            assert review[key]["delta"] == 0.0
            assert review[key]["delta_p10"] == review[key]["delta_p90"] == 0.0
        assert review["bill"]["delta_cost_usd"] == 0.0
        assert doc["beyond_noise"] is False
        assert review["workflow"] == CI and doc["workflow"] == CI


def test_every_spelling_of_the_file_gives_the_same_bytes(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _new_repo(tmp_path)
    base = _commit(repo, {CI: OLD}, "old")
    _commit(repo, {CI: NEW}, "new")
    (tmp_path / "link.yml").symlink_to(repo / CI)
    (tmp_path / "linked-repo").symlink_to(repo, target_is_directory=True)
    monkeypatch.chdir(repo / ".github")
    spellings = [
        str(repo / CI),
        "workflows/ci.yml",
        "./workflows/../workflows/ci.yml",
        str(tmp_path / "link.yml"),
        str(tmp_path / "linked-repo" / CI),
    ]
    for extra in (["--json"], ["--base-ref", base, "--format", "json"]):
        outputs = set()
        for spelling in spellings:
            done = _run(spelling, "--model", str(model), *extra)
            assert done.exit_code == 0, (spelling, done.output)
            outputs.add(done.output)
        assert len(outputs) == 1, extra
        assert json.loads(outputs.pop())["workflow"] == CI


def test_a_workflow_outside_any_repository_needs_its_path(model: Path, tmp_path: Path) -> None:
    lone, old = tmp_path / "somewhere" / "ci.yml", tmp_path / "old.yml"
    lone.parent.mkdir()
    lone.write_text(NEW)
    old.write_text(OLD)
    done = _run(str(lone), "--model", str(model), "--base", str(old))
    assert done.exit_code == 2 and "Traceback" not in done.output
    assert str(lone) in done.output and "not inside a git repository" in done.output
    assert "fix:" in done.output and "--path .github/workflows/ci.yml" in done.output
    doc = _review(str(lone), "--model", str(model), "--base", str(old), "--path", CI)
    assert doc["workflow"] == CI and doc["workflow_from"] == "--path"
    for bad in ("../ci.yml", "/etc/ci.yml", "a\nb.yml", ""):
        done = _run(str(lone), "--model", str(model), "--base", str(old), "--path", bad)
        assert done.exit_code == 2 and "--path" in done.output, bad


CALLER = """name: build-branch
on: [push]
jobs:
  CI:
    uses: ./.github/workflows/called.yml
"""
CALLED = """on: workflow_call
jobs:
{jobs}"""


def _called(n: int) -> str:
    one = "  job{i}:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make part{i}\n"
    return CALLED.format(jobs="".join(one.format(i=i) for i in range(n)))


def test_the_base_reads_its_called_workflows_at_its_revision(model: Path, tmp_path: Path) -> None:
    """A callee growing from 1 to 11 jobs is 10 jobs added to its caller, not 0."""
    repo = _new_repo(tmp_path)
    base = _commit(
        repo, {".github/workflows/caller.yml": CALLER, ".github/workflows/called.yml": _called(1)},
        "one job",
    )  # fmt: skip
    _commit(repo, {".github/workflows/called.yml": _called(11)}, "eleven jobs")
    doc = _review(
        str(repo / ".github/workflows/caller.yml"), "--model", str(model), "--base-ref", base
    )
    (review,) = doc["reviews"]
    assert review["counts"] == {"added": 10, "removed": 0, "moved": 0, "changed": 0, "unchanged": 1}
    assert {j["name"] for j in review["jobs"] if j["status"] == "added"} == {
        f"CI / job{i}" for i in range(1, 11)
    }


def test_a_called_workflow_is_reviewed_through_its_callers(model: Path, tmp_path: Path) -> None:
    repo = _new_repo(tmp_path)
    nightly = CALLER.replace("on: [push]", "on:\n  schedule:\n    - cron: '0 3 * * *'")
    middle = _called(0).replace(
        "jobs:\n", "jobs:\n  inner:\n    uses: ./.github/workflows/called.yml\n"
    )
    base = _commit(
        repo,
        {
            ".github/workflows/caller.yml": CALLER,
            ".github/workflows/middle.yml": middle,  # called only: records no run of its own
            ".github/workflows/nightly.yml": nightly.replace("called.yml", "middle.yml"),
            ".github/workflows/other.yml": OLD,
            ".github/workflows/called.yml": _called(1),
        },
        "base",
    )  # fmt: skip
    _commit(repo, {".github/workflows/called.yml": _called(3)}, "two more jobs")
    called = str(repo / ".github/workflows/called.yml")
    doc = _review(called, "--model", str(model), "--base-ref", base)
    assert doc["workflow"] == ".github/workflows/called.yml" and doc["shown"] == "callers"
    callers = [".github/workflows/caller.yml", ".github/workflows/nightly.yml"]
    assert doc["callers"] == callers
    assert [r["workflow"] for r in doc["reviews"]] == callers
    assert [r["counts"]["added"] for r in doc["reviews"]] == [2, 2]
    added = {j["name"] for j in doc["reviews"][1]["jobs"] if j["status"] == "added"}
    assert added == {"CI / inner / job1", "CI / inner / job2"}
    text = _run(called, "--model", str(model), "--base-ref", base, "--format", "markdown").output
    assert "shown through the 2 workflows that call it" in text
    assert (
        "#### .github/workflows/caller.yml" in text and "#### .github/workflows/nightly.yml" in text
    )
    alone = _review(called, "--model", str(model), "--base-ref", base, "--no-callers")
    assert alone["shown"] == "--no-callers" and alone["callers"] == []
    assert [r["workflow"] for r in alone["reviews"]] == [".github/workflows/called.yml"]
    assert alone["reviews"][0]["counts"]["added"] == 2
    table = _run(called, "--model", str(model), "--base-ref", base).output
    assert "shown through the 2 workflows that call it" in table


def test_a_base_file_outside_github_reads_its_callees_from_the_repository(
    model: Path, tmp_path: Path
) -> None:
    repo = _new_repo(tmp_path)
    _commit(
        repo, {".github/workflows/caller.yml": CALLER, ".github/workflows/called.yml": _called(4)},
        "base",
    )  # fmt: skip
    copy = tmp_path / "old-caller.yml"
    copy.write_text(CALLER)
    doc = _review(str(repo / ".github/workflows/caller.yml"), "--model", str(model),
                  "--base", str(copy))  # fmt: skip
    (review,) = doc["reviews"]
    assert review["counts"] == {"added": 0, "removed": 0, "moved": 0, "changed": 0, "unchanged": 4}


def test_a_new_workflow_named_with_a_space_is_all_added(model: Path, tmp_path: Path) -> None:
    repo = _new_repo(tmp_path)
    base = _commit(repo, {CI: OLD}, "base")
    _commit(repo, {".github/workflows/my ci.yml": OLD}, "a workflow named with a space")
    doc = _review(str(repo / ".github/workflows/my ci.yml"), "--model", str(model),
                  "--base-ref", base)  # fmt: skip
    (review,) = doc["reviews"]
    assert review["there"] == {"before": False, "after": True}
    assert {j["status"] for j in review["jobs"]} == {"added"}


# --- basis, range, noise and the verdict, with a repository's history ----------------------

FIXTURE_CI = """name: CI
on: [push, pull_request]
jobs:
  test:
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
"""fixture-org/repo-1's ci.yml in the fixture dataset (gharuntime.fixture): five runs."""
DOCS_JOB = """  docs:
    runs-on: ubuntu-latest
    steps:
      - run: mkdocs build --strict
"""


@pytest.fixture(scope="module")
def learned(fixture_dataset_master: Path, lightgbm_model: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Path:  # fmt: skip
    """A learned folder as `gharuntime learn` writes it, from the fixture dataset: its
    history-track model, the config-track one, the dataset, learn.json."""
    from gharuntime.baselines.run import run_baseline

    folder = tmp_path_factory.mktemp("learned") / "mine"
    folder.mkdir()
    run_baseline(
        "lightgbm", fixture_dataset_master, config="temporal", track="history",
        out=folder / "history.jsonl", model_dir=folder / "history",
        params={"n_estimators": 80, "early_stopping_rounds": 10, "learning_rate": 0.2},
    )  # fmt: skip
    shutil.copytree(lightgbm_model, folder / "config")
    (folder / "dataset").symlink_to(fixture_dataset_master, target_is_directory=True)
    doc = {"format": "gharuntime-learned/1", "repos": ["fixture-org/repo-1"], "method": "lightgbm",
           "visibility": {"fixture-org/repo-1": "public"}}  # fmt: skip
    (folder / "learn.json").write_text(json.dumps(doc))
    return folder


def _with_docs(tmp_path: Path) -> tuple[Path, str]:
    repo = _new_repo(tmp_path)
    base = _commit(repo, {CI: FIXTURE_CI}, "base")
    _commit(repo, {CI: FIXTURE_CI + DOCS_JOB}, "a docs job")
    return repo / CI, base


def _learned_run(learned: Path, ci: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        cli, ["predict", str(ci), "--model", str(learned), "--at", "2027-01-01", *extra]
    )


def test_every_row_states_its_basis_in_every_format(learned: Path, tmp_path: Path) -> None:
    ci, base = _with_docs(tmp_path)
    done = _learned_run(learned, ci, "--base-ref", base, "--format", "json")
    assert done.exit_code == 0, done.output
    (review,) = json.loads(done.output)["reviews"]
    basis = {j["name"]: j["basis"] for j in review["jobs"]}
    assert basis.pop("docs") == "config fallback"
    assert set(basis.values()) == {"history"} and len(basis) == 4
    assert review["basis"] == {"history": 4, "config fallback": 1}
    assert json.loads(done.output)["basis_meaning"]["config fallback"]
    markdown = _learned_run(learned, ci, "--base-ref", base, "--format", "markdown").output
    assert (
        "| job | change | basis |" in markdown and "| docs | added | config fallback |" in markdown
    )
    assert "basis: 4 history, 1 config fallback" in markdown
    table = _learned_run(learned, ci, "--base-ref", base, "--no-callers").output
    assert "basis" in table and "config fallback" in table
    assert "basis: 4 history, 1 config fallback" in table


def test_the_delta_has_a_range_and_the_repositorys_noise_beside_it(
    learned: Path, tmp_path: Path
) -> None:
    ci, base = _with_docs(tmp_path)
    done = _learned_run(learned, ci, "--base-ref", base, "--format", "json")
    doc = json.loads(done.output)
    (review,) = doc["reviews"]
    total = review["total_job_s"]
    docs = next(j for j in review["jobs"] if j["name"] == "docs")
    assert total["delta"] == pytest.approx(docs["after"]["duration_s"], abs=0.2)
    assert 0 < total["delta_p10"] < total["delta"] < total["delta_p90"]
    assert total["delta_p10"] == pytest.approx(docs["after"]["p10"], rel=0.08)
    noise = review["noise"]
    assert noise["runs"] == 5
    band = (noise["total_job_s"]["p90"] - noise["total_job_s"]["p10"]) / 2
    assert total["noise"] == pytest.approx(band, abs=0.1)
    assert total["beyond_noise"] == (abs(total["delta"]) > band)
    measures = (review["total_job_s"], review["critical_path_s"], review["bill"])
    assert doc["beyond_noise"] == any(m["beyond_noise"] for m in measures)
    # the threshold scales the band: 0 makes any Δ stand out, 100 none of these
    loud = json.loads(_learned_run(learned, ci, "--base-ref", base, "--format", "json",
                                   "--threshold", "0").output)  # fmt: skip
    quiet = json.loads(_learned_run(learned, ci, "--base-ref", base, "--format", "json",
                                    "--threshold", "100").output)  # fmt: skip
    assert loud["beyond_noise"] is True and quiet["beyond_noise"] is False
    assert loud["threshold"] == 0 and quiet["threshold"] == 100
    text = _learned_run(learned, ci, "--base-ref", base, "--format", "markdown",
                        "--threshold", "100").output  # fmt: skip
    assert "**inside the noise** (threshold 100)" in text
    assert "Run-to-run noise: the 5 latest complete runs of this workflow" in text
    loud_text = _learned_run(learned, ci, "--base-ref", base, "--format", "markdown",
                             "--threshold", "0").output  # fmt: skip
    assert "**beyond the noise** (threshold 0)" in loud_text
    for bad in ("-1", "nan", "inf", "x"):
        refused = _learned_run(learned, ci, "--base-ref", base, "--threshold", bad)
        assert refused.exit_code == 2, bad


def test_a_job_whose_steps_changed_is_listed_as_predicted_from_runs_of_its_old_steps(
    learned: Path, tmp_path: Path
) -> None:
    """The test jobs run `pytest -q -n 4` now: what they run changed, so each is `changed`
    even where the history-track model predicts it from its runs before (which ran `pytest
    -q`), and every format says so. A bumped action (@v4 to @v5) changes no step's work; a
    file compared with itself changes nothing."""
    repo = _new_repo(tmp_path)
    base = _commit(repo, {CI: FIXTURE_CI}, "base")
    bumped = FIXTURE_CI.replace("actions/checkout@v4", "actions/checkout@v5")
    bump = _commit(repo, {CI: bumped}, "checkout v5")
    _commit(repo, {CI: bumped.replace("- run: pytest -q\n", "- run: pytest -q -n 4\n")}, "-n 4")
    ci = repo / CI
    doc = json.loads(_learned_run(learned, ci, "--base-ref", bump, "--format", "json").output)
    (review,) = doc["reviews"]
    rows = {j["name"]: (j["status"], j["steps_changed"], j["basis"]) for j in review["jobs"]}
    assert len(rows) == 4 and set(rows.values()) == {("changed", True, "history")}
    assert review["counts"]["changed"] == 4
    assert "old steps" in doc["steps_changed_meaning"]
    markdown = _learned_run(learned, ci, "--base-ref", bump, "--format", "markdown").output
    (row,) = [line for line in markdown.splitlines() if "| test (ubuntu-latest, 3.10) |" in line]
    assert "| changed | history |" in row and STEPS_UNSEEN_WORDS in row
    assert "4 job(s) run other steps now but are predicted from their runs before" in markdown
    table = _learned_run(learned, ci, "--base-ref", bump, "--no-callers").output
    assert "4 job(s) run other steps now" in table and "old steps" in table
    # the action bump alone, and the file against itself: nothing changed, nothing said
    for against in (base, "HEAD"):
        if against == base:
            _git(repo, "checkout", "-q", bump)
        else:
            _git(repo, "checkout", "-q", "main")
        done = _learned_run(learned, ci, "--base-ref", against, "--format", "json")
        (same,) = json.loads(done.output)["reviews"]
        assert {j["status"] for j in same["jobs"]} == {"unchanged"}
        assert not any(j["steps_changed"] for j in same["jobs"])
        text = _learned_run(learned, ci, "--base-ref", against, "--format", "markdown").output
        assert "run other steps now" not in text and STEPS_UNSEEN_WORDS not in text


def test_the_bill_follows_the_repositorys_known_visibility(
    learned: Path, model: Path, tmp_path: Path
) -> None:
    ci, base = _with_docs(tmp_path)
    doc = json.loads(_learned_run(learned, ci, "--base-ref", base, "--format", "json").output)
    assert doc["billing"] == {"repository": "public", "visibility_from": "learn.json"}
    assert doc["reviews"][0]["bill"]["cost_usd_after"] == 0.0  # standard runners, public
    plain = json.loads(_learned_run(learned, ci, "--json").output)
    assert plain["billing"]["repository"] == "public"
    assert plain["billing"]["visibility_from"] == "learn.json"
    said = json.loads(_learned_run(learned, ci, "--json", "--private").output)
    assert said["billing"]["repository"] == "private" and said["cost_usd"] > 0
    meta = tmp_path / "repo.json"
    meta.write_text(json.dumps({"full_name": "o/r", "visibility": "public"}))
    by_meta = json.loads(_run(str(ci), "--model", str(model), "--json", "--repo-meta",
                              str(meta)).output)  # fmt: skip
    assert by_meta["billing"]["repository"] == "public"
    assert by_meta["billing"]["visibility_from"] == "--repo-meta"
    unknown = _run(str(ci), "--model", str(model), "--base-ref", base, "--format", "markdown")
    assert "Billed as a private repository (visibility unknown" in unknown.output


def test_money_deltas_are_signed_one_way_everywhere(model: Path, tmp_path: Path) -> None:
    """`+$0.072` beside `−$0.270`: the sign always shown, a true minus as the times have, the
    dollar sign kept; never `-0.270`."""
    import re

    old, new = _files(tmp_path)
    for fmt in ("table", "markdown"):
        done = _run(str(new), "--model", str(model), "--base", str(old), "--path", CI,
                    "--format", fmt)  # fmt: skip
        assert done.exit_code == 0, done.output
        assert re.search(r"\+\$\d+\.\d{3}", done.output), fmt
        if fmt == "table":  # a Δ cost per job; the Markdown gives each side's cost
            assert re.search(r"−\$\d+\.\d{3}", done.output), fmt
        assert not re.search(r"(?<![\w$])-\$?\d+\.\d{3}", done.output), fmt


def test_the_pull_request_markdown_pings_no_one_and_hides_nothing(
    model: Path, tmp_path: Path
) -> None:
    import re

    hostile = 'name: "deploy @octocat cc @org/team see https://evil.example/x www.evil.example a\\u202eb\\u200bc"'
    old, new = _files(tmp_path)
    new.write_text(NEW.replace('name: "docs | <b>site</b>"', hostile))
    done = _run(str(new), "--model", str(model), "--base", str(old), "--path", CI,
                "--format", "markdown")  # fmt: skip
    assert done.exit_code == 0, done.output
    text = done.output
    live = re.sub(r"(`+)(?:(?!\1).)*?\1", "", text)  # what GitHub scans for mentions and links
    assert "@" not in live and "://" not in live and "www." not in live
    assert "\u202e" not in text and "\u200b" not in text
    assert "\\\\u202e" in text  # shown as its escape
    assert "`@octocat`" in text and "`@org/team`" in text
