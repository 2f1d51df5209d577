"""`validate` rejects each way a dataset folder can break the contract, with a clear message."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from gharuntime.dataset import DatasetError, load, read_manifest, sha256_file, write_dataset
from gharuntime.fixture import fixture_jobs
from gharuntime.validation import validate_folder


def _rewrite(root: Path, rel: str, frame: pl.DataFrame) -> None:
    """Replace one split file and keep the manifest's hash and count in step, so only the
    content-level problem remains."""
    pq.write_table(frame.to_arrow(), root / rel, compression="zstd")
    manifest = read_manifest(root)
    for f in manifest["files"]:
        if f["path"] == rel:
            f["sha256"] = sha256_file(root / rel)
            f["rows"] = frame.height
    (root / "manifest.json").write_text(json.dumps(manifest))


def _file(root: Path, config: str, split: str) -> str:
    return next(
        f["path"]
        for f in read_manifest(root)["files"]
        if f["config"] == config and f["split"] == split
    )


def test_fresh_dataset_is_valid(fixture_dataset: Path) -> None:
    assert validate_folder(fixture_dataset) == []


def test_missing_file_is_reported(fixture_dataset: Path) -> None:
    rel = _file(fixture_dataset, "temporal", "test")
    (fixture_dataset / rel).unlink()
    problems = validate_folder(fixture_dataset)
    assert any(p.where == rel and "missing" in p.message for p in problems)


def test_wrong_hash_is_reported(fixture_dataset: Path) -> None:
    rel = _file(fixture_dataset, "cross_repo", "train")
    frame = pl.read_parquet(fixture_dataset / rel)
    pq.write_table(frame.head(frame.height - 1).to_arrow(), fixture_dataset / rel)
    problems = validate_folder(fixture_dataset)
    assert any(p.where == rel and "sha256" in p.message for p in problems)
    assert any(p.where == rel and "rows, the manifest says" in p.message for p in problems)


def test_duplicated_id_is_reported_with_file_and_row(fixture_dataset: Path) -> None:
    rel = _file(fixture_dataset, "temporal", "validation")
    frame = pl.read_parquet(fixture_dataset / rel)
    dup_id = frame["id"][0]
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 3)
        .then(pl.lit(dup_id))
        .otherwise(pl.col("id"))
        .alias("id")
    )
    _rewrite(fixture_dataset, rel, frame)
    problems = validate_folder(fixture_dataset)
    dups = [p for p in problems if "duplicate id" in p.message]
    assert {p.where for p in dups} == {f"{rel}:row 1", f"{rel}:row 4"}
    assert dup_id in dups[0].message


def test_run_split_across_temporal_splits_is_reported(fixture_dataset: Path) -> None:
    train_rel = _file(fixture_dataset, "temporal", "train")
    test_rel = _file(fixture_dataset, "temporal", "test")
    train = pl.read_parquet(fixture_dataset / train_rel)
    test = pl.read_parquet(fixture_dataset / test_rel)
    moved = test.head(1)  # a job of a test run, moved into train
    _rewrite(fixture_dataset, train_rel, pl.concat([train, moved]))
    _rewrite(fixture_dataset, test_rel, test.slice(1))
    problems = validate_folder(fixture_dataset)
    leak = [p for p in problems if "appears in splits" in p.message]
    assert leak, problems
    assert f"run {moved['run_id'][0]}" in leak[0].message
    assert "test, train" in leak[0].message


def test_repository_split_across_cross_repo_splits_is_reported(fixture_dataset: Path) -> None:
    train_rel = _file(fixture_dataset, "cross_repo", "train")
    test_rel = _file(fixture_dataset, "cross_repo", "test")
    train = pl.read_parquet(fixture_dataset / train_rel)
    test = pl.read_parquet(fixture_dataset / test_rel)
    _rewrite(fixture_dataset, train_rel, pl.concat([train, test.head(1)]))
    _rewrite(fixture_dataset, test_rel, test.slice(1))
    assert any(
        "must sit in one cross_repo split" in p.message for p in validate_folder(fixture_dataset)
    )


def test_column_of_wrong_type_is_reported(fixture_dataset: Path) -> None:
    rel = _file(fixture_dataset, "temporal", "train")
    frame = pl.read_parquet(fixture_dataset / rel).with_columns(
        pl.col("duration_s").cast(pl.String)
    )
    _rewrite(fixture_dataset, rel, frame)
    problems = validate_folder(fixture_dataset)
    assert any(p.where == rel and "'duration_s' has type String" in p.message for p in problems)


def test_null_in_required_column_is_reported(fixture_dataset: Path) -> None:
    rel = _file(fixture_dataset, "temporal", "train")
    frame = pl.read_parquet(fixture_dataset / rel)
    frame = frame.with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(None)
        .otherwise(pl.col("conclusion"))
        .alias("conclusion")
    )
    _rewrite(fixture_dataset, rel, frame)
    assert any(
        p.where == f"{rel}:row 1" and "conclusion is null" in p.message
        for p in validate_folder(fixture_dataset)
    )


def test_missing_manifest_says_how_to_fix(fixture_dataset: Path) -> None:
    (fixture_dataset / "manifest.json").unlink()
    [problem] = validate_folder(fixture_dataset)
    assert "missing" in problem.message and "gharuntime build" in problem.message


def test_unlisted_parquet_file_is_reported(fixture_dataset: Path) -> None:
    extra = fixture_dataset / "data" / "temporal" / "stray.parquet"
    extra.write_bytes((fixture_dataset / _file(fixture_dataset, "temporal", "test")).read_bytes())
    assert any(p.where == "data/temporal/stray.parquet" for p in validate_folder(fixture_dataset))


def test_write_is_deterministic(tmp_path: Path) -> None:
    a = write_dataset(fixture_jobs(seed=3), tmp_path / "a", provenance={"kind": "fixture"})
    b = write_dataset(fixture_jobs(seed=3), tmp_path / "b", provenance={"kind": "fixture"})
    assert [f["sha256"] for f in a["files"]] == [f["sha256"] for f in b["files"]]


def test_temporal_splits_each_repository_in_its_own_time(fixture_dataset: Path) -> None:
    # 40 repositories of 5 runs: each one's latest run tests, the one before validates
    counts = read_manifest(fixture_dataset)["splits"]["temporal"]
    total = sum(counts.values())
    assert counts["test"] / total == pytest.approx(0.2)
    assert counts["validation"] / total == pytest.approx(0.2)
    train, test = (
        load(fixture_dataset, "temporal", "train"),
        load(fixture_dataset, "temporal", "test"),
    )
    last_train = train.group_by("repo_id").agg(pl.col("created_at").max().alias("a"))
    first_test = test.group_by("repo_id").agg(pl.col("created_at").min().alias("b"))
    both = last_train.join(first_test, on="repo_id")
    assert both.height == 40
    assert (both["a"] < both["b"]).all()


def test_failed_write_leaves_earlier_dataset_untouched(fixture_dataset: Path) -> None:
    before = {p: p.read_bytes() for p in fixture_dataset.rglob("*") if p.is_file()}
    bad = fixture_jobs().drop("duration_s")
    with pytest.raises(DatasetError, match="missing \\['duration_s'\\]"):
        write_dataset(bad, fixture_dataset, provenance={"kind": "fixture"})
    after = {p: p.read_bytes() for p in fixture_dataset.rglob("*") if p.is_file()}
    assert before == after
    assert not [p for p in fixture_dataset.parent.iterdir() if ".tmp-" in p.name]


def test_write_refuses_to_replace_a_folder_that_is_not_a_dataset(tmp_path: Path) -> None:
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(DatasetError, match="not a dataset folder"):
        write_dataset(fixture_jobs(), precious, provenance={"kind": "fixture"})
    assert (precious / "notes.txt").read_text() == "keep me"


def test_write_dataset_takes_provenance_and_stores_it_as_the_manifest_source(
    tmp_path: Path,
) -> None:
    """The provenance dict keeps the manifest key `source` (revisions hash the manifest); the
    old keyword `source=` writes the same bytes, with a DeprecationWarning."""
    jobs = fixture_jobs(seed=0)
    new = write_dataset(jobs, tmp_path / "new", provenance={"kind": "fixture", "seed": 0})
    assert new["source"] == {"kind": "fixture", "seed": 0}
    with pytest.warns(DeprecationWarning, match=r"source=.*provenance="):
        old = write_dataset(jobs, tmp_path / "old", source={"kind": "fixture", "seed": 0})
    assert old == new
    assert (tmp_path / "old" / "manifest.json").read_bytes() == (
        tmp_path / "new" / "manifest.json"
    ).read_bytes()
    with pytest.raises(DatasetError, match="provenance"):
        write_dataset(jobs, tmp_path / "none")
