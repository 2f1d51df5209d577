"""The api-json source on the committed sample of real Apache Ozone / Ratis CI records
(tests/data/real-apache: job.json/run.json as committed, and partial git object stores holding
the workflow YAML at their head_shas)."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from gharuntime.builder import BuildError
from gharuntime.builder.build import build
from gharuntime.cli.main import cli
from gharuntime.contract import SPLITS
from gharuntime.dataset import load, read_manifest
from gharuntime.source_kinds.api_json import PROVENANCE_FILE, ApiJsonSource
from gharuntime.sources.api_json import ApiSource, documents, read_api_json, records
from gharuntime.sources.gitstore import GitRepo
from gharuntime.validation import validate_folder

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "real-apache"
OZONE = SAMPLE / "results" / "elek+ozone-build-results"
RATIS = SAMPLE / "results" / "adoroszlai+ratis-build-results"
YAML = [SAMPLE / "yaml" / "ozone.git", SAMPLE / "yaml" / "ratis.git"]
MISSING_SHA_RUNS = {"2020/01/22/381/run.json", "2026/07/25/1031/run.json"}


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _all_rows(ds: Path) -> pl.DataFrame:
    return pl.concat([load(ds, "temporal", s) for s in SPLITS])


def _git_copy(folder: Path, dest: Path) -> Path:
    """The folder committed into a fresh git repository (as the results archives are)."""
    shutil.copytree(folder, dest)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True)
    subprocess.run(["git", *env, "-C", str(dest), "commit", "-qm", "sample"], check=True)
    return dest


@pytest.fixture(scope="module")
def sample_jobs() -> list[dict[str, Any]]:
    return list(_json(OZONE / "2022/05/09/14915/job.json")["jobs"])


@pytest.fixture(scope="module")
def sample_run() -> dict[str, Any]:
    return dict(_json(OZONE / "2022/05/09/14915/run.json"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The whole sample, ozone results read from a git repository and ratis from a folder."""
    root = tmp_path_factory.mktemp("api")
    shutil.copytree(OZONE, root / "ozone")
    shutil.copy(SAMPLE / "LICENSE", root / "ozone" / "LICENSE")  # as in the archive's repository
    ozone_git = _git_copy(root / "ozone", root / "ozone-results")
    result = build(
        ApiJsonSource(
            [
                ApiSource(ozone_git, "elek/ozone-build-results"),  # licence read from its LICENSE
                ApiSource(RATIS, licence="Apache-2.0"),
            ],
            yaml_git=YAML,
            cross_repo={"apache/ozone": "train", "apache/ratis": "test"},
        ),
        root / "ds",
    )
    return root / "ds", result


def test_every_shape_reads_the_same_records(
    tmp_path: Path, sample_jobs: list[dict[str, Any]], sample_run: dict[str, Any]
) -> None:
    a, b, c = sample_jobs[:3]
    d = tmp_path / "shapes"
    d.mkdir()
    (d / "one-job.json").write_text(json.dumps(a))
    (d / "one-run.json").write_text(json.dumps(sample_run))
    (d / "list.json").write_text(json.dumps([b, c]))
    (d / "jobs-page.json").write_text(json.dumps({"total_count": 2, "jobs": [a, b]}))
    (d / "runs-page.json").write_text(json.dumps({"total_count": 1, "workflow_runs": [sample_run]}))
    (d / "lines.jsonl").write_text(json.dumps(a) + "\n\n" + json.dumps(c) + "\n")
    (d / "lines-in-a.json").write_text(json.dumps(b) + "\n" + json.dumps(sample_run) + "\n")
    (d / "notes.txt").write_text("not read: not a .json file")
    t = read_api_json([ApiSource(d, "shapes")])
    per_file = t.jobs.group_by("job_file").agg(pl.col("job_id").sort()).sort("job_file")
    got = {f: ids for f, ids in per_file.iter_rows()}
    assert got == {
        "jobs-page.json": sorted([a["id"], b["id"]]),
        "lines-in-a.json": [b["id"]],
        "lines.jsonl": sorted([a["id"], c["id"]]),
        "list.json": sorted([b["id"], c["id"]]),
        "one-job.json": [a["id"]],
    }
    assert sorted(t.runs["run_file"].to_list()) == [
        "lines-in-a.json",
        "one-run.json",
        "runs-page.json",
    ]
    assert set(t.runs["run_id"]) == {sample_run["id"]}
    assert t.sources == [
        {
            "label": "shapes",
            "kind": "folder",
            "commit": None,
            "files": 7,
            "jobs": 8,
            "runs": 3,
            "files_not_read": {".txt": 1},
        }
    ]
    assert not t.problems.counts
    row = t.jobs.filter(pl.col("job_file") == "one-job.json").row(0, named=True)
    assert row["job_name"] == a["name"] and row["job_head_sha"] == a["head_sha"]
    assert row["step_names"] == [s["name"] for s in a["steps"]]
    assert row["job_created_at"] is None  # this record has no created_at: never filled in here


