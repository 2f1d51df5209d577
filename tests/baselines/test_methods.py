"""The method registry is the one list: `baseline --help`, `pipeline --help` and the pipeline's
plan are made from it, so every registered method appears in each without a hand-kept copy."""

from __future__ import annotations

import re

from click.testing import CliRunner

from gharuntime.baselines.methods import METHODS, REGISTERED, methods_help
from gharuntime.cli.main import cli
from gharuntime.pipeline import PIPELINE_METHODS, plan_summary


def _help(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def test_every_registered_method_is_in_the_baseline_help_with_its_summary() -> None:
    out = _help("baseline")
    listed = out.split("Methods:", 1)[1].split("Gradient-boosted", 1)[0]
    assert listed.strip("\n ") == "\n".join("  " + x for x in methods_help().splitlines()).strip()
    named = re.findall(r"^    ([a-z][a-z-]*) ", listed, re.MULTILINE)
    assert named == [r.name for r in REGISTERED] == list(METHODS)
    for r in REGISTERED:
        assert " ".join(r.summary.split()[:4]) in " ".join(listed.split()), r.name


def test_every_method_the_pipeline_runs_is_in_its_help_and_comes_from_the_registry() -> None:
    assert [(p.name, p.params, p.tracks) for p in PIPELINE_METHODS] == [
        (r.name, dict(r.pipeline.params), r.pipeline.tracks)
        for r in REGISTERED
        if r.pipeline is not None
    ]
    stages = _help("pipeline").split("Stages:", 1)[1].split("Resumable:", 1)[0]
    stages = re.sub(r"\s", "", stages)  # click wraps (at hyphens too)
    assert re.sub(r"\s", "", plan_summary()) in stages
    named = re.sub(r" \([^)]*\)", "", plan_summary()).split(", ")
    assert named == [p.name for p in PIPELINE_METHODS]
    assert "last-run(historytrackonly)" in stages  # where the track forbids its inputs
    assert "laser(configtrackonly;" in stages  # where the registry says


def test_learn_offers_the_methods_the_registry_marks() -> None:
    """`gharuntime learn --method` takes its choices from REGISTERED (`learn=True`), not from a
    list of its own."""
    from gharuntime.baselines.methods import REGISTERED
    from gharuntime.cli.learn import learn_command

    choices = next(p for p in learn_command.params if p.name == "method").type.choices  # type: ignore[attr-defined]
    assert list(choices) == sorted(r.name for r in REGISTERED if r.learn)
    assert list(choices) == ["catboost", "lightgbm", "xgboost"]
