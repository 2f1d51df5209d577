"""diff_datasets: what changed between two releases, checked against numbers computed here from
the rows (polars, numpy, scipy), and datasets of different contract major versions."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from scipy import stats

import gharuntime
from gharuntime.contract import SCHEMA_VERSION
from gharuntime.dataset import DatasetError, read_manifest, write_dataset
from gharuntime.fixture import fixture_jobs
from gharuntime.release_diff import diff_datasets, ks_statistic, render_markdown, side_from_folder

GONE = {10_000, 10_001}


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Release 1: 10 repositories. Release 2: two of them gone, two new ones, one repository
    with fewer jobs, durations doubled and a few jobs over an hour, other filter counts."""
    root = tmp_path_factory.mktemp("releases")
    old, new = root / "r1", root / "r2"
    write_dataset(fixture_jobs(repos=10), old, provenance={"kind": "fixture"}, filters={"a": 3})
    jobs = fixture_jobs(repos=12).filter(~pl.col("repo_id").is_in(list(GONE)))
    jobs = jobs.filter(~((pl.col("repo_id") == 10_002) & (pl.col("run_id") % 1000 == 0)))
    jobs = jobs.with_columns(
        pl.when(pl.col("repo_id") == 10_003)
        .then(pl.col("duration_s") * 100)
        .otherwise(pl.col("duration_s") * 2)
        .alias("duration_s")
    )
    write_dataset(jobs, new, provenance={"kind": "fixture"}, filters={"a": 5, "b": 1})
    return old, new


def _all_rows(root: Path) -> pl.DataFrame:
    return pl.concat(gharuntime.load(root, "temporal", s) for s in ("train", "validation", "test"))


def test_repositories_added_removed_and_jobs_per_repository(releases: tuple[Path, Path]) -> None:
    old, new = releases
    diff = diff_datasets(side_from_folder(old, "r1"), side_from_folder(new, "r2"))
    repos = diff["repositories"]
    a, b = _all_rows(old), _all_rows(new)
    assert repos["old"] == a["repo_id"].n_unique() == 10
    assert repos["new"] == b["repo_id"].n_unique() == 10
    assert {r["repo_id"] for r in repos["removed"]} == GONE
    assert {r["repo_id"] for r in repos["added"]} == {10_010, 10_011}
    per_old = dict(a.group_by("repo").len().iter_rows())
    per_new = dict(b.group_by("repo").len().iter_rows())
    for r in repos["jobs"]:
        assert (r["old"], r["new"]) == (per_old[r["repo"]], per_new[r["repo"]])
    changed = [r for r in repos["jobs"] if r["change"]]
    assert [r["repo"] for r in changed] == ["fixture-org/repo-2"]
    assert changed[0]["change"] < 0
    assert diff["same_contract_major"] and not diff["same_revision"] and diff["notes"] == []


def test_rows_per_split_and_filter_counts(releases: tuple[Path, Path]) -> None:
    old, new = releases
    diff = diff_datasets(side_from_folder(old), side_from_folder(new))
    ma, mb = read_manifest(old), read_manifest(new)
    assert len(diff["splits"]) == 6
    for s in diff["splits"]:
        o, n = ma["splits"][s["config"]][s["split"]], mb["splits"][s["config"]][s["split"]]
        assert (s["old"], s["new"], s["change"]) == (o, n, n - o)
    assert diff["filters"] == [
        {"filter": "a", "old": 3, "new": 5, "change": 2},
        {"filter": "b", "old": None, "new": 1, "change": None},
    ]


