"""Rebuild `gharuntime-real-apache` from clones of the four repositories and rerun every
baseline on it: the real dataset, its leaderboard results, and the transfer table.

1. Build the dataset (`build(ApiJsonSource(...), out)`, as `gharuntime build --source api-json` does):
   apache/ozone's CI records from elek/ozone-build-results and apache/ratis's from
   adoroszlai/ratis-build-results, each run's workflow YAML read from apache/ozone's or
   apache/ratis's history at its head_sha; cross_repo fixed to train on ozone, test on ratis.
   Measured: wall time and peak RSS of the build alone (it runs in a child process).
2. Every baseline (median, group-median, last-run, lightgbm, xgboost, catboost; the tuned trees
   on temporal/config, 5 trials) on the config and history
   tracks, trained and scored with the eval library on the temporal and the cross_repo config
   (benchmarks/baselines.py), one result JSON per CONFIG-TRACK-METHOD under
   --results-dir/gharuntime-real-apache/.
3. Transfer: the same methods trained on a small simulated dataset (`--sim-dataset`, or built
   here from the seeded simulated GitHub as `gharuntime build --source simulated --seed 1
   --scale small` does), scored on the real temporal test split; results as
   transfer-SIM_LABEL-temporal-TRACK-METHOD.json, each naming its training dataset under
   `trained_on` (the leaderboard's transfer tables). Feature importances of LightGBM trained on
   real vs. simulated jobs are printed side by side.

    python benchmarks/real_apache.py --ozone-results ozone-build-results.git \
        --ratis-results ratis-build-results.git --ozone ozone.git --ratis ratis.git \
        --out work/ --results-dir leaderboard/results

With the dataset already built in work/ (`--skip-build`), the four clones are not needed; e.g.
the transfer step alone:

    python benchmarks/real_apache.py --out work/ --skip-build --skip-baselines \
        --sim-dataset work/sim-small --sim-label gharuntime-sim-small --results-dir DIR

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import run_script, shown

LABEL = "gharuntime-real-apache"
METHODS = ("median", "group-median", "last-run", "lightgbm", "xgboost", "catboost")
TUNED = ("lightgbm-tuned", "xgboost-tuned")
TUNED_TRIALS = 5
"""The tuned trees run on temporal/config only, with 5 seeded Optuna trials: tuning needs a
validation split (cross_repo's is empty: ozone trains, ratis tests), and one LightGBM fit on
68k rows takes minutes on 2 cores, so 20 trials per track would take hours."""
TRACKS = ("config", "history")
BASELINE_TRACKS = (*TRACKS, "multi")
"""The baselines run on the multi track too (every target the dataset holds: duration_s and
queue_s); the transfer tables stay on the duration tracks."""
TUNED_TRACKS = ("config", "multi")

DESCRIPTION = (
    "apache/ozone (formerly apache/hadoop-ozone; 2019-12 to 2023-04, push and schedule runs of "
    "its post-commit workflow) and apache/ratis (2022-04 to 2026-08, push runs), archived by "
    "their maintainers. The temporal split (contract 1.2.0) orders each project's own runs by "
    "time and splits them 80/10/10, so both projects are in every temporal split (rows and "
    "dates per project per split are listed above); as the ozone archive ends in 2023-04, "
    "ozone's test runs are years older than ratis's. Jobs of the reusable workflows both "
    "projects call (`uses: ./.github/workflows/ci.yml`) are resolved to their own job in the "
    "callee read at the run's commit. The cross_repo config is fixed to train on apache/ozone "
    "and test on apache/ratis, with an empty validation split (no early stopping there). Jobs "
    "of archived run folders without run.json (2020-03 to 2020-05) have no creation time and "
    "are dropped (counted below)."
)


def _build(args: dict[str, Any], queue: Any) -> None:
    """The build alone, in a child process (so its peak RSS is its own)."""
    from gharuntime.builder.build import build as build_dataset
    from gharuntime.source_kinds.api_json import ApiJsonSource
    from gharuntime.sources.api_json import ApiSource

    t0 = time.perf_counter()
    result = build_dataset(
        ApiJsonSource(
            [
                ApiSource(Path(args["ozone_results"]), "elek/ozone-build-results"),
                ApiSource(Path(args["ratis_results"]), "adoroszlai/ratis-build-results"),
            ],
            yaml_git=[Path(args["ozone"]), Path(args["ratis"])],
            cross_repo={"apache/ozone": "train", "apache/ratis": "test"},
            description=DESCRIPTION,
            workers=1,
        ),
        Path(args["out"]),
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


def _sim_label(args: argparse.Namespace) -> str:
    """The training dataset's name in the transfer results: --sim-label, else the folder's name
    of --sim-dataset, else the name the committed results give this build
    (gharuntime-sim-SCALE)."""
    if args.sim_label:
        return str(args.sim_label)
    if args.sim_dataset:
        return Path(args.sim_dataset).resolve().name
    return f"gharuntime-sim-{args.sim_scale}"


def _sim_dataset(args: argparse.Namespace, work: Path) -> Path:
    if args.sim_dataset:
        return Path(args.sim_dataset)
    from gharuntime.builder.build import build as build_dataset
    from gharuntime.source_kinds.simulated import SimulatedConfig

    out = work / f"sim-{args.sim_scale}"
    if not (out / "manifest.json").is_file():
        build_dataset(
            SimulatedConfig(
                work / f"sim-{args.sim_scale}.raw", seed=1, scale=args.sim_scale
            ).source(),
            out,
        )
    return out


def _top(model_dir: Path, n: int = 12) -> list[tuple[str, float]]:
    path = model_dir / "importances.json"
    if not path.is_file():
        return []
    pairs = json.loads(path.read_text()).get("duration_s", [])
    total = sum(float(p["gain"]) for p in pairs) or 1.0
    ranked = sorted(((p["feature"], float(p["gain"]) / total) for p in pairs), key=lambda x: -x[1])
    return [(k, round(v, 4)) for k, v in ranked[:n]]


def trained_on(dataset: Path, label: str, config: str, split: str) -> dict[str, Any]:
    """The `trained_on` block of a transfer result: which dataset (name, content revision) and
    which split of it the methods were fitted on."""
    from gharuntime.dataset import load, read_manifest
    from gharuntime.revision import dataset_revision

    manifest = read_manifest(dataset)
    raw = manifest.get("source")
    source: dict[str, Any] = raw if isinstance(raw, dict) else {}
    rows = load(dataset, config, split)
    synthetic = source.get("synthetic")
    if not isinstance(synthetic, bool):
        synthetic = True if source.get("kind") in ("simulated", "fixture") else None
    return {
        "id": label,
        "kind": "local",
        "revision": dataset_revision(manifest),
        "config": config,
        "split": split,
        "rows": rows.height,
        "repositories": int(rows["repo_id"].n_unique()),
        "source_kind": source.get("kind"),
        "synthetic": synthetic,
    }


def transfer(
    real: Path,
    sim: Path,
    work: Path,
    results: Path | None,
    resamples: int,
    *,
    sim_label: str,
    command: list[str],
) -> list[dict[str, Any]]:
    """Methods trained on the simulated dataset, scored on the real temporal test split.

    Each result is what `gharuntime eval` writes for the real dataset's temporal test split (its
    revision, records, run-level bootstrap), except that repositories count as seen when the
    simulated train split holds them (none do), plus `trained_on`: the simulated dataset's name,
    content revision, config and split."""
    from gharuntime.baselines.method import ForbiddenInputError
    from gharuntime.baselines.model_io import load_model
    from gharuntime.baselines.run import run_baseline
    from gharuntime.dataset import LocalDataset, load, read_manifest
    from gharuntime.eval.evaluate import Predictions, score
    from gharuntime.eval.meta import MethodMeta
    from gharuntime.eval.provenance import add_provenance
    from gharuntime.eval.report import result_json
    from gharuntime.eval.submission_files import SubmissionFiles
    from gharuntime.eval.truth import Truth
    from gharuntime.paths import write_atomic
    from gharuntime.revision import dataset_revision, sha256_file

    test = load(real, "temporal", "test")
    sim_train = load(sim, "temporal", "train")
    manifest = read_manifest(real)
    revision = dataset_revision(manifest)
    truth = Truth.from_frames(
        test,
        sim_train,
        dataset=LocalDataset(real),
        config="temporal",
        split="test",
        manifest_sha256=sha256_file(real / "manifest.json"),
        schema_version=str(manifest.get("schema_version")),
        content_revision=revision,
        source=manifest.get("source") if isinstance(manifest.get("source"), dict) else None,
    )
    origin = trained_on(sim, sim_label, "temporal", "train")
    rows = []
    for track in TRACKS:
        for name in METHODS:
            model_dir = work / "transfer" / track / f"{name}.model"
            sub = work / "transfer" / track / f"{name}.jsonl"
            try:
                run_baseline(
                    name, sim, config="temporal", track=track, out=sub, model_dir=model_dir
                )
            except ForbiddenInputError:
                continue
            sidecar = json.loads(SubmissionFiles(sub).meta.read_text())
            method, meta = load_model(model_dir)
            t0 = time.perf_counter()
            pred = method.predict_rows(test)
            predict_s = time.perf_counter() - t0
            timing = dict(sidecar.get("timing") or {})  # the fit: on the simulated train split
            timing.update(
                predict_seconds=round(predict_s, 3),
                predict_rows=test.height,
                predict_seconds_per_1000_jobs=round(1000 * predict_s / max(test.height, 1), 4),
            )
            extra = {k: sidecar[k] for k in ("method_config", "gharuntime_version") if k in sidecar}
            m = Predictions(
                name=meta["method"],
                meta=MethodMeta(
                    method=meta["method"],
                    method_version=sidecar.get("method_version"),
                    track=track,
                    inputs=tuple(meta["inputs"]),
                    dataset=LABEL,
                    dataset_revision=revision,
                    config="temporal",
                    split="test",
                    seed=sidecar.get("seed"),
                    extra={**extra, "timing": timing},
                ),
                predictions={t: np.asarray(v, dtype=np.float64) for t, v in pred.items()},
                present=np.ones(test.height, dtype=bool),
                source={
                    "model": shown(model_dir),
                    "trained_on": f"{sim_label} ({shown(sim)}), temporal train split",
                    "missing": 0,
                    "allow_partial": False,
                },
            )
            scored = result_json(score(truth, track, [m], resamples=resamples))
            # `trained_on` right after the dataset it was scored on
            result: dict[str, Any] = {}
            for key, value in scored.items():
                result[key] = value
                if key == "dataset":
                    result["trained_on"] = origin
            add_provenance(result, command)
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
                target = results / LABEL / f"transfer-{sim_label}-temporal-{track}-{name}.json"
                write_atomic(target, json.dumps(result, indent=2) + "\n", mode=0o644)
            print(
                f"transfer {track:8} {name:13} RMSLE {row['rmsle']:.3f} "
                f"within-2x {row['within_2x']:.1%} on {test.height} real test jobs",
                file=sys.stderr,
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("ozone-results", "ratis-results", "ozone", "ratis"):
        parser.add_argument(f"--{name}", type=Path, help="a git repository (for the build)")
    parser.add_argument("--out", type=Path, required=True, help="work folder")
    parser.add_argument("--results-dir", type=Path, help="e.g. leaderboard/results")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--sim-dataset", type=Path, help="a simulated dataset to transfer from")
    parser.add_argument("--sim-scale", default="small")
    parser.add_argument(
        "--sim-label",
        help="the training dataset's name in the transfer results [gharuntime-sim-SCALE, or "
        "the --sim-dataset folder's name]",
    )
    parser.add_argument("--skip-build", action="store_true", help="reuse OUT/" + LABEL)
    parser.add_argument("--skip-baselines", action="store_true")
    parser.add_argument("--skip-transfer", action="store_true")
    args = parser.parse_args(argv)
    sources = ("ozone_results", "ratis_results", "ozone", "ratis")
    if not args.skip_build and any(getattr(args, name) is None for name in sources):
        parser.error(
            "the build needs --ozone-results, --ratis-results, --ozone and --ratis "
            "(or --skip-build to reuse OUT/" + LABEL + ")"
        )
    command = ["python", "benchmarks/real_apache.py", *(argv if argv is not None else sys.argv[1:])]
    args.out.mkdir(parents=True, exist_ok=True)
    dataset = args.out / LABEL
    started = time.perf_counter()
    figures: dict[str, Any] = {"benchmark": "real_apache", "dataset": shown(dataset)}
    if not args.skip_build:
        figures["build"] = build(args, dataset)
        b = figures["build"]
        print(
            f"build: {b['rows']:,} rows kept of {b['candidates']:,} candidates, job keys "
            f"{b['job_keys']}, {b['wall_s']} s, peak RSS {b['peak_rss_mb']} MB",
            file=sys.stderr,
        )
    if not args.skip_baselines:
        figures["baselines"] = {}
        for config in ("temporal", "cross_repo"):
            line = run_script(
                "baselines.py",
                [
                    "--dataset",
                    str(dataset),
                    "--config",
                    config,
                    "--tracks",
                    ",".join(BASELINE_TRACKS),
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
        tuned = run_script(
            "baselines.py",
            [
                *("--dataset", str(dataset), "--config", "temporal"),
                *("--tracks", ",".join(TUNED_TRACKS)),
                *("--methods", ",".join(TUNED), "--tuned-trials", str(TUNED_TRIALS)),
                *("--resamples", str(args.resamples), "--work", str(args.out / "bench-tuned")),
                "--label",
                LABEL,
                *(["--results-dir", str(args.results_dir)] if args.results_dir else []),
            ],
        )
        figures["baselines"]["temporal-tuned"] = tuned
    if not args.skip_transfer:
        sim = _sim_dataset(args, args.out)
        figures["transfer"] = transfer(
            dataset,
            sim,
            args.out,
            args.results_dir,
            args.resamples,
            sim_label=_sim_label(args),
            command=command,
        )
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


if __name__ == "__main__":
    raise SystemExit(main())
