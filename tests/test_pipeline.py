"""`gharuntime pipeline`: simulated GitHub → build → methods → eval → leaderboard, offline."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gharuntime.baselines.methods import METHODS
from gharuntime.pipeline import (
    PIPELINE_CONFIGS,
    PIPELINE_METHODS,
    PIPELINE_TRACKS,
    MethodPlan,
    pipeline_steps,
    run_pipeline,
)


def test_every_baseline_runs_on_every_config_and_track_it_may() -> None:
    steps, skipped = pipeline_steps()
    assert {m.name for m in PIPELINE_METHODS} == set(METHODS)  # a new baseline joins here
    runs = {(s.method.name, s.config, s.track) for s in steps}
    for config in PIPELINE_CONFIGS:
        for track in PIPELINE_TRACKS:
            for plan in PIPELINE_METHODS:
                expected = not (plan.name == "last-run" and track == "config") and (
                    plan.tracks is None or track in plan.tracks
                )
                assert ((plan.name, config, track) in runs) == expected, (plan.name, config, track)
    assert len(steps) == len(runs)
    assert sorted(skipped) == sorted(
        [f"last-run on {c}/config: the track forbids its inputs" for c in PIPELINE_CONFIGS]
        + [
            f"{plan.name} on {c}/{t}: not run in the pipeline"
            for plan in PIPELINE_METHODS
            if plan.tracks is not None
            for c in PIPELINE_CONFIGS
            for t in PIPELINE_TRACKS
            if t not in plan.tracks
        ]
    )


@pytest.mark.slow
def test_pipeline_ends_with_the_leaderboard(tmp_path: Path) -> None:
    methods = (MethodPlan("median"), MethodPlan("group-median"), MethodPlan("last-run"))
    lines: list[str] = []
    result = run_pipeline(
        tmp_path / "out",
        seed=1,
        scale="tiny",
        resamples=20,
        methods=methods,
        step_done=lambda step, i, n, summary: lines.append(f"{i}/{n} {step.label}"),
    )
    splits = json.loads((result.dataset / "manifest.json").read_text())["splits"]
    scored = [
        c for c in ("cross_repo", "temporal") if splits[c]["test"]
    ]  # tiny may leave one empty
    assert "temporal" in scored
    n = 5 * len(scored)  # median, group-median on both tracks, last-run on history
    assert lines[-1] == f"{n}/{n} last-run · temporal/history"
    filed = sorted(p.name for p in (result.results / result.dataset.name).glob("*.json"))
    assert len(filed) == n and "temporal-history-last-run.json" in filed
    if len(scored) < 2:
        assert any("test split is empty" in line for line in result.skipped)
    doc = json.loads((result.results / result.dataset.name / filed[0]).read_text())
    assert doc["dataset"]["synthetic"] is True and doc["meta"]["extra"]["timing"]
    for name in filed:  # every method wrote its quantiles, and eval scored them
        scored_doc = json.loads((result.results / result.dataset.name / name).read_text())
        coverage = scored_doc["intervals"]["metrics"]["duration_s"]["central"]["p10-p90"]
        assert 0.0 <= coverage["coverage"]["value"] <= 1.0, name
    text = result.leaderboard.markdown.read_text()
    assert "## gharuntime-sim-tiny-seed1 · temporal / history" in text
    assert result.leaderboard.page.stat().st_size > 10_000


RESUME_METHODS = (
    # the costly step first, so that the steps a kill leaves scored are most of the work
    MethodPlan("lightgbm", {"n_estimators": 400}),
    MethodPlan("median"),
    MethodPlan("group-median"),
    MethodPlan("last-run"),
)
_CHILD = f"""
import json, sys
from pathlib import Path
from gharuntime.pipeline import MethodPlan, run_pipeline
result = run_pipeline(Path(sys.argv[1]), seed=1, scale="tiny", resamples=20, methods={RESUME_METHODS!r})
print(json.dumps({{"kept": result.kept, "ran": result.ran, "seconds": result.seconds}}))
"""


def _pipeline_child(out: Path) -> subprocess.Popen[str]:
    """The pipeline in a child process (a fresh interpreter, as `gharuntime pipeline` is)."""
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(out)], stdout=subprocess.PIPE, text=True
    )


def _finished(proc: subprocess.Popen[str]) -> dict[str, Any]:
    stdout, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0
    doc: dict[str, Any] = json.loads(stdout.splitlines()[-1])
    return doc


def _filed(result_dir: Path) -> dict[str, Any]:
    """Each filed result's scores, by file name: metrics, intervals, dataset and submission
    (its hash and counts), the run's folder written OUT; provenance and timing aside."""
    out = str(result_dir.parent)
    return {
        path.name: {k: doc[k] for k in ("metrics", "intervals", "dataset", "submission")}
        for path in sorted(result_dir.rglob("*.json"))
        for doc in [json.loads(path.read_text().replace(out, "OUT"))]
    }


