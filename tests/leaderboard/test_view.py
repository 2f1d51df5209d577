"""gharuntime.leaderboard.view: the tables in reading order, one row per method with its numbers
taken from its result, and the sentences that say what each table measures."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from leaderboard_support import METHODS

from gharuntime.leaderboard import Entry, Table, load_result, scan
from gharuntime.leaderboard.view import (
    COLUMNS,
    INTERVAL_COLUMNS,
    METRIC_COLUMNS,
    TableView,
    fmt_count,
    fmt_metric,
    table_order,
    table_views,
)


def _view(entries: list[Entry], config: str = "temporal", track: str = "config") -> TableView:
    (view,) = table_views([Table("gharuntime-fixture", config, track, tuple(entries))])
    return view


def _entry(scored: dict[str, Path], method: str, **changes: Any) -> Entry:
    """The scored result of `method`, with top-level blocks replaced by `changes`."""
    entry = load_result(scored[method])
    result = copy.deepcopy(entry.result)
    result.update(changes)
    return Entry(entry.path, result)


def test_tables_come_in_headline_order_and_transfer_tables_after_every_plain_one() -> None:
    tables = [
        Table("b", "temporal", "config", (), "sim"),
        Table("b", "temporal", "config", ()),
        Table("a", "cross_repo", "history", ()),
        Table("b", "temporal", "history", ()),
        Table("a", "temporal", "config", ()),
        Table("b", "cross_repo", "config", ()),
        Table("a", "temporal", "multi", ()),
        Table("a", "cross_repo", "config", (), "sim"),
    ]
    order = [t.name for t in sorted(tables, key=table_order)]
    assert order == [
        "b/cross_repo/config",
        "b/temporal/history",
        "a/temporal/config",
        "b/temporal/config",
        "a/cross_repo/history",
        "a/temporal/multi",  # not a headline table: after those that are
        "a/cross_repo/config trained on sim",
        "b/temporal/config trained on sim",
    ]


def test_fmt_count_and_fmt_metric() -> None:
    assert fmt_count(1, "repository", "repositories") == "1 repository"
    assert fmt_count(0, "repository", "repositories") == "0 repositories"
    assert fmt_count(12345, "run", "runs") == "12,345 runs"
    assert fmt_metric("rmsle", 0.12345) == "0.123"
    assert fmt_metric("within_2x", 0.8567) == "85.7%"
    assert fmt_metric("mae", 1234.56) == "1,234.6"
    assert fmt_metric("coverage", 0.8) == "80.0%"  # an interval metric of the sidecar
    assert fmt_metric("rmsle", None) == "—"
    with pytest.raises(KeyError):
        fmt_metric("no_such_metric", 1.0)


def test_the_columns_name_every_headline_metric_once() -> None:
    names = [m for m, _, _ in METRIC_COLUMNS]
    assert names[:1] == ["rmsle"] and "within_2x" in names and len(set(names)) == len(names)
    assert [m for m, _, _ in INTERVAL_COLUMNS] == ["coverage", "log_width"]
    assert INTERVAL_COLUMNS[0][2] is None  # coverage is best at its nominal 80%, not high or low
    assert len(set(COLUMNS)) == len(COLUMNS) and {*names, "coverage", "log_width"} <= set(COLUMNS)


def test_views_hold_every_table_ranked_and_in_reading_order(results_master: Path) -> None:
    views = table_views(scan(results_master))
    assert [v.key for v in views] == [
        "gharuntime-fixture/temporal/history",
        "gharuntime-fixture/temporal/config",
    ]
    for view in views:
        assert [row["method"] for row in view.rows] == [r.entry.method for r in view.ranked]
        assert [row["group"] for row in view.rows] == [r.group for r in view.ranked]
    assert sorted(m for v in views for m in (row["method"] for row in v.rows)) == sorted(METHODS)


def test_a_row_holds_its_results_numbers(scored_results: dict[str, Path]) -> None:
    view = _view([load_result(scored_results[m]) for m in ("double", "exact-ish")])
    assert [row["method"] for row in view.rows] == ["exact-ish", "double"]
    exact = view.rows[0]
    result = load_result(scored_results["exact-ish"]).result
    for metric, _, _ in METRIC_COLUMNS:
        block = result["metrics"]["duration_s"][metric]
        assert (exact[metric], exact[f"{metric}_low"], exact[f"{metric}_high"]) == (
            block["value"],
            block["ci_low"],
            block["ci_high"],
        )
    central = result["intervals"]["metrics"]["duration_s"]["central"]["p10-p90"]
    assert exact["coverage"] == central["coverage"]["value"] == 1.0  # every job inside P10–P90
    assert exact["log_width"] == central["log_width"]["value"]
    assert exact["records"] == result["counts"]["scored"]["duration_s"] == 120
    assert exact["repositories"] == result["dataset"]["repositories"]
    assert exact["trained_on"] == "gharuntime-fixture"  # a plain table: its own dataset
    assert (exact["fit_s_per_1k"], exact["predict_s_per_1k"]) == (1.5, 0.02)
    assert (exact["version"], exact["missing"], exact["synthetic"]) == ("1.0", 0, True)
    assert exact["vs_leader"] == [0.0, 0.0, 0.0]
    double = view.rows[1]
    assert double["vs_leader"][0] == pytest.approx(double["rmsle"] - exact["rmsle"])
    assert double["coverage"] == 0.0  # its P10 sits above every job
    # (nominal, observed) of each level: the P10 of `double` is above every job, so 100% of
    # jobs are at or below it where 10% should be
    assert double["calibration"] == [(0.1, 1.0), (0.5, 1.0), (0.9, 1.0)]


def test_a_row_without_a_sidecar_or_timing_shows_none(scored_results: dict[str, Path]) -> None:
    entry = _entry(scored_results, "alternating")
    entry.result["meta"]["extra"]["timing"] = {
        "fit_seconds_per_1000_jobs": True,  # a bool is not a number of seconds
        "predict_seconds_per_1000_jobs": "fast",
    }
    entry.result["meta"]["method_version"] = None
    (row,) = _view([entry]).rows
    assert row["fit_s_per_1k"] is None and row["predict_s_per_1k"] is None
    assert row["version"] == ""
    for metric, _, _ in INTERVAL_COLUMNS:
        assert row[metric] is row[f"{metric}_low"] is row[f"{metric}_high"] is None
    assert row["calibration"] == []


def test_the_scorer_is_named_by_version_and_commit(scored_results: dict[str, Path]) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    cases = [
        ("1.2", commit, True, "1.2 @ 0123456789+dirty"),
        ("1.2", commit, False, "1.2 @ 0123456789"),
        ("1.2", None, False, "1.2"),
        (None, None, False, "0.1.0"),  # no version in the provenance: the result's own
    ]
    for version, git_commit, dirty, shown in cases:
        provenance = {"gharuntime_version": version, "git_commit": git_commit, "git_dirty": dirty}
        entry = _entry(scored_results, "double", provenance=provenance, gharuntime_version="0.1.0")
        assert _view([entry]).rows[0]["gharuntime"] == shown


def test_the_note_says_what_the_table_tests_and_what_eval_measured(
    scored_results: dict[str, Path],
) -> None:
    entry = _entry(scored_results, "last-guess")
    view = _view([entry], track="history")
    assert view.note == (
        "known jobs, with their earlier durations; measured: 100.0% of its 120 rows (120) belong "
        "to a job group (repository, workflow path, job name) the training split holds"
    )
    entry.result["dataset"]["rows_group_in_train"] = 30
    assert "measured: 25.0% of its 120 rows (30) belong" in _view([entry], track="history").note
    del entry.result["dataset"]["rows_group_in_train"]  # a result from before eval measured it
    assert _view([entry], track="history").note == "known jobs, with their earlier durations"
    assert _view([entry], track="multi").note == ""


def test_intervals_say_which_clusters_were_resampled(scored_results: dict[str, Path]) -> None:
    entry = _entry(scored_results, "double")
    assert _view([entry]).intervals == "95% intervals from 200 repository resamples (seed 0)"
    entry.result["bootstrap"].update(cluster="run_id", clusters=1, seed=3)
    assert _view([entry]).intervals == (
        "95% intervals from 200 resamples of 1 workflow run (seed 3; too few repositories to "
        "resample, so runs are resampled)"
    )


def test_warnings_of_every_entry_are_listed_once_in_order(
    scored_results: dict[str, Path],
) -> None:
    a = _entry(scored_results, "double", warnings=["few repositories", "old scorer"])
    b = _entry(scored_results, "exact-ish", warnings=["old scorer", "partial"])
    assert _view([a, b]).warnings == ["few repositories", "old scorer", "partial"]


def test_a_transfer_view_says_what_it_was_trained_and_scored_on(
    scored_results: dict[str, Path],
) -> None:
    trained_on = {
        "id": "gharuntime-sim-a",
        "kind": "local",
        "revision": "ab`c" + "d" * 60,
        "config": "temporal",
        "split": "train",
        "rows": 8139,
        "repositories": 1,
        "source_kind": "simulated",
        "synthetic": True,
    }
    entry = _entry(scored_results, "double", trained_on=trained_on)
    entry.result["dataset"]["synthetic"] = False
    (view,) = table_views(
        [Table("gharuntime-fixture", "temporal", "config", (entry,), entry.trained_on)]
    )
    assert view.title == "gharuntime-fixture · temporal / config · trained on gharuntime-sim-a"
    assert view.note == (
        "transfer: every method was trained on the simulated world gharuntime-sim-a (its "
        "temporal train split, 8,139 records of 1 repository, revision `ab'cdddddddddddd`), "
        "scored on real jobs of gharuntime-fixture (its temporal test split)"
    )
    assert view.rows[0]["trained_on"] == "gharuntime-sim-a"
