"""gharuntime.leaderboard.rank: rank groups from paired bootstrap intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gharuntime.leaderboard import Entry, Table, rank_table, scan


def _entry(method: str, per_resample: list[float]) -> Entry:
    values = np.asarray(per_resample, dtype=float)
    point = float(np.mean(values))
    return Entry(
        Path(f"{method}.json"),
        {
            "meta": {"method": method},
            "dataset": {"id": "/x/ds", "kind": "local", "config": "temporal"},
            "track": "config",
            "metrics": {"duration_s": {"rmsle": {"value": point}}},
            "bootstrap": {"per_resample": {"duration_s": {"rmsle": values.tolist()}}},
        },
    )


def _groups(*entries: Entry) -> dict[str, int | None]:
    table = Table("ds", "temporal", "config", entries)
    return {r.entry.method: r.group for r in rank_table(table)}


def test_methods_whose_paired_interval_includes_zero_share_the_leaders_group() -> None:
    rng = np.random.default_rng(3)
    base = 0.5 + rng.normal(0, 0.05, 400)  # the resamples move every method together
    leader = _entry("leader", list(base))
    tied = _entry("tied", list(base + rng.normal(0.002, 0.01, 400)))  # straddles zero
    worse = _entry("worse", list(base + 0.03 + rng.normal(0, 0.002, 400)))  # always above
    assert _groups(worse, tied, leader) == {"leader": 1, "tied": 1, "worse": 2}


def test_groups_are_paired_not_overlapping_intervals() -> None:
    rng = np.random.default_rng(4)
    base = 0.5 + rng.normal(0, 0.1, 400)  # wide marginal intervals that overlap a lot
    a = _entry("a", list(base))
    b = _entry("b", list(base + 0.01))  # worse in every resample, by a little
    assert _groups(a, b) == {"a": 1, "b": 2}


def test_the_next_group_is_led_by_the_best_method_left() -> None:
    rng = np.random.default_rng(5)
    base = 0.5 + rng.normal(0, 0.05, 400)
    first = _entry("first", list(base))
    second = _entry("second", list(base + 0.1))
    near_second = _entry("near-second", list(base + 0.1 + rng.normal(0.001, 0.01, 400)))
    third = _entry("third", list(base + 0.3))
    assert _groups(third, near_second, second, first) == {
        "first": 1,
        "second": 2,
        "near-second": 2,
        "third": 3,
    }


def test_an_undefined_metric_has_no_group() -> None:
    undefined = _entry("empty", [float("nan")] * 4)
    undefined.result["metrics"]["duration_s"]["rmsle"]["value"] = None
    assert _groups(undefined, _entry("ok", [0.4, 0.5, 0.6, 0.5])) == {"ok": 1, "empty": None}


def test_scored_table_groups_match_the_paired_intervals(results_master: Path) -> None:
    """On real results: recompute each method's paired interval against its group's leader."""
    tables = {(t.config, t.track): t for t in scan(results_master)}
    ranked = rank_table(tables[("temporal", "config")])
    assert ranked[0].entry.method == "exact-ish"
    assert ranked[0].group == 1 and ranked[-1].entry.method == "double"
    per = {
        r.entry.method: np.array(
            r.entry.result["bootstrap"]["per_resample"]["duration_s"]["rmsle"], dtype=float
        )
        for r in ranked
    }
    for r in ranked:
        low, high = np.quantile(per[r.entry.method] - per[r.group_leader], [0.025, 0.975])
        if r.entry.method != r.group_leader:
            assert low <= 0 <= high
    # alternating and opposite err by the same factor on different records: their RMSLEs are
    # equal, so they share a group
    groups = {r.entry.method: r.group for r in ranked}
    assert groups["alternating"] == groups["opposite"]
