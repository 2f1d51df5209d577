"""`gharuntime predict`: a workflow file that never ran, expanded as GitHub would, predicted by a
saved model."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli
from gharuntime.predict.workflow import (
    JobPrediction,
    RepoMeta,
    critical_path,
    repo_meta_from_json,
    workflow_rows,
)

WORKFLOW = """name: Release checks
on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ruff check .
  test:
    needs: lint
    name: unit
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        python: ["3.10", "3.11"]
        exclude:
          - os: windows-latest
            python: "3.10"
        include:
          - os: ubuntu-latest
            python: "3.13"
            experimental: true
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
      - run: pytest -q
"""


@pytest.fixture()
def workflow_file(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / ".github" / "workflows" / "release.yml"
    path.parent.mkdir(parents=True)
    path.write_text(WORKFLOW)
    return path


def _predict(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["predict", *args])
    return result.exit_code, result.output


def _json(workflow: Path, model: Path, *extra: str) -> dict:
    code, out = _predict(
        str(workflow), "--model", str(model), "--json", "--at", "2026-03-02", *extra
    )
    assert code == 0, out
    return json.loads(out)


def test_jobs_are_expanded_and_named_as_github_would(
    workflow_file: Path, lightgbm_model: Path
) -> None:
    names = [j["name"] for j in _json(workflow_file, lightgbm_model)["jobs"]]
    assert names == [
        "lint",
        "unit (ubuntu-latest, 3.10)",
        "unit (ubuntu-latest, 3.11)",
        "unit (windows-latest, 3.11)",
        "unit (ubuntu-latest, 3.13, true)",
    ]


def test_a_workflow_that_never_ran_gets_a_duration_per_job(
    workflow_file: Path, lightgbm_model: Path
) -> None:
    result = _json(workflow_file, lightgbm_model)
    durations = {j["name"]: j["duration_s"] for j in result["jobs"]}
    assert all(d > 0 for d in durations.values())
    # The fixture's Windows jobs run about two minutes longer; the model learned that.
    assert durations["unit (windows-latest, 3.11)"] > durations["unit (ubuntu-latest, 3.11)"] + 60
    assert result["total_job_s"] == pytest.approx(sum(durations.values()), abs=0.5)


def test_repository_size_from_options_changes_the_prediction(
    workflow_file: Path, lightgbm_model: Path
) -> None:
    small = _json(workflow_file, lightgbm_model, "--size-kb", "200")["jobs"][0]["duration_s"]
    large = _json(workflow_file, lightgbm_model, "--size-kb", "190000")["jobs"][0]["duration_s"]
    assert large > small + 30  # fixture: +1 s per 2 MB of repository


def test_repo_meta_reads_githubs_repository_object(shared_dir: Path) -> None:
    example = shared_dir / "reference/github-rest/examples/full-repository-default-response.json"
    meta = repo_meta_from_json(json.loads(example.read_text()))
    assert (meta.repo, meta.repo_id, meta.stars, meta.size_kb) == (
        "octocat/Hello-World",
        1296269,
        80,
        108,
    )
    assert meta.created_at is not None and meta.created_at.year == 2011


def test_repo_meta_file_is_used_by_the_command(
    workflow_file: Path, lightgbm_model: Path, tmp_path: Path
) -> None:
    meta = tmp_path / "repo.json"
    meta.write_text(json.dumps({"full_name": "o/r", "size": 190000, "stargazers_count": 5}))
    via_file = _json(workflow_file, lightgbm_model, "--repo-meta", str(meta))
    via_option = _json(workflow_file, lightgbm_model, "--size-kb", "190000", "--stars", "5")
    assert via_file["jobs"] == via_option["jobs"]


def test_table_lists_every_job_and_the_totals(
    workflow_file: Path, lightgbm_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")  # a terminal wide enough for the job names unbroken
    code, out = _predict(str(workflow_file), "--model", str(lightgbm_model))
    assert code == 0, out
    assert "unit (windows-latest, 3.11)" in out
    assert "critical path" in out


def test_yaml_that_does_not_parse_is_exit_2_with_its_line(
    tmp_path: Path, lightgbm_model: Path
) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps: [\n")
    code, out = _predict(str(bad), "--model", str(lightgbm_model))
    assert code == 2
    assert "bad.yml:6" in out and "does not parse" in out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    "text", ["- just\n- a list\n", "name: x\non: push\n", "on: push\njobs:\n  a:\n    steps: []\n"]
)
def test_yaml_that_is_not_a_workflow_is_exit_2(
    tmp_path: Path, lightgbm_model: Path, text: str
) -> None:
    path = tmp_path / "x.yml"
    path.write_text(text)
    code, out = _predict(str(path), "--model", str(lightgbm_model))
    assert code == 2
    assert "not a workflow" in out or "neither `runs-on:` nor `uses:`" in out


def test_a_folder_that_is_not_a_model_is_exit_2(workflow_file: Path, tmp_path: Path) -> None:
    code, out = _predict(str(workflow_file), "--model", str(tmp_path))
    assert code == 2
    assert "not a model folder" in out


def test_critical_path_follows_needs_with_matrix_jobs_in_parallel() -> None:
    def job(key: str, seconds: float, needs: tuple[str, ...] = ()) -> JobPrediction:
        return JobPrediction(key, key, (), None, None, needs, {"duration_s": seconds})

    jobs = [
        job("lint", 10),
        job("test", 100, ("lint",)),
        job("test", 300, ("lint",)),
        job("docs", 50),
    ]
    assert critical_path(jobs) == 310


def test_step_names_follow_githubs_listing_with_post_steps() -> None:
    from gharuntime.predict.workflow import workflow_rows

    text = (
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - name: Set up Python\n"
        "        uses: actions/setup-python@v5\n      - run: |\n          make\n          make test\n"
        "      - uses: codecov/codecov-action@v4\n"
    )
    from datetime import datetime, timezone

    from gharuntime.predict.workflow import RepoMeta

    frame, _ = workflow_rows(text, path="ci.yml", meta=RepoMeta(), at=datetime.now(timezone.utc))
    # The listing of a real job (recorded from GitHub's API, ../shared/reference/recorded-api).
    assert frame["step_names"].to_list()[0] == [
        "Set up job",
        "Run actions/checkout@v4",
        "Set up Python",
        "Run make",
        "Run codecov/codecov-action@v4",
        "Post Set up Python",
        "Post Run actions/checkout@v4",
        "Complete job",
    ]


FLAGGED = """\
on: push
jobs:
  plan:
    runs-on: ubuntu-latest
    steps: [{run: echo plan}]
  build:
    name: Build ${{ matrix.target }}
    needs: plan
    runs-on: ${{ matrix.os }}
    strategy:
      matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}
    steps: [{run: make}]
  shared:
    uses: octo-org/ci/.github/workflows/build.yml@v1
  deploy:
    needs: build
    if: github.ref == 'refs/heads/main'
    runs-on: ubuntu-latest
    steps: [{run: ./deploy.sh}]
