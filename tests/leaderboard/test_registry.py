"""gharuntime.leaderboard.registry: `gharuntime leaderboard add` files each result under its
canonical name and refuses what cannot be filed; `scan` checks every result before anything is
ranked or written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

import polars as pl
import pytest
from leaderboard_support import METHODS, RESAMPLES, score
from leaderboard_support import leaderboard_cli as _run
from leaderboard_support import relative_files as _files

from gharuntime.dataset import write_dataset
from gharuntime.fixture import fixture_jobs
from gharuntime.leaderboard import Entry, LeaderboardError, Table, add_result, load_result, scan
from gharuntime.leaderboard.registry import check_tables, read_result, table_name


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
    write_dataset(jobs, other, provenance={"kind": "fixture", "seed": 0})
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


# --- entries, tables and files, through the registry's functions -----------------------------


def _doc(scored_results: dict[str, Path], method: str = "double") -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(scored_results[method].read_text(encoding="utf-8"))
    return doc


def _write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _bare(dataset: dict[str, Any], trained_on: dict[str, Any] | None = None) -> Entry:
    doc: dict[str, Any] = {
        "dataset": {"config": "temporal", **dataset},
        "track": "config",
        "meta": {"method": "lgb"},
        "submission": {"missing": 0},
    }
    if trained_on is not None:
        doc["trained_on"] = trained_on
    return Entry(Path("x.json"), doc)


def test_an_entry_is_named_by_its_dataset_and_placed_by_its_table() -> None:
    local = _bare({"id": "/data/sim-a", "kind": "local"})
    assert (local.dataset, local.config, local.track, local.method) == (
        "sim-a",
        "temporal",
        "config",
        "lgb",
    )
    assert local.key == ("sim-a", "temporal", "config", "")
    assert local.table_name == "sim-a/temporal/config"
    assert local.canonical == PurePosixPath("sim-a/temporal-config-lgb.json")
    assert not local.partial
    assert _bare({"id": "C:\\data\\sim-b", "kind": "local"}).dataset == "sim-b"
    assert _bare({"id": "org/bench", "kind": "hub"}).dataset == "org--bench"
    transfer = _bare({"id": "org/real", "kind": "hub"}, {"id": "/w/sim-a", "kind": "local"})
    assert transfer.trained_on == "sim-a"
    assert transfer.table_name == "org--real/temporal/config trained on sim-a"
    assert transfer.canonical == PurePosixPath("org--real/transfer-sim-a-temporal-config-lgb.json")
    assert table_name(("d", "cross_repo", "history", "")) == "d/cross_repo/history"
    assert Table("d", "c", "t", (), "o").name == "d/c/t trained on o"


def test_read_result_returns_the_entry_and_the_text_it_read(
    scored_results: dict[str, Path],
) -> None:
    entry, text = read_result(scored_results["alternating"])
    assert text == scored_results["alternating"].read_text(encoding="utf-8")
    assert entry.method == "alternating" and entry.dataset == "gharuntime-fixture"
    assert entry.result == json.loads(text)
    assert load_result(scored_results["alternating"]).result == entry.result


def _problems(path: Path) -> list[str]:
    with pytest.raises(LeaderboardError) as caught:
        load_result(path)
    assert all(p.startswith(str(path)) for p in caught.value.problems), caught.value.problems
    return caught.value.problems


def test_load_result_refuses_a_document_that_is_not_a_result(tmp_path: Path) -> None:
    (problem,) = _problems(_write(tmp_path / "list.json", [1, 2]))
    assert "not a result (a JSON object" in problem
    (problem,) = _problems(_write(tmp_path / "old.json", {"result_version": "2"}))
    assert "result_version '2', but the leaderboard reads version 2" in problem
    nan = tmp_path / "nan.json"
    nan.write_text('{"result_version": 2, "x": NaN}', encoding="utf-8")
    (problem,) = _problems(nan)
    assert "NaN" in problem and "a result is the file `gharuntime eval --out` writes" in problem


def test_load_result_checks_values_before_the_schema(
    scored_results: dict[str, Path], tmp_path: Path
) -> None:
    doc = _doc(scored_results)
    doc["meta"]["method_version"] = "1.0\n| forged | row |"
    del doc["bootstrap"]  # a schema problem too, but the value is reported alone
    (problem,) = _problems(_write(tmp_path / "r.json", doc))
    assert "meta/method_version: a string holding the control character '\\n'" in problem


def test_load_result_refuses_what_the_schema_cannot_say(
    scored_results: dict[str, Path], tmp_path: Path
) -> None:
    doc = _doc(scored_results)
    doc["meta"]["track"] = "history"
    doc["bootstrap"]["per_resample"]["duration_s"]["mae"].pop()
    problems = _problems(_write(tmp_path / "r.json", doc))
    assert any("meta.track 'history' ≠ track 'config'" in p for p in problems)
    assert any(
        f"bootstrap/per_resample/duration_s/mae has {RESAMPLES - 1} values for {RESAMPLES} "
        "resamples" in p
        for p in problems
    )
    doc = _doc(scored_results)
    doc["counts"]["scored"]["duration_s"] = -1
    (problem,) = _problems(_write(tmp_path / "r.json", doc))
    assert "counts/scored/duration_s" in problem


@pytest.mark.parametrize("folder", ["..", "a b", "-lead", "x" * 81])
def test_a_dataset_whose_name_cannot_name_a_folder_is_refused(
    scored_results: dict[str, Path], tmp_path: Path, folder: str
) -> None:
    doc = _doc(scored_results)
    doc["dataset"]["id"] = f"/data/{folder}"
    (problem,) = _problems(_write(tmp_path / "r.json", doc))
    assert f"dataset name {folder!r} cannot name a folder" in problem


def test_check_tables_groups_entries_and_names_both_files_of_a_clash(
    scored_results: dict[str, Path], tmp_path: Path
) -> None:
    double, exact = (load_result(scored_results[m]) for m in ("double", "exact-ish"))
    history = load_result(scored_results["constant"])
    tables, problems = check_tables([history, double, exact])
    assert problems == []
    assert [(t.name, [e.method for e in t.entries]) for t in tables] == [
        ("gharuntime-fixture/temporal/config", ["double", "exact-ish"]),
        ("gharuntime-fixture/temporal/history", ["constant"]),
    ]
    doc = _doc(scored_results, "exact-ish")
    doc["bootstrap"]["seed"] = 7
    other_seed = Entry(tmp_path / "seed7.json", doc)
    twin = Entry(tmp_path / "twin.json", _doc(scored_results))
    tables, problems = check_tables([double, other_seed, twin])
    assert len(tables) == 1 and [e.method for e in tables[0].entries] == ["double", "exact-ish"]
    assert len(problems) == 2
    second = next(p for p in problems if "a second result" in p)
    assert second.startswith(f"{twin.path}: a second result for method 'double'")
    assert str(double.path) in second
    resamples = next(p for p in problems if "bootstrap resamples" in p)
    assert resamples.startswith(f"{other_seed.path}: bootstrap resamples seed 7,")
    assert f"differs from {double.path} (seed 0, {RESAMPLES} resamples" in resamples
    assert "--bootstrap-seed" in resamples


def test_scan_refuses_a_result_filed_under_another_name(results_dir: Path) -> None:
    folder = results_dir / "gharuntime-fixture"
    (folder / "temporal-config-double.json").rename(folder / "temporal-config-renamed.json")
    with pytest.raises(LeaderboardError) as caught:
        scan(results_dir)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{folder / 'temporal-config-renamed.json'}: holds 'double'")
    assert f"whose place is {folder / 'temporal-config-double.json'}" in problem


def test_scan_of_an_empty_folder_says_where_results_go(tmp_path: Path) -> None:
    (tmp_path / "results" / "some-dataset").mkdir(parents=True)
    with pytest.raises(LeaderboardError, match=r"no results \(expected .*/<dataset>/"):
        scan(tmp_path / "results")


def test_scan_returns_every_table_with_every_method(results_master: Path) -> None:
    seen = {
        (t.dataset, t.config, t.track): sorted(e.method for e in t.entries)
        for t in scan(results_master)
    }
    expected: dict[tuple[str, str, str], list[str]] = {}
    for method, (config, track, _) in METHODS.items():
        expected.setdefault(("gharuntime-fixture", config, track), []).append(method)
    assert seen == {k: sorted(v) for k, v in expected.items()}


def test_add_result_refuses_a_place_that_is_not_a_file(
    scored_results: dict[str, Path], tmp_path: Path
) -> None:
    results = tmp_path / "results"
    (results / "gharuntime-fixture" / "temporal-config-double.json").mkdir(parents=True)
    with pytest.raises(LeaderboardError, match="exists and is not a regular file"):
        add_result(scored_results["double"], results)


def test_add_result_replaces_an_unreadable_result_in_its_place_only_when_told(
    scored_results: dict[str, Path], tmp_path: Path
) -> None:
    place = tmp_path / "results" / "gharuntime-fixture" / "temporal-config-double.json"
    place.parent.mkdir(parents=True)
    place.write_text("{ broken", encoding="utf-8")
    with pytest.raises(LeaderboardError, match="holds a result that cannot be read"):
        add_result(scored_results["double"], tmp_path / "results")
    assert place.read_text(encoding="utf-8") == "{ broken"
    assert add_result(scored_results["double"], tmp_path / "results", replace=True) == place
    assert place.read_bytes() == scored_results["double"].read_bytes()


def _set(doc: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split("/")
    for key in parents:
        doc = doc[key]
    doc[last] = value


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("provenance/git_commit", "--output=victim.txt"),
        ("provenance/git_commit", "HEAD"),
        ("provenance/command", "gharuntime eval"),
        ("provenance/libraries", ["numpy"]),
        ("dataset/revision", "../../outside"),
        ("meta/dataset_revision", "../x"),
        ("meta/seed", "0"),
        ("meta/config", 5),
        ("meta/extra/method_config", [1]),
        ("bootstrap/seed", -1),
        ("bootstrap/resamples", 10**9),
    ],
)
def test_every_field_a_command_may_use_is_checked_for_its_shape(
    scored_results: dict[str, Path], tmp_path: Path, field: str, value: Any
) -> None:
    """`reproduce` passes the commit to git and builds folders from the revision: each field
    of a result is data of a checked shape (the commit 40 hex digits, the revision 64), so
    `leaderboard add` and `reproduce` refuse the same files."""
    doc = _doc(scored_results)
    doc["provenance"]["libraries"] = {"numpy": "2.0"}
    doc["meta"].setdefault("extra", {})["method_config"] = {}
    _set(doc, field, value)
    problems = _problems(_write(tmp_path / "r.json", doc))
    assert any(f": {field}: " in p for p in problems), problems
