"""What exact per-resample Spearman costs in `gharuntime eval`, against the approximation.

Scores one cell of N rows from R repositories with 1,000 resamples both ways (run_cells with the
exact threshold forced on, then off), for several N, and prints the seconds of each, the
extra seconds per million rows × resamples, and the widths of the two Spearman intervals.
EXACT_SPEARMAN_MAX_WORK in gharuntime/eval/spearman.py is chosen from these figures.
Last line: one JSON object.

    python benchmarks/spearman_cost.py [--rows 10000,50000,200000] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from gharuntime.eval.bootstrap import Bootstrap, Cell, interval, run_cells
from gharuntime.eval.metrics import row_terms
from gharuntime.eval.spearman import EXACT_SPEARMAN_MAX_WORK


def one(n: int, resamples: int, repos: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    cluster = np.sort(rng.integers(0, repos, n))
    effect = rng.normal(0, 1, repos)[cluster]
    y = np.exp(3 + effect + rng.normal(0, 1, n)).round()
    p = np.exp(3 + 0.8 * effect + rng.normal(0, 0.7, n)).round()
    boot = Bootstrap.for_repositories(0, resamples, np.arange(repos))
    out: dict[str, float] = {"rows": n, "repositories": repos, "resamples": resamples}
    for name, limit in (("approx", 0), ("exact", 10**15)):
        cells = [Cell(row_terms(y, p, np.zeros(n, bool)), cluster, repos)]
        t0 = time.perf_counter()
        res = run_cells(boot, cells, exact_spearman_max=limit)[0]
        out[f"{name}_s"] = round(time.perf_counter() - t0, 3)
        ci = interval(res.resamples["spearman"])
        assert ci is not None
        out[f"{name}_ci_width"] = round(ci[1] - ci[0], 5)
    extra = out["exact_s"] - out["approx_s"]
    out["extra_s_per_1e6_row_resamples"] = round(extra / (n * resamples / 1e6), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="10000,50000,200000")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--repos", type=int, default=300)
    args = ap.parse_args()
    results = []
    for n in (int(x) for x in args.rows.split(",")):
        r = one(n, args.resamples, args.repos)
        print(
            f"{n:>9,} rows: approx {r['approx_s']:.2f} s, exact {r['exact_s']:.2f} s "
            f"(+{r['extra_s_per_1e6_row_resamples']:.3f} s per million rows×resamples); "
            f"interval width approx {r['approx_ci_width']}, exact {r['exact_ci_width']}"
        )
        results.append(r)
    load = os.getloadavg()[0]
    print(f"load average (1 min): {load:.2f}; threshold now {EXACT_SPEARMAN_MAX_WORK:,}")
    print(
        json.dumps({"results": results, "loadavg_1m": load, "threshold": EXACT_SPEARMAN_MAX_WORK})
    )


if __name__ == "__main__":
    main()