def test_bad_files_and_other_shapes_are_counted_with_the_file_named(
    tmp_path: Path, sample_jobs: list[dict[str, Any]]
) -> None:
    d = tmp_path / "bad"
    (d / "x").mkdir(parents=True)
    (d / "x" / "broken.json").write_text('{"jobs": [')
    (d / "x" / "repo.json").write_text(json.dumps({"id": 1, "full_name": "a/b", "visible": 1}))
    (d / "x" / "page.json").write_text(json.dumps({"jobs": [sample_jobs[0], {"id": 5}, 7]}))
    (d / "x" / "half.jsonl").write_text(json.dumps(sample_jobs[1]) + "\n{oops\n")
    t = read_api_json([ApiSource(d, "bad")])
    assert t.problems.counts == {"unreadable_file": 2, "unrecognized_record": 3}
    unreadable = " ".join(t.problems.examples["unreadable_file"])
    assert "bad:x/broken.json" in unreadable and "bad:x/half.jsonl" in unreadable
    assert "line 2" in unreadable
    other = " ".join(t.problems.examples["unrecognized_record"])
    assert "bad:x/repo.json" in other and "bad:x/page.json" in other
    assert t.jobs["job_id"].to_list() == [sample_jobs[0]["id"]]


def test_files_gzip_and_any_nesting_are_read(
    tmp_path: Path, sample_jobs: list[dict[str, Any]], sample_run: dict[str, Any]
) -> None:
    a, b, c = sample_jobs[:3]
    one = tmp_path / "jobs.json"  # a single file is a source of its own
    one.write_text(json.dumps({"total_count": 1, "jobs": [a]}))
    d = tmp_path / "export"
    d.mkdir()
    (d / "runs.json.gz").write_bytes(gzip.compress(json.dumps([sample_run]).encode()))
    (d / "jobs.jsonl.gz").write_bytes(
        gzip.compress((json.dumps(b) + "\n").encode()) + gzip.compress(json.dumps(c).encode())
    )
    # an export of its own making: records nested under keys nobody listed
    (d / "dump.json").write_text(
        json.dumps({"meta": {"v": 2}, "data": {"runs": [{"run": sample_run, "jobs": [a, b]}]}})
    )
    (d / "notes.txt").write_text("not read")
    (d / "bad.json.gz").write_bytes(b"not gzip at all")
    t = read_api_json([ApiSource(one), ApiSource(d, "export")])
    by_file = t.jobs.group_by("job_file").agg(pl.col("job_id").sort()).sort("job_file")
    assert dict(by_file.iter_rows()) == {
        "dump.json": sorted([a["id"], b["id"]]),
        "jobs.json": [a["id"]],
        "jobs.jsonl.gz": sorted([b["id"], c["id"]]),
    }
    assert sorted(t.runs["run_file"].to_list()) == ["dump.json", "runs.json.gz"]
    assert t.sources[0]["kind"] == "file" and t.sources[0]["label"] == "jobs.json"
    assert t.sources[1]["files_not_read"] == {".txt": 1}
    assert t.problems.counts == {"unreadable_file": 1}
    assert "export:bad.json.gz: not JSON (not gzip" in t.problems.examples["unreadable_file"][0]


