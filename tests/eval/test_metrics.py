"""Metric definitions, checked against scipy and plain numpy formulas written out here."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gharuntime.eval.bootstrap import Cell
from gharuntime.eval.metrics import (
    METRICS,
    ROW_TERMS,
    STAT_COLUMNS,
    TargetTerms,
    average_ranks,
    metrics_from_sums,
    row_terms,
)


@pytest.fixture()
def truth_and_predictions() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    y = np.round(rng.lognormal(4, 1, 500), 1)
    y[:5] = 0.0  # zero-length jobs exist
    p = np.round(y * rng.lognormal(0, 0.6, 500), 1)
    p[5:10] = 0.0
    return y, p


def _point(y: np.ndarray, p: np.ndarray, failed: np.ndarray | None = None) -> dict[str, float]:
    failed = np.zeros(y.shape[0], bool) if failed is None else failed
    terms = row_terms(y, p, failed)
    return Cell(terms, np.zeros(y.shape[0], dtype=np.int64), 1).point


def test_average_ranks_match_scipy_with_ties() -> None:
    x = np.array([3.0, 1.0, 3.0, 2.0, 3.0, 0.0, 1.0])
    assert np.array_equal(average_ranks(x), stats.rankdata(x, method="average"))


def test_point_metrics_match_independent_formulas(
    truth_and_predictions: tuple[np.ndarray, np.ndarray],
) -> None:
    y, p = truth_and_predictions
    got = _point(y, p)
    ly, lp = np.log1p(y), np.log1p(p)
    ratio = np.maximum(np.maximum(p, 1), np.maximum(y, 1)) / np.minimum(
        np.maximum(p, 1), np.maximum(y, 1)
    )
    assert got["mae"] == pytest.approx(np.mean(np.abs(p - y)))
    assert got["median_ape"] == pytest.approx(np.median(np.abs(p - y) / np.maximum(y, 1)))
    assert got["rmsle"] == pytest.approx(np.sqrt(np.mean((lp - ly) ** 2)))
    assert got["spearman"] == pytest.approx(stats.spearmanr(p, y).statistic)
    assert got["r2_log"] == pytest.approx(
        1 - np.sum((ly - lp) ** 2) / np.sum((ly - ly.mean()) ** 2)
    )
    assert got["within_2x"] == pytest.approx(np.mean(ratio <= 2))


def test_perfect_predictions_score_perfectly(
    truth_and_predictions: tuple[np.ndarray, np.ndarray],
) -> None:
    y, _ = truth_and_predictions
    got = _point(y, y.copy())
    assert got["mae"] == 0 and got["median_ape"] == 0 and got["rmsle"] == 0
    assert got["within_2x"] == 1 and got["r2_log"] == 1
    assert got["spearman"] == pytest.approx(1.0)


def test_within_2x_clips_zeros_at_one_unit() -> None:
    y = np.array([0.0, 0.0, 1.0, 10.0])
    p = np.array([0.4, 3.0, 0.0, 20.0])
    # max(.,1): 0.4 vs 0 -> 1 vs 1 (in); 3 vs 1 (out); 1 vs 1 (in); 20 vs 10 (in, exactly 2x)
    assert _point(y, p)["within_2x"] == pytest.approx(0.75)


def test_failures_score_as_zero_and_never_within_2x() -> None:
    y = np.array([0.5, 10.0, 20.0, 40.0])
    p = np.array([0.5, 10.0, 20.0, 40.0])
    failed = np.array([True, True, False, False])
    got = _point(y, p, failed)
    assert got["within_2x"] == pytest.approx(0.5)  # the 0.5 s job would be "within" at p=0
    assert got["mae"] == pytest.approx((0.5 + 10.0) / 4)


def test_constant_prediction_has_undefined_spearman() -> None:
    y = np.array([1.0, 5.0, 9.0])
    assert np.isnan(_point(y, np.full(3, 4.0))["spearman"])


def test_undefined_when_no_rows() -> None:
    values = metrics_from_sums(np.zeros(11))
    assert all(np.isnan(v) for v in values.values())


def test_every_metric_has_a_direction() -> None:
    directions = {m.name: m.higher_is_better for m in METRICS}
    assert directions == {
        "mae": False,
        "median_ape": False,
        "rmsle": False,
        "spearman": True,
        "r2_log": True,
        "within_2x": True,
    }


def test_subset_terms_equal_terms_computed_on_the_subset_alone(
    truth_and_predictions: tuple[np.ndarray, np.ndarray],
) -> None:
    y, p = truth_and_predictions
    failed = np.zeros(y.shape[0], bool)
    failed[::7] = True
    rows = np.flatnonzero(np.arange(y.shape[0]) % 3 == 1)
    sub = TargetTerms(y, p, failed).subset(rows)
    alone = row_terms(y[rows], p[rows], failed[rows])
    ranks = [4, 5, 6, 7, 8]  # rank columns: identical
    assert np.array_equal(sub.stats[ranks], alone.stats[ranks])
    assert np.array_equal(sub.stats[:4], alone.stats[:4])
    # log1p columns differ only by the centre, which the sums-based R² does not see
    assert metrics_from_sums(sub.stats.sum(axis=1))["r2_log"] == pytest.approx(
        metrics_from_sums(alone.stats.sum(axis=1))["r2_log"]
    )
    assert np.array_equal(sub.ape[sub.ape_order], np.sort(alone.ape))


def test_the_registry_defines_how_each_metric_is_computed_and_shown() -> None:
    from gharuntime.eval.metrics import (
        HEADLINE_METRICS,
        INTERVAL_METRICS,
        MEDIAN_METRIC,
        METRIC_BY_NAME,
    )

    sums = metrics_from_sums(np.ones(11))
    for m in METRICS:
        # every metric is either a function of the sums or the one weighted median
        assert (m.name in sums) == (m.resampled != "median"), m.name
    assert MEDIAN_METRIC.name == "median_ape"
    assert [m.name for m in HEADLINE_METRICS] == [
        "rmsle",
        "mae",
        "median_ape",
        "within_2x",
        "spearman",
    ]
    assert METRIC_BY_NAME["mae"].format(1234.56, "s") == "1,234.6 s"
    assert METRIC_BY_NAME["within_2x"].format(0.4567) == "45.7%"
    assert METRIC_BY_NAME["rmsle"].format(None) == "—"
    assert METRIC_BY_NAME["mae"].heading("s") == "MAE (s) ↓"
    assert {m.per for m in INTERVAL_METRICS} == {"interval", "level", "set"}
    coverage = next(m for m in INTERVAL_METRICS if m.name == "coverage")
    assert coverage.higher_is_better is None and coverage.heading() == "coverage ≈ nominal"


def test_each_metric_reads_only_the_row_terms_it_names() -> None:
    """A metric declares its per-row terms by name (`Metric.terms`): its value comes from the
    sums of those and nothing else, so a new metric is one declaration, not an index edit."""
    assert [t.name for t in ROW_TERMS] == list(STAT_COLUMNS)
    rng = np.random.default_rng(3)
    y = rng.lognormal(4, 1, 400)
    p = y * rng.lognormal(0, 0.5, 400)
    stats = row_terms(y, p, np.zeros(400, bool)).stats
    sums = np.stack([stats[:, k::4].sum(axis=1) for k in range(4)])  # four clusters' sums
    base = metrics_from_sums(sums)
    assert all(np.isfinite(v).all() for v in base.values())
    for m in METRICS:
        if m.from_sums is None:
            assert m.terms == ()
            continue
        assert m.terms and set(m.terms) <= set(STAT_COLUMNS), m.name
        # every term it does not name changed: its value stays
        other = sums.copy()
        for i, name in enumerate(STAT_COLUMNS):
            if name not in m.terms:
                other[:, i] += 7.0
        assert np.array_equal(metrics_from_sums(other)[m.name], base[m.name], equal_nan=True)
        # a term it names, changed: its value moves (the declaration is not too wide)
        for name in m.terms:
            moved = sums.copy()
            moved[:, STAT_COLUMNS.index(name)] += 0.01 * np.abs(moved).max()
            assert not np.array_equal(
                metrics_from_sums(moved)[m.name], base[m.name], equal_nan=True
            ), (m.name, name)


def _required_lists(node: object) -> list[list[str]]:
    """Every `required` list of the schema, wherever it is."""
    if isinstance(node, dict):
        found = [node["required"]] if isinstance(node.get("required"), list) else []
        return found + [r for v in node.values() for r in _required_lists(v)]
    if isinstance(node, list):
        return [r for v in node for r in _required_lists(v)]
    return []


def test_the_result_schema_requires_exactly_the_headline_metrics() -> None:
    """The headline flag lives in METRICS (`Metric.headline`, the column order); the schema's
    two lists of what every result stores per target and per resample must name exactly those,
    so a headline metric added to METRICS alone fails here."""
    import json
    from importlib import resources

    from gharuntime.eval.metrics import HEADLINE_METRICS

    schema = json.loads(
        resources.files("gharuntime.leaderboard").joinpath("result.schema.json").read_text()
    )
    headline = [m.name for m in HEADLINE_METRICS]
    assert headline == [m.name for m in sorted(METRICS, key=lambda m: m.headline) if m.headline]
    metric_lists = [r for r in _required_lists(schema) if set(r) & {m.name for m in METRICS}]
    listing_all = [r for r in metric_lists if len(r) > 1]
    assert len(listing_all) == 2
    assert all(r == headline for r in listing_all)