"""


@pytest.fixture()
def flagged_file(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / ".github" / "workflows" / "flagged.yml"
    path.parent.mkdir(parents=True)
    path.write_text(FLAGGED)
    return path


def test_what_predict_cannot_know_is_flagged_per_job(
    flagged_file: Path, lightgbm_model: Path
) -> None:
    jobs = {j["key"]: j for j in _json(flagged_file, lightgbm_model)["jobs"]}
    assert jobs["plan"]["flags"] == []
    assert jobs["build"]["flags"] == ["expression_matrix"]
    assert jobs["shared"]["flags"] == ["remote_reusable"]
    assert jobs["deploy"]["flags"] == ["conditional"]


def test_an_expression_matrix_keeps_its_name_template_and_feeds_no_empty_label(
    flagged_file: Path, lightgbm_model: Path
) -> None:
    build = next(j for j in _json(flagged_file, lightgbm_model)["jobs"] if j["key"] == "build")
    assert build["name"] == "Build ${{ matrix.target }}"
    assert build["runner_os"] is None
    frame, _ = workflow_rows(FLAGGED, path="flagged.yml", meta=RepoMeta(), at=datetime.now(UTC))
    labels = dict(zip(frame["job_key"], frame["runner_labels"].to_list(), strict=True))
    assert labels["build"] == []


def test_sums_are_given_with_and_without_conditional_jobs(
    flagged_file: Path, lightgbm_model: Path
) -> None:
    result = _json(flagged_file, lightgbm_model)
    d = {j["key"]: j["duration_s"] for j in result["jobs"]}
    assert result["total_job_s"] == pytest.approx(sum(d.values()), abs=0.5)
    assert result["total_job_s_without_conditional"] == pytest.approx(
        d["plan"] + d["build"] + d["shared"], abs=0.5
    )
    assert result["critical_path_s_without_conditional"] == pytest.approx(
        max(d["plan"] + d["build"], d["shared"]), abs=0.5
    )
    assert result["flags"]["conditional"]["jobs"] == 1


def test_the_table_names_what_it_cannot_know(flagged_file: Path, lightgbm_model: Path) -> None:
    code, out = _predict(str(flagged_file), "--model", str(lightgbm_model), "--at", "2026-03-02")
    assert code == 0, out
    assert "matrix from an expression" in out
    assert "reusable workflow not read" in out
    assert "without the 1 job(s) gated by `if:`" in out


def test_a_matrix_over_256_jobs_is_refused_naming_the_limit(
    tmp_path: Path, lightgbm_model: Path
) -> None:
    path = tmp_path / "wide.yml"
    path.write_text(
        "on: push\njobs:\n  wide:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n"
        f"        a: {list(range(20))}\n        b: {list(range(13))}\n    steps: [{{run: make}}]\n"
    )
    code, out = _predict(str(path), "--model", str(lightgbm_model))
    assert code == 2
    assert "260 jobs, over GitHub's limit of 256" in out


THREE_OS = """\
name: CI
on: [push, pull_request]
jobs:
  test:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest, macos-latest]
    steps:
      - uses: actions/checkout@v4
      - run: make test
  big:
    runs-on: ubuntu-22.04-16core
    steps: [{run: make bench}]
  farm:
    runs-on: build-farm
    steps: [{run: make}]
