"""LASER's serialization: what a prompt holds, the token budget and its truncation order."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from gharuntime.baselines.laser.serialize import (
    PromptTooLong,
    columns_for,
    estimate_tokens,
    serialize_job,
)
from gharuntime.baselines.method import inputs_for
from gharuntime.contract import HISTORY_COLUMN, TRACKS, input_columns
from gharuntime.fixture import fixture_jobs

WORKFLOW = """\
name: CI
on:
  push:
    branches: [main]
  pull_request:
    paths: ['src/**']
env:
  FORCE_COLOR: "1"
  PIP_CACHE: ~/.cache/pip
defaults:
  run:
    shell: bash
concurrency:
  group: ci-${{ github.ref }}
  cancel-in-progress: true
permissions:
  contents: read
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
    - run: echo LINT-ONLY-MARKER
  test:
    name: test (${{ matrix.python }})
    needs: lint
    runs-on: ubuntu-22.04
    timeout-minutes: 30
    strategy:
      matrix:
        python: ['3.11', '3.12']
    env:
      COVERAGE: "1"
    steps:
    - uses: actions/checkout@v4
    - name: Setup
      uses: actions/setup-python@v5
      with:
        python-version: ${{ matrix.python }}
    - name: Install
      run: |
        pip install -U pip
        pip install -e .[test]
        pip list
    - name: Test
      run: |
        pytest -x -q tests/unit
        pytest -q tests/integration --maxfail 3
        coverage xml
        coverage report
        echo done
        echo really done
        echo the end
        echo ninth line
        echo tenth line
    - name: Upload
      uses: actions/upload-artifact@v4
      with:
        name: cov-${{ matrix.python }}
        path: coverage.xml