def test_a_gzip_bomb_is_refused_by_its_decompressed_size() -> None:
    bomb = gzip.compress(b" " * 5_000_000)
    assert len(bomb) < 10_000
    with pytest.raises(ValueError, match="over 1,000,000 bytes once decompressed"):
        list(documents(bomb, "x.json.gz", limit=1_000_000))
    assert list(documents(gzip.compress(b"[1]"), "x.json.gz")) == [(0, [1])]
    with pytest.raises(ValueError, match="truncated"):
        list(documents(gzip.compress(b"[1, 2, 3]")[:-6], "x.json.gz"))


def test_documents_and_records_shapes() -> None:
    assert list(documents(b'[{"a": 1}]', "f.json")) == [(0, [{"a": 1}])]
    assert list(documents(b'{"a": 1}\n{"b": 2}\n', "f.json")) == [(1, {"a": 1}), (2, {"b": 2})]
    with pytest.raises(ValueError):
        list(documents(b"{nope", "f.json"))
    job = {"id": 1, "run_id": 2, "name": "n", "steps": []}
    run = {"id": 2, "head_sha": "s", "workflow_id": 3}
    assert [k for k, _ in records([job, run, {"x": 1}])] == ["job", "run", "other"]
    assert list(records({"total_count": 0, "jobs": []})) == []  # an empty page holds nothing
    assert [k for k, _ in records({"total_count": 0, "items": []})] == ["other"]
    # records are found by their fields, whatever list they sit in
    assert [k for k, _ in records({"workflow_runs": [run, job]})] == ["run", "job"]


def test_sample_build_keeps_provenance_and_finds_yaml(built: tuple[Path, Any]) -> None:
    ds, _result = built
    assert validate_folder(ds) == []
    rows = _all_rows(ds)
    prov = pl.read_parquet(ds / PROVENANCE_FILE)
    assert prov["id"].to_list() == sorted(rows["id"].to_list())
    both = rows.join(prov, on="id")
    ozone_git = GitRepo(ds.parent / "ozone-results")
    ozone_head = ozone_git.head
    ozone_git.close()
    oz = both.filter(pl.col("source") == "elek/ozone-build-results")
    ra = both.filter(pl.col("source") == RATIS.name)  # no label given: the folder's name
    assert oz.height + ra.height == rows.height and oz.height and ra.height
    assert set(oz["source_commit"]) == {ozone_head}
    assert ra["source_commit"].null_count() == ra.height
    # Each row's file really holds that job id, and its run file that run id.
    for r in both.sample(20, seed=1).iter_rows(named=True):
        base = OZONE if r["source"] != RATIS.name else RATIS
        assert int(r["id"]) in {j["id"] for j in _json(base / r["job_file"])["jobs"]}
        assert _json(base / r["run_file"])["id"] == r["run_id"]
    # YAML comes from the history at the row's own head_sha.
    found = both.filter(pl.col("yaml_commit").is_not_null())
    assert (found["yaml_commit"] == found["head_sha"]).all()
    assert set(found["yaml_history"]) == {"ozone", "ratis"}
    how = dict(both.select(pl.col("run_file"), "workflow_path_how").unique().iter_rows())
    assert how["2019/12/12/141/run.json"] == "workflow_name"
    assert how["2020/02/10/453/run.json"] == "workflow_id_path"
    assert how["2022/05/09/14915/run.json"] == "run_path"
    assert {how[f] for f in MISSING_SHA_RUNS} == {"commit_not_in_history"}


