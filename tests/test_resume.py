"""gharuntime.resume: a step is kept only with the same inputs and every output it wrote still
there, untouched, in the run's own folder (wherever it was copied)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from gharuntime.resume import (
    Rerun,
    StepRecord,
    changed_inputs,
    check_step,
    code_fingerprint,
    fingerprint,
    fit_inputs,
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
    write_record(record, _inputs(), tmp_path, [result])
    return record, result


def _kept_record(record: Path, inputs: dict[str, Any]) -> StepRecord | None:
    """The record when kept (the run's folder is the record's grandparent, as _recorded lays
    it out), else None."""
    checked = check_step(record, inputs, record.parent.parent)
    return checked if isinstance(checked, StepRecord) else None


def test_the_same_inputs_keep_the_step(tmp_path: Path) -> None:
    record, result = _recorded(tmp_path)
    kept = _kept_record(record, _inputs())
    assert kept is not None and kept.result.resolve() == result.resolve()
    assert kept.outputs == (kept.result,)


def test_a_copied_folder_checks_its_own_outputs_not_the_originals(tmp_path: Path) -> None:
    """A record names its outputs relative to the run's folder: in a copy whose result was
    deleted, the step runs again (the original's result, still there, vouches for nothing)."""
    record, _ = _recorded(tmp_path / "out")
    assert str(tmp_path) not in record.read_text()
    shutil.copytree(tmp_path / "out", tmp_path / "copy")
    copy = tmp_path / "copy"
    (copy / "results" / "temporal-history-lightgbm.json").unlink()
    checked = check_step(copy / "runs" / record.name, _inputs(), copy)
    assert isinstance(checked, Rerun)
    assert checked.reason == "'results/temporal-history-lightgbm.json' is missing"
    assert isinstance(check_step(record, _inputs(), tmp_path / "out"), StepRecord)


def test_every_output_is_checked_and_none_may_leave_the_folder(tmp_path: Path) -> None:
    model = tmp_path / "history" / "model.json"
    model.parent.mkdir()
    model.write_text("{}")
    score = tmp_path / "steps" / "fit.score.json"
    score.parent.mkdir()
    score.write_text("{}")
    record = tmp_path / "steps" / "fit.step.json"
    write_record(record, _inputs(), tmp_path, [score, model])
    assert isinstance(check_step(record, _inputs(), tmp_path), StepRecord)
    model.write_text('{"edited": 1}')
    checked = check_step(record, _inputs(), tmp_path)
    assert isinstance(checked, Rerun) and "history/model.json" in checked.reason
    assert "changed" in checked.reason
    shutil.rmtree(model.parent)
    checked = check_step(record, _inputs(), tmp_path)
    assert isinstance(checked, Rerun) and "history/model.json' is missing" in checked.reason
    doc = json.loads(record.read_text())
    outside = tmp_path.parent / "elsewhere.json"
    outside.write_text("{}")
    for name in ("../elsewhere.json", str(outside)):
        digest = doc["outputs"]["steps/fit.score.json"]
        record.write_text(json.dumps({**doc, "outputs": {name: digest}}))
        checked = check_step(record, _inputs(), tmp_path)
        assert isinstance(checked, Rerun) and "outside" in checked.reason, name


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
        assert _kept_record(record, _inputs(**change)) is None, change
    inputs = _inputs()
    inputs["code_sha256"] = "0" * 64  # another version of the code
    assert _kept_record(record, inputs) is None
    checked = check_step(record, inputs, tmp_path)
    assert isinstance(checked, Rerun) and checked.reason == "its inputs changed (code_sha256)"
    inputs = _inputs()
    inputs["libraries"] = {**inputs["libraries"], "numpy": "0.0"}  # another numpy
    assert _kept_record(record, inputs) is None


def test_a_result_changed_or_gone_and_a_broken_record_run_it_again(tmp_path: Path) -> None:
    record, result = _recorded(tmp_path)
    result.write_text('{"metrics": {"edited": 1}}\n')
    assert _kept_record(record, _inputs()) is None
    result.unlink()
    assert _kept_record(record, _inputs()) is None
    record, result = _recorded(tmp_path / "again")
    for broken in ("", "{", "[]", '{"fingerprint": 1}', json.dumps({"fingerprint": None})):
        record.write_text(broken)
        assert isinstance(check_step(record, _inputs(), tmp_path / "again"), Rerun), broken
    assert check_step(tmp_path / "none.step.json", _inputs(), tmp_path) is None  # never run


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
