"""The main job end to end, offline: build a dataset from the simulated GitHub, fit every
reference method on every config and track, score each with `gharuntime eval`, file the results
and write the leaderboard.

The methods the pipeline runs, with their parameters here, are those of the method registry
(`gharuntime.baselines.methods.REGISTERED`, each entry's `pipeline`): a new method joins the
pipeline, its help and the leaderboard by its one entry there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from gharuntime.baselines.journal import journal_path
from gharuntime.baselines.method import ForbiddenInputError
from gharuntime.baselines.methods import REGISTERED, make_method
from gharuntime.baselines.run import run_baseline
from gharuntime.dataset import DatasetError, read_manifest, validate
from gharuntime.eval.api import evaluate_file
from gharuntime.eval.report import write_result
from gharuntime.folderlock import folder_lock
from gharuntime.leaderboard.outputs import Leaderboard, build_leaderboard
from gharuntime.leaderboard.registry import add_result
from gharuntime.progress import Progress
from gharuntime.readfile import InputFileError, read_json
from gharuntime.resume import (
    RECORD_SUFFIX,
    Rerun,
    StepRecord,
    check_step,
    step_inputs,
    write_record,
)

__all__ = [
    "PIPELINE_CONFIGS",
    "PIPELINE_METHODS",
    "PIPELINE_TRACKS",
    "MethodPlan",
    "PipelineResult",
    "Step",
    "pipeline_steps",
    "plan_summary",
    "run_pipeline",
]


@dataclass(frozen=True)
class MethodPlan:
    """A method the pipeline fits, with the parameters it uses there."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    tracks: tuple[str, ...] | None = None  # None: every track its inputs allow
    """The tracks it runs on here; a costly method runs where it says most, within the budget."""


PIPELINE_METHODS: Final[tuple[MethodPlan, ...]] = tuple(
    MethodPlan(r.name, dict(r.pipeline.params), r.pipeline.tracks)
    for r in REGISTERED
    if r.pipeline is not None
)
"""What the pipeline runs: every registered method's `PipelineRun` (gharuntime.baselines.methods)."""
PIPELINE_CONFIGS: Final = ("cross_repo", "temporal")
PIPELINE_TRACKS: Final = ("config", "history")

StepDone = Callable[["Step", int, int, str], None]
"""(step, index, number of steps, one line saying how it went): a result to keep on screen, not
progress (`gharuntime.progress.Progress`), so the CLI prints it as a lasting line."""


@dataclass(frozen=True)
class Step:
    """One method on one config and track."""

    method: MethodPlan
    config: str
    track: str

    @property
    def label(self) -> str:
        return f"{self.method.name} · {self.config}/{self.track}"


@dataclass(frozen=True)
class PipelineResult:
    dataset: Path
    results: Path
    leaderboard: Leaderboard
    skipped: list[str]
    seconds: dict[str, float]
    kept: list[str] = field(default_factory=list)
    """The steps scored by an earlier run over the same folder with the same inputs, kept."""
    ran: list[str] = field(default_factory=list)
    """The steps this run fitted and scored."""


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


MAX_RESULT_BYTES: Final = 64 * 2**20


def _score_line(result: Any) -> str:
    """A result's RMSLE and its interval, as a step reports it: read from the result itself
    (a kept step's from its verified file, never from what a record says). ValueError for a
    result without them."""
    try:
        rmsle = result["metrics"]["duration_s"]["rmsle"]
        parts = [rmsle["value"], rmsle["ci_low"], rmsle["ci_high"]]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"no duration_s RMSLE ({exc!r})") from None
    for x in parts:
        if x is not None and (not isinstance(x, (int, float)) or isinstance(x, bool)):
            raise ValueError(f"an RMSLE that is not a number: {str(x)[:40]!a}")
    value, low, high = parts
    return f"RMSLE {_num(value)} [{_num(low)}, {_num(high)}]"


def _kept_score(record: StepRecord) -> str | Rerun:
    """The kept step's score, read from its filed result (verified by its record)."""
    try:
        return _score_line(read_json(record.result, MAX_RESULT_BYTES))
    except (InputFileError, ValueError) as exc:
        return Rerun(f"its result cannot be read ({str(exc)[:200]})")


def pipeline_steps(
    methods: tuple[MethodPlan, ...] = PIPELINE_METHODS,
) -> tuple[list[Step], list[str]]:
    """Every (method, config, track) to run, and why the others are left out (a method the
    track forbids, e.g. last-run on the config track)."""
    steps, skipped = [], []
    for config in PIPELINE_CONFIGS:
        for track in PIPELINE_TRACKS:
            for plan in methods:
                if plan.tracks is not None and track not in plan.tracks:
                    skipped.append(f"{plan.name} on {config}/{track}: not run in the pipeline")
                    continue
                try:
                    make_method(plan.name, track, params=plan.params or None)
                except ForbiddenInputError:
                    skipped.append(f"{plan.name} on {config}/{track}: the track forbids its inputs")
                    continue
                steps.append(Step(plan, config, track))
    return steps, skipped


def plan_summary(methods: tuple[MethodPlan, ...] = PIPELINE_METHODS) -> str:
    """The methods as the pipeline's help names them, each with where it runs when that is not
    every track (and the registry's note): made from the plan, never written by hand."""
    notes = {r.name: r.pipeline.note for r in REGISTERED if r.pipeline is not None}
    parts = []
    for plan in methods:
        allowed = []
        for track in plan.tracks or PIPELINE_TRACKS:
            try:
                make_method(plan.name, track, params=plan.params or None)
            except ForbiddenInputError:
                continue
            allowed.append(track)
        said = [] if allowed == list(PIPELINE_TRACKS) else [" and ".join(allowed) + " track only"]
        if notes.get(plan.name):
            said.append(notes[plan.name])
        parts.append(f"{plan.name} ({'; '.join(said)})" if said else plan.name)
    return ", ".join(parts)


