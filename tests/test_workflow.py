"""gharuntime.workflow against GitHub's documented rules (docs examples reproduced verbatim)."""

from __future__ import annotations

import pytest

from gharuntime.workflow import (
    MatrixTooLarge,
    WorkflowError,
    expand_jobs,
    expand_matrix,
    parse_workflow,
    render_expression,
    runner_os,
    strip_ref,
)


def test_docs_include_example_expands_exactly_as_github_documents() -> None:
    # "Expanding or adding matrix configurations" in GitHub's docs, with its documented result.
    matrix = {
        "fruit": ["apple", "pear"],
        "animal": ["cat", "dog"],
        "include": [
            {"color": "green"},
            {"color": "pink", "animal": "cat"},
            {"fruit": "apple", "shape": "circle"},
            {"fruit": "banana"},
            {"fruit": "banana", "animal": "cat"},
        ],
    }
    assert expand_matrix(matrix) == [
        {"fruit": "apple", "animal": "cat", "color": "pink", "shape": "circle"},
        {"fruit": "apple", "animal": "dog", "color": "green", "shape": "circle"},
        {"fruit": "pear", "animal": "cat", "color": "pink"},
        {"fruit": "pear", "animal": "dog", "color": "green"},
        {"fruit": "banana"},
        {"fruit": "banana", "animal": "cat"},
    ]


def test_docs_exclude_example_removes_partial_matches() -> None:
    # "Excluding matrix configurations": 12 combinations minus 2 excluded ones... per docs, an
    # exclude entry matches every combination that has all of its key/values.
    matrix = {
        "os": ["macos-latest", "windows-latest"],
        "version": [12, 14, 16],
        "environment": ["staging", "production"],
        "exclude": [
            {"os": "macos-latest", "version": 12, "environment": "production"},
            {"os": "windows-latest", "version": 16},
        ],
    }
    combos = expand_matrix(matrix)
    assert combos is not None and len(combos) == 12 - 1 - 2
    assert {"os": "windows-latest", "version": 16, "environment": "staging"} not in combos


def test_include_only_matrix_makes_one_job_per_entry() -> None:
    assert expand_matrix({"include": [{"site": "prod", "dc": 1}, {"site": "dev"}]}) == [
        {"site": "prod", "dc": 1},
        {"site": "dev"},
    ]


def test_expression_matrix_cannot_be_expanded_statically() -> None:
    assert expand_matrix("${{ fromJSON(needs.plan.outputs.matrix) }}") is None
    assert expand_matrix({"os": "${{ fromJSON(inputs.oses) }}"}) is None
    assert expand_matrix(None) == []


WORKFLOW = """\
name: CI
on:
  push:
    branches: [main]
  pull_request:
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
        include:
          - os: ubuntu-latest
            python: "3.12"
            experimental: true
    steps:
      - uses: actions/checkout@v4
      - run: pytest
  named:
    name: Build ${{ matrix.target }} on ${{ matrix.os }}
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [macos-14]
        target: [x86_64, aarch64]
    steps: [{run: make}]
  static:
    name: Docs
    runs-on: [self-hosted, linux, x64]
    strategy:
      matrix:
        flavour: [html, "", pdf]
    steps: [{run: make docs}]
  deploy:
    uses: ./.github/workflows/deploy.yml
    with: {env: prod}
"""


def test_jobs_are_named_as_github_names_them() -> None:
    names = [j.name for j in expand_jobs(parse_workflow(WORKFLOW))]
    assert names == [
        "lint",
        "test (ubuntu-latest, 3.10)",
        "test (ubuntu-latest, 3.11)",
        "test (windows-latest, 3.10)",
        "test (windows-latest, 3.11)",
        "test (ubuntu-latest, 3.12, true)",
        "Build x86_64 on macos-14",
        "Build aarch64 on macos-14",
        "Docs (html)",
        "Docs",
        "Docs (pdf)",
        "deploy / ",
    ]


def test_on_is_the_event_key_not_a_boolean() -> None:
    wf = parse_workflow(WORKFLOW)
    assert wf.events == ("push", "pull_request")
    assert wf.name == "CI"


def test_runner_labels_are_rendered_from_the_matrix() -> None:
    jobs = expand_jobs(parse_workflow(WORKFLOW))
    assert jobs[3].runner_labels == ("windows-latest",)
    assert jobs[8].runner_labels == ("self-hosted", "linux", "x64")
    assert [runner_os(j.runner_labels) for j in jobs[:9]] == [
        "Linux",
        "Linux",
        "Linux",
        "Windows",
        "Windows",
        "Linux",
        "macOS",
        "macOS",
        "Linux",
    ]


def test_job_spec_keeps_needs_steps_and_own_yaml_block() -> None:
    test = parse_workflow(WORKFLOW).jobs["test"]
    assert test.needs == ("lint",)
    assert [s.get("uses") or s.get("run") for s in test.steps] == ["actions/checkout@v4", "pytest"]
    assert test.yaml_block.startswith("test:\n  needs: lint\n")
    assert test.yaml_block.rstrip().endswith("- run: pytest")
    assert test.line == 11


