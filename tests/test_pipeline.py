"""`gharuntime pipeline`: simulated GitHub → build → methods → eval → leaderboard, offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gharuntime.baselines.registry import METHODS
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


def test_the_help_names_every_method_the_pipeline_runs() -> None:
    from click.testing import CliRunner

    from gharuntime.cli.main import cli

    out = CliRunner().invoke(cli, ["pipeline", "--help"], terminal_width=200).output
    stages = " ".join(out.split("Stages:", 1)[1].split("Exit codes:", 1)[0].split())
    named = set(re.findall(r"[a-z]+(?:-[a-z]+)*", stages))
    for plan in PIPELINE_METHODS:
        assert plan.name in named, plan.name
