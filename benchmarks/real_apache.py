"""Rebuild `gharuntime-real-apache` from clones of the four repositories and rerun every
baseline on it: the real dataset, its leaderboard results, and the transfer table.

1. Build the dataset (`build_from_api_json`, as `gharuntime build --source api-json` does):
   apache/ozone's CI records from elek/ozone-build-results and apache/ratis's from
   adoroszlai/ratis-build-results, each run's workflow YAML read from apache/ozone's or
   apache/ratis's history at its head_sha; cross_repo fixed to train on ozone, test on ratis.
   Measured: wall time and peak RSS of the build alone (it runs in a child process).
2. Every baseline (median, group-median, last-run, lightgbm, xgboost) on the config and history
   tracks, trained and scored with the eval library on the temporal and the cross_repo config
   (benchmarks/baselines.py), one result JSON per CONFIG-TRACK-METHOD under
   --results-dir/gharuntime-real-apache/.
3. Transfer: the same methods trained on a small simulated dataset (`--sim-dataset`, or built
   here from the seeded simulated GitHub), scored on the real temporal test split; results as
   transfer-sim-TRACK-METHOD.json. Feature importances of LightGBM trained on real vs. simulated
   jobs are printed side by side.

    python benchmarks/real_apache.py --ozone-results ozone-build-results.git \
        --ratis-results ratis-build-results.git --ozone ozone.git --ratis ratis.git \
        --out work/ --results-dir leaderboard/results

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LABEL = "gharuntime-real-apache"
METHODS = ("median", "group-median", "last-run", "lightgbm", "xgboost")
TRACKS = ("config", "history")

DESCRIPTION = (
    "apache/ozone (formerly apache/hadoop-ozone; 2019-12 to 2023-04, push and schedule runs of "
    "its post-commit workflow) and apache/ratis (2022-04 to 2026-08, push runs), archived by "
    "their maintainers. The temporal split orders all runs of both projects by time: as the "
    "ozone archive ends in 2023-04, the temporal test split holds only apache/ratis jobs (and "
    "the repository bootstrap then resamples one repository, so its intervals say nothing). "
    "The cross_repo config is fixed to train on apache/ozone and test on apache/ratis, with an "
    "empty validation split (no early stopping there). Jobs of archived run folders without "
    "run.json (2020-03 to 2020-05) have no creation time and are dropped (counted below)."
)


def _load_baselines_bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "bench_baselines", ROOT / "benchmarks" / "baselines.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(args: dict[str, Any], queue: Any) -> None:
    """The build alone, in a child process (so its peak RSS is its own)."""
    from gharuntime.builder.api_build import build_from_api_json
    from gharuntime.sources.api_json import ApiSource

    t0 = time.perf_counter()
    result = build_from_api_json(
        [
            ApiSource(Path(args["ozone_results"]), "elek/ozone-build-results"),
            ApiSource(Path(args["ratis_results"]), "adoroszlai/ratis-build-results"),
        ],
        Path(args["out"]),
        yaml_git=[Path(args["ozone"]), Path(args["ratis"])],
        cross_repo={"apache/ozone": "train", "apache/ratis": "test"},
        description=DESCRIPTION,
        workers=1,
    )
    m = result.manifest
    queue.put(
        {
            "wall_s": round(time.perf_counter() - t0, 1),
            "rows": m["rows"],
            "candidates": m["build"]["candidates"],
            "runs": m["runs"],
            "job_keys": m["build"]["job_keys"],
            "filters": m["filters"],
            "problems": m["build"]["problems"]["counts"],
            "splits": m["splits"],
            "lost_input": result.lost_input,
        }
    )


def build(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(
        target=_build,
        args=(
            {
                "ozone_results": str(args.ozone_results),
                "ratis_results": str(args.ratis_results),
                "ozone": str(args.ozone),
                "ratis": str(args.ratis),
                "out": str(out),
            },
            queue,
        ),
    )
    t0 = time.perf_counter()
    child.start()
    figures: dict[str, Any] = queue.get()
    child.join()
    figures["wall_with_start_s"] = round(time.perf_counter() - t0, 1)
    # ru_maxrss of children: the largest child so far, in KiB on Linux (the build is the first).
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    return figures


def _sim_dataset(args: argparse.Namespace, work: Path) -> Path:
    if args.sim_dataset:
        return Path(args.sim_dataset)
    from gharuntime.builder.crawled import build_from_simulated

    out = work / f"sim-{args.sim_scale}"
    if not (out / "manifest.json").is_file():
        build_from_simulated(out, work / f"sim-{args.sim_scale}.raw", seed=1, scale=args.sim_scale)
    return out


def _top(model_dir: Path, n: int = 12) -> list[tuple[str, float]]:
    path = model_dir / "importances.json"
    if not path.is_file():
        return []
    pairs = json.loads(path.read_text()).get("duration_s", [])
    total = sum(float(p["gain"]) for p in pairs) or 1.0
    ranked = sorted(((p["feature"], float(p["gain"]) / total) for p in pairs), key=lambda x: -x[1])
    return [(k, round(v, 4)) for k, v in ranked[:n]]


def transfer(
    real: Path, sim: Path, work: Path, results: Path | None, resamples: int
) -> list[dict[str, Any]]:
    """Methods trained on the simulated dataset, scored on the real temporal test split."""
    from gharuntime.baselines.method import ForbiddenInputError
    from gharuntime.baselines.model_io import load_model
    from gharuntime.baselines.run import run_baseline
    from gharuntime.dataset import load
    from gharuntime.eval.evaluate import Method, score
    from gharuntime.eval.meta import MethodMeta
    from gharuntime.eval.report import result_json
    from gharuntime.eval.truth import DatasetRef, Truth

    test = load(real, "temporal", "test")
    sim_train = load(sim, "temporal", "train")
    truth = Truth.from_frames(
        test,
        sim_train,
        dataset=DatasetRef(id=LABEL, kind="local"),
        config="temporal",
        split="test",
    )
    rows = []
    for track in TRACKS:
        for name in METHODS:
            model_dir = work / "transfer" / track / f"{name}.model"
            try:
                run_baseline(
                    name,
                    sim,
                    config="temporal",
                    track=track,
                    out=work / "transfer" / track / f"{name}.jsonl",
                    model_dir=model_dir,
                )
            except ForbiddenInputError:
                continue
            method, meta = load_model(model_dir)
            pred = method.predict_rows(test)
            m = Method(
                name=meta["method"],
                meta=MethodMeta(method=meta["method"], track=track, inputs=tuple(meta["inputs"])),
                predictions={t: np.asarray(v, dtype=np.float64) for t, v in pred.items()},
                present=np.ones(test.height, dtype=bool),
                source={"model": f"trained on {sim.name} (simulated), temporal train split"},
            )
            result = result_json(score(truth, track, [m], resamples=resamples))
            d = result["metrics"]["duration_s"]
            row = {
                "track": track,
                "method": name,
                "rmsle": d["rmsle"]["value"],
                "within_2x": d["within_2x"]["value"],
                "mae_s": d["mae"]["value"],
            }
            rows.append(row)
            if results is not None:
                target = results / LABEL / f"transfer-sim-{track}-{name}.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
            print(
                f"transfer {track:8} {name:13} RMSLE {row['rmsle']:.3f} "
                f"within-2x {row['within_2x']:.1%} on {test.height} real test jobs",
                file=sys.stderr,
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("ozone-results", "ratis-results", "ozone", "ratis"):
        parser.add_argument(f"--{name}", type=Path, required=True, help="a git repository")
    parser.add_argument("--out", type=Path, required=True, help="work folder")
    parser.add_argument("--results-dir", type=Path, help="e.g. leaderboard/results")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--sim-dataset", type=Path, help="a simulated dataset to transfer from")
    parser.add_argument("--sim-scale", default="small")
    parser.add_argument("--skip-build", action="store_true", help="reuse OUT/" + LABEL)
    parser.add_argument("--skip-baselines", action="store_true")
    parser.add_argument("--skip-transfer", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    dataset = args.out / LABEL
    started = time.perf_counter()
    figures: dict[str, Any] = {"benchmark": "real_apache", "dataset": str(dataset)}
    if not args.skip_build:
        figures["build"] = build(args, dataset)
        b = figures["build"]
        print(
            f"build: {b['rows']:,} rows kept of {b['candidates']:,} candidates, job keys "
            f"{b['job_keys']}, {b['wall_s']} s, peak RSS {b['peak_rss_mb']} MB",
            file=sys.stderr,
        )
    if not args.skip_baselines:
        bench = _load_baselines_bench()
        figures["baselines"] = {}
        for config in ("temporal", "cross_repo"):
            line = _capture_last_json(
                bench.main,
                [
                    "--dataset",
                    str(dataset),
                    "--config",
                    config,
                    "--tracks",
                    ",".join(TRACKS),
                    "--methods",
                    ",".join(METHODS),
                    "--resamples",
                    str(args.resamples),
                    "--work",
                    str(args.out / "bench"),
                    "--label",
                    LABEL,
                    *(["--results-dir", str(args.results_dir)] if args.results_dir else []),
                ],
            )
            figures["baselines"][config] = line
    if not args.skip_transfer:
        sim = _sim_dataset(args, args.out)
        figures["transfer"] = transfer(dataset, sim, args.out, args.results_dir, args.resamples)
        real_imp = _top(args.out / "bench" / "temporal" / "config" / "lightgbm.model")
        sim_imp = _top(args.out / "transfer" / "config" / "lightgbm.model")
        figures["importances"] = {"real_lightgbm_config": real_imp, "sim_lightgbm_config": sim_imp}
        print("LightGBM config-track gain share, trained on real | on simulated:", file=sys.stderr)
        for i in range(max(len(real_imp), len(sim_imp))):
            left = f"{real_imp[i][0]:40} {real_imp[i][1]:.3f}" if i < len(real_imp) else " " * 46
            right = f"{sim_imp[i][0]:40} {sim_imp[i][1]:.3f}" if i < len(sim_imp) else ""
            print(f"  {left} | {right}", file=sys.stderr)
    figures["wall_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(figures, default=str))
    return 0


def _capture_last_json(fn: Any, argv: list[str]) -> Any:
    """Run a benchmark's main(argv), keeping the one JSON object it prints last."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(argv)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.strip()]
    return json.loads(lines[-1]) if lines else None


if __name__ == "__main__":
    raise SystemExit(main())
