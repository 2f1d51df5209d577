"""docs/ci/review-workflows.sh, the script the shipped pull-request workflow runs, run for real
(bash, git, the installed `gharuntime predict`) in a temporary repository, on the file names and
settings a hostile or merely unusual pull request brings: non-ASCII, spaces, tabs, line breaks,
HTML and @mentions in a removed workflow's name, an option where the base should be."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs/ci/review-workflows.sh"
FLOWS = ".github/workflows"
REVIEWED = ": predicted time and cost of this change"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the script is a bash script")

ONE_JOB = """on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: make
"""
TWO_JOBS = (
    ONE_JOB
    + """  test:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - run: make test
"""
)


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def _repo(tmp_path: Path, before: dict[str, str], after: dict[str, str | None]) -> tuple[Path, str]:
    """A repository of two commits: `before`'s files, then `after` applied (None removes)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for name, text in before.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD")
    for name, text in after.items():
        if text is None:
            (repo / name).unlink()
        else:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "change")
    return repo, base


def _run(
    repo: Path, model: Path, tmp_path: Path, **env: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step's summary\n", encoding="utf-8")
    full = {
        **os.environ,
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_WORKSPACE": str(repo),
        "GHARUNTIME_MODEL": str(model),
        "GHARUNTIME_ARGS": "--at 2026-03-02",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        **env,
    }
    done = subprocess.run(
        ["bash", str(SCRIPT)], capture_output=True, text=True, env=full, check=False, timeout=600
    )
    return done, summary.read_text(encoding="utf-8")


def _outside_code_spans(text: str) -> str:
    return re.sub(r"(`+) .*? \1", "", text)


def test_a_changed_workflow_with_a_non_ascii_name_is_reviewed(
    lightgbm_model: Path, tmp_path: Path
) -> None:
    """git quotes `d\\303\\251ploy.yml` in its plain output; the script reads names raw."""
    repo, base = _repo(
        tmp_path, {f"{FLOWS}/déploy.yml": ONE_JOB}, {f"{FLOWS}/déploy.yml": TWO_JOBS}
    )
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"base": {"sha": base}}}))
    done, summary = _run(repo, lightgbm_model, tmp_path, GITHUB_EVENT_PATH=str(event))
    assert done.returncode == 0, done.stderr
    assert summary.startswith("earlier step's summary\n")  # appended, never replaced
    assert f"### {FLOWS}/déploy.yml{REVIEWED}" in summary
    assert "1 job(s) added, 0 removed, 0 changed, 1 unchanged" in summary
    assert "No workflow file changed" not in summary


def test_names_with_spaces_and_tabs_are_reviewed_and_subfolders_are_not(
    lightgbm_model: Path, tmp_path: Path
) -> None:
    names = [f"{FLOWS}/my ci.yml", f"{FLOWS}/tab\there.yaml", f"{FLOWS}/sub/not-a-workflow.yml"]
    repo, base = _repo(tmp_path, dict.fromkeys(names, ONE_JOB), dict.fromkeys(names, TWO_JOBS))
    done, summary = _run(repo, lightgbm_model, tmp_path, GHARUNTIME_BASE=base)
    assert done.returncode == 0, done.stderr
    assert f"### {FLOWS}/my ci.yml{REVIEWED}" in summary
    # two reviews: the space and the tab; GitHub reads no workflow from a subfolder
    assert summary.count(REVIEWED) == 2, summary
    assert summary.count("1 job(s) added, 0 removed, 0 changed, 1 unchanged") == 2
    assert "not-a-workflow" not in summary


def test_a_removed_workflows_name_goes_into_the_summary_escaped(
    lightgbm_model: Path, tmp_path: Path
) -> None:
    """A removed workflow is listed by name, and the name is the pull request author's: HTML,
    @mentions, Markdown, a line break, a bidi override and a zero-width space all stay text."""
    img = f"{FLOWS}/<img src=x> @someone.yml"
    evil = f"{FLOWS}/x\n::error::pwned `tick` | ## h\u202e\u200b.yml"
    repo, base = _repo(tmp_path, {img: ONE_JOB, evil: ONE_JOB}, {img: None, evil: None})
    done, summary = _run(repo, lightgbm_model, tmp_path, GHARUNTIME_BASE=base)
    assert done.returncode == 0, done.stderr
    # one code span each: GitHub shows it as written, links no mention, reads no HTML in it
    assert f"### ` {img} `: removed by this change\n" in summary
    assert (
        f"### `` {FLOWS}/x\\n::error::pwned `tick` | ## h\\u202e\\u200b.yml ``: removed by this change\n"
        in summary
    )
    outside = _outside_code_spans(summary)
    assert "<img" not in outside and "@someone" not in outside and "pwned" not in outside
    assert "\u202e" not in summary and "\u200b" not in summary
    # no line of the summary or the log starts with what the runner reads as a command
    assert not any(line.startswith("::") for line in summary.splitlines())
    assert not any(line.startswith("::") for line in done.stdout.splitlines())


