"""gharuntime.resume: a step is kept only with the same inputs and its filed result untouched."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from gharuntime.resume import (
    changed_inputs,
    code_fingerprint,
    fingerprint,
    fit_inputs,
    kept_record,
    step_inputs,
    write_record,
)

ROOT = Path(__file__).resolve().parents[1]


def _inputs(**change: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "method": "lightgbm",
        "params": {"n_estimators": 50},
        "config": "temporal",
        "track": "history",
        "resamples": 20,
        "dataset_revision": "a" * 64,
    }
    return step_inputs(**{**base, **change})


def _recorded(tmp_path: Path) -> tuple[Path, Path]:
    result = tmp_path / "results" / "temporal-history-lightgbm.json"
    result.parent.mkdir(parents=True)
    result.write_text('{"metrics": {}}\n')
    record = tmp_path / "runs" / "lightgbm.step.json"
    write_record(record, _inputs(), result, "RMSLE 0.5")
    return record, result


def test_the_same_inputs_keep_the_step(tmp_path: Path) -> None:
    record, result = _recorded(tmp_path)
    kept = kept_record(record, _inputs())
    assert kept is not None and kept.result == result.resolve() and kept.summary == "RMSLE 0.5"


def test_any_other_input_runs_it_again(tmp_path: Path) -> None:
    record, _ = _recorded(tmp_path)
    for change in (
        {"params": {"n_estimators": 51}},
        {"params": {}},
        {"config": "cross_repo"},
        {"track": "config"},
        {"resamples": 21},
        {"dataset_revision": "b" * 64},
        {"method": "xgboost"},
    ):
        assert kept_record(record, _inputs(**change)) is None, change
    inputs = _inputs()
    inputs["code_sha256"] = "0" * 64  # another version of the code
    assert kept_record(record, inputs) is None
    inputs = _inputs()
    inputs["libraries"] = {**inputs["libraries"], "numpy": "0.0"}  # another numpy
    assert kept_record(record, inputs) is None


def test_a_result_changed_or_gone_and_a_broken_record_run_it_again(tmp_path: Path) -> None:
    record, result = _recorded(tmp_path)
    result.write_text('{"metrics": {"edited": 1}}\n')
    assert kept_record(record, _inputs()) is None
    result.unlink()
    assert kept_record(record, _inputs()) is None
    record, result = _recorded(tmp_path / "again")
    for broken in ("", "{", "[]", '{"fingerprint": 1}', json.dumps({"fingerprint": None})):
        record.write_text(broken)
        assert kept_record(record, _inputs()) is None
    assert kept_record(tmp_path / "none.step.json", _inputs()) is None


def test_the_code_fingerprint_is_the_same_from_a_checkout_and_from_the_install(
    tmp_path: Path,
) -> None:
    """`python -c` in the checkout's root imports the source tree (gharuntime/__init__.py
    registers crawler/ & co.); elsewhere the installed tree: the code is the same."""
    code = "from gharuntime.resume import code_fingerprint; print(code_fingerprint())"
    here = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    away = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert here.returncode == away.returncode == 0
    assert here.stdout == away.stdout == code_fingerprint() + "\n"
    assert len(code_fingerprint()) == 64


def test_a_fits_inputs_name_what_changed() -> None:
    """The inputs keying a resumable fit's journal (the tuned trees): the same fingerprint only
    for the same inputs, and the keys that differ named."""
    base: dict[str, Any] = {
        "method": "lightgbm-tuned",
        "method_version": "2.0",
        "params": {"n_estimators": 50},
        "seed": 2,
        "config": "temporal",
        "track": "config",
        "dataset_revision": "a" * 64,
    }
    inputs = fit_inputs(**base)
    assert inputs["code_sha256"] == code_fingerprint() and inputs["libraries"]
    assert fingerprint(fit_inputs(**base)) == fingerprint(inputs)
    other = fit_inputs(**{**base, "seed": 3, "params": {"n_estimators": 51}})
    assert fingerprint(other) != fingerprint(inputs)
    assert changed_inputs(inputs, other) == ["params", "seed"]
    assert changed_inputs(inputs, inputs) == []
    assert changed_inputs(None, inputs) == sorted(inputs)  # nothing recorded: all of them
