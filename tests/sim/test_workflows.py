"""gharuntime.sim.workflows: the simulated repositories' workflow files. Every version renders to
YAML that parses back to itself, the same seed gives the same files, and the files hold together
(jobs that `needs` exist, a reusable workflow's caller finds it, matrices name their keys)."""

from __future__ import annotations

import json
import random
import re
from functools import cache
from typing import Any

import pytest
import yaml

from gharuntime.sim.workflows import LANGUAGES, WorkflowDraft, draft_workflows, render_yaml
from gharuntime.workflow import parse_workflow

SEEDS = range(4)
BOTS = {"labeler", "stale"}
ONE_VERSION = {"release", "labeler", "stale", "wheels", "reusable"}  # never changed by commits


def _drafts(seed: int, language: str, count: int = 5, changes: int = 3) -> list[WorkflowDraft]:
    return draft_workflows(random.Random(seed), language, "main", count, changes)


@cache
def _all() -> list[tuple[str, int, WorkflowDraft]]:
    """Every draft of SEEDS × every language (5 workflows, about 3 changes): the tests read them
    and never change them."""
    return [
        (language, seed, draft)
        for language in LANGUAGES
        for seed in SEEDS
        for draft in _drafts(seed, language)
    ]


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # PyYAML's safe loader, in C where built


