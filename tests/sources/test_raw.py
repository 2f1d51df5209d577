"""Reading raw stores into compact per-kind tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from raw_world import CI_YAML, LOG_HEADER, T0, RawWorld, standard_world

from gharuntime.contract import RawKind
from gharuntime.rawstore import RawStoreError
from gharuntime.sources.raw import count_records, read_raw_stores, runner_from_log


def test_runner_image_and_labels_are_read_from_a_real_log_header(shared_dir: Path) -> None:
    import tarfile

    with tarfile.open(shared_dir / "reference/ghalogs/log.tar.gz") as tar:
        member = tar.extractfile("7_Test 3.10 x64 wheels for windows-latest.txt")
        assert member is not None
        text = member.read().decode("utf-8", "replace")
    assert runner_from_log(text) == ("windows-2022 20230918.1.0", ["windows-latest"])


def test_log_without_a_header_gives_nothing() -> None:
    assert runner_from_log("2024-01-01T00:00:00Z hello\n") == (None, None)


def test_every_kind_lands_in_its_table(shared_dir: Path, tmp_path: Path) -> None:
    w = standard_world(shared_dir)
    w.job(w.run(9, T0), "lint", log=LOG_HEADER.format(labels="a, b", image="ubuntu-22.04"))
    w.add(RawKind.ERROR, "e1", {"what": "log", "where": "x", "status": 410, "message": "gone"})
    tables = read_raw_stores([w.write(tmp_path / "store")])
    assert tables.repositories.height == 1
    assert tables.workflows.height == 1
    assert tables.runs.height == 4
    assert tables.jobs.height == 31
    assert tables.workflow_files["workflow_yaml"].to_list() == [CI_YAML]
    assert tables.workflow_refs.height == 4
    assert tables.logs["log_labels"].to_list() == [["a", "b"]]
    assert tables.fetch_errors == {"log": 1}
    assert tables.problems.counts == {}


def test_records_of_several_stores_are_read_together(shared_dir: Path, tmp_path: Path) -> None:
    a = standard_world(shared_dir).write(tmp_path / "a")
    b = RawWorld(shared_dir)
    b.next_job_id = 1
    b.job(b.run(9, T0), "lint")
    b.write(tmp_path / "b")
    assert count_records([a, tmp_path / "b"]) == read_raw_stores([a, tmp_path / "b"]).records
    assert read_raw_stores([a, tmp_path / "b"]).jobs.height == 31


def test_a_record_missing_its_fields_is_counted_by_kind(shared_dir: Path, tmp_path: Path) -> None:
    w = RawWorld(shared_dir)
    w.add(RawKind.JOB, "1", {"id": 1, "name": "no run id"})
    w.add(RawKind.WORKFLOW_FILE, "1:a.yml:x", {"encoding": "none", "content": None})
    tables = read_raw_stores([w.write(tmp_path / "store")])
    assert tables.problems.counts == {
        "malformed_job_record": 1,
        "malformed_workflow_file_record": 1,
    }
    assert tables.jobs.height == 0


def test_a_folder_that_is_not_a_store_names_itself(tmp_path: Path) -> None:
    with pytest.raises(RawStoreError, match=str(tmp_path)):
        read_raw_stores([tmp_path])


@pytest.mark.parametrize("attempt", [True, 1.5, "1.5", -1])
def test_an_integer_that_is_not_one_makes_its_record_malformed(
    shared_dir: Path, tmp_path: Path, attempt: object
) -> None:
    """The rule of gharuntime/sources/values: `true` is not attempt 1, nor 1.5 attempt 1."""
    w = RawWorld(shared_dir)
    w.add(RawKind.JOB, "1", {"id": 1, "run_id": 2, "name": "a", "run_attempt": attempt})
    w.add(RawKind.JOB, "2", {"id": 2, "run_id": 2, "name": "b", "run_attempt": "2"})
    tables = read_raw_stores([w.write(tmp_path / "store")])
    assert tables.problems.counts == {"malformed_job_record": 1}
    assert tables.jobs["run_attempt"].to_list() == [2]
