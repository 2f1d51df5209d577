"""The GHALogs dump: the real record (reference/ghalogs) and variants, gzip-written to a dump."""

from __future__ import annotations

import copy
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gharuntime.builder import BuildError
from gharuntime.builder.build import build
from gharuntime.dataset import load
from gharuntime.source_kinds import GhalogsConfig
from gharuntime.sources.ghalogs import job_name_from_log_file, read_ghalogs, stable_id
from gharuntime.validation import validate_folder


def write_dump(folder: Path, runs: list[Any], repos: list[Any]) -> Path:
    """A dump as GHALogs publishes it: gzip JSON Lines written with json.dumps(default=str)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, docs in (("runs.json.gz", runs), ("repositories.json.gz", repos)):
        with gzip.open(folder / name, "wt", encoding="utf-8") as fh:
            for doc in docs:
                fh.write(json.dumps(doc, default=str) + "\n")
    return folder


@pytest.fixture(scope="module")
def real_record(shared_dir: Path) -> tuple[dict[str, Any], dict[str, Any], Path]:
    ref = shared_dir / "reference/ghalogs"
    run = json.loads((ref / "run.json").read_text())
    repo = json.loads((ref / "repository.json").read_text())
    return run, repo, ref / "log.tar.gz"


@pytest.fixture()
def dump(real_record: tuple[dict, dict, Path], tmp_path: Path) -> Path:
    run, repo, _ = real_record
    return write_dump(tmp_path / "dump", [run], [repo])


@pytest.fixture()
def log_tree(real_record: tuple[dict, dict, Path], tmp_path: Path) -> Path:
    """The run's archive where logs_archive.path puts it (below the dump's logs root)."""
    run, _, archive = real_record
    rel = Path(run["logs_archive"]["path"]).relative_to("/data/logs")
    target = tmp_path / "logs" / rel
    target.parent.mkdir(parents=True)
    shutil.copy(archive, target)
    return tmp_path / "logs"


def test_log_file_names_become_job_names() -> None:
    assert job_name_from_log_file("2_Test 3.9 x64 wheels for ubuntu-latest.txt") == (
        "Test 3.9 x64 wheels for ubuntu-latest"
    )
    assert job_name_from_log_file("1_Build source distribution (1).txt") == (
        "Build source distribution"
    )


def test_real_record_gives_one_row_per_job_log(dump: Path) -> None:
    rows, problems, _ = read_ghalogs(dump)
    assert rows.height == 18  # the record's 18 log_insights entries
    assert problems.counts == {}
    assert rows["id"].n_unique() == 18
    assert set(rows["repo"]) == {"PyTables/PyTables"}
    assert set(rows["run_id"]) == {6261949618}


def test_ids_are_a_stable_hash_and_job_ids_stay_null(dump: Path) -> None:
    rows, _, _ = read_ghalogs(dump)
    row = rows.filter(pl.col("job_name") == "Twine check").row(0, named=True)
    assert row["id"] == stable_id(1844194, 6261949618, 1, "1_Twine check.txt")
    assert row["job_id"] is None
    assert row["workflow_yaml"] is None and row["job_key"] is None


def test_durations_from_steps_without_the_log_archive(dump: Path) -> None:
    rows, _, _ = read_ghalogs(dump)
    row = rows.filter(pl.col("job_name") == "Twine check").row(0, named=True)
    # Twine check's logged steps: first starts 17:21:40.573, the last ends 12.31 s later in all.
    assert row["started_at"].isoformat() == "2023-09-21T17:21:40.573000+00:00"
    assert 12.0 < row["duration_s"] < 13.0
    assert row["runner_os"] == "Linux"
    assert row["runner_image"] == "ubuntu-22.04 20230917.1.0"
    assert row["log_bytes"] == 21029


def test_log_archive_adds_labels_steps_and_exact_times(dump: Path, log_tree: Path) -> None:
    rows, problems, _ = read_ghalogs(dump, logs=log_tree)
    assert problems.counts == {}
    row = rows.filter(pl.col("job_name") == "Test 3.9 x64 wheels for ubuntu-latest").row(
        0, named=True
    )
    assert row["runner_labels"] == ["ubuntu-latest"]
    # The log opens with the wait for a runner (17:21:33.75 "Requested labels" ... 17:21:37.34
    # "Job is about to start running"); the runner's first line, "Current runner version", is
    # at 17:21:40.2700886 (GitHub's started_at: the start of "Set up job"); the last line at
    # 17:25:26.9356062.
    assert row["started_at"].isoformat() == "2023-09-21T17:21:40.270088+00:00"
    assert row["duration_s"] == pytest.approx(226.6655, abs=0.001)


def test_step_names_from_per_step_log_files_are_not_an_input(dump: Path, log_tree: Path) -> None:
    """Per-step log files exist only for the steps that ran: as step_names they leak the outcome."""
    rows, _, info = read_ghalogs(dump, logs=log_tree)
    assert rows["step_names"].null_count() == rows.height
    assert "step_names" in info["null_columns"]


def test_repository_metadata_joins_by_name(dump: Path) -> None:
    rows, _, _ = read_ghalogs(dump)
    row = rows.row(0, named=True)
    assert (row["repo_language"], row["repo_stars"], row["repo_fork"]) == ("Python", 1230, False)
    assert row["is_default_branch"] is False  # releases/v3.9.0, default master


def test_jobs_of_unsuccessful_runs_have_unknown_conclusion(
    real_record: tuple[dict, dict, Path], tmp_path: Path
) -> None:
    run, repo, _ = real_record
    failed = copy.deepcopy(run)
    failed["metadata"]["conclusion"] = "failure"
    rows, _, _ = read_ghalogs(write_dump(tmp_path / "d", [failed], [repo]))
    assert set(rows["conclusion"]) == {"unknown"}


def test_string_ids_from_default_str_are_read(
    real_record: tuple[dict, dict, Path], tmp_path: Path
) -> None:
    run, repo, _ = real_record
    stringly = copy.deepcopy(run)
    stringly["metadata"]["id"] = str(run["metadata"]["id"])
    stringly["run_attempt"] = "1"
    rows, problems, _ = read_ghalogs(write_dump(tmp_path / "d", [stringly], [repo]))
    assert problems.counts == {}
    assert set(rows["run_id"]) == {6261949618}


def test_bad_lines_and_truncation_are_counted(
    real_record: tuple[dict, dict, Path], tmp_path: Path
) -> None:
    run, repo, _ = real_record
    second = copy.deepcopy(run)
    second["metadata"]["id"] = 1
    dump = write_dump(tmp_path / "d", [run, second], [repo])
    data = gzip.decompress((dump / "runs.json.gz").read_bytes())
    broken = b"{oops\n" + data
    (dump / "runs.json.gz").write_bytes(gzip.compress(broken)[:-300])  # cut the end off
    rows, problems, _ = read_ghalogs(dump)
    assert problems.counts["unreadable_record"] == 1
    assert problems.counts["truncated_shard"] == 1
    assert rows.height == 18  # the first run survives; the cut-off second is counted


def test_a_ghalogs_build_validates_and_names_null_columns(
    dump: Path, log_tree: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ds"
    result = build(GhalogsConfig(dump, log_tree).source(), out)
    assert result.rows == 18
    assert validate_folder(out) == []
    card = (out / "README.md").read_text()
    assert "`job_id`, `workflow_yaml`" in card
    assert "source_datasets:\n- GHALogs" in card
    assert load(out, "temporal", "train")["job_id"].null_count() == load(out).height


def test_a_folder_without_the_dump_files_is_a_build_error(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match=r"not a GHALogs dump \(missing runs.json.gz"):
        build(GhalogsConfig(tmp_path).source(), tmp_path / "ds")