def test_sample_build_resolves_job_keys_from_the_yaml(built: tuple[Path, Any]) -> None:
    ds, result = built
    rows = _all_rows(ds)
    with_yaml = rows.filter(pl.col("workflow_yaml").is_not_null())
    assert with_yaml.height > 100
    # The key is a job of the YAML the row carries, and job_yaml is its (dedented) block; a job
    # of a called workflow (`caller/callee`) holds the callee's block under the caller's, as
    # comments.
    for r in with_yaml.filter(pl.col("job_key").is_not_null()).iter_rows(named=True):
        caller, _, callee = r["job_key"].partition("/")
        assert f"\n  {caller}:" in r["workflow_yaml"]
        if callee:
            assert r["job_yaml"].startswith(f"# {caller}:\n#   uses: ./.github/workflows/")
            assert f"\n{callee.split('/')[-1]}:\n" in r["job_yaml"]
        else:
            assert r["job_yaml"].startswith(f"{r['job_key']}:")
    keys = result.manifest["build"]["job_keys"]
    assert keys.get("exact", 0) > 0 and keys.get("callee", 0) > 0
    assert keys.get("unresolved", 0) == 0 and keys.get("bad_yaml", 0) == 0


def test_sample_build_follows_reusable_workflows(built: tuple[Path, Any]) -> None:
    # ratis's CI job calls ./.github/workflows/ci.yml: each callee job keeps its own block,
    # steps and matrix, not the caller's.
    ds, result = built
    rows = _all_rows(ds).filter(pl.col("job_key").str.starts_with("CI/"))
    assert rows.height > 0
    assert rows["job_key"].n_unique() > 3
    assert (
        rows.group_by("job_key").agg(pl.col("job_yaml").n_unique()).height
        == rows["job_key"].n_unique()
    )
    assert rows["job_yaml"].n_unique() >= rows["job_key"].n_unique()
    assert rows.filter(pl.col("job_yaml").str.contains("\n  steps:")).height == rows.height
    for r in rows.iter_rows(named=True):
        assert r["job_name"].startswith("CI / ")
        body = [ln for ln in r["job_yaml"].splitlines() if not ln.startswith("#")]
        assert body[0] == f"{r['job_key'].split('/')[-1]}:"
        assert not any("uses: ./.github/workflows/" in ln for ln in body)
    # every row of a followed call is counted by its source in the card
    calls = result.manifest["source"]["reusable_calls"]
    assert set(calls) == {RATIS.name, "elek/ozone-build-results"}
    followed = sum(v.get("followed", 0) + v.get("unknown_inputs", 0) for v in calls.values())
    assert followed == _all_rows(ds).filter(pl.col("job_key").str.contains("/")).height
    assert "Jobs of calls to reusable workflows" in (ds / "README.md").read_text()


def test_missing_head_sha_runs_are_counted_and_keep_no_yaml(built: tuple[Path, Any]) -> None:
    ds, result = built
    counts = result.problems.counts
    assert counts["head_sha_not_in_git_history"] == 2
    named = " ".join(result.problems.examples["head_sha_not_in_git_history"])
    assert "2020/01/22/381/run.json" in named or "2026/07/25/1031/run.json" in named
    rows = _all_rows(ds).join(pl.read_parquet(ds / PROVENANCE_FILE), on="id")
    lost = rows.filter(pl.col("run_file").is_in(list(MISSING_SHA_RUNS)))
    assert lost.height > 0
    assert lost["workflow_yaml"].null_count() == lost.height
    assert lost["job_key"].null_count() == lost.height


def test_jobs_without_run_are_lost_input_named_by_file(built: tuple[Path, Any]) -> None:
    _, result = built
    orphan_jobs = len(_json(OZONE / "2020/03/19/625/job.json")["jobs"])
    assert result.problems.counts["job_without_run"] == orphan_jobs
    assert "2020/03/19/625/job.json" in result.problems.examples["job_without_run"][0]
    assert result.lost_input == orphan_jobs


