"""gharuntime.leaderboard.registry: `gharuntime leaderboard add` files each result under its
canonical name and refuses what cannot be filed; `scan` checks every result before anything is
ranked or written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
from leaderboard_support import METHODS, score
from leaderboard_support import leaderboard_cli as _run
from leaderboard_support import relative_files as _files

from gharuntime.dataset import write_dataset
from gharuntime.fixture import fixture_jobs


def test_add_files_each_result_under_its_canonical_name(results_master: Path) -> None:
    expected = sorted(f"gharuntime-fixture/{c}-{t}-{m}.json" for m, (c, t, _) in METHODS.items())
    assert _files(results_master) == expected


def test_add_keeps_the_bytes_eval_wrote(
    scored_results: dict[str, Path], results_master: Path
) -> None:
    filed = results_master / "gharuntime-fixture" / "temporal-config-double.json"
    assert filed.read_bytes() == scored_results["double"].read_bytes()


def test_add_refuses_a_second_result_for_a_method(
    scored_results: dict[str, Path], results_dir: Path
) -> None:
    before = {p: p.read_bytes() for p in results_dir.rglob("*.json")}
    r = _run("add", str(scored_results["double"]), "--results", str(results_dir))
    assert r.exit_code == 2
    assert str(scored_results["double"]) in r.output and "already holds method 'double'" in r.output
    assert {p: p.read_bytes() for p in results_dir.rglob("*.json")} == before


def test_add_replace_replaces(scored_results: dict[str, Path], results_dir: Path) -> None:
    r = _run("add", str(scored_results["double"]), "--results", str(results_dir), "--replace")
    assert r.exit_code == 0, r.output


def test_add_refuses_a_not_json_file_and_names_it(tmp_path: Path, results_dir: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"result_version": 2, ')
    before = _files(results_dir)
    r = _run("add", str(bad), "--results", str(results_dir))
    assert r.exit_code == 2
    assert f"{bad}: not JSON" in r.output and "Traceback" not in r.output
    assert _files(results_dir) == before


def test_add_refuses_an_older_result_version(
    scored_results: dict[str, Path], tmp_path: Path, results_dir: Path
) -> None:
    doc = json.loads(scored_results["double"].read_text())
    doc["result_version"] = 1
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    r = _run("add", str(old), "--results", str(tmp_path / "fresh"))
    assert r.exit_code == 2 and "result_version 1" in r.output and str(old) in r.output
    assert not (tmp_path / "fresh").exists()


def test_add_names_a_schema_violation(
    scored_results: dict[str, Path], tmp_path: Path, results_dir: Path
) -> None:
    doc = json.loads(scored_results["double"].read_text())
    del doc["bootstrap"]["per_resample"]["duration_s"]["spearman"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    r = _run("add", str(bad), "--results", str(results_dir))
    assert r.exit_code == 2
    assert "bootstrap/per_resample/duration_s" in r.output and "'spearman'" in r.output


def test_add_refuses_another_dataset_revision(
    fixture_dataset_master: Path, tmp_path: Path, results_dir: Path
) -> None:
    # same folder name (so the same table), other content (so another revision: the revision
    # is the data's, so one changed duration makes it, a changed source record would not)
    other = tmp_path / "other" / "gharuntime-fixture"
    jobs = fixture_jobs()
    jobs = jobs.with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.col("duration_s") + 1)
        .otherwise(pl.col("duration_s"))
        .alias("duration_s")
    )
    write_dataset(jobs, other, source={"kind": "fixture", "seed": 0})
    path = score(tmp_path, other, "newcomer", "temporal", "config", "small")
    before = _files(results_dir)
    r = _run("add", str(path), "--results", str(results_dir))
    assert r.exit_code == 2
    assert str(path) in r.output and "dataset revision" in r.output
    assert _files(results_dir) == before


def test_add_refuses_a_partial_submission_unless_told(
    scored_results: dict[str, Path], results_dir: Path, tmp_path: Path
) -> None:
    dataset = scored_results["double"].parent / "gharuntime-fixture"
    path = score(tmp_path, dataset, "partial", "temporal", "config", "small", drop=2,
                 allow_partial=True)  # fmt: skip
    r = _run("add", str(path), "--results", str(results_dir))
    assert r.exit_code == 2 and "partial submission (2 records" in r.output
    assert not (results_dir / "gharuntime-fixture" / "temporal-config-partial.json").exists()
    r = _run("add", str(path), "--results", str(results_dir), "--allow-partial")
    assert r.exit_code == 0, r.output
    out = results_dir.parent / "board"
    assert _run("--results", str(results_dir), "--out", str(out)).exit_code == 0
    assert "partial (partial: 2 missing)" in (out / "README.md").read_text()


def test_scan_refuses_two_results_for_one_method(results_dir: Path, tmp_path: Path) -> None:
    folder = results_dir / "gharuntime-fixture"
    shutil.copy(folder / "temporal-config-double.json", folder / "copy-of-double.json")
    out = tmp_path / "board"
    r = _run("--results", str(results_dir), "--out", str(out))
    assert r.exit_code == 2
    assert "a second result for method 'double'" in r.output
    assert str(folder / "copy-of-double.json") in r.output
    assert not out.exists()


def test_scan_refuses_other_resamples(
    scored_results: dict[str, Path], results_dir: Path, tmp_path: Path
) -> None:
    dataset = scored_results["double"].parent / "gharuntime-fixture"
    path = score(tmp_path, dataset, "fewer", "temporal", "config", "small", resamples=50)
    r = _run("add", str(path), "--results", str(results_dir))
    assert r.exit_code == 2 and "bootstrap resamples" in r.output and "--resamples" in r.output


def test_scan_refuses_a_not_json_file_and_writes_nothing(results_dir: Path, tmp_path: Path) -> None:
    bad = results_dir / "gharuntime-fixture" / "temporal-config-bad.json"
    bad.write_text("not json")
    out = tmp_path / "board"
    out.mkdir()
    (out / "README.md").write_text("old")
    r = _run("--results", str(results_dir), "--out", str(out))
    assert r.exit_code == 2 and f"{bad}: not JSON" in r.output
    assert _files(out) == ["README.md"] and (out / "README.md").read_text() == "old"


def test_missing_results_folder_is_a_clear_error(tmp_path: Path) -> None:
    r = _run("--results", str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 2 and "no such results folder" in r.output