def test_target_distributions_and_drift(releases: tuple[Path, Path]) -> None:
    old, new = releases
    diff = diff_datasets(side_from_folder(old), side_from_folder(new))
    targets = {t["target"]: t for t in diff["targets"]}
    assert list(targets) == ["duration_s", "queue_s", "log_bytes"]
    for name, t in targets.items():
        for side, root in (("old", old), ("new", new)):
            x = _all_rows(root)[name].drop_nulls().cast(pl.Float64).to_numpy()
            assert t[side]["median"] == pytest.approx(np.median(x))
            assert t[side]["p90"] == pytest.approx(np.percentile(x, 90))
            if name.endswith("_s"):
                assert t[side]["share_over_hour"] == pytest.approx(np.mean(x > 3600))
            else:
                assert t[side]["share_over_hour"] is None
        a = _all_rows(old)[name].drop_nulls().to_numpy()
        b = _all_rows(new)[name].drop_nulls().to_numpy()
        assert t["drift_ks"] == pytest.approx(stats.ks_2samp(a, b).statistic)
    assert (
        targets["duration_s"]["new"]["share_over_hour"]
        > 0
        == targets["duration_s"]["old"]["share_over_hour"]
    )
    assert targets["duration_s"]["drift_ks"] > 0.3  # doubled
    assert targets["queue_s"]["drift_ks"] < 0.2  # unchanged generator, other rows


def test_ks_statistic_matches_scipy_on_ties_and_empty_sides() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 5, 200).astype(float)
    b = rng.integers(1, 7, 150).astype(float)
    assert ks_statistic(a, b) == pytest.approx(stats.ks_2samp(a, b).statistic)
    assert ks_statistic(a, a) == 0.0
    assert ks_statistic(np.array([1.0]), np.array([2.0])) == 1.0
    assert ks_statistic(a, np.array([])) is None


def test_markdown_names_every_part(releases: tuple[Path, Path]) -> None:
    old, new = releases
    text = render_markdown(diff_datasets(side_from_folder(old, "r1"), side_from_folder(new, "r2")))
    assert text.startswith("## Changes from r1 to r2\n")
    for part in ("### Columns", "### Rows per config and split", "### Repositories"):
        assert part in text
    assert "### Targets" in text and "### Filters (rows removed)" in text
    # names are Markdown-escaped text (gharuntime.markdown.md), as every value a manifest brings
    assert "- removed: fixture-org/repo-0 (" in text
    assert "| fixture-org/repo-2 |" in text
    json.dumps(diff_datasets(side_from_folder(old), side_from_folder(new)))  # JSON-ready


def _fake_next_major(src: Path, dst: Path) -> None:
    """A copy of `src` as a contract 2.0.0 release might look: log_bytes dropped, repo renamed
    to repository, manifest hashes updated (a consistent folder of another major version)."""
    shutil.copytree(src, dst)
    manifest = json.loads((dst / "manifest.json").read_text(encoding="utf-8"))
    manifest["schema_version"] = "2.0.0"
    for entry in manifest["files"]:
        path = dst / entry["path"]
        frame = pl.read_parquet(path).drop("log_bytes").rename({"repo": "repository"})
        pq.write_table(frame.to_arrow(), path)
        entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (dst / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_different_contract_majors_are_compared_as_far_as_possible(
    releases: tuple[Path, Path], tmp_path: Path
) -> None:
    old, new = releases
    future = tmp_path / "v2"
    _fake_next_major(new, future)
    diff = diff_datasets(side_from_folder(old), side_from_folder(future))
    assert not diff["same_contract_major"]
    assert any(
        f"Different data contract major versions ({SCHEMA_VERSION} and 2.0.0)" in n
        for n in diff["notes"]
    )
    assert any("log_bytes not compared" in n for n in diff["notes"])
    assert diff["columns"]["added"] == ["repository"]
    assert diff["columns"]["removed"] == ["repo", "log_bytes"]
    assert [t["target"] for t in diff["targets"]] == ["duration_s", "queue_s"]
    # repositories still compared by id, named by what each side has
    assert {r["repo_id"] for r in diff["repositories"]["removed"]} == GONE
    text = render_markdown(diff)
    assert "- Different data contract major versions" in text
    assert "- removed: repo, log\\_bytes" in text


def test_not_a_dataset_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not a dataset folder"):
        side_from_folder(tmp_path)