"""


@pytest.fixture()
def three_os_file(tmp_path: Path) -> Path:
    path = tmp_path / "ci.yml"
    path.write_text(THREE_OS)
    return path


RATES = {"linux": 0.006, "windows": 0.010, "macos": 0.062, "linux_16_core": 0.042}


def test_each_job_is_billed_whole_minutes_at_its_runners_rate(
    three_os_file: Path, lightgbm_model: Path
) -> None:
    result = _json(three_os_file, lightgbm_model)
    jobs = {j["name"]: j for j in result["jobs"]}
    kinds = {name: j["runner_kind"] for name, j in jobs.items()}
    assert kinds == {
        "test (ubuntu-latest)": "linux",
        "test (windows-latest)": "windows",
        "test (macos-latest)": "macos",
        "big": "linux_16_core",
        "farm": None,
    }
    for j in jobs.values():
        if j["runner_kind"] is None:
            continue
        minutes = -(-j["duration_s"] // 60)  # rounded up, from the seconds the JSON shows
        assert j["billed_minutes"] == pytest.approx(minutes, abs=1)
        assert j["cost_usd"] == pytest.approx(j["billed_minutes"] * RATES[j["runner_kind"]])
        # the model gives a P10–P90, so the bill has a range around its point
        low, high = j["billed_minutes_range"]
        assert low <= j["billed_minutes"] <= high
        assert j["cost_usd_range"] == pytest.approx(
            [low * RATES[j["runner_kind"]], high * RATES[j["runner_kind"]]]
        )
    farm = jobs["farm"]
    assert farm["billed_minutes"] is None and "`build-farm`" in farm["unpriced"]
    priced = [j for j in jobs.values() if j["runner_kind"]]
    assert result["billed_minutes"] == sum(j["billed_minutes"] for j in priced)
    assert result["cost_usd"] == pytest.approx(sum(j["cost_usd"] for j in priced))
    assert result["billing"]["repository"] == "private"
    assert result["billing"]["unpriced_jobs"] == 1
    assert result["billing"]["prices"]["rates_from"] == "2026-01-01"


def test_public_repositories_are_billed_only_for_larger_runners(
    three_os_file: Path, lightgbm_model: Path, tmp_path: Path
) -> None:
    result = _json(three_os_file, lightgbm_model, "--public")
    big = next(j for j in result["jobs"] if j["name"] == "big")
    assert result["billing"]["repository"] == "public"
    assert result["billed_minutes"] == big["billed_minutes"] > 0
    assert result["cost_usd"] == pytest.approx(big["cost_usd"])
    # GitHub's repository object says whether it is private when no option does.
    meta = tmp_path / "repo.json"
    meta.write_text(json.dumps({"full_name": "o/r", "private": False}))
    via_meta = _json(three_os_file, lightgbm_model, "--repo-meta", str(meta))
    assert via_meta["billing"]["repository"] == "public"
    forced = _json(three_os_file, lightgbm_model, "--repo-meta", str(meta), "--private")
    assert forced["billing"]["repository"] == "private"


def test_a_price_file_sets_rates_and_names_an_organisations_runners(
    three_os_file: Path, lightgbm_model: Path, tmp_path: Path
) -> None:
    prices = tmp_path / "ours.yml"
    prices.write_text(
        "rates_from: 2026-07-01\nrates:\n  linux: 0.001\n  self_hosted: 0.01\n"
        "labels:\n  build-farm: self_hosted\n"
    )
    result = _json(three_os_file, lightgbm_model, "--prices", str(prices))
    jobs = {j["name"]: j for j in result["jobs"]}
    assert jobs["farm"]["runner_kind"] == "self_hosted"
    assert jobs["farm"]["cost_usd"] == pytest.approx(jobs["farm"]["billed_minutes"] * 0.01)
    assert jobs["test (ubuntu-latest)"]["cost_usd"] == pytest.approx(
        jobs["test (ubuntu-latest)"]["billed_minutes"] * 0.001
    )
    assert "no rate for `windows`" in jobs["test (windows-latest)"]["unpriced"]
    assert result["billing"]["prices"]["file"] == str(prices)


def test_the_table_shows_billed_minutes_cost_and_where_the_rates_come_from(
    three_os_file: Path, lightgbm_model: Path
) -> None:
    code, out = _predict(str(three_os_file), "--model", str(lightgbm_model), "--at", "2026-03-02")
    assert code == 0, out
    assert "billed" in out and " min" in out and "$" in out
    assert (
        "each rounded up to the minute; private repository (visibility unknown, billed as "
        "private: give --public for a public one); rates from 2026-01-01"
    ) in out
    assert "1 job(s) not priced" in out and "`build-farm`" in out


@pytest.mark.parametrize(
    ("text", "where", "fix"),
    [
        ("rates:\n  linux: -1\n", ":2:", "0 for a runner"),
        ("rates:\n  linux: 0.006\n  linux_12_core: 0.03\n", ":3:", "linux_16_core"),
        ("rates: {linux: 0.006\n", ":2:", "fix the YAML"),
    ],
)
def test_a_bad_price_file_is_exit_2_with_its_line_and_fix(
    three_os_file: Path, lightgbm_model: Path, tmp_path: Path, text: str, where: str, fix: str
) -> None:
    prices = tmp_path / "bad-prices.yml"
    prices.write_text(text)
    code, out = _predict(
        str(three_os_file), "--model", str(lightgbm_model), "--prices", str(prices)
    )
    assert code == 2, out
    assert f"bad-prices.yml{where}" in out and fix in out
    assert "Traceback" not in out


def test_a_price_file_path_that_looks_like_markup_is_printed_as_it_is(
    three_os_file: Path, lightgbm_model: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "d["
    folder.mkdir()
    prices = folder / "b].yml"  # the path holds `[/b]`, a closing tag to rich
    prices.write_text("rates:\n  linux: x\n")
    code, out = _predict(
        str(three_os_file), "--model", str(lightgbm_model), "--prices", str(prices)
    )
    assert code == 2, out
    assert f"{prices}:2: the rate of linux is 'x', not a number" in out


def test_jobs_whose_runner_cannot_be_known_are_not_priced_and_say_why(
    flagged_file: Path, lightgbm_model: Path
) -> None:
    result = _json(flagged_file, lightgbm_model)
    jobs = {j["key"]: j for j in result["jobs"]}
    assert "expression only known at run time" in jobs["build"]["unpriced"]
    assert "no `runs-on:`" in jobs["shared"]["unpriced"]
    assert jobs["build"]["cost_usd"] is None and jobs["shared"]["billed_minutes"] is None
    assert result["billing"]["unpriced_jobs"] == 2
    assert (
        result["billed_minutes"]
        == jobs["plan"]["billed_minutes"] + jobs["deploy"]["billed_minutes"]
    )


def test_the_table_shows_a_jobs_cost_and_the_run_line_its_range() -> None:
    from gharuntime.billing import Bill, JobCost
    from gharuntime.predict.render import cost_cell as _cost_cell

    ranged = JobCost("linux", Bill(3, 0.018), Bill(2, 0.012), Bill(5, 0.03))
    assert _cost_cell(ranged) == _cost_cell(JobCost("linux", Bill(3, 0.018))) == "$0.018"
    assert _cost_cell(JobCost(None, None, unpriced="why")) == "not priced"


CALLING = """on: push
jobs:
  prep:
    runs-on: ubuntu-latest
    steps: [{run: echo}]
  CI:
    needs: prep
    uses: ./.github/workflows/ci.yml
    with: {suite: server, ref: "${{ github.sha }}"}
  after:
    needs: CI
    runs-on: ubuntu-latest
    steps: [{run: echo}]
