"""`gharuntime laser ...`: LASER tools. `laser bench` measures constrained decoding latency;
`laser calibrate` calibrates a saved model's ranges without training it again.

torch and transformers are imported only when a command runs, so `gharuntime --help` works
without the `laser` extra."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from gharuntime.cli.errors import UsageProblem
from gharuntime.cli.output import echo_json, out_console
from gharuntime.cli.progress import ProgressView
from gharuntime.jsonout import strict_dumps
from gharuntime.paramtypes import Text

__all__ = ["laser_group"]


def _lengths(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(
            f"{text!r} is not a comma-separated list of token counts, e.g. 256,1024,2048",
            param_hint="--prompt-lengths",
        ) from None
    if not values or any(v < 8 for v in values):
        raise click.BadParameter(
            f"{text!r}: give one or more lengths of at least 8 tokens",
            param_hint="--prompt-lengths",
        )
    return values


@click.group("laser")
def laser_group() -> None:
    """LASER: a language model that reads a job's serialized configuration and writes its
    targets (needs the `laser` extra: pip install 'gharuntime[laser]')."""


@laser_group.command("bench")
@click.option(
    "--prompt-lengths",
    default="256,1024,2048",
    type=Text(1000),
    show_default=True,
    help="Prompt lengths in tokens, comma-separated.",
)
@click.option(
    "--model",
    default="tiny",
    type=Text(4096),
    show_default=True,
    help="'tiny' or 'tiny-256' (the decoder LASER trains from scratch, untrained: latency needs "
    "no training), 'random' (a random Llama of --layers × --width), 'smollm2-135m' (the "
    "pretrained LM, not fine-tuned) or a Hugging Face causal-LM folder.",
)
@click.option("--layers", type=click.IntRange(1, 64), help="--model random: layers [default: 4].")
@click.option(
    "--width",
    type=click.IntRange(8, 8192),
    help="--model random: hidden size, a multiple of its 4 heads [default: 256]; the model may "
    "hold at most 2 billion parameters (--layers × 16 × width² + the embedding).",
)
@click.option(
    "--track",
    type=click.Choice(["config", "history", "multi"]),
    default="config",
    show_default=True,
    help="Which targets the output holds (multi: duration, queue, log size).",
)
@click.option("--encoding", type=click.Choice(["sci", "decimal"]), default="sci", show_default=True)
@click.option(
    "--prompts",
    "prompts",
    type=click.IntRange(1, 10_000),
    default=8,
    show_default=True,
    help="Per length.",
)
@click.option("--batch-size", type=click.IntRange(1, 4096), default=8, show_default=True)
@click.option(
    "--repeats",
    type=click.IntRange(1, 1000),
    default=3,
    show_default=True,
    help="Timed runs per side.",
)
@click.option(
    "--device",
    type=Text(100),
    default="auto",
    show_default=True,
    help="auto, cpu, cuda, cuda:1, ...",
)
@click.option(
    "--dtype",
    default="auto",
    show_default=True,
    help="auto (bfloat16 on a GPU that has it, else float32), float32, bfloat16, float16.",
)
@click.option(
    "--threads", type=click.IntRange(1, 1024), help="CPU threads for torch [torch's default]."
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def bench_command(
    prompt_lengths: str,
    model: str,
    layers: int | None,
    width: int | None,
    track: str,
    encoding: str,
    prompts: int,
    batch_size: int,
    repeats: int,
    device: str,
    dtype: str,
    threads: int | None,
    as_json: bool,
) -> None:
    """Latency of constrained + prefilled decoding against plain unconstrained generation of
    the same output: same model, same prompts, one run, with each side's validity rate."""
    lengths = _lengths(prompt_lengths)
    try:
        import torch

        from gharuntime.baselines.laser.bench import load_setup, run_bench
    except ImportError as exc:
        raise UsageProblem(
            f"laser bench needs the laser extra ({exc}); pip install 'gharuntime[laser]'"
        ) from exc
    if threads is not None:
        if threads < 1:
            raise UsageProblem(f"--threads must be at least 1, got {threads}")
        torch.set_num_threads(threads)
    if device != "auto":
        try:
            dev = torch.device(device)
        except RuntimeError as exc:
            raise UsageProblem(f"--device {device!r}: {exc}") from exc
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise UsageProblem(f"--device {device!r}: no CUDA device here; use --device cpu")

    # a BenchError (a model folder that does not load, bad lengths) is refused as it is
    with ProgressView(lines=True) as progress:
        setup = load_setup(model, layers=layers, width=width, track=track)
        result = run_bench(
            setup,
            prompt_lengths=lengths,
            track=track,
            encoding=encoding,
            prompts_per_length=prompts,
            batch_size=batch_size,
            repeats=repeats,
            device=device,
            dtype=dtype,
            progress=progress,
        )
    if as_json:
        echo_json(strict_dumps(result, sort_keys=True))
        return
    out_console.print(f"model: {result['model']} on {result['device_name']} ({result['dtype']})")
    for r in result["results"]:
        out_console.print(
            f"{r['prompt_tokens']:>6} tokens: constrained {r['constrained_s']:.3f} s "
            f"(valid {r['constrained_valid']:.0%}), plain {r['plain_s']:.3f} s "
            f"(valid {r['plain_valid']:.0%}): {r['latency_reduction']:.0%} lower latency"
        )
    goal = result["goal"]
    if goal["met"] is not None:
        out_console.print(
            f"goal (≥{goal['latency_reduction_at_least']:.0%} lower at {goal['prompt_tokens']} "
            f"tokens, 100% valid): {'met' if goal['met'] else 'not met'}"
        )