def test_nulls_are_counted_and_nothing_is_invented(built: tuple[Path, Any]) -> None:
    ds, _result = built
    rows = _all_rows(ds)
    nulls = read_manifest(ds)["source"]["null_counts"]
    for column in ("repo_language", "repo_stars", "repo_topics", "is_default_branch", "log_bytes"):
        assert nulls[column] == rows.height
        assert rows[column].null_count() == rows.height
    assert nulls["workflow_yaml"] == rows["workflow_yaml"].null_count() > 0
    card = (ds / "README.md").read_text()
    assert "| `repo_stars` | " + f"{rows.height:,}" + " |" in card
    assert "not a sample of GitHub" in card and "Apache-2.0" in card
    assert "license: apache-2.0" in card


def test_renamed_repository_gets_one_name_and_cross_repo_is_fixed(
    built: tuple[Path, Any],
) -> None:
    ds, _result = built
    rows = _all_rows(ds)
    hadoop = _json(OZONE / "2020/05/13/873/run.json")
    assert hadoop["repository"]["full_name"] == "apache/hadoop-ozone"
    assert set(rows.filter(pl.col("run_id") == hadoop["id"])["repo"]) == {"apache/ozone"}
    assert rows["repo"].n_unique() == rows["repo_id"].n_unique() == 2
    m = read_manifest(ds)
    ratis = rows.filter(pl.col("repo") == "apache/ratis").height
    assert m["splits"]["cross_repo"] == {
        "train": rows.height - ratis,
        "validation": 0,
        "test": ratis,
    }
    assert set(load(ds, "cross_repo", "test")["repo"]) == {"apache/ratis"}


