"""LASER's learning curve on real jobs: RMSLE against training tokens, with the trees as lines.

Every point of the curve is its own training run of the project's `gharuntime baseline laser`
(`run_baseline`), from scratch, with a cosine schedule that ends at its own length: a point at 2
epochs is a model trained for 2 epochs, not a checkpoint of a longer run. Each run predicts the
whole test split with 16 draws, so every point is scored as the leaderboard scores a result.
Where the config has a validation split (temporal), validation RMSLE of greedy decodes on a
seeded sample picks the step whose weights are kept; cross_repo has none and keeps the last.

Four stages, each a subcommand:

    # 1. here: one BPE tokenizer per (config, track), shared by every point of that curve
    python benchmarks/laser_curve.py tokenizers --dataset DS --out work/tok
    # 2. on a GPU (or a CPU with days to spare): every point, concurrently, under a deadline;
    #    finished runs are packed as they end, so a deadline loses only the unfinished ones
    python benchmarks/laser_curve.py run --dataset DS --tokenizers work/tok --out OUT
    # 3. here: score every run (1,000 repository resamples), pair it against the trees'
    #    submissions, plot; the last line is one JSON object
    python benchmarks/laser_curve.py score --runs OUT --dataset DS --vs-dir BENCH \\
        --results leaderboard/results/gharuntime-real-apache \\
        --json benchmarks/results/laser_curve-real-apache.json

Without --dataset, `$GHARUNTIME_REAL_DATASET` names the dataset folder; with neither a stage
exits 2. (`one` is the child process of `run`: a single point.) The plan is fixed in PLAN below; `--only`
keeps the points whose name contains one of its comma-separated words.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from _common import MissingDataset, interval, real_dataset, refuse, shown, steps_for_epochs

from gharuntime.paths import write_atomic


@dataclass(frozen=True)
class Point:
    config: str
    track: str
    model: str
    epochs: float

    @property
    def name(self) -> str:
        return f"{self.config}-{self.track}-{self.model}-e{self.epochs:g}"

    @property
    def group(self) -> str:
        return f"{self.config}-{self.track}"


PLAN: tuple[Point, ...] = (
    *(
        Point(c, "config", "tiny", e)
        for c in ("temporal", "cross_repo")
        for e in (0.25, 0.5, 1, 2, 4)
    ),
    *(Point(c, "config", "tiny-256", e) for c in ("temporal", "cross_repo") for e in (0.5, 1)),
    *(Point("temporal", "history", "tiny", e) for e in (1, 4)),
)
GROUPS = sorted({p.group for p in PLAN})
TREES = (
    "lightgbm",
    "xgboost",
    "catboost",
    "lightgbm-tuned",
    "xgboost-tuned",
    "group-median",
    "last-run",
)


def _params(args: argparse.Namespace, point: Point, steps: int, ckpt: Path) -> dict[str, Any]:
    """The run's LASER parameters: the method's defaults but for these (recorded in the meta)."""
    return {
        "model": point.model,
        "max_steps": steps,
        "batch_size": args.batch,
        "precision": args.precision,
        "threads": 1,
        "validate_every": max(25, steps // 8),
        "validation_rows": 256,
        "decode_batch_size": args.decode_batch,
        "samples": args.samples,
        "checkpoint_dir": shown(ckpt),
        "checkpoint_every": steps,  # the tokenizer is read from here; one checkpoint, at the end
    }


def _selected(only: str | None) -> list[Point]:
    """The plan's points whose name holds one of `only`'s words (all without it); SystemExit 2
    naming the points when none matches, rather than a run of nothing."""
    words = [w for w in (only or "").split(",") if w]
    points = [p for p in PLAN if not words or any(w in p.name for w in words)]
    if not points:
        names = ", ".join(p.name for p in PLAN)
        print(f"error: --only {only!r} matches no point; the points are: {names}", file=sys.stderr)
        raise SystemExit(2)
    return points


# --- stage 1: tokenizers -----------------------------------------------------------------------


def cmd_tokenizers(args: argparse.Namespace) -> int:
    """The tokenizer each run would train on its (config, track) train split, trained once."""
    from gharuntime.baselines.laser.method import CHECKPOINT_TOKENIZER, Laser
    from gharuntime.dataset import load

    for group in sorted({p.group for p in _selected(args.only)}):
        config, track = group.split("-")
        folder = args.out / group
        if (folder / CHECKPOINT_TOKENIZER).is_dir():
            print(f"{group}: tokenizer already in {folder}", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        method = Laser(track, seed=0, checkpoint_dir=str(folder))
        rows = method.training_rows(load(args.dataset, config, "train"))
        folder.mkdir(parents=True, exist_ok=True)
        method.split_tokenizer(rows)  # saved in the checkpoint folder, where fit reuses it
        print(f"{group}: {rows.height} jobs, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


# --- stage 2: one point, and every point under a deadline ---------------------------------------


def cmd_one(args: argparse.Namespace) -> int:
    from gharuntime.baselines.laser.method import CHECKPOINT_TOKENIZER
    from gharuntime.baselines.run import run_baseline

    point = Point(args.config, args.track, args.model, args.epochs)
    out = args.out / point.name
    ckpt = out / "ckpt"
    ckpt.mkdir(parents=True, exist_ok=True)
    if args.tokenizers is not None:
        shutil.copytree(
            args.tokenizers / point.group / CHECKPOINT_TOKENIZER,
            ckpt / CHECKPOINT_TOKENIZER,
            dirs_exist_ok=True,
        )
    steps = steps_for_epochs(args.dataset, point.config, point.epochs, args.batch)
    if args.max_steps is not None:  # a smoke test's cap, recorded in the run's params
        steps = min(steps, args.max_steps)
    params = _params(args, point, steps, ckpt)

    def say(message: str, _done: int = 0, _total: int | None = None) -> None:
        print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    run = run_baseline(
        "laser",
        args.dataset,
        config=point.config,
        track=point.track,
        out=out / "laser.jsonl",
        params=params,
        progress=say,
    )
    figures = {
        "point": point.__dict__,
        "name": point.name,
        "steps": steps,
        "params": params,
        "fit_s": round(run.fit_seconds, 1),
        "predict_s": round(run.predict_seconds, 1),
        "wall_s": round(time.perf_counter() - t0, 1),
        "test_rows": run.rows,
    }
    (out / "run.json").write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(ckpt, ignore_errors=True)
    return 0


def _pack(runs: Path, to: Path, group: str, names: list[str]) -> None:
    """TO/curve-GROUP.tar.gz: every run folder of the group (no checkpoints), atomically."""

    def pack(f: IO[bytes]) -> None:
        with tarfile.open(fileobj=f, mode="w:gz") as tar:
            for name in names:
                folder = runs / name
                for path in sorted(folder.glob("*")) if folder.is_dir() else []:
                    if path.is_file():
                        tar.add(path, arcname=f"{name}/{path.name}")

    write_atomic(to / f"curve-{group}.tar.gz", pack, binary=True)


def _environment() -> dict[str, Any]:
    import torch

    env: dict[str, Any] = {"torch": torch.__version__, "python": sys.version.split()[0]}
    if torch.cuda.is_available():
        env["gpu"] = torch.cuda.get_device_name(0)
    env["cpus"] = os.cpu_count()
    return env


def cmd_run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    points = _selected(args.only)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = args.out / "runs"
    runs.mkdir(exist_ok=True)
    pack_to = args.pack_to or args.out
    pack_to.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {
        "benchmark": "laser_curve",
        "environment": _environment(),
        "batch": args.batch,
        "precision": args.precision,
        "deadline_s": args.deadline,
        "runs": {},
    }
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "RAYON_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONUNBUFFERED": "1",
    }
    procs: dict[str, tuple[subprocess.Popen[bytes], float]] = {}
    for p in points:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "one",
            "--dataset",
            str(args.dataset),
            "--out",
            str(runs),
            "--config",
            p.config,
            "--track",
            p.track,
            "--model",
            p.model,
            "--epochs",
            str(p.epochs),
            "--batch",
            str(args.batch),
            "--precision",
            args.precision,
            "--decode-batch",
            str(args.decode_batch),
            "--samples",
            str(args.samples),
            *(["--max-steps", str(args.max_steps)] if args.max_steps else []),
        ]
        if args.tokenizers is not None:
            cmd += ["--tokenizers", str(args.tokenizers)]
        (runs / p.name).mkdir(exist_ok=True)
        with (runs / p.name / "log.txt").open("wb") as log:  # the child holds its own copy
            procs[p.name] = (
                subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env),
                time.monotonic(),
            )
    by_group = {g: [p.name for p in points if p.group == g] for g in GROUPS}
    last_print = 0.0
    while procs:
        time.sleep(2)
        now = time.monotonic() - started
        for name, (proc, t0) in list(procs.items()):
            if proc.poll() is None:
                continue
            del procs[name]
            tail = (runs / name / "log.txt").read_text(errors="replace").strip().splitlines()[-3:]
            summary["runs"][name] = {
                "exit": proc.returncode,
                "wall_s": round(time.monotonic() - t0, 1),
                "tail": tail,
            }
            print(f"[{now:5.0f} s] {name}: exit {proc.returncode}; {tail[-1:]}", flush=True)
            group = next(p.group for p in points if p.name == name)
            _pack(runs, pack_to, group, by_group[group])
        if now - last_print > 30:
            last_print = now
            for name in procs:
                lines = (runs / name / "log.txt").read_text(errors="replace").splitlines()
                print(f"[{now:5.0f} s] {name}: {lines[-1][:120] if lines else ''}", flush=True)
        if now > args.deadline:
            for name, (proc, _t0) in procs.items():
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                lines = (runs / name / "log.txt").read_text(errors="replace").splitlines()
                summary["runs"][name] = {"exit": "killed at the deadline", "last": lines[-3:]}
            for group, names in by_group.items():
                if names:
                    _pack(runs, pack_to, group, names)
            break
    summary["wall_s"] = round(time.monotonic() - started, 1)
    (pack_to / "curve.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(summary))
    return 0


# --- stage 3: score and plot --------------------------------------------------------------------


def _committed(results: Path | None, group: str) -> dict[str, float]:
    """RMSLE of the committed results of the same config and track (the lines on the plot); on
    the history track last-run is the reference, not group-median."""
    lines: dict[str, float] = {}
    for tree in TREES:
        if tree == ("group-median" if group.endswith("-history") else "last-run"):
            continue
        path = results / f"{group}-{tree}.json" if results else None
        if path is not None and path.is_file():
            doc = json.loads(path.read_text(encoding="utf-8"))
            lines[tree] = float(doc["metrics"]["duration_s"]["rmsle"]["value"])
    return lines


def cmd_score(args: argparse.Namespace) -> int:
    from gharuntime.dataset import open_dataset
    from gharuntime.eval.api import evaluate_file
    from gharuntime.eval.submission_files import SubmissionFiles

    open_dataset(args.dataset)  # a dataset that cannot be opened is refused before any work
    for archive in sorted(args.runs.glob("curve-*.tar.gz")):
        with tarfile.open(archive) as tar:
            tar.extractall(args.runs / "runs", filter="data")
    figures: dict[str, Any] = {"benchmark": "laser_curve", "points": {}, "lines": {}}
    figures["device_runs"] = []  # each `run` call's summary: its machine, settings and exits
    for path in sorted(args.runs.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and doc.get("benchmark") == "laser_curve" and "runs" in doc:
            exits = {name: run.get("exit") for name, run in doc["runs"].items()}
            figures["device_runs"].append({**doc, "file": path.name, "runs": exits})
    for point in _selected(args.only):
        folder = args.runs / "runs" / point.name
        sub = folder / "laser.jsonl"
        needed = (sub, folder / "run.json", SubmissionFiles(sub).meta)
        missing = [p.name for p in needed if not p.is_file()]
        if missing:  # killed, or not run: its log says how far it got
            if folder.is_dir():
                print(f"{point.name}: unfinished (no {', '.join(missing)})", file=sys.stderr)
            continue
        run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        meta = json.loads(SubmissionFiles(sub).meta.read_text(encoding="utf-8"))
        training = meta["method_config"]["training"]
        result = evaluate_file(sub, args.dataset, resamples=args.resamples)
        row: dict[str, Any] = {
            **point.__dict__,
            "steps": run["steps"],
            "tokens": training["tokens"],
            "epochs_seen": round(
                run["steps"] * run["params"]["batch_size"] / training["examples"], 4
            ),
            "best_step": training.get("best_step"),
            "validation_by_step": training.get("validation_by_step"),
            "best_validation": min(
                (v for _, v in training.get("validation_by_step") or []), default=None
            ),
            "fit_s": run["fit_s"],
            "predict_s": run["predict_s"],
            "tokens_per_s": training.get("tokens_per_s"),
            "device": training.get("device"),
            "precision": training.get("precision"),
            "rmsle": interval(result["metrics"]["duration_s"]["rmsle"]),
            "within_2x": interval(result["metrics"]["duration_s"]["within_2x"]),
            "vs": {},
        }
        for tree in TREES:
            other = (
                args.vs_dir / point.config / point.track / f"{tree}.jsonl" if args.vs_dir else None
            )
            if other is not None and other.is_file():
                paired = evaluate_file(sub, args.dataset, vs=other, resamples=args.resamples)
                diff = paired["comparison"]["difference"]["duration_s"]["rmsle"]
                row["vs"][tree] = interval(diff)
        figures["points"][point.name] = row
        print(
            f"{point.name}: RMSLE {row['rmsle']['value']:.3f} "
            f"[{row['rmsle']['ci_low']:.3f}, {row['rmsle']['ci_high']:.3f}]",
            file=sys.stderr,
        )
    if not figures["points"]:
        print(
            f"error: no finished point under {args.runs}/runs (or its curve-*.tar.gz); "
            "give `run`'s --out or --pack-to folder",
            file=sys.stderr,
        )
        return 2
    for group in GROUPS:
        figures["lines"][group] = _committed(args.results, group)
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        _plot(figures, args.json.with_suffix(".png"))
    print(json.dumps(figures))
    return 0


def _plot(figures: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [
        g
        for g in GROUPS
        if any(p["config"] + "-" + p["track"] == g for p in figures["points"].values())
    ]
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 4.2), squeeze=False)
    for ax, group in zip(axes[0], groups, strict=True):
        for model, marker in (("tiny", "o"), ("tiny-256", "s")):
            pts = sorted(
                (
                    p
                    for p in figures["points"].values()
                    if f"{p['config']}-{p['track']}" == group and p["model"] == model
                ),
                key=lambda p: p["tokens"],
            )
            if not pts:
                continue
            x = [p["tokens"] for p in pts]
            y = [p["rmsle"]["value"] for p in pts]
            err = [
                [v - p["rmsle"]["ci_low"] for v, p in zip(y, pts, strict=True)],
                [p["rmsle"]["ci_high"] - v for v, p in zip(y, pts, strict=True)],
            ]
            ax.errorbar(x, y, yerr=err, marker=marker, capsize=3, label=f"LASER {model}")
            for p in pts:
                ax.annotate(
                    f"{p['epochs']:g} ep",
                    (p["tokens"], p["rmsle"]["value"]),
                    textcoords="offset points",
                    xytext=(4, 4),
                    fontsize=7,
                )
        for i, (tree, value) in enumerate(sorted(figures["lines"].get(group, {}).items())):
            ax.axhline(value, linestyle="--", linewidth=1, color=f"C{i + 2}", label=tree)
        ax.set_xscale("log")
        ax.set_xlabel("training tokens")
        ax.set_ylabel("test RMSLE (95% interval)")
        ax.set_title(group.replace("-", " / "))
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    tok = sub.add_parser("tokenizers", help="one tokenizer per (config, track), shared")
    run = sub.add_parser("run", help="every point, concurrently, under a deadline")
    one = sub.add_parser("one", help="one point (run's child process)")
    score = sub.add_parser("score", help="score, pair with the trees, plot")
    for p in (tok, run, one, score):
        p.add_argument(
            "--dataset", type=Path, help="the real dataset folder [$GHARUNTIME_REAL_DATASET]"
        )
        p.add_argument("--only", help="keep the points whose name holds one of these words")
    for p in (run, one):
        p.add_argument("--batch", type=int, default=64, help="jobs a training step [64]")
        p.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "auto"])
        p.add_argument("--decode-batch", type=int, default=256, help="prompts a decoding batch")
        p.add_argument("--tokenizers", type=Path, help="the `tokenizers` stage's --out")
        p.add_argument("--samples", type=int, default=16, help="draws per job")
        p.add_argument("--max-steps", type=int, help="cap every run's steps (a smoke test)")
    tok.add_argument("--out", type=Path, required=True)
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--pack-to", type=Path, help="where the tarballs go [--out]")
    run.add_argument("--deadline", type=float, default=480.0, help="seconds; then kill and pack")
    one.add_argument("--out", type=Path, required=True)
    one.add_argument("--config", required=True)
    one.add_argument("--track", required=True)
    one.add_argument("--model", required=True)
    one.add_argument("--epochs", type=float, required=True)
    score.add_argument("--runs", type=Path, required=True, help="run's --out (or its tarballs)")
    score.add_argument("--vs-dir", type=Path, help="CONFIG/TRACK/TREE.jsonl of the same dataset")
    score.add_argument("--results", type=Path, help="committed results: the trees' lines")
    score.add_argument("--json", type=Path, help="write the figures here, the plot beside it")
    score.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args(argv)
    try:
        args.dataset = real_dataset(args.dataset)
    except MissingDataset as exc:
        return refuse(str(exc))
    handler = {"tokenizers": cmd_tokenizers, "run": cmd_run, "one": cmd_one, "score": cmd_score}
    from gharuntime.errors import GharuntimeError

    try:
        return handler[args.command](args)
    except GharuntimeError as exc:  # bad input: what, where and the fix, no traceback
        where = f" ({exc.where})" if exc.where else ""
        fix = f"\n  fix: {exc.fix}" if exc.fix else ""
        print(f"error: {exc}{where}{fix}", file=sys.stderr)
        return 2
    except Exception:  # a bug: the whole traceback
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
