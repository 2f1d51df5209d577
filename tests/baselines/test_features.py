"""The shared feature extractor reads the job's YAML, runner, matrix and repository."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from gharuntime.baselines.features import (
    QUEUE_DENSE,
    TargetEncoder,
    extract,
    feature_inputs,
    fit_spec,
    job_spec_of,
    runner_kind,
    shell_tokens,
)
from gharuntime.baselines.queue_load import JobEvents
from gharuntime.contract import HISTORY_COLUMN
from gharuntime.fixture import fixture_jobs

WORKFLOW = """name: CI
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ruff check .
  test:
    needs: lint
    runs-on: ${{ matrix.os }}
    timeout-minutes: 30
    services:
      postgres:
        image: postgres:16
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        python: ["3.10", "3.11", "3.12"]
        exclude:
          - os: windows-latest
            python: "3.10"
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
      - run: |
          pip install -e .
          pytest -q
"""


@pytest.fixture()
def test_job_row() -> pl.DataFrame:
    """One row of the fixture table turned into the `test` job of WORKFLOW on Windows."""
    row = fixture_jobs(repos=1, runs_per_repo=1).head(1)
    return row.with_columns(
        pl.lit(WORKFLOW).alias("workflow_yaml"),
        pl.lit("test").alias("job_key"),
        pl.lit(None, dtype=pl.String).alias("job_yaml"),
        pl.lit(json.dumps({"os": "windows-latest", "python": "3.11"})).alias("matrix"),
        pl.Series("runner_labels", [["windows-latest"]]),
        pl.lit("Windows").alias("runner_os"),
    )


def _values(frame: pl.DataFrame, uses_history: bool = False) -> dict[str, float]:
    spec = fit_spec(frame.select(feature_inputs(uses_history)), uses_history)
    feats = extract(frame.select(feature_inputs(uses_history)), spec)
    row = np.asarray(feats.matrix.toarray())[0]
    return {spec.readable(n): float(v) for n, v in zip(feats.names, row, strict=True)}


def test_job_level_features_come_from_the_jobs_yaml(test_job_row: pl.DataFrame) -> None:
    v = _values(test_job_row)
    assert v["steps"] == 3
    assert v["steps_uses"] == 2
    assert v["steps_run"] == 1
    assert v["run_lines"] == 2
    assert v["timeout_minutes"] == 30
    assert v["services"] == 1
    assert v["matrix_combinations"] == 5  # 2 x 3 minus the excluded one
    assert v["matrix_dims"] == 2
    assert v["workflow_jobs"] == 2
    assert v["os=Windows"] == 1 and v["os=Linux"] == 0


def test_uses_actions_and_shell_tokens_land_in_named_buckets(test_job_row: pl.DataFrame) -> None:
    v = _values(test_job_row)
    named = {k.split("(", 1)[1].rstrip(")"): x for k, x in v.items() if "(" in k}
    assert named["actions/checkout"] == 1
    assert named["actions/setup-python"] == 1
    assert named["pytest"] == 1
    assert named['python="3.11"'] == 1
    assert named["windows-latest"] == 1


def test_job_yaml_is_used_when_the_workflow_is_absent(test_job_row: pl.DataFrame) -> None:
    block = "lint:\n  runs-on: ubuntu-latest\n  timeout-minutes: 7\n  steps:\n    - run: make\n"
    row = test_job_row.with_columns(
        pl.lit(None, dtype=pl.String).alias("workflow_yaml"),
        pl.lit(block).alias("job_yaml"),
    )
    v = _values(row)
    assert v["job_resolved"] == 1
    assert v["timeout_minutes"] == 7
    assert np.isnan(v["workflow_jobs"])


def test_unresolvable_job_is_marked_and_left_unknown(test_job_row: pl.DataFrame) -> None:
    v = _values(test_job_row.with_columns(pl.lit("nope").alias("job_key")))
    assert v["job_resolved"] == 0
    assert np.isnan(v["steps"])


def test_yaml_that_does_not_parse_gives_no_job_spec() -> None:
    assert job_spec_of("jobs: [", "test", None) == (None, None)


def test_history_statistics_appear_only_on_a_history_track(test_job_row: pl.DataFrame) -> None:
    row = test_job_row.with_columns(
        pl.Series(HISTORY_COLUMN, [[99.0, 9.0]], dtype=pl.List(pl.Float64))
    )
    assert not any(k.startswith("hist_") for k in _values(row, uses_history=False))
    v = _values(row, uses_history=True)
    assert v["hist_n"] == 2
    assert v["hist_last"] == pytest.approx(np.log1p(99.0), rel=1e-6)


def test_history_spec_refuses_a_frame_without_history(test_job_row: pl.DataFrame) -> None:
    spec = fit_spec(
        test_job_row.with_columns(pl.Series(HISTORY_COLUMN, [[1.0]])).select(feature_inputs(True)),
        True,
    )
    with pytest.raises(ValueError, match=HISTORY_COLUMN):
        extract(test_job_row.select(feature_inputs(False)), spec)


def test_shell_tokens_are_command_words() -> None:
    assert shell_tokens("pip install -e .[test] && pytest -q") == [
        "pip",
        "install",
        "e",
        "test",
        "pytest",
        "q",
    ]


def test_features_are_the_same_for_the_same_rows() -> None:
    jobs = fixture_jobs(repos=6, runs_per_repo=2).select(feature_inputs(False))
    spec = fit_spec(jobs, False)
    a = extract(jobs, spec).matrix.toarray()
    b = extract(jobs, spec).matrix.toarray()
    np.testing.assert_array_equal(a, b)


def _keys(groups: list[tuple[int, str, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "repo_id": [g[0] for g in groups],
            "workflow_path": [g[1] for g in groups],
            "job_name": [g[2] for g in groups],
        }
    )


def test_target_encoding_of_a_training_row_never_sees_its_own_target() -> None:
    keys = _keys([(1, "ci.yml", "test")] + [(2, "ci.yml", "lint")] * 50)
    y = np.array([9.0] + [1.0] * 50)
    enc = TargetEncoder(folds=5, seed=0)
    oof = enc.fit_transform(keys, y)
    names = TargetEncoder.names()
    job_mean, job_n = names.index("enc_job_mean"), names.index("enc_job_n")
    assert np.isnan(oof[0, job_mean]) and oof[0, job_n] == 0  # alone in its group
    assert np.allclose(oof[1:, job_mean], 1.0)
    assert (oof[1:, job_n] < 50).all()  # its own fold left out


def test_target_encoding_of_new_rows_uses_all_training_rows_and_nan_for_unseen() -> None:
    keys = _keys([(1, "ci.yml", "test"), (1, "ci.yml", "test"), (1, "ci.yml", "lint")])
    enc = TargetEncoder(folds=2, seed=0)
    enc.fit_transform(keys, np.array([2.0, 4.0, 6.0]))
    out = enc.transform(
        _keys([(1, "ci.yml", "test"), (1, "other.yml", "x"), (7, "ci.yml", "test")])
    )
    names = TargetEncoder.names()
    assert out[0, names.index("enc_job_mean")] == 3.0
    assert out[0, names.index("enc_repo_mean")] == 4.0
    assert np.isnan(out[1, names.index("enc_workflow_mean")])
    assert out[1, names.index("enc_repo_n")] == 3
    assert np.isnan(out[2, names.index("enc_repo_mean")])


def test_a_stored_matrix_over_the_limit_is_unknown_not_built(test_job_row: pl.DataFrame) -> None:
    """A stored workflow whose matrix makes 10⁹ jobs (an older build kept it): the count is
    unknown (NaN) and the row still gets its other features, without building the product."""
    axes = "".join(f"        a{i}: *v\n" for i in range(1, 9))
    text = WORKFLOW.replace(
        '        os: [ubuntu-latest, windows-latest]\n        python: ["3.10", "3.11", "3.12"]\n',
        f"        a0: &v [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n{axes}",
    )
    v = _values(test_job_row.with_columns(pl.lit(text).alias("workflow_yaml")))
    assert np.isnan(v["matrix_combinations"])
    assert v["steps"] == 3


@pytest.mark.parametrize(
    ("labels", "kind"),
    [
        (["self-hosted", "linux", "x64"], "self-hosted"),
        (["ubuntu-latest-8-cores"], "larger"),
        (["ubuntu-22.04-16core"], "larger"),
        (["macos-14-xlarge"], "larger"),
        (["gpu-t4-4-core"], "larger"),
        (["ubuntu-latest"], "hosted"),
        (["windows-2022"], "hosted"),
        (["macos-14"], "hosted"),
        (["ubuntu-24.04-arm"], "hosted"),
        (["my-runner-group"], "other"),
        ([], None),
        (None, None),
    ],
)
def test_runner_kind_from_the_labels(labels: list[str] | None, kind: str | None) -> None:
    assert runner_kind(labels) == kind


def test_queue_features_say_the_hour_of_the_week_the_runner_and_the_queue() -> None:
    jobs = fixture_jobs(repos=3, runs_per_repo=3)
    # Monday 2026-03-02 00:00 UTC + 2 days 5 hours: Wednesday 05:xx, hour of week 53
    when = pl.datetime(2026, 3, 4, 5, 30, time_zone="UTC")
    jobs = jobs.with_columns(when.alias("created_at"))
    first = jobs.head(1).with_columns(pl.Series("runner_labels", [["self-hosted", "linux"]]))
    frame = pl.concat([first, jobs.tail(jobs.height - 1)])
    spec = fit_spec(frame.select(feature_inputs(False, queue=True)), False, queue=True)
    events = JobEvents.from_frames([frame])
    feats = extract(frame.select(feature_inputs(False, queue=True)), spec, events=events)
    m = np.asarray(feats.matrix.toarray())
    col = {n: feats.names.index(n) for n in QUEUE_DENSE}
    assert set(m[:, col["hour_of_week"]]) == {2 * 24 + 5}
    assert m[0, col["runner=self-hosted"]] == 1.0 and m[0, col["runner=hosted"]] == 0.0
    assert m[1:, col["runner=hosted"]].tolist() == [1.0] * (frame.height - 1)
    # every job created at the same moment: none is earlier than another, so no queue
    assert m[:, col["org_queued"]].max() == 0.0
    # without events the counts are unknown, the rest as before
    blind = np.asarray(
        extract(frame.select(feature_inputs(False, queue=True)), spec).matrix.toarray()
    )
    assert np.isnan(blind[:, col["repo_queued"]]).all()
    assert blind[0, col["runner=self-hosted"]] == 1.0


def test_without_queue_the_features_are_those_of_before() -> None:
    jobs = fixture_jobs(repos=2, runs_per_repo=2)
    spec = fit_spec(jobs.select(feature_inputs(False)), False)
    assert not spec.queue and not set(QUEUE_DENSE) & set(spec.names())
    assert feature_inputs(False) == feature_inputs(False, queue=False)
    assert {"repo", "repo_id"} <= set(feature_inputs(False, queue=True))