"""

JOB_YAML = WORKFLOW[WORKFLOW.index("  test:\n") :].replace("\n  ", "\n")[2:]


def _row(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "repo": "octo-org/widget",
        "repo_language": "Python",
        "repo_stars": 1234,
        "repo_size_kb": 5678,
        "repo_topics": ["testing", "ci-topic-marker"],
        "repo_fork": False,
        "run_attempt": 2,
        "event": "pull_request",
        "head_branch": "feature/speed",
        "is_default_branch": False,
        "head_commit_message": "Make the widget faster by caching the frobnicator results "
        "across runs\n\nLong body that must never appear",
        "workflow_path": ".github/workflows/ci.yml",
        "workflow_name": "CI",
        "workflow_yaml": WORKFLOW,
        "job_name": "test (3.12)",
        "job_key": "test",
        "job_yaml": JOB_YAML,
        "matrix": '{"python":"3.12"}',
        "runner_labels": ["ubuntu-22.04"],
        "runner_os": "Linux",
        "needs": ["lint"],
        "step_names": ["Set up job", "Run actions/checkout@v4", "Setup", "Install", "Test"],
        "created_at": datetime(2026, 3, 4, 13, 5, tzinfo=timezone.utc),
        HISTORY_COLUMN: [181.0, 175.5, 190.0],
    }
    row.update(over)
    return row


def test_columns_are_inputs_the_track_allows() -> None:
    for track in TRACKS:
        cols = columns_for(track)
        assert inputs_for("laser", cols, track) == cols  # the Method.reads rule
        assert set(cols) <= set(input_columns(track))
        assert (HISTORY_COLUMN in cols) == TRACKS[track].uses_history
    for needed in ("workflow_yaml", "job_yaml", "matrix", "runner_labels", "needs", "step_names"):
        assert needed in columns_for("config")
    with pytest.raises(ValueError, match="unknown track"):
        columns_for("nope")


def test_prompt_holds_every_part_of_the_job() -> None:
    text = serialize_job(_row(), track="history", budget=4096)
    lines = text.splitlines()
    assert lines[0] == (
        "repo: octo-org/widget | language: Python | stars: 1234 | size_kb: 5678 | fork: no"
    )
    assert "topics: testing, ci-topic-marker" in lines
    assert "workflow: CI (.github/workflows/ci.yml)" in lines
    assert (
        "event: pull_request | branch: feature/speed | attempt: 2 | queued: Wed 13:05 UTC" in lines
    )
    assert "commit: Make the widget faster by caching the frobnicator results across runs" in lines
    assert "Long body" not in text  # the first line of the message only
    # the inherited workflow-level context, as written
    for key in ("on:", "env:", "defaults:", "concurrency:", "permissions:"):
        assert key in lines
    assert "  group: ci-${{ github.ref }}" in lines and '  FORCE_COLOR: "1"' in lines
    assert "job: test | name: test (3.12)" in lines
    assert "runner: ubuntu-22.04 (Linux)" in lines
    assert "needs: lint" in lines
    assert "matrix: python=3.12" in lines
    assert "step names: Set up job | Run actions/checkout@v4 | Setup | Install | Test" in lines
    job = text[text.index("job yaml:\n") + len("job yaml:\n") : text.index("\nhistory_s:")]
    assert job == JOB_YAML.rstrip("\n")  # the job's own block, exactly
    assert "LINT-ONLY-MARKER" not in text  # no other job's YAML
    assert lines[-1] == "history_s: 181, 176, 190"


def test_history_only_on_the_history_track() -> None:
    assert "history_s" not in serialize_job(_row(), track="config", budget=4096)
    assert "history_s" not in serialize_job(_row(), track="multi", budget=4096)
    empty = serialize_job(_row(**{HISTORY_COLUMN: []}), track="history", budget=4096)
    assert empty.splitlines()[-1] == "history_s: none"


def test_deterministic() -> None:
    row = _row()
    first = serialize_job(row, track="config", budget=150)
    reordered = dict(reversed(list(row.items())))
    assert serialize_job(reordered, track="config", budget=150) == first
    assert serialize_job(_row(), track="config", budget=150) == first


def test_missing_parts_are_left_out_or_recovered() -> None:
    # no job_yaml: the block is cut from the workflow by job_key
    via_workflow = serialize_job(_row(job_yaml=None), track="config", budget=4096)
    assert via_workflow == serialize_job(_row(), track="config", budget=4096)
    bare = _row(
        job_yaml=None,
        workflow_yaml=None,
        repo_topics=[],
        head_commit_message=None,
        matrix=None,
        needs=[],
        step_names=[],
    )
    text = serialize_job(bare, track="config", budget=4096)
    assert "(unknown: the job's YAML was not resolved)" in text
    for absent in ("topics:", "commit:", "workflow context:", "matrix:", "needs:", "step names:"):
        assert absent not in text
    broken = serialize_job(_row(workflow_yaml="on: [push\njobs: {"), track="config", budget=4096)
    assert "workflow context:" not in broken and "job yaml:\ntest:" in broken


# which stage each marker belongs to, in the documented order of cutting
STAGES = [
    ("topics", lambda t: "topics:" in t),
    ("commit whole", lambda t: "across runs" in t),
    ("commit", lambda t: "commit:" in t),
    ("context tail", lambda t: "permissions:" in t),
    ("context", lambda t: "workflow context:" in t),
    ("step names", lambda t: "step names:" in t),
    ("other keys' bodies", lambda t: "COVERAGE" in t),
    ("other keys", lambda t: "timeout-minutes" in t),
    ("long steps", lambda t: "echo tenth line" in t),
    ("short steps", lambda t: "pip install -U pip" in t),
    ("last step", lambda t: "name: Upload" in t),
    ("first step", lambda t: "actions/checkout@v4" in t),
]


def test_budget_is_kept_and_the_job_steps_are_cut_last() -> None:
    full = serialize_job(_row(), track="history", budget=10_000)
    full_tokens = estimate_tokens(full)
    gone_at: dict[str, int] = {}
    budget = full_tokens
    while True:
        try:
            text = serialize_job(_row(), track="history", budget=budget)
        except PromptTooLong:
            break
        assert estimate_tokens(text) <= budget
        for name, present in STAGES:
            if not present(text):
                gone_at.setdefault(name, budget)
            else:
                assert name not in gone_at, f"{name} came back at budget {budget}"
        budget -= 1
    assert set(gone_at) == {name for name, _ in STAGES}
    order = [gone_at[name] for name, _ in STAGES]
    assert order == sorted(order, reverse=True), gone_at  # each stage goes no earlier than the last
    assert gone_at["topics"] > gone_at["context"] > gone_at["step names"] > gone_at["long steps"]
    # the header lines survive to the end
    smallest = serialize_job(_row(), track="history", budget=budget + 1)
    for line in ("repo: octo-org/widget", "job: test", "matrix: python=3.12", "history_s: 181"):
        assert line in smallest
    assert "# 5 more steps" in smallest


def test_prompt_too_long_names_the_job_and_budget() -> None:
    with pytest.raises(PromptTooLong, match=r"'test \(3.12\)' of 'octo-org/widget'.*budget of 20"):
        serialize_job(_row(), track="config", budget=20)
    with pytest.raises(ValueError, match="budget"):
        serialize_job(_row(), track="config", budget=0)


def test_a_real_tokenizer_counts_the_budget() -> None:
    calls: list[str] = []

    def count(text: str) -> int:
        calls.append(text)
        return len(text)  # one token per character

    text = serialize_job(_row(), track="config", budget=700, count_tokens=count)
    assert len(text) <= 700 and calls[-1] == text


def test_fixture_rows_serialize_within_budget() -> None:
    rows = list(fixture_jobs(repos=3, runs_per_repo=2).iter_rows(named=True))
    texts = [serialize_job(r, track="multi", budget=256) for r in rows]
    assert all(estimate_tokens(t) <= 256 for t in texts)
    assert all("job yaml:" in t and "steps:" in t for t in texts)
    assert len(set(texts)) > 1


_EDGE_YAML = [
    "name: ci\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n",
    # comments, blank lines and a trailing comment after the last job
    "on: [push]\n# top\njobs:\n  a:  # the first\n    runs-on: x\n\n    steps:\n      - run: |\n"
    "          one\n          two\n\n  b:\n    needs: a\n    runs-on: y\n# end\n",
    # flow style, anchors and aliases, quoted keys, a tab inside a string
    'jobs: {a: &j {runs-on: "u", steps: [{run: "x\\ty"}]}, "b": *j}\n',
    "defaults: &d\n  runs-on: u\njobs:\n  a:\n    <<: *d\n    steps:\n    - run: ok\n",
    # CRLF line ends, unicode, a document marker, a document end
    "---\r\njobs:\r\n  ä:\r\n    runs-on: ü\r\n    steps:\r\n      - run: é\r\n...\r\n",
    # not YAML at all, not a mapping, two documents, an empty file
    "jobs: [unclosed\n",
    "- a\n- b\n",
    "jobs:\n  a: {}\n---\njobs:\n  b: {}\n",
    "",
    # block scalars with indentation indicators and chomping
    "jobs:\n  a:\n    steps:\n      - run: |2-\n           x\n      - run: >+\n          y\n\n  b: {}\n",
]


def test_the_c_yaml_loader_gives_the_prompts_of_the_python_one() -> None:
    """Prompts parse YAML with libyaml's loader where PyYAML has it (3-4x faster); every part
    built from a parse (workflow context, job text, a job cut from its workflow) is the same
    with PyYAML's own Python loader, on edge cases and on many simulated workflows."""
    import random

    import yaml

    from gharuntime.baselines.laser import serialize as s
    from gharuntime.sim.workflows import LANGUAGES, draft_workflows, render_yaml

    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("this PyYAML has no libyaml: prompts use the Python loader only")
    texts = list(_EDGE_YAML)
    rng = random.Random(4)
    for i in range(60):
        language = sorted(LANGUAGES)[i % len(LANGUAGES)]
        for draft in draft_workflows(rng, language, "main", 4, 2):
            texts += [render_yaml(v) for v in draft.versions]

    def parts(loader: object) -> list[object]:
        s._LOADER = loader
        for fn in (s._workflow_context, s._job_text, s._job_from_workflow):
            fn.cache_clear()
        out: list[object] = []
        for text in texts:
            out.append(s._workflow_context(text))
            out.append(s._job_text(text))
            node = s._compose(text)
            jobs = (
                next((v for k, v in node.value if k.value == "jobs"), None)
                if isinstance(node, yaml.MappingNode)
                else None
            )
            keys = (
                [str(k.value) for k, _ in jobs.value] if isinstance(jobs, yaml.MappingNode) else []
            )
            out += [s._job_from_workflow(text, k) for k in [*keys, "missing"]]
        return out

    original = s._LOADER
    try:
        fast, slow = parts(yaml.CSafeLoader), parts(yaml.SafeLoader)
    finally:
        s._LOADER = original
        for fn in (s._workflow_context, s._job_text, s._job_from_workflow):
            fn.cache_clear()
    assert len(texts) > 500
    assert fast == slow
