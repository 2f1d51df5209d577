"""`gharuntime leaderboard`: the registry's checks, rank groups, and the files it writes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from click.testing import CliRunner
from leaderboard_support import METHODS, score

from gharuntime.cli.main import cli
from gharuntime.dataset import write_dataset
from gharuntime.fixture import fixture_jobs
from gharuntime.leaderboard import Entry, Table, rank_table, scan


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["leaderboard", *args])


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


# --- the registry ---------------------------------------------------------------------------


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


# --- rank groups ----------------------------------------------------------------------------


def _entry(method: str, per_resample: list[float]) -> Entry:
    values = np.asarray(per_resample, dtype=float)
    point = float(np.mean(values))
    return Entry(
        Path(f"{method}.json"),
        {
            "meta": {"method": method},
            "dataset": {"id": "/x/ds", "kind": "local", "config": "temporal"},
            "track": "config",
            "metrics": {"duration_s": {"rmsle": {"value": point}}},
            "bootstrap": {"per_resample": {"duration_s": {"rmsle": values.tolist()}}},
        },
    )


def _groups(*entries: Entry) -> dict[str, int | None]:
    table = Table("ds", "temporal", "config", entries)
    return {r.entry.method: r.group for r in rank_table(table)}


def test_methods_whose_paired_interval_includes_zero_share_the_leaders_group() -> None:
    rng = np.random.default_rng(3)
    base = 0.5 + rng.normal(0, 0.05, 400)  # the resamples move every method together
    leader = _entry("leader", list(base))
    tied = _entry("tied", list(base + rng.normal(0.002, 0.01, 400)))  # straddles zero
    worse = _entry("worse", list(base + 0.03 + rng.normal(0, 0.002, 400)))  # always above
    assert _groups(worse, tied, leader) == {"leader": 1, "tied": 1, "worse": 2}


def test_groups_are_paired_not_overlapping_intervals() -> None:
    rng = np.random.default_rng(4)
    base = 0.5 + rng.normal(0, 0.1, 400)  # wide marginal intervals that overlap a lot
    a = _entry("a", list(base))
    b = _entry("b", list(base + 0.01))  # worse in every resample, by a little
    assert _groups(a, b) == {"a": 1, "b": 2}


def test_the_next_group_is_led_by_the_best_method_left() -> None:
    rng = np.random.default_rng(5)
    base = 0.5 + rng.normal(0, 0.05, 400)
    first = _entry("first", list(base))
    second = _entry("second", list(base + 0.1))
    near_second = _entry("near-second", list(base + 0.1 + rng.normal(0.001, 0.01, 400)))
    third = _entry("third", list(base + 0.3))
    assert _groups(third, near_second, second, first) == {
        "first": 1,
        "second": 2,
        "near-second": 2,
        "third": 3,
    }


def test_an_undefined_metric_has_no_group() -> None:
    undefined = _entry("empty", [float("nan")] * 4)
    undefined.result["metrics"]["duration_s"]["rmsle"]["value"] = None
    assert _groups(undefined, _entry("ok", [0.4, 0.5, 0.6, 0.5])) == {"ok": 1, "empty": None}


def test_scored_table_groups_match_the_paired_intervals(results_master: Path) -> None:
    """On real results: recompute each method's paired interval against its group's leader."""
    tables = {(t.config, t.track): t for t in scan(results_master)}
    ranked = rank_table(tables[("temporal", "config")])
    assert ranked[0].entry.method == "exact-ish"
    assert ranked[0].group == 1 and ranked[-1].entry.method == "double"
    per = {
        r.entry.method: np.array(
            r.entry.result["bootstrap"]["per_resample"]["duration_s"]["rmsle"], dtype=float
        )
        for r in ranked
    }
    for r in ranked:
        low, high = np.quantile(per[r.entry.method] - per[r.group_leader], [0.025, 0.975])
        if r.entry.method != r.group_leader:
            assert low <= 0 <= high
    # alternating and opposite err by the same factor on different records: their RMSLEs are
    # equal, so they share a group
    groups = {r.entry.method: r.group for r in ranked}
    assert groups["alternating"] == groups["opposite"]


# --- the outputs ----------------------------------------------------------------------------


def test_outputs_are_deterministic(results_master: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "board", tmp_path / "b" / "board"
    shutil.copytree(results_master, tmp_path / "a" / "results")
    shutil.copytree(results_master, tmp_path / "b" / "results")
    for root, out in ((tmp_path / "a", a), (tmp_path / "b", b)):
        r = _run("--results", str(root / "results"), "--out", str(out))
        assert r.exit_code == 0, r.output
    assert (a / "README.md").read_bytes() == (b / "README.md").read_bytes()
    assert (a / "index.html").read_bytes() == (b / "index.html").read_bytes()
    r = _run("--results", str(tmp_path / "a" / "results"), "--out", str(a))
    assert (a / "index.html").read_bytes() == (b / "index.html").read_bytes()


def test_markdown_has_one_table_per_dataset_config_track(
    results_master: Path, tmp_path: Path
) -> None:
    out = tmp_path / "board"
    assert _run("--results", str(results_master), "--out", str(out)).exit_code == 0
    text = (out / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    # the headline (known jobs with history) before the partly-memorization table
    assert headings == [
        "gharuntime-fixture · temporal / history",
        "gharuntime-fixture · temporal / config",
    ]
    assert "Each repository's latest runs" in text and "synthetic data" in text
    # what each table tests, measured by eval on its rows: the fixture's jobs all ran in train
    seen = re.findall(r"measured: ([0-9.]+)% of its ([0-9,]+) rows \(([0-9,]+)\) belong", text)
    assert seen and all(s[0] == "100.0" and s[1] == s[2] for s in seen)
    assert "Rank group:" in text
    rows = [line for line in text.splitlines() if line.startswith("| 1 |")]
    assert any("| exact-ish | 1.0 | config |" in line for line in rows)
    # 15 columns: 9 before the interval ones, p10-p90 coverage and log width, then 4
    assert all(line.count("|") == 16 for line in text.splitlines() if line.startswith("| "))
    assert "| 1.5 | 0.02 |" in text  # fit and predict seconds per 1,000 jobs from the sidecar


def test_page_embeds_its_data_and_loads_nothing(results_master: Path, tmp_path: Path) -> None:
    out = tmp_path / "board"
    assert _run("--results", str(results_master), "--out", str(out)).exit_code == 0
    html = (out / "index.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "fetch(" not in html
    raw = re.search(
        r'<script type="application/json" id="leaderboard-data">(.*?)</script>', html, re.S
    )
    assert raw is not None
    data = json.loads(raw.group(1))
    assert sorted(r["method"] for r in data["rows"]) == sorted(METHODS)
    assert html.count("<tr class=") == len(METHODS)
