"""A jobs-only API JSON archive (#37): GitHub's job records alone, no run record, with or without
the repository's workflow listing beside them. The build places what the job records say (the
repository from run_url, head_sha, the workflow by name at head_sha or from the listing), leaves
what they do not say null (event, branch, run number) and says so in the card, and refuses only
what cannot be placed (a job whose run_url names no repository).

Real records: the Apache Ozone jobs of the test sample, with the run records left out.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from gharuntime.builder.api_rows import PLACED_WITHOUT_RUN, surrogate_repo_id
from gharuntime.cli.main import cli
from gharuntime.dataset import load, read_manifest

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "real-apache"
OZONE = SAMPLE / "results" / "elek+ozone-build-results"
OZONE_GIT = SAMPLE / "yaml" / "ozone.git"


def _jobs_only(root: Path, *, named: bool, strip_url: bool = False) -> tuple[Path, int]:
    """The sample's job.json files alone (each job given its run's workflow name and a
    created_at when `named`, as GitHub's job records have since 2022; with `strip_url`, every job of the first
    file loses run_url and url), and how many jobs lost them."""
    out = root / "jobs"
    stripped = 0
    for job_file in sorted(OZONE.rglob("job.json")):
        run_file = job_file.with_name("run.json")
        run = json.loads(run_file.read_text()) if run_file.is_file() else None
        doc = json.loads(job_file.read_text())
        for job in doc["jobs"]:
            if run is not None and named:  # old run records lack the name: 8247 is this one
                job["workflow_name"] = run.get("name") or "build-branch"
            # a record of today's shape: job records carry created_at since 2022 (a job record
            # without one has no queue start and is filtered, as not_completed)
            job.setdefault("created_at", job.get("started_at"))
            if strip_url and job_file == sorted(OZONE.rglob("job.json"))[0]:
                job.pop("run_url", None)
                job.pop("url", None)
                stripped += 1
        dest = out / job_file.relative_to(OZONE)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(json.dumps(doc))
    return out, stripped


def _listing() -> dict[str, Any]:
    """GET /repos/apache/ozone/actions/workflows, as GitHub answers it (the workflow the
    sample's runs ran: id 8247, build-branch)."""
    workflow = {
        "id": 8247,
        "node_id": "MDg6V29ya2Zsb3c4MjQ3",
        "name": "build-branch",
        "path": ".github/workflows/post-commit.yml",
        "state": "active",
        "created_at": "2019-10-14T12:00:00Z",
        "updated_at": "2023-01-01T00:00:00Z",
        "url": "https://api.github.com/repos/apache/ozone/actions/workflows/8247",
        "html_url": "https://github.com/apache/ozone/blob/master/.github/workflows/post-commit.yml",
        "badge_url": "https://github.com/apache/ozone/workflows/build-branch/badge.svg",
    }
    return {"total_count": 1, "workflows": [workflow]}


def _build(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["build", "--source", "api-json", *args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def _rows(ds: Path) -> pl.DataFrame:
    return pl.concat([load(ds, "temporal", s) for s in ("train", "validation", "test")])


def test_jobs_alone_are_placed_by_their_own_fields(tmp_path: Path) -> None:
    jobs, _ = _jobs_only(tmp_path, named=True)
    code, output = _build(str(jobs), "--yaml-git", str(OZONE_GIT), "--out", str(tmp_path / "ds"))
    assert code in (0, 1), output
    rows = _rows(tmp_path / "ds")
    assert rows.height > 0
    # the name in each job's run_url: the repository was renamed, and without its id (no run or
    # repository record) the two names cannot be told to be one; each gets a stable negative
    # id, never one of GitHub's
    assert set(rows["repo"]) == {"apache/ozone", "apache/hadoop-ozone"}
    assert set(rows.select("repo", "repo_id").iter_rows()) == {
        (n, surrogate_repo_id(n)) for n in ("apache/ozone", "apache/hadoop-ozone")
    }
    assert surrogate_repo_id("Apache/Ozone") == surrogate_repo_id("apache/ozone") < 0
    assert rows["event"].null_count() == rows.height  # a job record does not say it
    assert rows["run_number"].null_count() == rows.height
    # the workflow found by the job's workflow_name at its head_sha, as the build with the run
    # records finds it (by the run's path, or its name)
    code, output = _build(str(OZONE), "--yaml-git", str(OZONE_GIT), "--out", str(tmp_path / "full"))
    assert code in (0, 1), output
    full = dict(_rows(tmp_path / "full").select("id", "workflow_path").iter_rows())
    got = dict(rows.select("id", "workflow_path").iter_rows())
    common = got.keys() & full.keys()  # the full build lost the jobs whose run is missing
    assert len(common) > rows.height // 2
    assert {i: got[i] for i in common} == {i: full[i] for i in common}
    assert rows["workflow_yaml"].null_count() < rows.height
    manifest = read_manifest(tmp_path / "ds")
    placed = manifest["source"]["derived"][PLACED_WITHOUT_RUN]
    assert placed >= rows.height
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "jobs came from a jobs-only source" in card and "`event`" in card


def test_the_workflow_listing_gives_path_and_id_without_names(tmp_path: Path) -> None:
    """Job records from before 2022 have no workflow_name: the repository's workflow listing,
    when it holds one workflow, says which ran; with names, it names each."""
    for named in (True, False):
        jobs, _ = _jobs_only(tmp_path / str(named), named=named)
        (jobs / "workflows.json").write_text(json.dumps(_listing()))
        out = tmp_path / str(named) / "ds"
        code, output = _build(str(jobs), "--out", str(out))  # no --yaml-git
        assert code in (0, 1), output
        rows = _rows(out).filter(pl.col("repo") == "apache/ozone")  # the listing's repository
        assert rows.height > 0
        assert set(rows["workflow_path"]) == {".github/workflows/post-commit.yml"}, named
        assert set(rows["workflow_id"]) == {8247}
        assert set(rows["workflow_name"]) == {"build-branch"}


def test_a_job_whose_run_url_names_no_repository_is_refused_counted(tmp_path: Path) -> None:
    jobs, stripped = _jobs_only(tmp_path, named=True, strip_url=True)
    assert stripped > 0
    code, output = _build(str(jobs), "--out", str(tmp_path / "ds"))
    assert code == 1, output  # lost input, said
    problems = read_manifest(tmp_path / "ds")["build"]["problems"]
    assert problems["counts"]["job_without_run"] == stripped, problems


def test_a_repository_record_beside_the_jobs_gives_the_real_id(tmp_path: Path) -> None:
    jobs, _ = _jobs_only(tmp_path, named=True)
    repo = {"id": 212935049, "full_name": "apache/ozone", "private": False, "fork": False}
    (jobs / "repository.json").write_text(json.dumps(repo))
    code, output = _build(str(jobs), "--out", str(tmp_path / "ds"))
    assert code in (0, 1), output
    rows = _rows(tmp_path / "ds")
    assert set(rows.filter(pl.col("repo") == "apache/ozone")["repo_id"]) == {212935049}


@pytest.mark.parametrize("with_runs", [True])
def test_a_source_with_run_records_still_counts_a_lone_job_as_lost(
    tmp_path: Path, with_runs: bool
) -> None:
    """In an archive that has run records, a job without its run is a missing file, not a
    jobs-only dump: counted as lost (the real Apache build depends on this)."""
    src = tmp_path / "mixed"
    shutil.copytree(OZONE, src)
    lone = next(f for f in sorted(src.rglob("run.json")))
    n = len(json.loads(lone.with_name("job.json").read_text())["jobs"])
    lone.unlink()
    code, output = _build(str(src), "--out", str(tmp_path / "ds"))
    assert code == 1, output
    problems = read_manifest(tmp_path / "ds")["build"]["problems"]
    assert problems["counts"]["job_without_run"] >= n
