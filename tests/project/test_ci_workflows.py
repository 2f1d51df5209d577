"""Every GitHub Actions workflow file the project ships (docs/ci/ for adopters to copy,
.github/workflows/ for its own releases) passes the linters Actions users run, offline: zizmor's
audits and check-jsonschema's vendored GitHub workflow schema. And the pull-request workflow is
one a team can adopt: a pinned install, actions pinned by commit SHA, no token left behind, least
permissions, the optional comment job apart."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
REVIEW = ROOT / "docs/ci/review-workflows.yml"
RELEASE = ROOT / ".github/workflows/release.yml"
SHA_PIN = re.compile(
    r"^\s*(?:-\s+)?uses:\s*([\w.-]+/[\w./-]+)@([0-9a-f]{40})\s+#\s*v\d+(?:\.\d+)*\s*$"
)


def _shipped_workflows() -> list[Path]:
    """Every YAML file under .github/ and docs/ that is a workflow (a mapping with `jobs:`)."""
    found = []
    for folder in (ROOT / ".github", ROOT / "docs"):
        for path in sorted([*folder.rglob("*.yml"), *folder.rglob("*.yaml")]):
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and "jobs" in data:
                found.append(path)
    return found


def _tool(name: str) -> str:
    """The linter installed beside this Python (the `test` extra), else on PATH."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]' -c constraints/ci.txt")
    return found


def _offline_env() -> dict[str, str]:
    """No token, and every HTTP(S) request sent to a closed local port: a linter that went to
    the network would fail here."""
    env = {k: v for k, v in os.environ.items() if k not in {"GH_TOKEN", "GITHUB_TOKEN"}}
    dead = "http://127.0.0.1:9"
    env.update(HTTP_PROXY=dead, HTTPS_PROXY=dead, http_proxy=dead, https_proxy=dead, NO_PROXY="")
    return env


def _zizmor(*paths: Path) -> subprocess.CompletedProcess[str]:
    # auditor: every audit, false positives included; --no-config: no ignore rules from a file
    return subprocess.run(
        [_tool("zizmor"), "--offline", "--no-config", "--persona", "auditor", *map(str, paths)],
        capture_output=True,
        text=True,
        env=_offline_env(),
        timeout=120,
        check=False,
    )


def _schema(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            _tool("check-jsonschema"),
            "--builtin-schema",
            "vendor.github-workflows",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        env=_offline_env(),
        timeout=120,
        check=False,
    )


def test_the_shipped_workflows_are_found() -> None:
    assert {REVIEW, RELEASE} <= set(_shipped_workflows())


def test_every_shipped_workflow_passes_zizmor_and_githubs_workflow_schema(tmp_path: Path) -> None:
    # first, that the checks can fail: the shipped workflow as it was (a tag-pinned checkout that
    # keeps its token) is caught by zizmor, and a misspelt key by the schema
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: pull_request\npermissions:\n  contents: read\njobs:\n  a:\n    runs-on: ubuntu-latest\n"
        "    steps:\n      - uses: actions/checkout@v4\n"
    )
    found = _zizmor(bad)
    assert found.returncode != 0
    assert "unpinned-uses" in found.stdout and "artipacked" in found.stdout
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    stepz: []\n")
    assert _schema(bad).returncode != 0

    shipped = _shipped_workflows()
    done = _zizmor(*shipped)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout, done.stdout
    assert "suppressed" not in done.stdout  # none hidden below the persona either
    done = _schema(*shipped)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "validation done" in done.stdout


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _on(workflow: dict[str, Any]) -> dict[str, Any]:
    on = workflow.get("on", workflow.get(True))  # PyYAML reads a bare `on` key as True
    assert isinstance(on, dict)
    return on


@pytest.mark.parametrize("path", [REVIEW, RELEASE], ids=["review", "release"])
def test_every_action_is_pinned_by_commit_sha_with_its_version(path: Path) -> None:
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if "uses:" in ln]
    assert lines
    for line in lines:
        assert SHA_PIN.match(line), (
            f"{path.name}: {line.strip()!r} is not `uses: OWNER/REPO@<sha> # vX`"
        )


@pytest.mark.parametrize("path", [REVIEW, RELEASE], ids=["review", "release"])
def test_checkouts_keep_no_token_and_runs_expand_no_expression(path: Path) -> None:
    workflow = _load(path)
    assert workflow["permissions"] == {}  # nothing unless a job asks
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, name
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False, name
            # untrusted values reach a shell through env, never spliced into its text
            assert "${{" not in str(step.get("run", "")), (name, step.get("name"))


def test_the_pull_request_workflow_is_adoptable() -> None:
    workflow = _load(REVIEW)
    on = _on(workflow)
    assert set(on) == {"pull_request"}  # never pull_request_target: no secrets for fork code
    jobs = workflow["jobs"]
    assert jobs["review"]["permissions"] == {"contents": "read"}
    # the comment job alone may write, only to pull requests, and only when turned on
    assert jobs["comment"]["permissions"] == {"pull-requests": "write"}
    assert "vars.GHARUNTIME_PR_COMMENT == 'true'" in jobs["comment"]["if"]
    # and runs no code of the pull request: it checks nothing out
    assert not any("checkout" in str(s.get("uses", "")) for s in jobs["comment"]["steps"])
    runs = "\n".join(str(s.get("run", "")) for s in jobs["review"]["steps"])
    # a pinned install: the repository at a full commit SHA, never a bare package name
    assert re.search(
        r"pip install\b.*gharuntime @ git\+\$\{GHARUNTIME_REPO\}@\$\{GHARUNTIME_SHA\}", runs
    )
    assert not re.search(r"pip install(?:\s+-\S+)*\s+gharuntime\s*$", runs, re.M)
    assert "^[0-9a-f]{40}$" in runs  # refuses to install until the SHA is filled in


def test_the_install_step_refuses_the_placeholder(tmp_path: Path) -> None:
    """The step as written: with the placeholder it stops before pip, saying what to fill in."""
    workflow = _load(REVIEW)
    [step] = [s for s in workflow["jobs"]["review"]["steps"] if "pip install" in str(s.get("run"))]
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    # `python -m pip` must never be reached with the placeholder: a python here that fails loudly
    (fake_bin / "python").write_text("#!/bin/sh\necho 'pip was run' >&2\nexit 99\n")
    (fake_bin / "python").chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{fake_bin}:{os.environ['PATH']}",
        "GHARUNTIME_REPO": workflow["env"]["GHARUNTIME_REPO"],
        "GHARUNTIME_SHA": workflow["env"]["GHARUNTIME_SHA"],
    }
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 1 and "pip was run" not in done.stderr
    assert "40 hex digits" in done.stderr and "fill it in" in done.stderr
    env["GHARUNTIME_SHA"] = "a" * 40
    reached = subprocess.run(
        ["bash", "-e", "-c", step["run"]], capture_output=True, text=True, env=env, check=False
    )
    assert reached.returncode == 99 and "pip was run" in reached.stderr


def test_the_release_workflow_publishes_by_trusted_publishing_only() -> None:
    workflow = _load(RELEASE)
    jobs = workflow["jobs"]
    assert jobs["build"]["permissions"] == {"contents": "read"}
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}  # the OIDC token, in this job only
    assert publish["environment"]["name"] == "pypi"
    assert publish["needs"] == "build"
    [upload] = [s for s in publish["steps"] if "gh-action-pypi-publish" in str(s.get("uses"))]
    assert "with" not in upload or not {"password", "user"} & set(upload["with"])  # no API token
    text = RELEASE.read_text(encoding="utf-8")
    assert "secrets." not in text
