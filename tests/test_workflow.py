"""gharuntime.workflow against GitHub's documented rules (docs examples reproduced verbatim)."""

from __future__ import annotations

from typing import Any

import pytest

from gharuntime.workflow import (
    MAX_WORKFLOW_LEVELS,
    MatrixTooLarge,
    Workflow,
    WorkflowError,
    expand_jobs,
    expand_matrix,
    job_key_of,
    job_needs,
    job_yaml_of,
    local_callee_path,
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


CALLER = """
on: push
jobs:
  build-info:
    runs-on: ubuntu-latest
    steps: [{run: echo}]
  CI:
    needs: build-info
    uses: ./.github/workflows/ci.yml
    with:
      java: 17
      ref: ${{ github.sha }}
  after:
    needs: CI
    runs-on: ubuntu-latest
    steps: [{run: echo done}]
"""

CALLEE = """
on:
  workflow_call:
    inputs:
      java: {type: number, default: 8}
      os: {type: string, default: ubuntu-22.04}
      ref: {type: string}
jobs:
  compile:
    runs-on: ${{ inputs.os }}
    steps:
      - uses: actions/checkout@v4
        with: {ref: "${{ inputs.ref }}"}
      - name: Java ${{ inputs.java }}
        run: mvn -Djava=${{ inputs.java }} compile
  unit:
    needs: compile
    name: unit
    runs-on: ubuntu-latest
    strategy:
      matrix:
        suite: [grpc, server]
    steps: [{run: mvn test}]
"""


def _resolver(files: dict[str, str]) -> Any:
    def resolve(uses: str) -> Workflow | None:
        path = local_callee_path(uses)
        try:
            return parse_workflow(files[path], path) if path in files else None
        except WorkflowError:  # as the build's and predict's resolvers: unreadable is missing
            return None

    return resolve


def test_a_local_call_becomes_the_callee_jobs_with_their_own_block() -> None:
    jobs = expand_jobs(
        parse_workflow(CALLER), _resolver({".github/workflows/ci.yml": CALLEE}), chain=("w.yml",)
    )
    by_key = {job_key_of(j): j for j in jobs}
    assert [j.name for j in jobs] == [
        "build-info",
        "CI / compile",
        "CI / unit (grpc)",
        "CI / unit (server)",
        "after",
    ]
    compile_ = by_key["CI/compile"]
    assert compile_.callee is not None and compile_.call_problem is None
    # plain `with:` values and input defaults filled in; an expression left as written
    assert compile_.runner_labels == ("ubuntu-22.04",)
    assert [s.get("name") for s in compile_.callee.steps] == [None, "Java 17"]
    assert compile_.callee.steps[1]["run"] == "mvn -Djava=17 compile"
    assert compile_.callee.steps[0]["with"] == {"ref": "${{ inputs.ref }}"}
    assert compile_.unknown_inputs == ("ref",)
    # its own needs inside the callee, and the caller's
    assert job_needs(compile_) == ("build-info",)
    unit = [j for j in jobs if job_key_of(j) == "CI/unit"]
    assert [j.matrix for j in unit] == [{"suite": "grpc"}, {"suite": "server"}]
    assert job_needs(unit[0]) == ("build-info", "CI/compile")
    # the row's YAML: the callee's block under the caller's, commented
    text = job_yaml_of(compile_)
    assert text.startswith("# CI:\n#   needs: build-info\n#   uses: ./.github/workflows/ci.yml")
    assert "\ncompile:\n  runs-on: ubuntu-22.04\n" in text
    assert "mvn -Djava=17 compile" in text


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({}, "missing_callee"),
        ({".github/workflows/ci.yml": "jobs: [unclosed"}, "missing_callee"),
        (
            {".github/workflows/ci.yml": "on: workflow_call\njobs:\n  x:\n    uses: ./w.yml\n"},
            "cycle",
        ),
    ],
)
def test_a_call_that_cannot_be_followed_says_why(files: dict[str, str], problem: str) -> None:
    jobs = expand_jobs(parse_workflow(CALLER), _resolver(files), chain=("w.yml",))
    called = [j for j in jobs if j.key == "CI"]
    assert len(called) == 1 and called[0].call_problem == problem
    assert called[0].name.startswith("CI / ")


def test_remote_calls_are_not_read_and_nesting_stops_at_githubs_depth() -> None:
    remote = parse_workflow("on: push\njobs:\n  r:\n    uses: octo/ci/.github/workflows/b.yml@v1\n")
    asked: list[str] = []

    def never(uses: str) -> Workflow | None:
        asked.append(uses)
        return None

    (job,) = expand_jobs(remote, never)
    assert job.call_problem == "remote" and asked == []
    # a chain of workflows each calling the next: GitHub runs ten levels of workflows
    files = {
        f".github/workflows/l{i}.yml": f"on: workflow_call\njobs:\n  j{i}:\n"
        f"    uses: ./.github/workflows/l{i + 1}.yml\n"
        for i in range(1, 20)
    }
    top = parse_workflow("on: push\njobs:\n  j0:\n    uses: ./.github/workflows/l1.yml\n")
    (deep,) = expand_jobs(top, _resolver(files))
    assert deep.call_problem == "too_deep"
    assert len(deep.callers) == MAX_WORKFLOW_LEVELS
    assert job_key_of(deep) == "/".join(f"j{i}" for i in range(MAX_WORKFLOW_LEVELS))


def test_with_inputs_from_the_callers_matrix_are_known_per_combination() -> None:
    # ratis's CI: `basic` runs one check per matrix value through a shared check.yaml
    caller = parse_workflow(
        "on: push\njobs:\n  basic:\n    strategy: {matrix: {check: [author, rat]}}\n"
        "    uses: ./.github/workflows/check.yaml\n"
        "    with: {script: '${{ matrix.check }}', args: '-P${{ matrix.check }}', "
        "sha: '${{ github.sha }}'}\n"
    )
    check = (
        "on: {workflow_call: {inputs: {script: {type: string}, args: {type: string},"
        " split: {type: string, default: ''}, runner: {type: string, default: ubuntu-24.04}}}}\n"
        "jobs:\n  check:\n"
        "    name: \"${{ (inputs.split && format('{0} ({1})', inputs.script, inputs.split))"
        ' || inputs.script }}"\n    runs-on: ${{ inputs.runner }}\n'
        "    steps: [{run: './dev-support/checks/${{ inputs.script }}.sh ${{ inputs.args }}'}]\n"
    )
    files = {".github/workflows/check.yaml": check}
    jobs = expand_jobs(caller, _resolver(files))
    assert [j.name for j in jobs] == ["basic (author) / author", "basic (rat) / rat"]
    assert jobs[0].runner_labels == ("ubuntu-24.04",)
    split = parse_workflow(
        "on: push\njobs:\n  unit:\n    strategy: {matrix: {profile: [grpc]}}\n"
        "    uses: ./.github/workflows/check.yaml\n"
        "    with: {script: unit, split: '${{ matrix.profile }}'}\n"
    )
    (unit,) = expand_jobs(split, _resolver(files))
    assert unit.name == "unit (grpc) / unit (grpc)"  # as GitHub names ratis's jobs
    assert [j.matrix for j in jobs] == [{"check": "author"}, {"check": "rat"}]
    assert jobs[1].callee is not None
    assert jobs[1].callee.steps[0]["run"] == "./dev-support/checks/rat.sh -Prat"
    assert [j.unknown_inputs for j in jobs] == [("sha",), ("sha",)]
    assert {job_key_of(j) for j in jobs} == {"basic/check"}
