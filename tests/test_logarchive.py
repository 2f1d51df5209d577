"""A run attempt's log archive: GitHub's layout (checked against the real GHALogs archive) and
the reading a crawler does to map logs back to jobs."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from gharuntime.logarchive import ArchiveError, job_file_name, read_archive, write_archive


def test_file_names_drop_slashes_as_the_real_archive_does(shared_dir: Path) -> None:
    """The real archive (GHALogs reference record) stores the step `Run actions/checkout@v3` as
    `<job name>/2_Run actionscheckout@v3.txt`: `/` is dropped, spaces and `@` kept."""
    with tarfile.open(shared_dir / "reference/ghalogs/log.tar.gz") as tar:
        names = {m.name.lstrip("./") for m in tar}
    assert "Build ubuntu-latest wheels for aarch64/2_Run actionscheckout@v3.txt" in names
    assert job_file_name("Run actions/checkout@v3") == "Run actionscheckout@v3"
    assert "1_Test 3.8 x64 wheels for ubuntu-latest.txt" in names
    assert job_file_name("Test 3.8 x64 wheels for ubuntu-latest") == (
        "Test 3.8 x64 wheels for ubuntu-latest"
    )


def test_an_archive_holds_each_jobs_log_at_the_top_and_its_steps_in_a_folder() -> None:
    data = write_archive(
        [
            (
                "build / test (3.12)",
                "full log A\n",
                [("Set up job", "a1\n"), ("Run x/y@v1", "a2\n")],
            ),
            ("lint", "full log B\n", []),
        ]
    )
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == [
        "1_build  test (3.12).txt",
        "build  test (3.12)/1_Set up job.txt",
        "build  test (3.12)/2_Run xy@v1.txt",
        "2_lint.txt",
    ]
    assert read_archive(data) == {"build  test (3.12)": b"full log A\n", "lint": b"full log B\n"}


def test_a_repeated_job_name_gets_a_numbered_suffix() -> None:
    data = write_archive([("Twine check", "one", []), ("Twine check", "two", [])])
    assert read_archive(data) == {"Twine check": b"one", "Twine check (1)": b"two"}


def test_the_same_input_gives_the_same_bytes() -> None:
    jobs = [("a", "x" * 1000, [("s", "y")])]
    assert write_archive(jobs) == write_archive(jobs)


def test_bytes_that_are_not_a_zip_are_an_archive_error() -> None:
    with pytest.raises(ArchiveError):
        read_archive(b"<html>not a zip</html>")
