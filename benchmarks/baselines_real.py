"""Score saved baseline models on the only real jobs we hold: the records under
`../shared/reference/` — 18 jobs of one GHALogs run (PyTables wheels.yml, 2023) and 10 jobs of
two recorded PyGithub CI runs (the 11th recorded job has no run record). That is 28 jobs from 2
repositories, no workflow YAML: a sanity check of transfer from the training data to real
jobs, far too small for a ranking (intervals resample 2 repositories: the recording's second
id for PyGithub is mapped back to its first).

Both sets go through the real pipeline (`gharuntime build` from a GHALogs dump and from a raw
store), every split of both is pooled, and each model folder under --models
(`<track>/<name>.model`, as `benchmarks/baselines.py --work DIR` leaves them) predicts them;
the eval library scores the predictions. The last line printed is one JSON object.

    python benchmarks/baselines.py --dataset out/dataset --work out/bench
    python benchmarks/baselines_real.py --models out/bench/temporal --dataset out/dataset
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from _common import shown

from gharuntime.baselines.model_io import load_model
from gharuntime.builder.build import build
from gharuntime.contract import SPLITS, RawKind
from gharuntime.dataset import LocalDataset, load
from gharuntime.eval.evaluate import Predictions, score
from gharuntime.eval.meta import MethodMeta
from gharuntime.eval.provenance import add_provenance
from gharuntime.eval.report import result_json
from gharuntime.eval.truth import Truth
from gharuntime.rawstore import RawStoreWriter
from gharuntime.source_kinds import GhalogsConfig
from gharuntime.source_kinds.raw import RawSource

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REFERENCE = ROOT.parent / "shared" / "reference"


def _all_rows(dataset: Path) -> pl.DataFrame:
    return pl.concat([load(dataset, "temporal", s) for s in SPLITS])


def ghalogs_rows(reference: Path, work: Path) -> pl.DataFrame:
    """The GHALogs record as the build makes it: a dump plus its log archive."""
    ref = reference / "ghalogs"
    run = json.loads((ref / "run.json").read_text(encoding="utf-8"))
    repo = json.loads((ref / "repository.json").read_text(encoding="utf-8"))
    dump = work / "ghalogs-dump"
    dump.mkdir(parents=True)
    for name, docs in (("runs.json.gz", [run]), ("repositories.json.gz", [repo])):
        with gzip.open(dump / name, "wt", encoding="utf-8") as fh:
            for doc in docs:
                fh.write(json.dumps(doc, default=str) + "\n")
    logs = work / "ghalogs-logs"
    archive = logs / Path(run["logs_archive"]["path"]).relative_to("/data/logs")
    archive.parent.mkdir(parents=True)
    shutil.copy(ref / "log.tar.gz", archive)
    build(GhalogsConfig(dump, logs).source(), work / "ghalogs-dataset")
    return _all_rows(work / "ghalogs-dataset")


def recorded_api_rows(reference: Path, work: Path) -> pl.DataFrame:
    """The recorded PyGithub jobs with their runs, through a raw store and the build."""
    ref = reference / "recorded-api"
    runs = json.loads((ref / "runs.json").read_text(encoding="utf-8"))
    jobs = json.loads((ref / "jobs.json").read_text(encoding="utf-8"))
    wanted = {j["run_id"] for j in jobs}
    writer = RawStoreWriter(work / "api-store", prefix="recorded")
    # One id per repository: the recording (a test fixture) edits some runs' repository into
    # another id under the same full name (PyGithub/PyGithub appears as 3544490 and as
    # 446365735, a fork's id); the first id a full name has in the recording stands for it.
    repo_id_of_name: dict[str, int] = {}
    for r in runs:
        repo_id_of_name.setdefault(r["repository"]["full_name"], r["repository"]["id"])
    repo_of: dict[int, int] = {}
    for r in runs:  # the first record of a run wins (the recording repeats one, edited)
        if r["id"] in wanted and r["id"] not in repo_of:
            repo_id = repo_id_of_name[r["repository"]["full_name"]]
            r = {**r, "repository": {**r["repository"], "id": repo_id}}
            repo_of[r["id"]] = repo_id
            writer.add(RawKind.RUN, f"{r['id']}:{r.get('run_attempt', 1)}", r, repo_id)
    for j in jobs:
        if j["run_id"] in repo_of:
            writer.add(RawKind.JOB, str(j["id"]), j, repo_of[j["run_id"]])
    writer.flush()
    build(RawSource([work / "api-store"]), work / "api-dataset")
    return _all_rows(work / "api-dataset")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, required=True, help="folder of <track>/<name>.model")
    parser.add_argument("--dataset", type=Path, help="the training dataset (for 'seen' repos)")
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--results-dir", type=Path, help="keep each result JSON here")
    args = parser.parse_args(argv)
    if not args.reference.is_dir():
        print(f"no reference data at {args.reference}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="gharuntime-real-"))
    try:
        real = pl.concat(
            [ghalogs_rows(args.reference, work), recorded_api_rows(args.reference, work)]
        )
        train = load(args.dataset, "temporal", "train") if args.dataset else real.clear()
        truth = Truth.from_frames(
            real,
            train,
            dataset=LocalDataset(Path("shared-reference-real-jobs")),
            config="pooled",
            split="all",
        )
        figures: list[dict[str, Any]] = []
        for folder in sorted(args.models.glob("*/*.model")):
            method, meta = load_model(folder)
            if method.track == "multi":
                continue
            pred = method.predict_rows(real)
            m = Predictions(
                name=meta["method"],
                meta=MethodMeta(
                    method=meta["method"], track=meta["track"], inputs=tuple(meta["inputs"])
                ),
                predictions={t: np.asarray(v, dtype=np.float64) for t, v in pred.items()},
                present=np.ones(real.height, dtype=bool),
                source={"model": shown(folder)},
            )
            result = add_provenance(
                result_json(score(truth, method.track, [m], resamples=args.resamples)),
                [
                    "python",
                    "benchmarks/baselines_real.py",
                    *(argv if argv is not None else sys.argv[1:]),
                ],
            )
            d = result["metrics"]["duration_s"]
            row = {
                "track": method.track,
                "method": meta["method"],
                "jobs": real.height,
                "repositories": int(truth.repo_ids.shape[0]),
                "rmsle": {k: d["rmsle"][k] for k in ("value", "ci_low", "ci_high")},
                "within_2x": {k: d["within_2x"][k] for k in ("value", "ci_low", "ci_high")},
            }
            figures.append(row)
            if args.results_dir:
                args.results_dir.mkdir(parents=True, exist_ok=True)
                out = args.results_dir / f"reference-real-{method.track}-{meta['method']}.json"
                out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
            print(
                f"{method.track:8} {meta['method']:13} RMSLE {row['rmsle']['value']:.3f} "
                f"within-2x {row['within_2x']['value']:.1%} on {real.height} real jobs",
                file=sys.stderr,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"benchmark": "baselines_real", "jobs": real.height, "results": figures}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
