"""The tuned trees' journal (gharuntime.baselines.journal): a killed `gharuntime baseline
lightgbm-tuned` keeps its finished trials and ends as an uninterrupted run; other inputs start a
new study; --fresh starts over. The journal is read here with sqlite3 itself, not through Optuna."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli

FAST = ("n_estimators=40", "early_stopping_rounds=5", "learning_rate=0.2")


def _args(dataset: Path, out: Path, trials: int, seed: int, *extra: str) -> list[str]:
    params = [x for p in (*FAST, f"trials={trials}") for x in ("--param", p)]
    return [
        "baseline",
        "lightgbm-tuned",
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--seed",
        str(seed),
        *params,
        *extra,
    ]


def _journal(out: Path) -> Path:
    return out.with_name(out.stem + ".tuning.sqlite3")


def _states(journal: Path) -> dict[str, int]:
    """How many trials the journal holds in each state (empty before its tables exist)."""
    if not journal.is_file():
        return {}
    try:
        with closing(sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5)) as db:
            rows = db.execute("SELECT state, COUNT(*) FROM trials GROUP BY state").fetchall()
    except sqlite3.DatabaseError:  # being created: no tables yet
        return {}
    return {str(state): int(n) for state, n in rows}


def _kept(output: str) -> int | None:
    found = re.search(r"kept (\d+) of \d+ trials", output)
    return int(found[1]) if found else None


def _model(out: Path) -> dict[str, Any]:
    """The model folder and submission as two runs must share them: every file byte for byte,
    model.json and the metadata less the seconds they took; the encodings as tables."""
    import polars as pl

    folder = out.with_name(out.stem + ".model")
    meta = json.loads(folder.joinpath("model.json").read_text())
    meta["fit"].pop("seconds")
    sub = json.loads(out.with_name(out.stem + ".meta.json").read_text())
    sub.pop("timing")
    return {
        "model.json": meta,
        "meta.json": sub,
        "files": {
            # a table written in no fixed row order (polars' group_by): its rows as a set
            p.name: (
                sorted(map(repr, pl.read_parquet(p).to_dicts()))
                if p.suffix == ".parquet"
                else p.read_bytes()
            )
            for p in sorted(folder.iterdir())
            if p.name != "model.json"
        },
        "predictions": out.read_bytes(),
        "quantiles": out.with_name(out.stem + ".quantiles.jsonl").read_bytes(),
    }


def _child(dataset: Path, out: Path, trials: int) -> subprocess.Popen[str]:
    exe = Path(sys.executable).parent / "gharuntime"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [str(exe), *_args(dataset, out, trials, 2)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_a_killed_tuned_baseline_resumes_to_the_uninterrupted_result(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    """A real SIGKILL of `gharuntime baseline lightgbm-tuned` once 6 of its 24 trials are
    complete; the same command again keeps those, runs only the rest, and writes the model and
    submission an uninterrupted run writes."""
    trials = 24
    killed = tmp_path / "killed" / "lgb.jsonl"
    journal = _journal(killed)
    proc = _child(fixture_dataset_master, killed, trials)
    deadline = time.monotonic() + 300
    try:
        while _states(journal).get("COMPLETE", 0) < 6:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no 6 trials complete in 300 s"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert not killed.exists()
    at_kill = _states(journal)
    done = at_kill["COMPLETE"]
    assert 6 <= done < trials

    resumed = _child(fixture_dataset_master, killed, trials)
    _, stderr = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, stderr
    assert _kept(stderr) == done  # said, and counts only completed trials
    # the trial the kill cut (running, or enqueued and not yet started) is not counted, and said
    cut = at_kill.get("RUNNING", 0) + at_kill.get("WAITING", 0)
    assert ("cut short by the interruption" in stderr) == bool(cut)
    # the rerun fitted only the trials that were left, fewer than a whole run; the cut one is FAIL
    after = _states(journal)
    assert after == {"COMPLETE": trials, **({"FAIL": cut} if cut else {})}
    assert after["COMPLETE"] - done == trials - done < trials

    whole = tmp_path / "whole" / "lgb.jsonl"
    uninterrupted = _child(fixture_dataset_master, whole, trials)
    _, stderr = uninterrupted.communicate(timeout=600)
    assert uninterrupted.returncode == 0, stderr
    assert _kept(stderr) is None and _states(_journal(whole)) == {"COMPLETE": trials}
    assert _model(killed) == _model(whole)


def _run(dataset: Path, out: Path, trials: int, seed: int, *extra: str) -> str:
    result = CliRunner().invoke(cli, _args(dataset, out, trials, seed, *extra))
    assert result.exit_code == 0, result.output
    return result.output


def _tuning(out: Path) -> dict[str, Any]:
    meta = json.loads(out.with_name(out.stem + ".model").joinpath("model.json").read_text())
    tuning: dict[str, Any] = meta["config"]["tuning"]["duration_s"]
    return tuning


def test_other_inputs_start_a_new_study_and_fresh_starts_over(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    data, out = fixture_dataset_master, tmp_path / "runs" / "lgb.jsonl"
    journal = _journal(out)
    first = _run(data, out, 4, 2)
    assert _kept(first) is None and _states(journal) == {"COMPLETE": 4}
    seed2, written = _tuning(out), _model(out)

    # the same inputs: every trial kept, none fitted again, the same search; the best trial's
    # booster, not in the journal, fitted again to the same model and submission
    again = _run(data, out, 4, 2)
    assert _kept(again) == 4 and _states(journal) == {"COMPLETE": 4}
    assert _tuning(out) == seed2 and _model(out) == written

    # another seed: the old study is not mixed in (deleted, said so); a new one has 4 trials
    other = _run(data, out, 4, 3)
    assert _kept(other) is None
    assert "run with other inputs (seed)" in other
    assert _states(journal) == {"COMPLETE": 4}
    seed3 = _tuning(out)
    assert seed3["validation_rmsle_per_trial"] != seed2["validation_rmsle_per_trial"]
    # ... and it is the search a run without any journal makes
    assert _tuning_without_journal(data, tmp_path / "plain" / "lgb.jsonl", 4, 3) == seed3

    # --fresh: the journal removed, every trial fitted again, to the same search
    fresh = _run(data, out, 4, 3, "--fresh")
    assert _kept(fresh) is None and "--fresh: removed the tuning journal" in fresh
    assert _states(journal) == {"COMPLETE": 4}
    assert _tuning(out) == seed3

    # a larger budget continues the search as one run of that budget would have
    more = _run(data, out, 6, 3)
    assert _kept(more) == 4 and _states(journal) == {"COMPLETE": 6}
    assert _tuning(out) == _tuning_without_journal(data, tmp_path / "six" / "lgb.jsonl", 6, 3)


def _tuning_without_journal(dataset: Path, out: Path, trials: int, seed: int) -> dict[str, Any]:
    """The search as it was before the journal: run_baseline with no journal (in memory)."""
    from gharuntime.baselines.run import run_baseline

    params: dict[str, Any] = {k: json.loads(v) for k, v in (p.split("=") for p in FAST)}
    run_baseline(
        "lightgbm-tuned",
        dataset,
        config="temporal",
        track="config",
        out=out,
        model_dir=out.with_name(out.stem + ".model"),
        seed=seed,
        params={**params, "trials": trials},
    )
    assert not _journal(out).exists()
    return _tuning(out)


def test_an_unreadable_journal_is_refused_with_the_fix_and_fresh_replaces_it(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    out = tmp_path / "lgb.jsonl"
    _journal(out).write_bytes(b"not a database, " * 100)
    result = CliRunner().invoke(cli, _args(fixture_dataset_master, out, 2, 2))
    assert result.exit_code == 2, result.output
    assert "cannot read this tuning journal" in result.output and "--fresh" in result.output
    assert "Traceback" not in result.output and not out.exists()
    assert _journal(out).read_bytes() == b"not a database, " * 100  # never replaced unasked
    _run(fixture_dataset_master, out, 2, 2, "--fresh")
    assert _states(_journal(out)) == {"COMPLETE": 2} and out.is_file()


def test_a_journal_another_run_holds_is_refused_not_broken(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    """Two runs on one journal: the second waits for SQLite's lock, then exits 2 saying why;
    the first's trials stay."""
    out = tmp_path / "lgb.jsonl"
    _run(fixture_dataset_master, out, 2, 2)
    with closing(sqlite3.connect(_journal(out), isolation_level=None)) as other:
        other.execute("BEGIN EXCLUSIVE")
        result = CliRunner().invoke(cli, _args(fixture_dataset_master, out, 3, 2))
        other.execute("ROLLBACK")
    assert result.exit_code == 2, result.output
    assert "is another run using it?" in result.output and "Traceback" not in result.output
    assert _states(_journal(out)) == {"COMPLETE": 2}


def test_a_second_run_on_a_journal_in_use_is_refused_at_once(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    """Two tuned runs writing one --out at the same time: the second exits 2 at once naming
    the first by its PID, and never marks the first's running trial cut short; the first ends
    with every trial complete. Before, the second ran beside it, failing the first's trial."""
    out = tmp_path / "lgb.jsonl"
    trials = 8
    first = _child(fixture_dataset_master, out, trials)
    try:
        deadline = time.monotonic() + 300
        while not _states(_journal(out)):
            assert first.poll() is None, "the first run ended before the second started"
            assert time.monotonic() < deadline, "no trial started in 300 s"
            time.sleep(0.02)
        second = CliRunner().invoke(cli, _args(fixture_dataset_master, out, trials, 2))
        _, stderr = first.communicate(timeout=600)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert second.exit_code == 2, second.output
    said = " ".join(second.output.split())
    assert f"the tuning journal lgb.tuning.sqlite3 is in use by process {first.pid}" in said
    assert "fix:" in said and "Traceback" not in said
    assert first.returncode == 0, stderr
    assert _states(_journal(out)) == {"COMPLETE": trials}
