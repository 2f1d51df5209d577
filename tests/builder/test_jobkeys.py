"""API job names → YAML job keys, by GitHub's naming rules (expected keys written by hand)."""

from __future__ import annotations

import json

import polars as pl
import pytest
from raw_world import BAD_YAML, CI_YAML

from gharuntime.builder.jobkeys import (
    WorkflowIndex,
    local_calls,
    resolve_job_keys,
    resolve_unit,
    yaml_sha256,
)


@pytest.fixture(scope="module")
def ci_index() -> WorkflowIndex:
    return WorkflowIndex.parse(CI_YAML)


@pytest.mark.parametrize(
    ("name", "key", "how"),
    [
        ("lint", "lint", "exact"),
        ("Test 3.10 on ubuntu-latest", "test", "exact"),  # name: template with matrix values
        ("Test 3.12 on macos-latest", "test", "exact"),  # an include that adds a combination
        ("build (arm64)", "build", "exact"),  # GitHub's default naming `key (v1, ...)`
        ("call / deploy", "call", "caller"),  # reusable-workflow caller / callee
        ("dyn (a, b)", "dyn", "pattern"),  # matrix from an expression: key known, matrix not
    ],
)
def test_api_job_name_resolves_to_its_yaml_key(
    ci_index: WorkflowIndex, name: str, key: str, how: str
) -> None:
    match = ci_index.resolve(name)
    assert match is not None
    assert (match.job_key, match.how) == (key, how)


def test_excluded_combination_does_not_resolve(ci_index: WorkflowIndex) -> None:
    # exclude drops windows + 3.10, so GitHub never runs a job of that name.
    assert ci_index.resolve("Test 3.10 on windows-latest") is None


def test_matrix_values_and_labels_come_with_the_key(ci_index: WorkflowIndex) -> None:
    match = ci_index.resolve("Test 3.11 on windows-latest")
    assert match is not None
    assert json.loads(match.matrix or "{}") == {"os": "windows-latest", "python": "3.11"}
    assert match.runner_labels == ("windows-latest",)
    assert match.needs == ("lint",)
    assert match.job_yaml.startswith("test:\n")


def test_unknown_name_stays_unresolved(ci_index: WorkflowIndex) -> None:
    assert ci_index.resolve("mystery job") is None


def test_two_keys_with_the_same_display_name_are_ambiguous() -> None:
    text = (
        "on: push\njobs:\n  a:\n    name: Same\n    runs-on: ubuntu-latest\n    steps: []\n"
        "  b:\n    name: Same\n    runs-on: ubuntu-latest\n    steps: []\n"
    )
    assert WorkflowIndex.parse(text).resolve("Same") is None


def test_recorded_pygithub_job_names_resolve() -> None:
    # PyGithub's CI names its matrix jobs `test (Python X)`; a workflow written that way (this
    # YAML is a reconstruction) must give the recorded names in reference/recorded-api/jobs.json.
    text = (
        "on: push\njobs:\n  test:\n    runs-on: ${{ matrix.os }}\n"
        "    name: test (Python ${{ matrix.python-version }})\n    strategy:\n      matrix:\n"
        '        python-version: ["3.7", "3.8", "3.9", "3.10", "3.11-dev"]\n'
        "        os: [ubuntu-latest]\n    steps: []\n"
    )
    index = WorkflowIndex.parse(text)
    for version in ("3.7", "3.10", "3.11-dev"):
        match = index.resolve(f"test (Python {version})")
        assert match is not None and match.how == "exact"
        assert json.loads(match.matrix or "{}")["python-version"] == version


def test_bad_yaml_is_reported_once_and_its_jobs_stay_unresolved() -> None:
    good, bad = yaml_sha256(CI_YAML), yaml_sha256(BAD_YAML)
    pairs = pl.DataFrame(
        {
            "workflow_sha256": [good, bad, bad],
            "job_name": ["lint", "a", "b"],
        }
    )
    reported: list[str] = []

    keys = resolve_job_keys(
        pairs, {good: CI_YAML, bad: BAD_YAML}, on_bad_yaml=lambda sha, exc: reported.append(sha)
    )
    assert reported == [bad]
    how = dict(zip(keys["job_name"], keys["job_key_how"], strict=True))
    assert how == {"lint": "exact", "a": "bad_yaml", "b": "bad_yaml"}


