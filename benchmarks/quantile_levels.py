"""How scoring a quantile sidecar grows with its number of levels (issue 37: 10,003 levels took
375 s, pairing every level with every other). Times the level work eval does per target, the
central intervals and the per-row interval terms, at L and 10 L levels in the same run: a
linear cost gives a ratio near 10, a quadratic one near 100. The last line printed is one JSON
object; `goal_met` is the ratio under 20.

    python benchmarks/quantile_levels.py
    python benchmarks/quantile_levels.py --levels 500 --rows 20000
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from gharuntime.eval.quantiles import QuantileLevels, interval_terms


def _seconds(levels: int, rows: int, repeat: int) -> float:
    """The best of `repeat` runs: levels paired into central intervals, named, and the terms."""
    percents = tuple(float(p) for p in np.linspace(0.01, 99.99, levels))
    rng = np.random.default_rng(0)
    y = rng.gamma(2.0, 60.0, rows)
    q = np.sort(rng.gamma(2.0, 60.0, (levels, rows)), axis=0)
    failed = np.zeros(rows, dtype=bool)
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        grid = QuantileLevels(percents)
        names = [grid.interval_name(pair) for pair in grid.central]
        terms = interval_terms(y, q, failed, grid)
        assert len(names) == levels // 2 and terms.values.shape[1] == rows
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", type=int, default=200, help="L (10 L is timed too)")
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    small = _seconds(args.levels, args.rows, args.repeat)
    large = _seconds(10 * args.levels, args.rows, args.repeat)
    ratio = large / small
    print(f"{args.levels} levels: {small:.4f} s; {10 * args.levels} levels: {large:.4f} s")
    print(
        json.dumps(
            {
                "levels": args.levels,
                "rows": args.rows,
                "seconds_small": round(small, 5),
                "seconds_large": round(large, 5),
                "ratio": round(ratio, 2),
                "goal": "ratio < 20 (linear: ~10; quadratic: ~100)",
                "goal_met": ratio < 20,
            }
        )
    )


if __name__ == "__main__":
    main()