"""
CALLED = """on:
  workflow_call:
    inputs: {suite: {type: string}, ref: {type: string}}
jobs:
  compile:
    runs-on: windows-latest
    steps: [{uses: actions/checkout@v4}, {name: Build, run: make}]
  test:
    needs: compile
    runs-on: ubuntu-latest
    strategy: {matrix: {java: [8, 11]}}
    steps: [{name: "Test ${{ inputs.suite }}", run: "mvn test -P${{ inputs.suite }}"}]
"""


def test_a_local_reusable_workflow_is_predicted_as_its_callee_jobs(
    tmp_path: Path, lightgbm_model: Path
) -> None:
    wf = tmp_path / "repo" / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "ci.yml").write_text(CALLED)
    (wf / "main.yml").write_text(CALLING)
    result = _json(wf / "main.yml", lightgbm_model)
    jobs = {j["name"]: j for j in result["jobs"]}
    assert list(jobs) == ["prep", "CI / compile", "CI / test (8)", "CI / test (11)", "after"]
    assert jobs["CI / compile"]["key"] == "CI/compile"
    assert jobs["CI / compile"]["runner_os"] == "Windows"
    assert jobs["CI / test (8)"]["needs"] == ["prep", "CI/compile"]
    assert jobs["CI / test (8)"]["matrix"] == {"java": 8}
    assert jobs["CI / compile"]["flags"] == ["unknown_inputs"]  # `ref` is an expression
    frame, _ = workflow_rows(
        CALLING, path="main.yml", meta=RepoMeta(), at=datetime.now(UTC), local_file=wf / "main.yml"
    )
    steps = dict(zip(frame["job_key"], frame["step_names"].to_list(), strict=False))
    assert "Test server" in steps["CI/test"]  # the plain `with:` value filled in
    assert "Build" in steps["CI/compile"] and "Post Run actions/checkout@v4" in steps["CI/compile"]
    # `after` waits for every job of the called workflow
    d = {j["name"]: j["duration_s"] for j in result["jobs"]}
    path = d["prep"] + d["CI / compile"] + max(d["CI / test (8)"], d["CI / test (11)"]) + d["after"]
    assert result["critical_path_s"] == pytest.approx(path, abs=0.5)


def test_a_missing_or_cyclic_callee_is_flagged_not_guessed(
    tmp_path: Path, lightgbm_model: Path
) -> None:
    wf = tmp_path / "repo" / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "main.yml").write_text(CALLING)
    jobs = {j["key"]: j for j in _json(wf / "main.yml", lightgbm_model)["jobs"]}
    assert jobs["CI"]["flags"] == ["remote_reusable"]  # ci.yml is not there
    (wf / "ci.yml").write_text(
        "on: workflow_call\njobs:\n  again:\n    uses: ./.github/workflows/main.yml\n"
    )
    jobs = {j["key"]: j for j in _json(wf / "main.yml", lightgbm_model)["jobs"]}
    assert [k for k in jobs if k.startswith("CI")] == ["CI/again"]
    assert jobs["CI/again"]["flags"] == ["reusable_refused", "unknown_inputs"]


def test_json_gives_each_job_a_range_and_a_timeout(
    workflow_file: Path, lightgbm_model: Path
) -> None:
    from gharuntime.predict.timeout import JOB_LIMIT_MINUTES

    data = _json(workflow_file, lightgbm_model)
    for job in data["jobs"]:
        assert job["p10"] <= job["duration_s"] <= job["p90"] <= job["p99"]
        assert job["p99"] / 60 <= job["timeout_minutes"] <= JOB_LIMIT_MINUTES
        assert job["timeout_basis"] == "p99"
    assert data["critical_path_p10_s"] <= data["critical_path_s"] <= data["critical_path_p90_s"]


def test_the_table_shows_the_range_and_the_timeout(
    workflow_file: Path, lightgbm_model: Path
) -> None:
    code, out = _predict(str(workflow_file), "--model", str(lightgbm_model), "--at", "2026-03-02")
    assert code == 0, out
    assert "P10–P90" in out and "timeout-minutes" in out and "critical path P10–P90" in out


def test_critical_path_of_a_level_follows_needs() -> None:
    def job(key: str, p10: float, p90: float, needs: tuple[str, ...] = ()) -> JobPrediction:
        return JobPrediction(
            key, key, (), None, None, needs, {"duration_s": p10}, quantiles={"p10": p10, "p90": p90}
        )

    jobs = [job("lint", 5, 20), job("test", 50, 400, ("lint",)), job("docs", 30, 600)]
    assert critical_path(jobs, "p10") == 55
    assert critical_path(jobs, "p90") == 600


GATED = """on: [push, pull_request]
jobs:
  plain:
    runs-on: ubuntu-latest
    steps: [{run: make}]
  always:
    if: always()
    runs-on: ubuntu-latest
    steps: [{run: make}]
  not-cancelled:
    if: ${{ !cancelled() }}
    runs-on: ubuntu-latest
    steps: [{run: make}]
  on-push:
    if: github.event_name == 'push' || github.event.pull_request.head.repo.fork
    runs-on: ubuntu-latest
    steps: [{run: make}]
  yaml-true:
    if: true
    runs-on: ubuntu-latest
    steps: [{run: make}]
  matrix-gated:
    if: matrix.os != 'windows-latest'
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    steps: [{run: make}]
  selective:
    if: needs.plain.outputs.run-me == 'true'
    needs: plain
    runs-on: ubuntu-latest
    steps: [{run: make}]
  on-pr:
    if: github.event_name == 'pull_request'
    runs-on: ubuntu-latest
    steps: [{run: make}]
  on-failure:
    if: failure()
    runs-on: ubuntu-latest
    steps: [{run: make}]
  mixed:
    if: ${{ github.ref }} == refs/heads/main
    runs-on: ubuntu-latest
    steps: [{run: make}]
