"""The repository bootstrap: deterministic resamples, and per-resample metrics equal to the
metrics of the expanded resampled multiset, computed here from scratch."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gharuntime.eval.bootstrap import Bootstrap, Cell, interval, run_cells
from gharuntime.eval.metrics import row_terms


@pytest.fixture()
def clustered() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(truth, prediction, cluster) with 30 repositories of uneven size."""
    rng = np.random.default_rng(3)
    cluster = np.sort(rng.integers(0, 30, 700))
    y = np.round(rng.lognormal(3, 1, 700) * (1 + cluster / 10), 1)
    p = np.round(y * rng.lognormal(0.1, 0.5, 700), 1)
    return y, p, cluster


def test_weights_are_multinomial_counts_over_repositories() -> None:
    boot = Bootstrap.for_repositories(1, 50, np.arange(100, 140))
    w = np.concatenate(list(boot.weights()))
    assert w.shape == (50, 40)
    assert np.all(w.sum(axis=1) == 40) and np.all(w == np.round(w))


def test_weights_do_not_depend_on_chunking() -> None:
    boot = Bootstrap.for_repositories(5, 37, np.arange(25))
    one = np.concatenate(list(boot.weights(chunk=37)))
    many = np.concatenate(list(boot.weights(chunk=4)))
    assert np.array_equal(one, many)


def test_weights_depend_only_on_seed_and_the_set_of_repositories() -> None:
    ids = np.array([7, 3, 9, 3, 1])
    a = np.concatenate(list(Bootstrap.for_repositories(0, 20, ids).weights()))
    b = np.concatenate(list(Bootstrap.for_repositories(0, 20, ids[::-1]).weights()))
    other_seed = np.concatenate(list(Bootstrap.for_repositories(1, 20, ids).weights()))
    other_set = np.concatenate(list(Bootstrap.for_repositories(0, 20, ids + 1).weights()))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, other_seed)
    assert not np.array_equal(a, other_set)