def _scores_only(markdown: Path) -> list[str]:
    """The leaderboard's lines, each table row without its last two cells (fit and predict
    seconds per 1,000 jobs: wall time, which no two runs share)."""
    lines = markdown.read_text().splitlines()
    assert any(line.endswith("| fit s / 1k jobs | predict s / 1k jobs |") for line in lines)
    return [line.rsplit("|", 3)[0] if line.startswith("|") else line for line in lines]


@pytest.mark.slow
def test_a_pipeline_killed_midway_resumes_to_the_same_leaderboard(tmp_path: Path) -> None:
    """A real SIGKILL of the child process running the pipeline, after four steps are scored;
    the rerun keeps those, runs the rest, and ends with the uninterrupted run's leaderboard."""
    killed = tmp_path / "killed"
    proc = _pipeline_child(killed)
    deadline = time.monotonic() + 300
    try:
        # four steps scored: both costly LightGBM fits (config, then history) are among them
        while len(list(killed.glob("runs/*/*/*.step.json"))) < 4:
            assert proc.poll() is None, "the pipeline ended before it could be killed"
            assert time.monotonic() < deadline, "no step was scored in 300 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    records_before = len(list(killed.glob("runs/*/*/*.step.json")))
    assert not (killed / "leaderboard").exists()

    # each run in a fresh interpreter, so neither pays the other's imports and warm-up
    resumed = _finished(_pipeline_child(killed))
    whole = _finished(_pipeline_child(tmp_path / "whole"))
    assert len(resumed["kept"]) == records_before >= 4
    assert resumed["kept"] + resumed["ran"] == whole["ran"]  # same steps, same order
    assert resumed["seconds"]["methods"] < whole["seconds"]["methods"]
    assert _filed(killed / "results") == _filed(tmp_path / "whole/results")
    assert _scores_only(killed / "leaderboard/README.md") == _scores_only(
        tmp_path / "whole/leaderboard/README.md"
    )


@pytest.mark.slow
def test_a_rerun_keeps_what_is_unchanged_and_reruns_what_changed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_pipeline(out, seed=1, scale="tiny", resamples=20, methods=RESUME_METHODS)
    assert first.kept == [] and len(first.ran) >= 7
    scores = _filed(first.results)  # the same folder: each run below rewrites what it runs
    again = run_pipeline(out, seed=1, scale="tiny", resamples=20, methods=RESUME_METHODS)
    assert again.kept == first.ran and again.ran == []
    assert _filed(again.results) == scores

    # other parameters for one method: only its steps run again, and their results change
    changed = (MethodPlan("lightgbm", {"n_estimators": 5}), *RESUME_METHODS[1:])
    third = run_pipeline(out, seed=1, scale="tiny", resamples=20, methods=changed)
    assert third.ran and all(label.startswith("lightgbm") for label in third.ran)
    assert len(third.kept) == len(first.ran) - len(third.ran)
    lgb = [name for name in scores if name.endswith("-lightgbm.json")]
    assert lgb and all(_filed(third.results)[n] != scores[n] for n in lgb)
    assert all(_filed(third.results)[n] == scores[n] for n in scores if n not in lgb)

    # a filed result edited by hand is not trusted: its step runs again and restores it
    target = next(first.results.rglob("*-config-median.json"))
    target.write_text(target.read_text().replace('"value"', '"value" ', 1))
    fourth = run_pipeline(out, seed=1, scale="tiny", resamples=20, methods=changed)
    assert len(fourth.ran) == 1 and fourth.ran[0].startswith("median")

    fresh = run_pipeline(out, seed=1, scale="tiny", resamples=20, methods=changed, fresh=True)
    assert fresh.kept == [] and len(fresh.ran) == len(first.ran)


def test_a_tuned_step_run_again_keeps_its_trials(tmp_path: Path) -> None:
    """A tuned step whose record is missing (killed after its trials, before it was filed) runs
    again from its journal: every trial kept, none fitted again, the same result."""
    out = tmp_path / "out"
    plan = (MethodPlan("lightgbm-tuned", {"trials": 3, "n_estimators": 20}),)
    first = run_pipeline(out, seed=1, scale="tiny", resamples=20, methods=plan)
    journals = sorted(out.glob("runs/*/*/lightgbm-tuned.tuning.sqlite3"))
    assert first.ran and len(journals) == len(first.ran)
    scores = _filed(first.results)
    for record in out.glob("runs/*/*/*.step.json"):
        record.unlink()
    said: list[str] = []
    again = run_pipeline(
        out,
        seed=1,
        scale="tiny",
        resamples=20,
        methods=plan,
        step_done=lambda _step, _i, _n, summary: said.append(summary),
    )
    assert again.ran == first.ran and len(said) == len(first.ran)
    assert all("duration_s: kept 3 of 3 trials" in line for line in said), said
    assert _filed(again.results) == scores


