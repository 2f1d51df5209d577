"""A result file is data from whoever contributed it (issue 49): `leaderboard reproduce` reads
it through the registry's bounded reader and checks it whole before any of it is used, so a
commit never reaches git as an option, a revision never names a folder outside `--work`, and a
file that is not a result (a FIFO, /dev/zero, deep nesting, NaN, fields of the wrong type) is
refused with exit 2, what, where and the fix, before anything is built or fitted."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import check, invoke

Change = Callable[[dict[str, Any]], None]


def _edited(reproducible: dict[str, Path], folder: Path, change: Change) -> Path:
    doc = json.loads(reproducible["result"].read_text(encoding="utf-8"))
    change(doc)
    path = folder / "temporal-config-median.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _reproduce(path: Path, cwd: Path, *extra: str) -> Any:
    outcome = invoke(["leaderboard", "reproduce", str(path), *extra], cwd)
    check(outcome, path)
    return outcome


def test_a_commit_in_a_result_never_reaches_git_as_an_option(
    reproducible: dict[str, Path], tmp_path: Path
) -> None:
    """`--output=FILE` as the recorded commit truncated FILE whenever the result did not
    reproduce (its author decides that): the commit is 40 hex digits or the file is refused."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")

    def forged(doc: dict[str, Any]) -> None:
        doc["provenance"]["git_commit"] = f"--output={victim}"
        doc["metrics"]["duration_s"]["rmsle"]["value"] += 0.01  # so it does not reproduce

    path = _edited(reproducible, tmp_path, forged)
    out = _reproduce(path, tmp_path, "--dataset", str(reproducible["dataset"]))
    assert out.code == 2, out.output
    assert "provenance/git_commit" in out.output and "fix:" in out.output
    assert victim.read_text(encoding="utf-8") == "keep me\n"


def test_a_dataset_revision_never_names_a_folder_outside_work(
    reproducible: dict[str, Path], tmp_path: Path
) -> None:
    """A revision holding `/../..` built a simulated world outside `--work`: the revision is
    64 hex digits, checked before anything is built."""

    def climbing(doc: dict[str, Any]) -> None:
        doc["dataset"].update(revision="/../../escape", source_kind="simulated")
        doc["meta"].update(dataset="gharuntime-sim-tiny", dataset_revision=None)

    (tmp_path / "in").mkdir()
    work = tmp_path / "in" / "work"
    path = _edited(reproducible, tmp_path, climbing)
    out = _reproduce(path, tmp_path, "--work", str(work))
    assert out.code == 2, out.output
    assert "dataset/revision" in out.output and "fix:" in out.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", path.name]
    assert not work.exists() or not any(work.iterdir())


def test_what_is_not_a_result_file_is_refused_at_once(
    reproducible: dict[str, Path], tmp_path: Path
) -> None:
    """A FIFO hung, a link to /dev/zero was read until MemoryError, deep nesting raised
    RecursionError, NaN was taken as a number: the registry's reader refuses each."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    nan = tmp_path / "nan.json"
    text = reproducible["result"].read_text(encoding="utf-8")
    nan.write_text(text.replace('"seed": 0', '"seed": NaN', 1), encoding="utf-8")
    for path, words in [
        (fifo, "not a regular file"),
        (zero, "not a regular file"),
        (deep, "nested too deeply"),
        (nan, "NaN"),
    ]:
        out = _reproduce(path, tmp_path, "--dataset", str(reproducible["dataset"]))
        assert out.code == 2, (path, out.output)
        assert str(path) in out.output and words in out.output and "fix:" in out.output


def _set(path: str, value: Any) -> Change:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        for key in parents:
            doc = doc[key]
        doc[last] = value

    return change


WRONG_TYPES = {
    "dataset/revision": 5,
    "bootstrap": [1000],
    "meta/seed": "seven",
    "bootstrap/seed": "0",
    "bootstrap/resamples": "many",
    "meta/extra": ["method_config"],
    "meta/extra/method_config": "n_estimators=5",
    "meta/split": 3,
    "trained_on": "elsewhere",
    "provenance": "made here",
    "provenance/libraries": ["numpy"],
}


@pytest.mark.parametrize("field", sorted(WRONG_TYPES))
def test_a_field_of_the_wrong_type_is_refused_by_name_before_any_fit(
    reproducible: dict[str, Path], tmp_path: Path, field: str
) -> None:
    """Each gave a traceback (or was used as it was): one validation of the whole result,
    the schema's types first, names the field."""
    path = _edited(reproducible, tmp_path, _set(field, WRONG_TYPES[field]))
    out = _reproduce(path, tmp_path, "--dataset", str(reproducible["dataset"]))
    assert out.code == 2, out.output
    assert f"{field}:" in out.output and "fix:" in out.output


def test_parameters_the_method_refuses_are_refused_before_any_data_is_read(
    reproducible: dict[str, Path], tmp_path: Path
) -> None:
    """The recorded parameters go through the method's own checks (as `--param` does), and
    a LASER model named by a folder is the recording machine's, never loaded by a re-run."""

    def bad_lightgbm(doc: dict[str, Any]) -> None:
        doc["meta"]["method"] = "lightgbm"
        doc["meta"]["extra"]["method_config"] = {"n_estimators": -5}

    def laser_folder(doc: dict[str, Any]) -> None:
        doc["meta"]["method"] = "laser"
        doc["meta"]["extra"]["method_config"] = {"model": str(tmp_path)}

    for change, words in [
        (bad_lightgbm, "n_estimators must be"),
        (laser_folder, "method_config/model"),
    ]:
        path = _edited(reproducible, tmp_path, change)
        out = _reproduce(path, tmp_path, "--dataset", str(reproducible["dataset"]))
        assert out.code == 2, out.output
        assert words in out.output and "fix:" in out.output