_CALIBRATE_HELP = """Calibrate a saved LASER model's ranges on its validation split, without training
it again: for a model saved before LASER calibrated its ranges (their P10/P90 are the raw
draws', which hold far fewer than 80% of held-out jobs).

The calibration is the one `gharuntime baseline laser` fits at the end of training
(split-conformal offsets per recency stratum of the job group, on validation jobs decoded as
predict decodes them). MODEL must have been trained on DATASET (same revision; the config it
names). The model folder is saved again in place (written aside, then renamed over it); with
--out the config's test split is predicted into a submission whose metadata records the
calibration, ready for `gharuntime eval`.

\b
Exit codes: 0 calibrated, 2 bad input (not a LASER model, another dataset, a config without a
validation split, a model trained with calibration=none).
Example:
  gharuntime laser calibrate runs/laser.model --dataset out/dataset --out runs/laser-cal.jsonl
  gharuntime eval runs/laser-cal.jsonl --dataset out/dataset
"""


@laser_group.command("calibrate", help=_CALIBRATE_HELP)
@click.argument("model", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option(
    "--dataset",
    required=True,
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="The dataset folder the model was trained on (from `gharuntime build`).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also predict the test split into this submission (JSON Lines; metadata and "
    "quantiles beside it).",
)
@click.option(
    "--rows",
    type=click.IntRange(1, 10_000_000),
    help="Validation jobs decoded for the calibration [the model's calibration_rows: 2048].",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as one JSON object.")
def calibrate_command(
    model: Path, dataset: Path, out: Path | None, rows: int | None, as_json: bool
) -> None:
    try:
        from gharuntime.baselines.laser.calibrate import calibrate_saved
    except ImportError as exc:  # pragma: no cover - the laser extra is installed in CI
        raise UsageProblem(
            f"laser calibrate needs the laser extra ({exc}); pip install 'gharuntime[laser]'"
        ) from exc
    if out is not None and out.suffix != ".jsonl":
        raise click.BadParameter(f"{out}: a submission ends in .jsonl", param_hint="--out")
    if out is not None:  # before any work: the model is saved before the submission is written
        from gharuntime.eval.submission_files import SubmissionFiles
        from gharuntime.paths import output_file_problem

        files = SubmissionFiles(out)
        for path in (files.predictions, files.meta, files.quantiles):
            if problem := output_file_problem(path, [dataset / "manifest.json"]):
                raise click.BadParameter(problem, param_hint="--out")
    try:
        with ProgressView(first="calibrating…", prefix="laser: ") as progress:
            run = calibrate_saved(model, dataset, out=out, rows=rows, progress=progress)
    except OSError as exc:
        raise UsageProblem(
            f"{exc.filename or model}: {exc.strerror or exc}; nothing was replaced"
        ) from exc
    calibration = {
        t: {"rows": c.get("rows"), "by": c.get("by"), "source": c.get("source")}
        for t, c in run.calibration.items()
    }
    summary = {
        "model": str(run.model_dir),
        "calibration_seconds": run.seconds,
        "calibration": calibration,
        "submission": str(run.submission) if run.submission else None,
        "predict_seconds": run.predict_seconds,
        "predicted_rows": run.rows,
    }
    if as_json:
        echo_json(strict_dumps(summary, sort_keys=True))
        return
    for target, c in calibration.items():
        out_console.print(
            escape(
                f"{target}: calibrated by {c['by']} on {c['rows']:,} {c['source']} jobs "
                f"({run.seconds:.1f} s)"
            )
        )
    out_console.print(escape(f"saved the calibrated model to {run.model_dir}"))
    if run.submission is not None:
        out_console.print(
            escape(f"wrote {run.submission} ({run.rows:,} test jobs, {run.predict_seconds:.1f} s)")
        )