"""


def test_only_an_if_that_may_skip_its_job_is_flagged(tmp_path: Path, lightgbm_model: Path) -> None:
    """`if: always()`, `!cancelled()`, or an `if:` true on the predicted event runs the job in a
    passing run: not flagged. One false there, or one that needs what predict cannot know
    (job outputs, other github.* fields), may skip it."""
    path = tmp_path / "repo" / ".github" / "workflows" / "gated.yml"
    path.parent.mkdir(parents=True)
    path.write_text(GATED)
    conditional = {
        j["name"] for j in _json(path, lightgbm_model)["jobs"] if "conditional" in j["flags"]
    }
    assert conditional == {
        "matrix-gated (windows-latest)", "selective", "on-pr", "on-failure", "mixed"
    }  # fmt: skip
    on_pr = _json(path, lightgbm_model, "--event", "pull_request")["jobs"]
    flagged = {j["name"] for j in on_pr if "conditional" in j["flags"]}
    assert "on-pr" not in flagged and "on-push" in flagged


def test_the_table_is_not_cut_when_piped(tmp_path: Path, lightgbm_model: Path) -> None:
    """Piped or redirected, stdout has no width: the table keeps every name whole."""
    name = "integration tests against the staging cluster in eu-west-1 with coverage on"
    path = tmp_path / "repo" / ".github" / "workflows" / "long.yml"
    path.parent.mkdir(parents=True)
    path.write_text(
        f"on: [push]\njobs:\n  it:\n    name: {name}\n    runs-on: ubuntu-latest\n"
        "    steps: [{run: make}]\n"
    )
    code, out = _predict(str(path), "--model", str(lightgbm_model), "--at", "2026-03-02")
    assert code == 0, out
    row = next(line for line in out.splitlines() if "integration tests" in line)
    assert name in row and "ubuntu-latest" in row and "$0." in row