def test_worker_processes_resolve_exactly_as_one_process() -> None:
    texts = {
        yaml_sha256(t): t
        for t in (CI_YAML, BAD_YAML, CI_YAML.replace("ruff check .", "ruff check src"))
    }
    names = ["lint", "build (x64)", "Test 3.12 on macos-latest", "call / deploy", "nope"]
    pairs = pl.DataFrame(
        [(sha, n) for sha in texts for n in names],
        schema={"workflow_sha256": pl.String, "job_name": pl.String},
        orient="row",
    )
    serial = resolve_job_keys(pairs, texts, workers=1)
    parallel = resolve_job_keys(pairs, texts, workers=2, parallel_above=0)
    assert parallel.equals(serial)
    assert serial.height == 15


CALLER = """on: push
jobs:
  CI:
    uses: ./.github/workflows/ci.yml
    with: {java: 17}
  remote:
    uses: octo/ci/.github/workflows/build.yml@v1
"""
CALLEE = """on:
  workflow_call:
    inputs: {java: {type: number}}
jobs:
  unit:
    runs-on: ubuntu-22.04
    strategy: {matrix: {suite: [grpc, server]}}
    steps: [{run: "mvn -Djava=${{ inputs.java }} test"}]
  basic:
    runs-on: ubuntu-22.04
    strategy: {matrix: {check: "${{ fromJSON(inputs.checks) }}"}}
    steps: [{run: make}]
"""


def test_jobs_of_a_called_workflow_resolve_to_their_own_key_and_block() -> None:
    index = WorkflowIndex.parse(CALLER, {".github/workflows/ci.yml": CALLEE})
    m = index.resolve("CI / unit (server)")
    assert m is not None
    assert (m.job_key, m.how, m.reusable) == ("CI/unit", "callee", "followed")
    assert json.loads(m.matrix or "") == {"suite": "server"}
    assert m.runner_labels == ("ubuntu-22.04",)
    assert "mvn -Djava=17 test" in m.job_yaml and m.job_yaml.startswith("# CI:\n")
    # a callee matrix known only at run time: key known, matrix not
    m = index.resolve("CI / basic (rat)")
    assert m is not None and (m.job_key, m.how, m.matrix) == ("CI/basic", "callee_pattern", None)
    # a remote call keeps the caller's block, and says why
    m = index.resolve("remote / build")
    assert m is not None and (m.job_key, m.how, m.reusable) == ("remote", "caller", "remote")
    # the same caller without the callee at that commit
    missing = WorkflowIndex.parse(CALLER, {".github/workflows/ci.yml": None}).resolve("CI / unit")
    assert missing is not None and (missing.how, missing.reusable) == ("caller", "missing_callee")


def test_each_commit_resolves_with_its_own_callees() -> None:
    sha = yaml_sha256(CALLER)
    old = {".github/workflows/ci.yml": CALLEE}
    new = {".github/workflows/ci.yml": CALLEE.replace("unit:", "units:")}
    units = {resolve_unit(sha, c): c for c in (old, new)}
    assert len(units) == 2 and resolve_unit(sha, {}) == sha
    pairs = pl.DataFrame(
        {
            "resolve_unit": [*units, *units],
            "workflow_sha256": [sha] * 4,
            "job_name": ["CI / unit (grpc)", "CI / unit (grpc)", "CI / units (grpc)", "x"],
        }
    )
    got = resolve_job_keys(pairs, {sha: CALLER}, callees=units).sort("resolve_unit", "job_name")
    keys = {(u, n): k for u, n, k in got.select("resolve_unit", "job_name", "job_key").iter_rows()}
    old_unit, new_unit = units
    assert keys[(old_unit, "CI / unit (grpc)")] == "CI/unit"
    assert keys[(new_unit, "CI / unit (grpc)")] is None  # that commit's callee has no `unit`
    assert keys[(old_unit, "CI / units (grpc)")] is None
    assert local_calls(CALLER) == [".github/workflows/ci.yml"]
