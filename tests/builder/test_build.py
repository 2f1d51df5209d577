"""Raw store → dataset folder: values, leakage controls, determinism, bad input, atomicity."""

from __future__ import annotations

import gzip
import hashlib
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import polars as pl
import pytest
from raw_world import BAD_YAML, CI_YAML, LOG_HEADER, T0, RawWorld, standard_world

from gharuntime.builder.build import BuildError, BuildOptions, build
from gharuntime.contract import RawStoreLayout
from gharuntime.dataset import load, read_manifest
from gharuntime.source_kinds.raw import RawSource
from gharuntime.validation import validate_folder


def all_rows(root: Path, config: str = "temporal") -> pl.DataFrame:
    return pl.concat(
        [
            load(root, config, s).with_columns(pl.lit(s).alias("split"))
            for s in ("train", "validation", "test")
        ]
    )


def folder_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def standard_store(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return standard_world(shared_dir).write(tmp_path_factory.mktemp("raw") / "store")


@pytest.fixture(scope="module")
def standard_dataset(standard_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "dataset"
    build(RawSource([standard_store]), out)
    return out


def test_build_of_example_payloads_validates(standard_dataset: Path) -> None:
    assert validate_folder(standard_dataset) == []


def test_every_job_of_the_raw_store_becomes_a_row(standard_dataset: Path) -> None:
    rows = all_rows(standard_dataset)
    assert rows.height == 30  # 3 runs x 10 jobs, all successful and well timed
    assert rows["id"].n_unique() == 30


def test_targets_are_seconds_between_api_timestamps(standard_dataset: Path) -> None:
    rows = all_rows(standard_dataset).filter(pl.col("job_name") == "lint").sort("created_at")
    # raw_world: lint runs 30 s (+1 s per later run), queued 5 s before it starts.
    assert rows["duration_s"].to_list() == [30.0, 31.0, 32.0]
    assert rows["queue_s"].to_list() == [5.0, 5.0, 5.0]


def test_workflow_path_loses_its_ref_suffix(standard_dataset: Path) -> None:
    # GitHub's example run has path `.github/workflows/build.yml@main`; ours ends `@master`.
    assert set(all_rows(standard_dataset)["workflow_path"]) == {".github/workflows/ci.yml"}


def test_job_keys_and_runner_os_are_filled(standard_dataset: Path) -> None:
    rows = all_rows(standard_dataset)
    by_name = {r["job_name"]: r for r in rows.filter(pl.col("run_id") == 30_433_642).to_dicts()}
    assert by_name["Test 3.11 on windows-latest"]["job_key"] == "test"
    assert by_name["Test 3.11 on windows-latest"]["runner_os"] == "Windows"
    assert by_name["Test 3.12 on macos-latest"]["runner_os"] == "macOS"
    assert by_name["call / deploy"]["job_key"] == "call"
    assert by_name["mystery job"]["job_key"] is None
    assert by_name["build (x64)"]["needs"] == ["lint", "test"]


def test_unresolved_job_keys_are_counted_in_the_manifest(standard_dataset: Path) -> None:
    keys = read_manifest(standard_dataset)["build"]["job_keys"]
    assert keys["unresolved"] == 3  # "mystery job" in each of 3 runs
    assert sum(keys.values()) == 30


def test_repository_metadata_comes_from_the_repository_record(standard_dataset: Path) -> None:
    row = all_rows(standard_dataset).row(0, named=True)
    # GitHub's example repository: octocat/Hello-World, 80 stars, size 108, default branch master.
    assert (row["repo"], row["repo_stars"], row["repo_size_kb"]) == ("octocat/Hello-World", 80, 108)
    assert row["repo_topics"] == ["octocat", "atom", "electron", "api"]
    assert row["is_default_branch"] is True
    assert row["head_commit_message"] == "Fix all the bugs"


def test_history_holds_earlier_runs_of_the_same_job_most_recent_first(
    standard_dataset: Path,
) -> None:
    rows = all_rows(standard_dataset).filter(pl.col("job_name") == "lint").sort("created_at")
    assert rows["history_duration_s"].to_list() == [[], [30.0], [31.0, 30.0]]


def test_leakage_controls_hold(shared_dir: Path, tmp_path: Path) -> None:
    w = RawWorld(shared_dir)
    w.workflow_file(CI_YAML, "blob-ci-1")
    for r in range(40):
        run = w.run(1_000 + r, T0 + timedelta(minutes=7 * r))
        for name in ("lint", "build (x64)"):
            w.job(run, name, duration=60.0 + r, queued=float(r % 3))
        if r % 4 == 0:  # a re-run attempt of the same run, later
            again = w.run(1_000 + r, T0 + timedelta(minutes=7 * r + 3), attempt=2)
            w.job(again, "lint", duration=61.0)
    out = tmp_path / "ds"
    build(RawSource([w.write(tmp_path / "store")]), out)
    temporal = all_rows(out, "temporal")
    assert temporal.group_by("run_id").agg(pl.col("split").n_unique())["split"].max() == 1
    assert temporal["split"].n_unique() == 3
    cross = all_rows(out, "cross_repo")
    assert cross.group_by("repo_id").agg(pl.col("split").n_unique())["split"].max() == 1
    # history never reaches past creation: every history value is the duration of a job of the
    # same name that completed strictly before this job was created.
    done = temporal.select("job_name", "completed_at", "duration_s")
    for row in temporal.iter_rows(named=True):
        earlier = done.filter(
            (pl.col("job_name") == row["job_name"]) & (pl.col("completed_at") < row["created_at"])
        ).sort("completed_at", descending=True)
        assert row["history_duration_s"] == earlier["duration_s"].head(5).to_list()


def test_same_input_gives_byte_identical_folders(standard_store: Path, tmp_path: Path) -> None:
    build(RawSource([standard_store]), tmp_path / "a")
    build(RawSource([standard_store]), tmp_path / "b")
    assert folder_digest(tmp_path / "a") == folder_digest(tmp_path / "b")


def test_two_stores_are_read_together_and_a_job_in_both_counts_once(
    shared_dir: Path, tmp_path: Path
) -> None:
    first = standard_world(shared_dir)
    second = RawWorld(shared_dir)
    second.next_job_id = 500_000_000
    second.workflow_file(CI_YAML, "blob-ci-1")
    run = second.run(77, T0 + timedelta(days=1))
    second.job(run, "lint")
    second.job(run, "build (x64)")
    # the same job id as in the first store (a crawl overlap)
    run0 = second.run(30_433_642, T0)
    second.job(run0, "lint", job_id=399_444_496, duration=30.0)
    out = tmp_path / "ds"
    result = build(
        RawSource([first.write(tmp_path / "a"), second.write(tmp_path / "b")]),
        out,
        BuildOptions(conclusions=None),
    )
    assert result.rows == 32
    assert result.filters["duplicate_job_id"] == 1


def test_runner_os_and_image_come_from_the_log_when_labels_are_missing(
    shared_dir: Path, tmp_path: Path
) -> None:
    w = RawWorld(shared_dir)
    run = w.run(5, T0, blob_sha=None)  # no workflow file at this commit
    log = LOG_HEADER.format(labels="my-runner", image="windows-2022")
    w.job(run, "lint", labels=[], log=log)
    build(RawSource([w.write(tmp_path / "store")]), tmp_path / "ds")
    row = all_rows(tmp_path / "ds").row(0, named=True)
    assert row["runner_labels"] == ["my-runner"]
    assert row["runner_os"] == "Windows"
    assert row["runner_image"] == "windows-2022 20230917.1.0"
    assert row["log_bytes"] == len(log.encode())
    assert row["workflow_yaml"] is None and row["job_key"] is None


def test_expired_log_leaves_log_bytes_null(shared_dir: Path, tmp_path: Path) -> None:
    w = RawWorld(shared_dir)
    run = w.run(5, T0)
    w.job(run, "lint", log="", log_status="expired")
    build(RawSource([w.write(tmp_path / "store")]), tmp_path / "ds")
    assert all_rows(tmp_path / "ds")["log_bytes"].to_list() == [None]


def test_too_large_log_keeps_its_size(shared_dir: Path, tmp_path: Path) -> None:
    w = RawWorld(shared_dir)
    run = w.run(5, T0)
    w.job(run, "lint", log="x" * 1234, log_status="too_large")
    build(RawSource([w.write(tmp_path / "store")]), tmp_path / "ds")
    assert all_rows(tmp_path / "ds")["log_bytes"].to_list() == [1234]


def test_job_without_created_at_takes_the_run_start(shared_dir: Path, tmp_path: Path) -> None:
    # GitHub's own job example has no created_at.
    w = RawWorld(shared_dir)
    run = w.run(5, T0)
    w.job(run, "lint", queued=7.0, created_at=False)
    build(RawSource([w.write(tmp_path / "store")]), tmp_path / "ds")
    row = all_rows(tmp_path / "ds").row(0, named=True)
    assert row["created_at"] == T0
    assert row["queue_s"] == 7.0


def test_bad_yaml_is_counted_and_its_jobs_kept_without_key(
    shared_dir: Path, tmp_path: Path
) -> None:
    w = RawWorld(shared_dir)
    w.workflow_file(BAD_YAML, "blob-bad")
    run = w.run(5, T0, blob_sha="blob-bad")
    w.job(run, "lint")
    result = build(RawSource([w.write(tmp_path / "store")]), tmp_path / "ds")
    assert result.problems.counts["workflow_yaml_does_not_parse"] == 1
    assert read_manifest(tmp_path / "ds")["build"]["job_keys"] == {"bad_yaml": 1}
    assert result.rows == 1


def test_unreadable_line_and_truncated_shard_are_counted_not_raised(
    shared_dir: Path, tmp_path: Path
) -> None:
    store = standard_world(shared_dir).write(tmp_path / "store", per_shard=10)
    shards = sorted((store / RawStoreLayout().shards).glob("*.jsonl.gz"))
    # one line of garbage inside the first shard (gzip stays valid)
    lines = gzip.decompress(shards[0].read_bytes()).split(b"\n")
    lines.insert(1, b"{not json")
    shards[0].write_bytes(gzip.compress(b"\n".join(lines), mtime=0))
    # the last shard cut in half
    data = shards[-1].read_bytes()
    whole = gzip.decompress(data).count(b"\n")
    shards[-1].write_bytes(data[: len(data) // 2])
    # the complete lines still readable from the first half, decoded here independently
    readable = zlib.decompressobj(wbits=31).decompress(data[: len(data) // 2]).count(b"\n")
    assert 0 <= readable < whole
    result = build(RawSource([store]), tmp_path / "ds")
    assert result.problems.counts["unreadable_record"] == 1
    # every record the truncated shard lost is counted, not 1 for the shard
    assert result.problems.counts["truncated_shard"] == whole - readable
    # the first shard's bytes no longer match the sha256 its listing holds
    assert result.problems.counts["changed_shard"] == 1
    assert result.lost_input == 1 + (whole - readable) + 1
    manifest = read_manifest(tmp_path / "ds")
    assert manifest["build"]["problems"]["counts"]["truncated_shard"] == whole - readable
    assert validate_folder(tmp_path / "ds") == []


def test_job_whose_run_is_missing_is_counted(shared_dir: Path, tmp_path: Path) -> None:
    w = RawWorld(shared_dir)
    run = w.run(5, T0)
    w.job(run, "lint")
    w.job({**run, "id": 999}, "orphan")  # its run record was never stored
    result = build(RawSource([w.write(tmp_path / "store")]), tmp_path / "ds")
    assert result.problems.counts["job_without_run"] == 1
    assert result.rows == 1


def test_failed_build_leaves_the_earlier_dataset_untouched(
    standard_dataset: Path, shared_dir: Path, tmp_path: Path
) -> None:
    import shutil

    out = tmp_path / "ds"
    shutil.copytree(standard_dataset, out)
    before = folder_digest(out)
    w = RawWorld(shared_dir)
    run = w.run(5, T0)
    w.job(run, "lint", conclusion="failure")  # nothing survives the default policy
    with pytest.raises(BuildError, match="no job is left"):
        build(RawSource([w.write(tmp_path / "store")]), out)
    assert folder_digest(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_folder_that_is_not_a_raw_store_is_a_build_error(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="not a raw store"):
        build(RawSource([tmp_path]), tmp_path / "ds")


def test_recorded_api_runs_and_jobs_build(shared_dir: Path, tmp_path: Path) -> None:
    """Real responses recorded from the live API (PyGithub's CI): real timings survive."""
    import json

    from gharuntime.contract import RawKind
    from gharuntime.rawstore import RawStoreWriter

    runs = json.loads((shared_dir / "reference/recorded-api/runs.json").read_text())
    jobs = json.loads((shared_dir / "reference/recorded-api/jobs.json").read_text())
    writer = RawStoreWriter(tmp_path / "store")
    for run in runs:
        key = f"{run['id']}:{run.get('run_attempt', 1)}"  # older recordings lack run_attempt
        writer.add(RawKind.RUN, key, run, run["repository"]["id"])
    for job in jobs:
        writer.add(RawKind.JOB, str(job["id"]), job, None)
    writer.close()
    result = build(RawSource([tmp_path / "store"]), tmp_path / "ds", BuildOptions(conclusions=None))
    rows = all_rows(tmp_path / "ds")
    expected = {}
    for job in jobs:
        if job["run_id"] in {r["id"] for r in runs}:
            t0 = datetime.fromisoformat(job["started_at"].replace("Z", "+00:00"))
            t1 = datetime.fromisoformat(job["completed_at"].replace("Z", "+00:00"))
            expected[str(job["id"])] = (t1 - t0).total_seconds()
    assert dict(zip(rows["id"], rows["duration_s"], strict=True)) == expected
    # run 3881497935 is recorded as attempts 1 and 2 with different commits: jobs of attempt 1
    # take attempt 1's commit
    first = rows.filter(pl.col("run_id") == 3_881_497_935)
    assert set(first["head_sha"]) == {"c6e5cac67a58a4eb11f1f28567a77a6e2cc8ee98"}
    assert result.problems.counts["job_without_run"] == 1  # 'OpenAPI sync branch'
    assert set(rows["runner_os"]) == {"Linux"}
    assert (rows["started_at"] >= rows["created_at"]).all()
    assert datetime(2023, 1, 1, tzinfo=timezone.utc) < rows["created_at"].min()