def run_pipeline(
    out: Path,
    *,
    seed: int = 1,
    scale: str = "small",
    resamples: int = 1000,
    methods: tuple[MethodPlan, ...] = PIPELINE_METHODS,
    progress: Progress | None = None,
    step_done: StepDone | None = None,
    fresh: bool = False,
) -> PipelineResult:
    """Build and validate `out/gharuntime-sim-<scale>-seed<seed>` (crawl store beside it), fit
    and score every step into `out/runs/` and `out/results/`, and write `out/leaderboard/`.

    Run again over the same `out` (after a kill, or a method that failed), it keeps each step
    an earlier run scored with the same inputs (gharuntime.resume: dataset revision, code,
    parameters) and runs the rest, a tuned step its trials left (gharuntime.baselines.journal);
    `fresh` runs every step and trial again. One run at a time over `out`: it is locked for the
    run (gharuntime.folderlock; FolderInUse while another holds it).
    Raises BuildError, DatasetError or LeaderboardError when a stage fails."""
    with folder_lock(
        out,
        command="gharuntime pipeline",
        fix="or give another --out (a rerun over this one keeps every step already scored)",
    ):
        return _run_pipeline(
            out,
            seed=seed,
            scale=scale,
            resamples=resamples,
            methods=methods,
            progress=progress,
            step_done=step_done,
            fresh=fresh,
        )


def _run_pipeline(
    out: Path,
    *,
    seed: int,
    scale: str,
    resamples: int,
    methods: tuple[MethodPlan, ...],
    progress: Progress | None,
    step_done: StepDone | None,
    fresh: bool,
) -> PipelineResult:
    from gharuntime.builder.build import BuildOptions, build
    from gharuntime.source_kinds.simulated import SimulatedConfig

    say = progress or (lambda _what, _done, _total: None)
    seconds: dict[str, float] = {}
    name = f"gharuntime-sim-{scale}-seed{seed}"
    dataset = out / name
    t0 = time.perf_counter()
    simulated = SimulatedConfig(out / f"{name}.raw", seed=seed, scale=scale)
    build(simulated.source(), dataset, BuildOptions(progress=progress))
    say("validating the dataset", 0, None)
    problems = validate(dataset)
    if problems:
        shown = "; ".join(str(p) for p in problems[:5])
        raise DatasetError(f"{dataset}: the built dataset breaks the contract: {shown}")
    seconds["build"] = time.perf_counter() - t0
    steps, skipped = pipeline_steps(methods)
    splits = read_manifest(dataset).get("splits", {})
    for config in PIPELINE_CONFIGS:
        if not splits.get(config, {}).get("test"):
            skipped.append(f"every method on {config}: its test split is empty at this scale")
    steps = [s for s in steps if splits.get(s.config, {}).get("test")]
    results = out / "results"
    revision = str(read_manifest(dataset)["revision"])
    kept: list[str] = []
    ran: list[str] = []
    t1 = time.perf_counter()
    for i, step in enumerate(steps):
        submission = out / "runs" / step.config / step.track / f"{step.method.name}.jsonl"
        record_path = submission.with_name(step.method.name + RECORD_SUFFIX)
        inputs = step_inputs(
            method=step.method.name,
            params=dict(step.method.params),
            config=step.config,
            track=step.track,
            resamples=resamples,
            dataset_revision=revision,
        )
        checked = None if fresh else check_step(record_path, inputs, out)
        if isinstance(checked, StepRecord):
            score_or_rerun = _kept_score(checked)
            if isinstance(score_or_rerun, str):
                kept.append(step.label)
                if step_done:
                    step_done(step, i + 1, len(steps), f"kept (scored earlier) {score_or_rerun}")
                continue
            checked = score_or_rerun
        again = f"; ran again: {checked.reason}" if isinstance(checked, Rerun) else ""

        def stage(
            msg: str, _done: int = 0, _total: int | None = None, step: Step = step, i: int = i
        ) -> None:
            """A method's message, counted as this step of the run."""
            say(f"{step.label}: {msg}", i, len(steps))

        stage("fitting")
        record_path.unlink(missing_ok=True)  # this step's old outputs are about to be replaced
        run = run_baseline(
            step.method.name,
            dataset,
            config=step.config,
            track=step.track,
            out=submission,
            params=dict(step.method.params) or None,
            progress=stage,
            journal=journal_path(submission),  # a tuned step killed midway keeps its trials
            fresh=fresh,
        )
        stage("scoring")
        result = evaluate_file(submission, dataset, resamples=resamples)
        scored = submission.with_name(submission.stem + ".result.json")
        write_result(result, scored)
        filed = add_result(scored, results, replace=True)
        score = _score_line(result)
        write_record(record_path, inputs, out, [filed])  # last: a step killed before it reruns
        ran.append(step.label)
        if step_done:
            step_done(
                step,
                i + 1,
                len(steps),
                f"fit {run.fit_seconds:.1f} s, predict {run.predict_seconds:.1f} s, {score}"
                + "".join(f"; {line}" for line in run.resumed)
                + again,
            )
    seconds["methods"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    board = build_leaderboard(results, out / "leaderboard")
    seconds["leaderboard"] = time.perf_counter() - t2
    return PipelineResult(dataset, results, board, skipped, seconds, kept, ran)
