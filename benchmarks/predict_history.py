"""How well `predict` does for a known repository when it learns from the repository's own runs
(`gharuntime learn`, history track, config fallback) against the config-only prediction, on a
held-out later window of the simulated GitHub.

The seeded simulated GitHub is served on 127.0.0.1. `run_learn` crawls the chosen repositories'
runs created up to the cutoff (END − --holdout-days), builds and fits, exactly as
`gharuntime learn` does. A second crawl of the whole window gives the truth: every job of those
repositories created after the cutoff. Each such run's workflow file (the YAML it ran) is then
predicted with `predict_workflow`, the library call behind `gharuntime predict`, four ways:

- history (as learnt): each job's history is its recent runs in the learned dataset (nothing
  after the cutoff), the history-track model, the config-track model for a job with none;
- history (refreshed): the same, with the history taken from the full crawl strictly before
  the run was created (`predict --history-from DATASET` with a dataset rebuilt before each run);
- config only: the learned config-track model alone (what `predict` gives without history);
- last run: the most recent duration in the refreshed history (the config fallback for a job
  with none), the naive reference.

Predicted jobs are matched to the run's real jobs by GitHub's job name (a job of a reusable
workflow is not expanded without the repository checked out: counted as unmatched). Reported
per way: RMSLE = sqrt(mean((log1p(p) − log1p(y))²)) and the share of jobs inside their P10–P90.

    python benchmarks/predict_history.py [--seed 1] [--scale small] [--repos 40]
        [--holdout-days 20] [--work DIR]

The last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from gharuntime.builder.build import build
from gharuntime.contract import SPLITS
from gharuntime.crawler.assembly import make_client
from gharuntime.crawler.client import Token
from gharuntime.crawler.crawl import CrawlOptions, crawl
from gharuntime.dataset import load
from gharuntime.learn import LearnRequest, run_learn
from gharuntime.predict.history import RepoHistory, load_repo_history
from gharuntime.predict.learned import load_learned
from gharuntime.predict.workflow import RepoMeta, predict_workflow, repo_meta_from_json
from gharuntime.sim import END, ServerConfig, World, serve
from gharuntime.sim.world import DAY, iso
from gharuntime.source_kinds.raw import RawSource

WAYS = ("history_as_learnt", "history_refreshed", "config_only", "last_run")


def _choose(world: World, n: int, since: float, cutoff: float) -> list[str]:
    """The n public repositories with the most completed runs before the cutoff (never renamed,
    so one name throughout), ties by name."""
    counts: Counter[str] = Counter()
    for rw, run in world.completed_runs(since, cutoff):
        del run
        if not rw.meta.private and rw.meta.old_name is None:
            counts[rw.meta.full_name] += 1
    return sorted(counts, key=lambda name: (-counts[name], name))[:n]


def _rows(dataset: Path) -> pl.DataFrame:
    return pl.concat([load(dataset, "temporal", split) for split in SPLITS])


def _scores(y: np.ndarray, p: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> dict[str, Any]:
    ok = ~np.isnan(lo)
    return {
        "rmsle": round(float(np.sqrt(np.mean((np.log1p(p) - np.log1p(y)) ** 2))), 4),
        "coverage_p10_p90": round(float(np.mean((lo[ok] <= y[ok]) & (y[ok] <= hi[ok]))), 4)
        if ok.any()
        else None,
        "jobs": len(y),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", default="small", choices=["tiny", "small"])
    ap.add_argument("--repos", type=int, default=40, help="repositories learnt (most runs first)")
    ap.add_argument("--holdout-days", type=int, default=20)
    ap.add_argument("--work", type=Path, help="work folder (default: a temporary one, removed)")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="gharuntime-predict-history-"))
    if work.exists() and any(work.iterdir()):
        sys.exit(f"{work} is not empty; the figures are for a fresh folder")
    world = World(args.seed, args.scale)
    since_ts = END - world.scale.days * DAY
    cutoff_ts = END - args.holdout_days * DAY
    since, cutoff, until = iso(since_ts), iso(cutoff_ts), iso(END)
    repos = _choose(world, args.repos, since_ts, cutoff_ts)
    token = Token("ghp_" + secrets.token_hex(18), "benchmark")
    config = ServerConfig(tokens={token.secret: "benchmark"}, rate_limit=10**9, graphql_limit=10**9)
    t0 = time.perf_counter()
    with serve(world, config) as server:
        learned_out = work / "learned"
        run_learn(
            LearnRequest(
                repos=tuple(repos),
                out=learned_out,
                tokens=(token,),
                api_url=server.url,
                since=since,
                until=cutoff,
            )
        )
        learn_s = time.perf_counter() - t0
        raw = work / "truth.raw"
        client = make_client(server.url, [token], max_retries=6)
        client.identify()
        crawl(raw, CrawlOptions(repos=repos, since=since, until=until), client)
    truth = work / "truth"
    build(RawSource([raw], provenance={"kind": "github", "synthetic": True}), truth)
    learned = load_learned(learned_out)
    rows = _rows(truth)
    cut = pl.lit(cutoff_ts * 1_000_000).cast(pl.Datetime("us", "UTC"))
    held = rows.filter((pl.col("created_at") >= cut) & pl.col("workflow_yaml").is_not_null())
    stale: dict[str, RepoHistory] = {}
    fresh: dict[str, RepoHistory] = {}
    metas: dict[str, RepoMeta] = {}
    truth_y: list[float] = []
    basis: list[str] = []
    predicted: dict[str, list[tuple[float, float, float]]] = {w: [] for w in WAYS}
    unmatched = 0
    t1 = time.perf_counter()
    runs = held.group_by("repo", "run_id", "run_attempt", maintain_order=True).agg(
        pl.col("workflow_path").first(),
        pl.col("workflow_yaml").first(),
        pl.col("created_at").min(),
        pl.col("job_name"),
        pl.col("duration_s"),
    )
    nan = math.nan
    for run in runs.iter_rows(named=True):
        repo = run["repo"]
        if repo not in stale:
            stale[repo] = load_repo_history(learned.dataset, repo)
            fresh[repo] = load_repo_history(truth, repo)
            metas[repo] = repo_meta_from_json(stale[repo].meta, RepoMeta())
        common = {"path": run["workflow_path"], "meta": metas[repo], "at": run["created_at"]}
        text = run["workflow_yaml"]
        a = predict_workflow(
            text, learned.history, history=stale[repo], fallback=learned.config, **common
        )
        b = predict_workflow(
            text, learned.history, history=fresh[repo], fallback=learned.config, **common
        )
        c = predict_workflow(text, learned.config, **common)
        by_name = [{j.name: j for j in x.jobs} for x in (a, b, c)]
        for name, y in zip(run["job_name"], run["duration_s"], strict=True):
            if any(name not in m for m in by_name):
                unmatched += 1
                continue
            ja, jb, jc = (m[name] for m in by_name)
            truth_y.append(y)
            basis.append(ja.basis or "")
            for way, j in (
                ("history_as_learnt", ja),
                ("history_refreshed", jb),
                ("config_only", jc),
            ):
                q = j.quantiles
                predicted[way].append(
                    (j.predicted["duration_s"], q.get("p10", nan), q.get("p90", nan))
                )
            last = jb.history[0] if jb.history else jc.predicted["duration_s"]
            predicted["last_run"].append((last, nan, nan))
    predict_s = time.perf_counter() - t1
    y = np.asarray(truth_y)
    has = np.asarray([b == "history" for b in basis])
    figures: dict[str, Any] = {}
    for way, values in predicted.items():
        arr = np.asarray(values, dtype=np.float64)
        p, lo, hi = arr[:, 0], arr[:, 1], arr[:, 2]
        figures[way] = {
            "all": _scores(y, p, lo, hi),
            "with_history": _scores(y[has], p[has], lo[has], hi[has]),
            "without_history": _scores(y[~has], p[~has], lo[~has], hi[~has])
            if (~has).any()
            else None,
        }
    doc = {
        "benchmark": "predict_history",
        "world": {"seed": args.seed, "scale": args.scale},
        "repositories": len(repos),
        "learnt_window": [since, cutoff],
        "held_out_window": [cutoff, until],
        "learnt_jobs": int(_rows(learned.dataset).height),
        "held_out_runs": runs.height,
        "held_out_jobs": len(y),
        "held_out_jobs_unmatched": unmatched,
        "held_out_jobs_with_history": int(has.sum()),
        "learn_s": round(learn_s, 1),
        "predict_s": round(predict_s, 1),
        "rmsle": {way: figures[way]["all"]["rmsle"] for way in WAYS},
        "coverage_p10_p90": {way: figures[way]["all"]["coverage_p10_p90"] for way in WAYS},
        "detail": figures,
    }
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    for way in WAYS:
        cover = doc["coverage_p10_p90"][way]
        print(
            f"{way:18} RMSLE {doc['rmsle'][way]:.3f}"
            + (f"  P10–P90 coverage {cover:.3f}" if cover is not None else "")
        )
    print(json.dumps(doc))


if __name__ == "__main__":
    main()
