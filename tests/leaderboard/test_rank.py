"""gharuntime.leaderboard.rank: rank groups from paired bootstrap intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

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


# --- groups computed by hand -----------------------------------------------------------------

# 41 resamples: np.quantile of linspace(a, b, 41) at 2.5% and 97.5% is a + 1/40·(b − a) and
# b − 1/40·(b − a) exactly (linear interpolation between neighbours 1/40 apart).
_BASE = [0.5 + 0.01 * (i % 7) for i in range(41)]


def _shifted(method: str, shift: list[float] | float, point: float | None = None) -> Entry:
    """`method` whose per-resample RMSLE is _BASE + shift, and whose point RMSLE is `point`
    (the mean of its resamples when not given)."""
    steps = shift if isinstance(shift, list) else [shift] * len(_BASE)
    entry = _entry(method, [b + s for b, s in zip(_BASE, steps, strict=True)])
    if point is not None:
        entry.result["metrics"]["duration_s"]["rmsle"]["value"] = point
    return entry


def _span(low: float, high: float) -> list[float]:
    return [float(v) for v in np.linspace(low, high, len(_BASE))]


def test_hand_computed_groups_compare_each_method_with_its_groups_leader_only() -> None:
    # a leads; b's difference with a is linspace(-0.01, 0.03): interval [-0.009, 0.029] holds 0
    # (group 1); c is 0.02 above a in every resample: interval [0.02, 0.02] (not group 1). c
    # against b would include zero (0.02 − linspace(−0.01, 0.03)), but groups are not chained:
    # c leads group 2. d is 0.05 above a, 0.03 above c: group 3, led by d.
    a = _shifted("a", 0.0, point=0.50)
    b = _shifted("b", _span(-0.01, 0.03), point=0.51)
    c = _shifted("c", 0.02, point=0.52)
    d = _shifted("d", 0.05, point=0.55)
    ranked = rank_table(Table("ds", "temporal", "config", (d, c, b, a)))
    assert [(r.entry.method, r.group, r.group_leader) for r in ranked] == [
        ("a", 1, "a"),
        ("b", 1, "a"),
        ("c", 2, "c"),
        ("d", 3, "d"),
    ]
    vs = {r.entry.method: r.vs_leader for r in ranked}
    assert vs["a"] == (0.0, 0.0, 0.0)
    point, low, high = vs["b"]  # (b − a): the points' difference and the paired interval
    assert point == pytest.approx(0.01)
    assert (low, high) == (pytest.approx(-0.009), pytest.approx(0.029))
    assert vs["d"] == (pytest.approx(0.05), pytest.approx(0.05), pytest.approx(0.05))


def test_an_interval_ending_exactly_at_zero_includes_it() -> None:
    # (edge − lead) is exactly 0 in its three lowest resamples, then climbs to 0.04: the 2.5%
    # quantile (between the 2nd and 3rd lowest, as (1 − 0.95) / 2 · 40 is a hair above 1) is 0
    lead = _shifted("lead", 0.0, point=0.5)
    edge = _shifted("edge", [0.0, 0.0, 0.0, *_span(0.0, 0.04)[3:]], point=0.51)
    above = _shifted("above", _span(0.001, 0.04), point=0.52)
    groups = _groups(above, edge, lead)
    assert groups == {"lead": 1, "edge": 1, "above": 2}


def test_the_leader_is_the_lowest_point_rmsle_and_ties_go_by_name() -> None:
    # the point value decides the order, not the resamples' mean; equal points: by name
    high_resamples = _shifted("zeta", 0.3, point=0.40)
    low_resamples = _shifted("alpha", 0.0, point=0.60)
    twin = _shifted("beta", 0.0, point=0.60)
    ranked = rank_table(Table("ds", "temporal", "config", (twin, low_resamples, high_resamples)))
    assert [r.entry.method for r in ranked] == ["zeta", "alpha", "beta"]
    assert [r.group for r in ranked] == [1, 2, 2]
    assert ranked[2].group_leader == "alpha"


def test_undefined_resamples_are_left_out_of_the_interval_and_all_undefined_is_no_tie() -> None:
    lead = _shifted("lead", 0.0, point=0.5)
    # (gappy − lead) is 0.01 where defined; a NaN resample (a None in the file) is dropped
    gappy = _shifted("gappy", 0.01, point=0.51)
    values = gappy.result["bootstrap"]["per_resample"]["duration_s"]["rmsle"]
    values[:5] = [None] * 5
    # a point value but no defined resample: no interval, so it ties with nobody
    blank = _shifted("blank", 0.0, point=0.52)
    blank.result["bootstrap"]["per_resample"]["duration_s"]["rmsle"] = [None] * len(_BASE)
    ranked = rank_table(Table("ds", "temporal", "config", (blank, gappy, lead)))
    assert [(r.entry.method, r.group) for r in ranked] == [("lead", 1), ("gappy", 2), ("blank", 3)]
    by = {r.entry.method: r for r in ranked}
    assert by["gappy"].vs_leader == (
        pytest.approx(0.01),
        pytest.approx(0.01),
        pytest.approx(0.01),
    )
    assert by["blank"].vs_leader is None


def test_an_empty_table_ranks_nothing_and_undefined_methods_come_last_by_name() -> None:
    assert rank_table(Table("ds", "temporal", "config", ())) == []
    one = _entry("y-undefined", [0.1] * 4)
    two = _entry("b-undefined", [0.1] * 4)
    for e in (one, two):
        e.result["metrics"]["duration_s"]["rmsle"]["value"] = None
    ranked = rank_table(Table("ds", "temporal", "config", (one, two)))
    assert [(r.entry.method, r.group, r.group_leader, r.vs_leader) for r in ranked] == [
        ("b-undefined", None, None, None),
        ("y-undefined", None, None, None),
    ]