CHEAP = (MethodPlan("median"), MethodPlan("group-median"))


def _score_of(result: Path) -> str:
    """A filed result's RMSLE and interval, read from the file, as a step line shows them."""
    rmsle = json.loads(result.read_text())["metrics"]["duration_s"]["rmsle"]
    return f"RMSLE {rmsle['value']:.3f} [{rmsle['ci_low']:.3f}, {rmsle['ci_high']:.3f}]"


def test_a_copied_folder_runs_again_what_its_copy_lost(tmp_path: Path) -> None:
    """Step records name results relative to OUT: in a copy of OUT whose filed result was
    deleted, that step runs again (saying why) and its row is on the copy's leaderboard.
    Before, the copy's record named the original's file, the step was "kept" and the row
    vanished."""
    out = tmp_path / "out"
    first = run_pipeline(out, seed=1, scale="tiny", resamples=20, methods=CHEAP)
    shutil.copytree(out, tmp_path / "copy")
    copy = tmp_path / "copy"
    lost = next((copy / "results").rglob("*-config-median.json"))
    lost.unlink()
    said: list[str] = []
    again = run_pipeline(
        copy,
        seed=1,
        scale="tiny",
        resamples=20,
        methods=CHEAP,
        step_done=lambda step, _i, _n, summary: said.append(f"{step.label}: {summary}"),
    )
    assert len(again.ran) == 1 and again.ran[0].startswith("median") and "/config" in again.ran[0]
    assert len(again.kept) == len(first.ran) - 1
    line = next(x for x in said if x.startswith(again.ran[0]))
    assert f"ran again: '{lost.relative_to(copy).as_posix()}' is missing" in line
    assert lost.is_file()
    board = (copy / "leaderboard/README.md").read_text()
    assert board.count("| median |") == (out / "leaderboard/README.md").read_text().count(
        "| median |"
    )


def test_a_kept_step_says_the_score_of_its_result_not_of_its_record(tmp_path: Path) -> None:
    """An edited `summary` in a step record is never shown: a kept step's score is read from
    its verified result."""
    out = tmp_path / "out"
    run_pipeline(out, seed=1, scale="tiny", resamples=20, methods=CHEAP[:1])
    forged = "RMSLE 0.001 [0.000, 0.002]"
    records = sorted(out.glob("runs/*/*/median.step.json"))
    for record in records:
        doc = json.loads(record.read_text())
        record.write_text(json.dumps({**doc, "summary": forged}))
    said: list[str] = []
    again = run_pipeline(
        out,
        seed=1,
        scale="tiny",
        resamples=20,
        methods=CHEAP[:1],
        step_done=lambda step, _i, _n, summary: said.append(
            f"{step.config}-{step.track}|{summary}"
        ),
    )
    assert again.ran == [] and len(said) == len(records)
    for line in said:
        where, summary = line.split("|")
        result = next((out / "results").rglob(f"{where}-median.json"))
        assert summary == f"kept (scored earlier) {_score_of(result)}"
        assert forged not in summary


_HOLDER = f"""
import sys
from pathlib import Path
from gharuntime.pipeline import MethodPlan, run_pipeline
run_pipeline(Path(sys.argv[1]), seed=1, scale="tiny", resamples=20, methods={RESUME_METHODS!r})
"""


def test_a_second_pipeline_on_the_same_folder_is_refused(tmp_path: Path) -> None:
    """Two pipelines over one OUT would replace each other's files (a BuildError, a
    FileNotFoundError, an sqlite3.IntegrityError): the second exits 2 at once, naming the first
    by its PID, and the first goes on."""
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out)], stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (out / "gharuntime-sim-tiny-seed1.raw").exists():
            assert first.poll() is None, "the first pipeline ended before the second started"
            assert time.monotonic() < deadline, "the first pipeline did not start its build"
            time.sleep(0.02)
        exe = Path(sys.executable).parent / "gharuntime"
        second = subprocess.run(
            [str(exe), "pipeline", "--scale", "tiny", "--resamples", "20", "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert first.poll() is None, "the first pipeline stopped"
    finally:
        first.kill()
        first.communicate()
    assert second.returncode == 2, second.stderr
    text = " ".join(second.stderr.split())
    assert f"is in use by process {first.pid} on " in text, text
    assert "gharuntime pipeline" in text and "fix:" in text and "Traceback" not in text