def test_cli_builds_reports_and_exits_1_for_lost_records(tmp_path: Path) -> None:
    out = tmp_path / "ds"
    res = CliRunner().invoke(
        cli,
        [
            "build",
            "--source",
            "api-json",
            str(RATIS),
            "--yaml-git",
            str(YAML[1]),
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "head_sha_not_in_git_history: 1" in res.output
    assert "head_sha_not_in_git_history" in read_manifest(out)["build"]["problems"]["counts"]
    # a --yaml-git that is not a repository is refused (tests/hostile/test_fuzz_wrong_results.py)


def test_cli_builds_from_files_as_well_as_folders(tmp_path: Path) -> None:
    # one gzip file of every run record and job record of the ratis sample, as an export would be
    records = [
        _json(p) for p in sorted(RATIS.rglob("*.json")) if p.name in ("run.json", "job.json")
    ]
    export = tmp_path / "ratis-export.json.gz"
    export.write_bytes(gzip.compress(json.dumps({"exported": records}).encode()))
    out = tmp_path / "ds"
    args = ["build", "--source", "api-json", str(export), "--yaml-git", str(YAML[1])]
    res = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    from_folder = build(ApiJsonSource([RATIS], yaml_git=[YAML[1]]), tmp_path / "ref")
    assert read_manifest(out)["rows"] == from_folder.manifest["rows"] > 0
    # the other sources still read folders, and say so
    res = CliRunner().invoke(cli, ["build", str(export), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2
    assert "is a file; --source raw reads a folder" in " ".join(res.output.split())


def test_cli_exits_2_when_nothing_can_be_built(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "job.json").write_text("<html>rate limited</html>")
    fake_git = tmp_path / "fake.git"
    for sub in ("objects", "refs"):
        (fake_git / sub).mkdir(parents=True)
    (fake_git / "HEAD").write_text("garbage\n")
    res = CliRunner().invoke(
        cli,
        ["build", "--source", "api-json", str(junk), str(fake_git), "--out", str(tmp_path / "o")],
    )
    assert res.exit_code == 2, res.output
    assert "no job record found" in res.output
    assert "job.json" in res.output and "unreadable_file" in res.output
    assert "source_not_readable" in res.output
    assert not (tmp_path / "o").exists()


def test_unknown_cross_repo_name_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="apache/nope"):
        build(
            ApiJsonSource([RATIS], yaml_git=YAML[1:], cross_repo={"apache/nope": "test"}),
            tmp_path / "o",
        )
    res = CliRunner().invoke(
        cli, ["build", "--source", "api-json", str(RATIS), "--cross-repo", "apache/ratis"]
    )
    assert res.exit_code == 2 and "OWNER/NAME=SPLIT" in res.output


def test_same_input_same_bytes(tmp_path: Path) -> None:
    def files(out: Path) -> dict[str, bytes]:
        build(ApiJsonSource([RATIS], yaml_git=YAML[1:]), out)
        return {
            p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()
        }

    first, second = files(tmp_path / "a"), files(tmp_path / "b")
    assert PROVENANCE_FILE in first and "manifest.json" in first
    assert first == second


def test_calls_that_cannot_be_followed_are_counted_per_source_in_the_card(
    tmp_path: Path, sample_jobs: list[dict[str, Any]], sample_run: dict[str, Any]
) -> None:
    # A project history whose post-commit calls four workflows: one there, one missing at that
    # commit, one that calls back (a cycle), and one of another repository.
    hist = tmp_path / "project"
    wf = hist / ".github" / "workflows"
    wf.mkdir(parents=True)
    (wf / "post-commit.yml").write_text(
        "on: push\njobs:\n"
        "  ok:\n    uses: ./.github/workflows/ok.yml\n    with: {n: 2}\n"
        "  gone:\n    uses: ./.github/workflows/gone.yml\n"
        "  loop:\n    uses: ./.github/workflows/loop.yml\n"
        "  far:\n    uses: octo/ci/.github/workflows/b.yml@v1\n"
    )
    (wf / "ok.yml").write_text(
        "on: {workflow_call: {inputs: {n: {type: number}}}}\njobs:\n"
        "  test:\n    runs-on: ubuntu-22.04\n    steps: [{run: 'make -j${{ inputs.n }}'}]\n"
    )
    (wf / "loop.yml").write_text(
        "on: workflow_call\njobs:\n  again:\n    uses: ./.github/workflows/loop.yml\n"
    )
    _git_copy(hist, tmp_path / "project.git")
    head = subprocess.run(
        ["git", "-C", str(tmp_path / "project.git"), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    run = {**sample_run, "head_sha": head, "path": ".github/workflows/post-commit.yml"}
    names = ["ok / test", "gone / x", "loop / again / again", "far / build"]
    jobs = [
        {**sample_jobs[0], "id": 1000 + i, "name": n, "head_sha": head} for i, n in enumerate(names)
    ]
    records = tmp_path / "records"
    records.mkdir()
    (records / "run.json").write_text(json.dumps(run))
    (records / "jobs.json").write_text(json.dumps({"total_count": 4, "jobs": jobs}))
    result = build(
        ApiJsonSource([ApiSource(records, "archive")], yaml_git=[tmp_path / "project.git"]),
        tmp_path / "ds",
    )
    calls = result.manifest["source"]["reusable_calls"]
    assert calls == {"archive": {"cycle": 1, "followed": 1, "missing_callee": 1, "remote": 1}}
    rows = {r["job_name"]: r for r in _all_rows(tmp_path / "ds").iter_rows(named=True)}
    assert rows["ok / test"]["job_key"] == "ok/test"
    assert "make -j2" in rows["ok / test"]["job_yaml"]
    for name, key in (("gone / x", "gone"), ("far / build", "far")):
        assert rows[name]["job_key"] == key  # the caller's own block, nothing guessed
        assert rows[name]["job_yaml"].startswith(f"{key}:\n  uses: ")
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "| `archive` | 1 | 1 | 1 | 1 |" in card
