"""Issue #31 made eval faster (partition, resample draws, the median's window, threads); the
numbers must not move. Every point estimate and resample value of varied scenarios
(tests/eval_scenarios.py) is compared, to the last bits a CPU's BLAS kernel decides, with what the code gave before those changes
(tests/data/eval-before-perf/scores.json, written by make.py there from commit e3b17ec)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from eval_scenarios import SCENARIOS, scores_json

from gharuntime.eval.bootstrap import Bootstrap, Cell
from gharuntime.eval.metrics import TargetTerms, average_ranks

GOLDEN = Path(__file__).parents[1] / "data" / "eval-before-perf" / "scores.json"


@pytest.fixture(scope="module")
def golden() -> dict[str, dict[str, object]]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scores_are_the_ones_the_code_gave_before(
    name: str, golden: dict[str, dict[str, object]]
) -> None:
    got = scores_json(*SCENARIOS[name]())
    want = golden[name]
    assert sorted(got) == sorted(want)
    for cell in want:
        assert _close(got[cell], want[cell]), cell


def _close(got: object, want: object) -> bool:
    """Equal, floats to 1e-12 relative: the weights' matrix product sums in an order each CPU's
    BLAS kernel picks, so a value's last bit may differ from the machine that wrote the golden
    file; anything the code changed moves far more than that."""
    if isinstance(want, float) and isinstance(got, float):
        return bool(np.isclose(got, want, rtol=1e-12, atol=1e-300, equal_nan=True))
    if isinstance(want, dict) and isinstance(got, dict):
        return sorted(got) == sorted(want) and all(_close(got[k], want[k]) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want, strict=True))
    return type(got) is type(want) and got == want


def test_weights_are_one_draw_per_resample() -> None:
    """The grouped draws give the stream of one integers() call per resample, as before."""
    for clusters in (1, 3, 10_001):
        boot = Bootstrap.for_repositories(9, 23, np.arange(clusters) * 5)
        rng = boot._rng()
        want = np.stack(
            [
                np.bincount(rng.integers(0, clusters, size=clusters), minlength=clusters)
                for _ in range(23)
            ]
        ).astype(np.float64)
        assert np.array_equal(np.concatenate(list(boot.weights(chunk=7))), want)


def test_partition_equals_each_group_on_its_own() -> None:
    """Each group's terms from the one-pass partition are those of its rows taken alone."""
    rng = np.random.default_rng(5)
    n = 2_000
    y = np.round(rng.lognormal(2, 1, n))
    p = np.round(y * rng.lognormal(0, 0.5, n))
    failed = rng.random(n) < 0.05
    labels = rng.integers(-1, 4, n)
    terms = TargetTerms(y, p, failed)
    parts = terms.partition(labels, 5)  # group 4 is empty
    for g, part in enumerate(parts):
        rows = np.flatnonzero(labels == g)
        assert part.stats.shape == (11, rows.shape[0])
        pp, yy = np.where(failed, 0.0, p)[rows], y[rows]
        centre = (rows.shape[0] + 1) / 2.0
        assert np.array_equal(part.stats[4], average_ranks(pp) - centre)
        assert np.array_equal(part.stats[5], average_ranks(yy) - centre)
        assert np.array_equal(part.stats[1], np.abs(pp - yy))
        assert np.array_equal(part.ape[part.ape_order], np.sort(part.ape))
        inputs = part.spearman_inputs()
        assert inputs is not None
        sp, sy, op, oy = inputs
        assert np.array_equal(sp, pp) and np.array_equal(sy, yy)
        assert op is not None and oy is not None
        assert np.array_equal(sp[op], np.sort(pp)) and np.array_equal(sy[oy], np.sort(yy))


def test_group_sums_equal_the_laid_out_partition() -> None:
    """group_sums (what eval scores) gives each group the per-cluster sums, sorted APE values,
    repositories and Spearman inputs the laid-out partition gives, bit for bit."""
    rng = np.random.default_rng(8)
    n, clusters = 3_000, 37
    y = np.round(rng.lognormal(2, 1, n))
    p = np.round(y * rng.lognormal(0, 0.5, n))
    failed = rng.random(n) < 0.05
    labels = rng.integers(-1, 4, n)
    cluster = rng.integers(0, clusters, n)
    cluster[labels == 2] = 5  # a group of one cluster
    terms = TargetTerms(y, p, failed)
    parts = terms.partition(labels, 5)  # group 4 is empty
    sums = terms.group_sums(labels, 5, cluster, clusters)
    for g, (part, got) in enumerate(zip(parts, sums, strict=True)):
        rows = np.flatnonzero(labels == g)
        want = Cell(part, cluster[rows], clusters)
        cell = Cell.from_group(got, clusters)
        assert cell.rows == want.rows == rows.shape[0]
        assert np.array_equal(cell.sums, want.sums)
        assert np.array_equal(cell.values, want.values)
        assert np.array_equal(cell.value_cluster, want.value_cluster)
        assert cell.repositories == want.repositories
        assert _close(cell.point, want.point)
        pp, yy, cc, po, yo = got.spearman_source()
        wp, wy, _, _ = part.spearman_inputs() or (None, None, None, None)
        assert np.array_equal(pp, wp) and np.array_equal(yy, wy)
        assert np.array_equal(cc, cluster[rows])
        assert po is not None and yo is not None
        assert np.array_equal(pp[po], np.sort(pp)) and np.array_equal(yy[yo], np.sort(yy))
        if rows.shape[0]:
            weights = next(Bootstrap.for_repositories(1, 9, np.arange(clusters)).weights())
            assert np.allclose(
                cell.exact_spearman(weights),
                want.exact_spearman(weights),
                equal_nan=True,
                rtol=1e-12,
            )