def test_reusable_caller_resolved_names_caller_slash_callee() -> None:
    callee = parse_workflow(
        "on: workflow_call\njobs:\n  push-image:\n    runs-on: ubuntu-latest\n    steps: [{run: docker push}]\n"
    )
    jobs = expand_jobs(
        parse_workflow(WORKFLOW),
        resolve_reusable=lambda uses: callee if uses.endswith("deploy.yml") else None,
    )
    assert jobs[-1].name == "deploy / push-image"
    assert jobs[-1].key == "deploy" and jobs[-1].callee_key == "push-image"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("jobs:\n  a:\n    runs-on: [ubuntu\n", "does not parse"),
        ("- just\n- a list\n", "top level must be a mapping"),
        ("on: push\nname: x\n", "no `jobs:`"),
        ("on: push\njobs:\n  a:\n    steps: []\n", "neither `runs-on:` nor `uses:`"),
    ],
)
def test_not_a_workflow_is_a_clear_error_with_a_line(text: str, fragment: str) -> None:
    with pytest.raises(WorkflowError) as info:
        parse_workflow(text, path="ci.yml")
    assert fragment in str(info.value)
    assert info.value.line is not None and str(info.value).startswith(f"ci.yml:{info.value.line}:")


def test_render_expression_supports_format_fallbacks_and_unknown_contexts() -> None:
    ctx = {"matrix": {"os": "ubuntu-latest", "cfg": {"name": "gcc"}, "py": 3.1}}
    assert (
        render_expression("${{ format('{0}-{1}', matrix.os, matrix.cfg.name) }}", ctx)
        == "ubuntu-latest-gcc"
    )
    assert render_expression("${{ matrix.missing || 'default' }}", ctx) == "default"
    assert render_expression("py ${{ matrix['py'] }}", ctx) == "py 3.1"
    assert render_expression("${{ github.ref }}", ctx) == "${{ github.ref }}"


def test_strip_ref() -> None:
    assert strip_ref(".github/workflows/build.yml@main") == (".github/workflows/build.yml", "main")
    assert strip_ref(".github/workflows/build.yml@refs/heads/feature/x") == (
        ".github/workflows/build.yml",
        "refs/heads/feature/x",
    )
    assert strip_ref(".github/workflows/build.yml") == (".github/workflows/build.yml", None)


def test_object_valued_matrix_entries_are_named_by_their_leaf_values() -> None:
    """GitHub spells an object (or array) matrix value out by its leaf values, in order.

    Evidence: beacon-biosignals/matrix-output's README shows `name: Build` with
    `matrix: {build: [{name: App One, repo: user/app1}]}` listed as `Build (App One, user/app1)`;
    axodotdev/cargo-dist PR #557 shows a job whose matrix entry holds an array of targets and
    other keys listed as `upload-local-artifacts (x86_64-unknown-linux-gnu, ubuntu-20.04, curl
    --proto ...`: the array's element, then the other values, never JSON."""
    text = """
on: push
jobs:
  build:
    name: Build
    runs-on: ubuntu-latest
    strategy:
      matrix:
        build:
          - name: App One
            repo: user/app1
          - name: App Two
            repo: user/app2
    steps: [{run: make}]
  upload:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        include:
          - targets: [x86_64-unknown-linux-gnu]
            runner: ubuntu-20.04
    steps: [{run: make}]
"""
    names = [j.name for j in expand_jobs(parse_workflow(text))]
    assert names == [
        "Build (App One, user/app1)",
        "Build (App Two, user/app2)",
        "upload (x86_64-unknown-linux-gnu, ubuntu-20.04)",
    ]


def test_names_over_100_characters_are_cut_to_97_and_an_ellipsis() -> None:
    """GitHub's API serves a job name of more than 100 characters as its first 97 and `...`.

    Evidence: kata-containers/kata-containers issue #11176 (and PR #11271, "The github rest api
    truncated job names that are >100 characters"): the job `check (sudo -E PATH="$PATH" make
    test, agent-ctl, src/tools/agent-ctl, rust, protobuf-compiler, clang)` called from
    `build-checks (s390x)` came back as `build-checks (s390x) / check (sudo -E PATH="$PATH" make
    test, agent-ctl, src/tools/agent-ctl, rust, protobuf-compiler, c...`; pytorch/test-infra
    issue #6574 shows the same cut (`... rerun_disabled_te...`). In both the part after
    `caller / ` is exactly 100 characters, so the cut applies to the job's own name."""
    text = """
on: push
jobs:
  check:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        command: ['sudo -E PATH="$PATH" make test']
        component: [agent-ctl]
        component-path: [src/tools/agent-ctl]
        install-rust: [rust]
        needs-protoc: [protobuf-compiler]
        needs-clang: [clang]
    steps: [{run: make}]
"""
    (job,) = expand_jobs(parse_workflow(text))
    served = (
        'check (sudo -E PATH="$PATH" make test, agent-ctl, src/tools/agent-ctl, rust, '
        "protobuf-compiler, c..."
    )
    assert job.name == served
    assert len(served) == 100
    caller = parse_workflow(
        "on: push\njobs:\n  build-checks:\n    name: build-checks (s390x)\n"
        "    uses: ./.github/workflows/checks.yml\n"
    )
    (called,) = expand_jobs(caller, lambda uses: parse_workflow(text))
    assert called.name == "build-checks (s390x) / " + served


def test_a_matrix_over_256_jobs_is_refused_with_the_limit_named() -> None:
    text = """
on: push
jobs:
  wide:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
        b: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
    steps: [{run: make}]
"""
    with pytest.raises(MatrixTooLarge, match="272 jobs, over GitHub's limit of 256"):
        expand_jobs(parse_workflow(text))
    assert len(expand_jobs(parse_workflow(text.replace(" 17]", "]")))) == 256