def test_resampled_metrics_equal_the_expanded_multiset(
    clustered: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    y, p, cluster = clustered
    terms = row_terms(y, p, np.zeros(y.shape[0], bool))
    cell = Cell(terms, cluster, 30)
    weights = next(Bootstrap.for_repositories(9, 40, np.arange(30)).weights())
    got = cell.resample(weights)
    rank_p, rank_y = stats.rankdata(p), stats.rankdata(y)
    for i, w in enumerate(weights):
        reps = w[cluster].astype(int)
        ys, ps = np.repeat(y, reps), np.repeat(p, reps)
        ly, lp = np.log1p(ys), np.log1p(ps)
        assert got["mae"][i] == pytest.approx(np.mean(np.abs(ps - ys)))
        assert got["median_ape"][i] == pytest.approx(np.median(np.abs(ps - ys) / np.maximum(ys, 1)))
        assert got["rmsle"][i] == pytest.approx(np.sqrt(np.mean((lp - ly) ** 2)))
        assert got["r2_log"][i] == pytest.approx(
            1 - np.sum((ly - lp) ** 2) / np.sum((ly - ly.mean()) ** 2)
        )
        ratio = np.maximum(np.maximum(ps, 1), ys) / np.minimum(np.maximum(ps, 1), np.maximum(ys, 1))
        assert got["within_2x"][i] == pytest.approx(np.mean(ratio <= 2))
        # the documented approximation: whole-split ranks, weighted by the resample
        approx = np.corrcoef(np.repeat(rank_p, reps), np.repeat(rank_y, reps))[0, 1]
        assert got["spearman"][i] == pytest.approx(approx)
    # exact: the multiset re-ranked (scipy ranks the expanded rows itself)
    exact = cell.resample(weights, exact_spearman=True)["spearman"]
    for i, w in enumerate(weights):
        reps = w[cluster].astype(int)
        want = stats.spearmanr(np.repeat(p, reps), np.repeat(y, reps)).statistic
        assert exact[i] == pytest.approx(want, abs=1e-12)
    assert not np.allclose(exact, got["spearman"])  # the two ways really differ


def test_exact_spearman_with_ties_and_empty_resamples() -> None:
    y = np.array([1.0, 1.0, 2.0, 3.0, 3.0, 3.0, 5.0, 8.0])
    p = np.array([2.0, 2.0, 2.0, 1.0, 4.0, 4.0, 9.0, 9.0])
    cluster = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    cell = Cell(row_terms(y, p, np.zeros(8, bool)), cluster, 4)
    weights = np.array([[1.0, 1, 1, 1], [0, 2, 0, 2], [4, 0, 0, 0], [0, 0, 0, 0]])
    got = cell.resample(weights, exact_spearman=True)["spearman"]
    for i in range(2):
        reps = weights[i][cluster].astype(int)
        want = stats.spearmanr(np.repeat(p, reps), np.repeat(y, reps)).statistic
        assert got[i] == pytest.approx(want, abs=1e-12)
    assert np.isnan(got[2])  # one repository with a constant prediction: undefined
    assert np.isnan(got[3])  # no rows


def test_run_cells_says_which_spearman_it_used(
    clustered: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    y, p, cluster = clustered
    boot = Bootstrap.for_repositories(3, 25, np.arange(30))
    cells = [Cell(row_terms(y, p, np.zeros(y.shape[0], bool)), cluster, 30)]
    exact = run_cells(boot, cells)[0]
    cells = [Cell(row_terms(y, p, np.zeros(y.shape[0], bool)), cluster, 30)]
    approx = run_cells(boot, cells, exact_spearman_max=y.shape[0] * 25 - 1)[0]
    assert exact.spearman_exact and not approx.spearman_exact
    assert not np.allclose(exact.resamples["spearman"], approx.resamples["spearman"])
    assert np.array_equal(exact.resamples["mae"], approx.resamples["mae"])


@pytest.mark.parametrize("half_window", [None, 0, 50])
def test_resampled_median_is_exact_on_a_large_cell(half_window: int | None) -> None:
    """Large enough for the block and sub-block search; small windows force medians outside
    the first-try window."""
    rng = np.random.default_rng(11)
    n, clusters = 30_000, 200
    cluster = rng.integers(0, clusters, n)
    y = rng.lognormal(3, 1, n).round()
    p = y * rng.lognormal(0, 0.5, n)
    terms = row_terms(y, p, np.zeros(n, bool))
    cell = Cell(terms, cluster, clusters, half_window=half_window)
    weights = next(Bootstrap.for_repositories(2, 12, np.arange(clusters)).weights())
    ape = np.abs(p - y) / np.maximum(y, 1)
    want = [np.median(np.repeat(ape, w[cluster].astype(int))) for w in weights]
    assert np.array_equal(cell.resample(weights)["median_ape"], want)


def test_run_cells_uses_the_same_resamples_for_every_cell(
    clustered: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    y, p, cluster = clustered
    terms = row_terms(y, p, np.zeros(y.shape[0], bool))
    boot = Bootstrap.for_repositories(4, 200, np.arange(30))
    a, b = run_cells(boot, [Cell(terms, cluster, 30), Cell(terms, cluster, 30)])
    for name, values in a.resamples.items():
        assert np.array_equal(values, b.resamples[name], equal_nan=True)
    diff = interval(a.resamples["mae"] - b.resamples["mae"])
    assert diff == (0.0, 0.0)


def test_interval_brackets_the_point_estimate(
    clustered: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    y, p, cluster = clustered
    boot = Bootstrap.for_repositories(0, 300, np.arange(30))
    (result,) = run_cells(boot, [Cell(row_terms(y, p, np.zeros(700, bool)), cluster, 30)])
    for name in ("mae", "median_ape", "rmsle", "within_2x"):
        ci = interval(result.resamples[name])
        assert ci is not None and ci[0] < result.point[name] < ci[1]


def test_interval_is_none_when_nothing_is_defined() -> None:
    assert interval(np.full(10, np.nan)) is None


def test_medians_stay_exact_once_the_window_is_placed() -> None:
    rng = np.random.default_rng(12)
    n, clusters = 40_000, 400
    cluster = rng.integers(0, clusters, n)
    y = rng.lognormal(3, 1, n).round()
    p = y * rng.lognormal(0, 0.5, n)
    cell = Cell(row_terms(y, p, np.zeros(n, bool)), cluster, clusters)
    wide = cell.window
    boot = Bootstrap.for_repositories(6, 60, np.arange(clusters))
    (result,) = run_cells(boot, [cell])
    assert cell.window[1] - cell.window[0] < wide[1] - wide[0]  # the pilot narrowed it
    ape = np.abs(p - y) / np.maximum(y, 1)
    weights = np.concatenate(list(boot.weights()))
    want = [np.median(np.repeat(ape, w[cluster].astype(int))) for w in weights]
    assert np.array_equal(result.resamples["median_ape"], want)