def _yaml11(spec: Any) -> Any:
    """`spec` as PyYAML (YAML 1.1) reads it back: an unquoted `on:` key is the boolean true."""
    if isinstance(spec, dict):
        return {(True if k == "on" else k): _yaml11(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_yaml11(v) for v in spec]
    return spec


def _jobs(draft: WorkflowDraft) -> list[tuple[dict[str, Any], str, dict[str, Any]]]:
    return [(spec, key, job) for spec in draft.versions for key, job in spec["jobs"].items()]


def test_every_version_renders_to_yaml_that_parses_back_to_it() -> None:
    assert len(_all()) > 100
    for _, _, draft in _all():
        for spec in draft.versions:
            text = render_yaml(spec)
            assert yaml.load(text, Loader=_LOADER) == _yaml11(spec), (draft.path, text)
            assert re.search(r"^on:$", text, flags=re.M) and "'on'" not in text
            assert "null" not in text  # an empty trigger is written `pull_request:`


def test_the_project_reads_every_version_as_a_workflow() -> None:
    for _, _, draft in _all():
        for spec in draft.versions:
            workflow = parse_workflow(render_yaml(spec), draft.path)
            assert workflow.name == spec["name"] == draft.name
            assert list(workflow.jobs) == list(spec["jobs"])
            assert set(workflow.events) == set(spec["on"])


def test_the_same_seed_gives_the_same_workflows() -> None:
    for language in ("Python", "Go", "C++"):
        random.seed(1)  # the module-level generator must play no part
        first = _drafts(11, language)
        random.seed(2)
        second = _drafts(11, language)
        assert first == second
        assert [render_yaml(v) for d in first for v in d.versions] == [
            render_yaml(v) for d in second for v in d.versions
        ]
    texts = {
        tuple(render_yaml(v) for d in _drafts(seed, "Python") for v in d.versions)
        for seed in range(8)
    }
    assert len(texts) == 8  # each seed its own repository


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_count_and_changes_shape_the_drafts(language: str) -> None:
    assert draft_workflows(random.Random(0), language, "main", 0, 3) == []
    for seed in SEEDS:
        one = _drafts(seed, language, count=1)
        assert (one[0].kind, one[0].path) == ("ci", ".github/workflows/ci.yml")
        assert {d.kind for d in one[1:]} <= BOTS
        five = _drafts(seed, language, count=5, changes=0)
        assert len([d for d in five if d.kind not in BOTS | {"reusable"}]) == 5
        assert all(len(d.versions) == 1 for d in five)
        paths = [d.path for d in five]
        assert len(set(paths)) == len(paths)
        assert all(
            p.startswith(".github/workflows/") and p.endswith((".yml", ".yaml")) for p in paths
        )
        for d in _drafts(seed, language, count=5, changes=4):
            assert 1 <= len(d.versions) <= 5
            if d.kind in ONE_VERSION:
                assert len(d.versions) == 1


def test_each_change_alters_the_version_before_it_and_leaves_it_as_it_was() -> None:
    changed = 0
    for language in LANGUAGES:
        for seed in SEEDS:
            unchanged = _drafts(seed, language, changes=0)
            drafts = _drafts(seed, language, changes=6)
            # the CI workflow is drawn first, before any change: the same in both
            assert drafts[0].versions[0] == unchanged[0].versions[0]
            for draft in drafts:
                for before, after in zip(draft.versions, draft.versions[1:], strict=False):
                    assert render_yaml(before) != render_yaml(after)
                    changed += 1
    assert changed > 100


def test_jobs_run_somewhere_and_steps_do_one_thing() -> None:
    for _, _, draft in _all():
        for _, key, job in _jobs(draft):
            assert ("runs-on" in job) != ("uses" in job), (draft.path, key)
            for step in job.get("steps", []):
                assert ("run" in step) != ("uses" in step), (draft.path, key, step)
            if job.get("runs-on") == "${{ matrix.os }}":
                assert "os" in job["strategy"]["matrix"]


def test_needs_name_jobs_of_the_same_workflow() -> None:
    seen = 0
    for _, _, draft in _all():
        for spec, key, job in _jobs(draft):
            needs = job.get("needs", [])
            for other in [needs] if isinstance(needs, str) else needs:
                assert other in spec["jobs"] and other != key, (draft.path, key, other)
                seen += 1
    assert seen > 50


def test_matrices_name_their_keys_and_a_suite_matrix_runs_one_toolchain() -> None:
    suites = 0
    for language, _, draft in _all():
        version_key = LANGUAGES[language].version_key
        for _, _, job in _jobs(draft):
            matrix = job.get("strategy", {}).get("matrix")
            if not matrix:
                continue
            axes = {k for k in matrix if k not in ("include", "exclude")}
            for combo in matrix.get("exclude", []):
                assert set(combo) <= axes
                assert all(combo[k] in matrix[k] for k in combo)
            for combo in matrix.get("include", []):
                assert {"os", version_key} & set(combo) <= axes
            if "suite" in matrix:
                suites += 1
                drafted = draft.versions[0]["jobs"]["test"]["strategy"]["matrix"]
                assert drafted["os"] == ["ubuntu-latest"] and len(drafted[version_key]) == 1
                assert 2 <= len(matrix["suite"]) <= 5
                assert matrix["suite"] == sorted(set(matrix["suite"]))
    assert suites > 0


def test_a_release_calls_the_reusable_workflow_of_its_repository() -> None:
    releases = 0
    for language in LANGUAGES:
        for seed in range(12):
            drafts = {d.path: d for d in _drafts(seed, language)}
            for draft in drafts.values():
                if draft.kind != "release":
                    continue
                releases += 1
                call = draft.versions[0]["jobs"]["call-build"]
                callee = drafts[call["uses"].removeprefix("./")]
                assert callee.kind == "reusable"
                inputs = callee.versions[0]["on"]["workflow_call"]["inputs"]
                assert set(call["with"]) <= set(inputs)
    assert releases > 5


def test_schedules_are_valid_cron() -> None:
    crons = 0
    for _, _, draft in _all():
        for spec in draft.versions:
            for entry in spec["on"].get("schedule") or []:
                minute, hour, *rest = entry["cron"].split()
                assert 0 <= int(minute) < 60 and 0 <= int(hour) < 24 and rest == ["*", "*", "*"]
                crons += 1
    assert crons > 0


def test_matrix_references_name_an_axis_of_the_jobs_matrix() -> None:
    referenced = 0
    for _, _, draft in _all():
        for _, key, job in _jobs(draft):
            matrix = job.get("strategy", {}).get("matrix") or {}
            keys = {k for k in matrix if k not in ("include", "exclude")}
            keys |= {k for combo in matrix.get("include", []) for k in combo}
            # an `if:` may test a property only some combinations set (`if: matrix.coverage`):
            # undefined there is false, as GitHub evaluates it; everywhere else it is a value.
            # Not checked: the job's `name`, drawn before a self-hosted or larger runner drops
            # the `os` axis, so such a job is named " / python-version 3.12" (as GitHub would
            # name it too: an undefined property renders empty)
            body = {k: v for k, v in job.items() if k not in ("strategy", "name")}
            body["steps"] = [
                {k: v for k, v in s.items() if k != "if"} for s in job.get("steps", [])
            ]
            for name in re.findall(r"\$\{\{ matrix\.([\w-]+) \}\}", json.dumps(body)):
                assert name in keys, (draft.path, key, name, sorted(keys))
                referenced += 1
    assert referenced > 100


def test_render_yaml_writes_block_style_in_the_given_order() -> None:
    spec = {
        "name": "CI",
        "on": {"push": {"branches": ["main"]}, "pull_request": None},
        "jobs": {
            "test": {
                "runs-on": "ubuntu-latest",
                "steps": [{"run": "pip install .\npytest"}, {"run": "x" * 300}],
            }
        },
    }
    assert render_yaml(spec) == (
        "name: CI\n"
        "on:\n"
        "  push:\n"
        "    branches:\n"
        "    - main\n"
        "  pull_request:\n"
        "jobs:\n"
        "  test:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "    - run: |-\n"
        "        pip install .\n"
        "        pytest\n"
        f"    - run: {'x' * 300}\n"
    )
    first = render_yaml({"on": {"workflow_dispatch": None}, "jobs": {}})
    assert first.startswith("on:\n  workflow_dispatch:\n")


def test_render_yaml_keeps_values_that_look_like_keywords() -> None:
    spec = {"name": "on", "env": {"FLAG": "yes", "EMPTY": "", "N": "1.10"}, "on": {"push": None}}
    text = render_yaml(spec)
    assert yaml.safe_load(text) == _yaml11(spec)
    assert "name: 'on'\n" in text  # a value `on` stays quoted; only the key is written bare


def test_render_yaml_keeps_a_run_block_that_mentions_null() -> None:
    spec = {"jobs": {"a": {"steps": [{"run": "echo key: null\ncat out"}]}}}
    assert yaml.safe_load(render_yaml(spec)) == spec