def test_a_base_that_is_an_option_is_refused_and_writes_nothing(
    lightgbm_model: Path, tmp_path: Path
) -> None:
    repo, _ = _repo(tmp_path, {f"{FLOWS}/ci.yml": ONE_JOB}, {f"{FLOWS}/ci.yml": TWO_JOBS})
    clobbered = tmp_path / "clobbered"
    for base in (f"--output={clobbered}", "no-such-branch", "HEAD:ci.yml"):
        done, summary = _run(repo, lightgbm_model, tmp_path, GHARUNTIME_BASE=base)
        assert done.returncode == 2, (base, done.stderr)
        assert "review-workflows:" in done.stderr and "Traceback" not in done.stderr
        assert summary == "earlier step's summary\n"
        assert not clobbered.exists()


def test_a_workflow_predict_refuses_does_not_hide_the_others(
    lightgbm_model: Path, tmp_path: Path
) -> None:
    repo, base = _repo(
        tmp_path,
        {f"{FLOWS}/ci.yml": ONE_JOB},
        {f"{FLOWS}/ci.yml": TWO_JOBS, f"{FLOWS}/a-list.yml": "- a\n- b\n"},
    )
    done, summary = _run(repo, lightgbm_model, tmp_path, GHARUNTIME_BASE=base)
    assert done.returncode == 1, done.stderr  # the check shows red, the summary is whole
    assert f"### ` {FLOWS}/a-list.yml `: not reviewed (gharuntime predict exited 2" in summary
    assert f"### {FLOWS}/ci.yml{REVIEWED}" in summary
    assert "not a workflow" in done.stderr  # predict's own message: in the log only
    assert "not a workflow" not in summary


def test_the_comment_holds_the_reviews_whose_delta_is_beyond_the_noise(
    lightgbm_model: Path, tmp_path: Path
) -> None:
    """With GHARUNTIME_COMMENT_FILE the script writes the comment's body: a marker line with
    predict's verdict (`beyond_noise` in its JSON), then the reviews beyond the noise."""
    repo, base = _repo(tmp_path, {f"{FLOWS}/ci.yml": ONE_JOB}, {f"{FLOWS}/ci.yml": TWO_JOBS})
    comment = tmp_path / "comment.md"
    done, summary = _run(
        repo, lightgbm_model, tmp_path, GHARUNTIME_BASE=base, GHARUNTIME_COMMENT_FILE=str(comment)
    )
    assert done.returncode == 0, done.stderr
    assert f"### {FLOWS}/ci.yml{REVIEWED}" in summary
    predicted = subprocess.run(
        [str(Path(sys.executable).parent / "gharuntime"), "predict", f"{FLOWS}/ci.yml",
         "--model", str(lightgbm_model), "--base-ref", base, "--format", "json",
         "--at", "2026-03-02"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    verdict = json.loads(predicted).get("beyond_noise")
    body = comment.read_text(encoding="utf-8")
    first, _, rest = body.partition("\n")
    if verdict is True:
        assert first == "<!-- gharuntime-review-workflows beyond-noise=true -->"
        assert f"### {FLOWS}/ci.yml{REVIEWED}" in rest
    else:
        assert first == "<!-- gharuntime-review-workflows beyond-noise=false -->"
        assert REVIEWED not in rest
        assert "None of the workflow changes reviewed" in rest
        counted = "0 without a noise verdict" if verdict is False else "1 without a noise verdict"
        assert counted in rest
    assert "The whole review is in the job summary." in rest
    assert not list(tmp_path.glob("comment.md.tmp"))
