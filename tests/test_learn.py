"""`gharuntime learn` then `predict --model LEARNED`: a repository of the simulated GitHub on
127.0.0.1 crawled with a token, built, fitted on both tracks, and its workflow predicted from
each job's own recent runs; refusals (a repository never crawled, another version, no token),
the token kept out of every file and output, and a resume after a real SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner, Result

from gharuntime.cli.main import cli
from gharuntime.dataset import load
from gharuntime.sim import END, ServerConfig, SimServer, World, serve
from gharuntime.sim.world import DAY, iso

TOKEN = "ghp_" + "learn1" + "K" * 30
SINCE = iso(END - 120 * DAY)
MIDDLE = iso(END - 40 * DAY)


@pytest.fixture(scope="module")
def world() -> World:
    return World(seed=5, scale="tiny")


@pytest.fixture(scope="module")
def server(world: World) -> Iterator[SimServer]:
    with serve(world, ServerConfig(tokens={TOKEN: "team"})) as s:
        yield s


@pytest.fixture(scope="module")
def repo(world: World) -> str:
    """The public repository with the most completed runs (never renamed: its name stays)."""
    counts: dict[str, int] = {}
    for rw, _run in world.completed_runs(END - 120 * DAY, END):
        if not rw.meta.private and rw.meta.old_name is None:
            counts[rw.meta.full_name] = counts.get(rw.meta.full_name, 0) + 1
    return max(sorted(counts), key=lambda name: counts[name])


def _learn(
    out: Path, url: str, *repos: str, env: dict[str, str] | None = None, **kw: str
) -> Result:
    args = ["learn", *repos, "--out", str(out), "--api-url", url, "--since", SINCE]
    for k, v in kw.items():
        args += [f"--{k.replace('_', '-')}", v]
    return CliRunner().invoke(cli, args, env={"GITHUB_TOKEN": TOKEN, **(env or {})})


@pytest.fixture(scope="module")
def learned(server: SimServer, repo: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("learn") / "mine"
    result = _learn(out, server.url, repo)
    assert result.exit_code == 0, result.output
    assert TOKEN not in result.output
    return out


def _rows(dataset: Path) -> pl.DataFrame:
    return pl.concat([load(dataset, "temporal", s) for s in ("train", "validation", "test")])


@pytest.fixture(scope="module")
def workflow(learned: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The repository's workflow with the most jobs (of those calling no reusable workflow),
    at its latest run, checked out under .github/workflows/, plus one job that never ran."""
    rows = _rows(learned / "dataset").filter(~pl.col("workflow_yaml").str.contains("uses: ./"))
    path = rows.group_by("workflow_path").len().sort(["len", "workflow_path"])["workflow_path"][-1]
    text = rows.filter(pl.col("workflow_path") == path).sort("created_at")["workflow_yaml"][-1]
    file = tmp_path_factory.mktemp("checkout") / path
    file.parent.mkdir(parents=True)
    new_job = (
        "\n  never-ran-before:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make new\n"
    )
    file.write_text(text.rstrip("\n") + new_job)
    return file, path


def _predict(*args: str) -> Result:
    return CliRunner().invoke(cli, ["predict", *args, "--at", "2026-11-02"])


def _last_five(rows: pl.DataFrame, path: str, name: str) -> list[float]:
    """The truth: the job's five latest durations, by its GitHub name, most recent first."""
    mine = rows.filter((pl.col("workflow_path") == path) & (pl.col("job_name") == name))
    return mine.sort("completed_at", descending=True)["duration_s"].head(5).to_list()


def test_learn_writes_a_folder_predict_reads_and_never_the_token(
    learned: Path, repo: str, workflow: tuple[Path, str]
) -> None:
    doc = json.loads((learned / "learn.json").read_text())
    assert doc["format"] == "gharuntime-learned/1"
    # the visibility GitHub gave (a public repository): predict bills it as public
    assert doc["visibility"] == {repo: "public"}
    plain = json.loads(_predict(str(workflow[0]), "--model", str(learned), "--json").output)
    assert plain["billing"] == {**plain["billing"], "repository": "public",
                                "visibility_from": "learn.json"}  # fmt: skip
    # two duration models, as before, and the multi-track one whose queue_s is the wait
    assert set(doc["models"]) == {"history", "config", "multi"}
    for track in ("history", "config", "multi"):
        assert json.loads((learned / track / "model.json").read_text())["track"] == track
    assert doc["models"]["history"]["targets"] == doc["models"]["config"]["targets"]
    assert doc["models"]["config"]["targets"] == ["duration_s"]
    assert "queue_s" in doc["models"]["multi"]["targets"]
    assert doc["models"]["multi"]["used_for"] == "queue_s"
    for path in learned.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_predict_uses_each_jobs_own_recent_runs_and_falls_back_per_job(
    learned: Path, workflow: tuple[Path, str], tmp_path: Path
) -> None:
    file, path = workflow
    result = _predict(str(file), "--model", str(learned), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    rows = _rows(learned / "dataset")
    jobs = {j["name"]: j for j in doc["jobs"]}
    assert jobs["never-ran-before"]["basis"] == "config fallback"
    assert jobs["never-ran-before"]["history_s"] == []
    known = [j for name, j in jobs.items() if name != "never-ran-before"]
    assert known and all(j["basis"] == "history" for j in known)
    for j in known:
        assert j["history_s"] == _last_five(rows, path, j["name"]), j["name"]
    assert doc["history"]["jobs"] == {"history": len(known), "config fallback": 1}
    # the fallback is the config-track model's own prediction of that job, for this repository
    latest = rows.sort("completed_at").row(-1, named=True)
    columns = ("repo", "repo_id", "repo_language", "repo_stars", "repo_size_kb", "repo_fork")
    meta = {c: latest[c] for c in columns} | {"repo_topics": latest["repo_topics"]}
    meta["repo_created_at"] = latest["repo_created_at"].isoformat()
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    alone = _predict(
        str(file),
        "--model",
        str(learned / "config"),
        "--repo-meta",
        str(tmp_path / "meta.json"),
        "--json",
    )
    plain = {j["name"]: j for j in json.loads(alone.output)["jobs"]}
    assert jobs["never-ran-before"]["duration_s"] == plain["never-ran-before"]["duration_s"]
    assert "basis" not in plain["never-ran-before"]


def test_the_table_and_markdown_say_what_each_job_rests_on(
    learned: Path, workflow: tuple[Path, str]
) -> None:
    file, _ = workflow
    table = _predict(str(file), "--model", str(learned))
    assert table.exit_code == 0, table.output
    row = next(x for x in table.output.splitlines() if x.lstrip().startswith("never"))
    assert "fallback" in row
    assert "5 runs" in table.output
    assert "1 with no earlier run by the config-track model (fallback: config fallback)" in (
        " ".join(table.output.split())
    )
    markdown = _predict(str(file), "--model", str(learned), "--format", "markdown")
    assert "| from |" in markdown.output
    line = next(x for x in markdown.output.splitlines() if "never-ran-before" in x)
    assert "config fallback" in line
    assert sum("history (5 runs)" in x for x in markdown.output.splitlines()) >= 1


def test_history_from_a_fresher_dataset(
    server: SimServer, repo: str, learned: Path, workflow: tuple[Path, str], tmp_path: Path
) -> None:
    """A model learnt on the runs up to 40 days before the end, its history refreshed from the
    full window's dataset: the durations are the fresher ones."""
    early = tmp_path / "early"
    assert _learn(early, server.url, repo, until=MIDDLE).exit_code == 0
    file, path = workflow
    stale = json.loads(_predict(str(file), "--model", str(early), "--json").output)
    fresh = _predict(str(file), "--model", str(early), "--history-from", str(learned / "dataset"))
    assert fresh.exit_code == 0, fresh.output
    fresh_doc = json.loads(
        _predict(
            str(file), "--model", str(early), "--history-from", str(learned / "dataset"), "--json"
        ).output
    )
    rows = _rows(learned / "dataset")
    old = {j["name"]: j["history_s"] for j in stale["jobs"]}
    changed = 0
    for j in fresh_doc["jobs"]:
        if j["basis"] == "history":
            assert j["history_s"] == _last_five(rows, path, j["name"])
            changed += j["history_s"] != old[j["name"]]
    assert changed, "the fresher dataset gave no job other durations"


def _refused(result: Result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for word in words:
        assert word in result.output, result.output
    assert TOKEN not in result.output


def test_a_repository_never_crawled_is_refused(
    learned: Path, workflow: tuple[Path, str], world: World, repo: str
) -> None:
    other = next(m.full_name for m in world.metas() if m.full_name != repo and not m.private)
    file, _ = workflow
    result = _predict(str(file), "--model", str(learned), "--repo", other)
    _refused(result, other, "never crawled", "gharuntime learn")
    result = _predict(
        str(file), "--model", str(learned / "config"), "--history-from", str(learned / "dataset")
    )
    _refused(result, "reads no history")


def test_a_model_of_another_version_is_refused(
    learned: Path, workflow: tuple[Path, str], tmp_path: Path
) -> None:
    file, _ = workflow
    copy = tmp_path / "old"
    shutil.copytree(learned, copy)
    model = copy / "history" / "model.json"
    doc = json.loads(model.read_text())
    model.write_text(json.dumps({**doc, "method_version": "0.1"}))
    _refused(_predict(str(file), "--model", str(copy)), "0.1", "learn again")
    learn_doc = json.loads((copy / "learn.json").read_text())
    (copy / "learn.json").write_text(json.dumps({**learn_doc, "format": "gharuntime-learned/0"}))
    _refused(_predict(str(file), "--model", str(copy)), "gharuntime-learned/0", "learn again")
    (copy / "learn.json").unlink()
    _refused(_predict(str(file), "--model", str(copy)), "did not finish", "again")


def test_learn_refuses_before_writing_anything(
    server: SimServer, repo: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _refused(_learn(out, server.url, "nobody-here/nothing"), "nobody-here/nothing", "404")
    assert not out.exists()
    _refused(
        _learn(out, server.url, repo, token_env="TEAM_TOKEN", env={"TEAM_TOKEN": ""}),
        "TEAM_TOKEN is not set",
    )
    assert not out.exists()
    wrong = "ghp_" + "wrong1" + "W" * 30
    result = _learn(out, server.url, repo, env={"GITHUB_TOKEN": wrong})
    _refused(result)
    assert wrong not in result.output
    assert not out.exists()
    _refused(_learn(out, server.url, "not-a-name"), "OWNER/NAME")
    assert not out.exists()
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    _refused(_learn(taken, server.url, repo), "not empty")
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]


def _child(out: Path, url: str, repo: str) -> subprocess.Popen[str]:
    exe = Path(sys.executable).parent / "gharuntime"
    args = [str(exe), "learn", repo, "--out", str(out), "--api-url", url, "--since", SINCE]
    env = {**os.environ, "GITHUB_TOKEN": TOKEN, "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_learn_killed_midway_resumes_keeping_the_finished_steps(
    server: SimServer, repo: str, tmp_path: Path
) -> None:
    out = tmp_path / "mine"
    proc = _child(out, server.url, repo)
    deadline = time.monotonic() + 120
    try:
        while not (out / "steps" / "crawl.step.json").exists():
            assert proc.poll() is None, "learn ended before it could be killed"
            assert time.monotonic() < deadline, "the crawl did not finish in 120 s"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "learn.json").exists()
    listed = server.recorder.count("actions/list-workflow-runs-for-repo") + server.recorder.count(
        "actions/list-workflow-runs"
    )
    jobs_listed = server.recorder.count("actions/list-jobs-for-workflow-run-attempt")
    rerun = _child(out, server.url, repo)
    stdout, stderr = rerun.communicate(timeout=300)
    assert rerun.returncode == 0, stderr
    assert "crawl: kept" in stderr
    assert TOKEN not in stdout + stderr
    # the kept crawl made no request for runs or jobs again
    assert (
        server.recorder.count("actions/list-workflow-runs-for-repo")
        + server.recorder.count("actions/list-workflow-runs")
        == listed
    )
    assert server.recorder.count("actions/list-jobs-for-workflow-run-attempt") == jobs_listed
    doc: dict[str, Any] = json.loads((out / "learn.json").read_text())
    assert doc["repos"] == [repo]


def test_a_window_without_runs_is_refused_and_leaves_no_model(
    server: SimServer, repo: str, tmp_path: Path, workflow: tuple[Path, str]
) -> None:
    out = tmp_path / "empty"
    window = ["--since", "2020-01-01", "--until", "2020-01-02"]
    args = ["learn", repo, "--out", str(out), "--api-url", server.url, *window]
    result = CliRunner().invoke(cli, args, env={"GITHUB_TOKEN": TOKEN})
    _refused(result, "--since")
    assert not (out / "learn.json").exists()
    _refused(_predict(str(workflow[0]), "--model", str(out)), "did not finish")


def test_a_review_looks_up_the_base_file_as_the_workflow_it_changes(
    learned: Path, workflow: tuple[Path, str], tmp_path: Path
) -> None:
    """The base file lies outside the checkout: its jobs still take the workflow's history, so
    only the job the change adds differs."""
    file, _ = workflow
    base = tmp_path / "before.yml"
    base.write_text(file.read_text().split("\n  never-ran-before:")[0] + "\n")
    result = _predict(str(file), "--model", str(learned), "--base", str(base), "--json")
    assert result.exit_code == 0, result.output
    (review,) = json.loads(result.output)["reviews"]
    counts = review["counts"]
    assert counts["added"] == 1 and counts["changed"] == 0 and counts["removed"] == 0


# `learn --from-dataset`: a dataset a team already built, learnt without a crawl.


def _from_dataset(dataset: Path, out: Path, *more: str) -> Result:
    args = ["learn", "--from-dataset", str(dataset), "--out", str(out), *more]
    return CliRunner().invoke(cli, args, env={"GITHUB_TOKEN": ""})


def test_learn_from_a_dataset_writes_the_folder_predict_reads(
    learned_from_dataset: Path, matrix_dataset: Path, tmp_path: Path
) -> None:
    from gharuntime.dataset import read_manifest
    from gharuntime.predict.history import dataset_repos

    doc = json.loads((learned_from_dataset / "learn.json").read_text())
    assert doc["format"] == "gharuntime-learned/1"
    assert doc["repos"] == dataset_repos(matrix_dataset)
    source = read_manifest(matrix_dataset)
    assert doc["from_dataset"]["path"] == str(matrix_dataset)
    assert doc["from_dataset"]["revision"] == doc["dataset"]["revision"] == source["revision"]
    assert doc["relearn"].startswith(f"gharuntime learn --from-dataset {matrix_dataset} --out")
    assert set(doc["models"]) == {"history", "config", "multi"}
    for track in ("history", "config", "multi"):
        assert json.loads((learned_from_dataset / track / "model.json").read_text())["track"] == (
            track
        )
        assert doc["models"][track]["rmsle_latest_runs"] is not None
    multi = doc["models"]["multi"]
    assert multi["used_for"] == "queue_s" and "queue_s" in multi["targets"]
    # its score is its queue_s's, on the latest runs, beside each target's own
    assert multi["rmsle_latest_runs"] == multi["scores"]["queue_s"]["rmsle"]
    assert set(multi["scores"]) == set(multi["targets"])
    assert not (learned_from_dataset / "raw").exists()
    # predict: a job with history from the history track, a new one from the config track
    # (its prediction and range the config-track model's own for this repository)
    workflow = tmp_path / ".github" / "workflows" / "ci.yml"
    workflow.parent.mkdir(parents=True)
    rows_text = _rows(matrix_dataset).filter(pl.col("repo") == "fixture-org/repo-1")
    text = rows_text.sort("created_at")["workflow_yaml"][-1]
    new_job = "\n  never-ran:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make new\n"
    workflow.write_text(text.rstrip("\n") + new_job)
    args = [str(workflow), "--model", str(learned_from_dataset), "--repo", "fixture-org/repo-1"]
    done = _predict(*args, "--json")
    assert done.exit_code == 0, done.output
    jobs = {j["name"]: j for j in json.loads(done.output)["jobs"]}
    assert jobs["never-ran"]["basis"] == "config fallback"
    assert {j["basis"] for n, j in jobs.items() if n != "never-ran"} == {"history"}
    # the repository's metadata as the history gives it: its latest completed job's
    latest = rows_text.sort("completed_at").row(-1, named=True)
    columns = ("repo", "repo_id", "repo_language", "repo_stars", "repo_size_kb", "repo_fork")
    meta = {c: latest[c] for c in columns} | {"repo_topics": latest["repo_topics"]}
    meta["repo_created_at"] = latest["repo_created_at"].isoformat()
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    config = str(learned_from_dataset / "config")
    alone = _predict(
        str(workflow), "--model", config, "--repo-meta", str(tmp_path / "meta.json"), "--json"
    )
    plain = {j["name"]: j for j in json.loads(alone.output)["jobs"]}["never-ran"]
    for key in ("duration_s", "p10", "p90"):
        assert jobs["never-ran"][key] == plain[key], key


def test_learn_from_a_dataset_again_keeps_every_step(matrix_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    assert _from_dataset(matrix_dataset, out).exit_code == 0
    again = _from_dataset(matrix_dataset, out)
    assert again.exit_code == 0, again.output
    for step in ("dataset", "fit-history", "fit-config", "fit-multi"):
        assert f"{step}: kept" in again.output
    # from its own dataset/: the same data, nothing copied or fitted again
    inside = _from_dataset(out / "dataset", out)
    assert inside.exit_code == 0, inside.output
    assert "dataset: kept" in inside.output and "fit-config: kept" in inside.output
    doc = json.loads((out / "learn.json").read_text())
    assert doc["from_dataset"]["path"] == str(out / "dataset")
    assert (out / "dataset" / "manifest.json").is_file()


def _broken(dataset: Path, tmp_path: Path, how: str) -> Path:
    import shutil

    copy = tmp_path / f"broken-{how}"
    shutil.copytree(dataset, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    if how == "changed-file":
        part = copy / manifest["files"][0]["path"]
        part.write_bytes(part.read_bytes() + b"\0")
    elif how == "schema":
        manifest["schema_version"] = "9.0.0"
        (copy / "manifest.json").write_text(json.dumps(manifest))
    elif how == "no-manifest":
        (copy / "manifest.json").unlink()
    return copy


@pytest.mark.parametrize(
    ("how", "words"),
    [
        ("changed-file", ("not a valid dataset", "sha256", "gharuntime validate")),
        ("schema", ("not a valid dataset", "schema_version 9.0.0")),
        ("no-manifest", ("not a valid dataset", "manifest.json: missing")),
    ],
)
def test_a_dataset_that_is_not_valid_is_refused_before_anything_is_written(
    matrix_dataset: Path, tmp_path: Path, how: str, words: tuple[str, ...]
) -> None:
    out = tmp_path / "out"
    result = _from_dataset(_broken(matrix_dataset, tmp_path, how), out)
    _refused(result, *words)
    assert not out.exists()


def test_from_dataset_refuses_what_does_not_apply_to_it(
    matrix_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    _refused(
        CliRunner().invoke(
            cli, ["learn", "octo/repo", "--from-dataset", str(matrix_dataset), "--out", str(out)]
        ),
        "--from-dataset",
        "repositories are learnt",
    )
    _refused(_from_dataset(matrix_dataset, out, "--since", "2026-01-01"), "--since", "a crawl")
    _refused(CliRunner().invoke(cli, ["learn", "--out", str(out)]), "no repository")
    assert not out.exists()
    inside = matrix_dataset / "model"
    _refused(_from_dataset(matrix_dataset, inside), "inside the dataset folder")
    assert not inside.exists()
    crawled = tmp_path / "crawled"
    (crawled / "raw").mkdir(parents=True)
    (crawled / "steps").mkdir()
    _refused(_from_dataset(matrix_dataset, crawled), "not a folder `gharuntime learn` began")
    # a folder learn began from a crawl (its mark, raw/): not mixed with a dataset's model
    from gharuntime.predict.learned import LEARN_FOLDER_FORMAT, LEARN_MARKER

    (crawled / LEARN_MARKER).write_text(json.dumps({"format": LEARN_FOLDER_FORMAT}))
    _refused(_from_dataset(matrix_dataset, crawled), "crawled from GitHub")
    assert sorted(p.name for p in crawled.iterdir()) == [LEARN_MARKER, "raw", "steps"]


def test_a_copy_that_lost_its_model_learns_it_again(
    server: SimServer, repo: str, learned: Path, workflow: tuple[Path, str], tmp_path: Path
) -> None:
    """The fit step is kept only while the model it wrote is there, byte for byte, in this
    folder: a copy without its history model fits it again (saying why) and predicts. Before,
    the copy's records named the original's files: every step was kept, `learn` said done, and
    `predict` asked to learn again, in a loop."""
    copy = tmp_path / "copy"
    shutil.copytree(learned, copy)
    shutil.rmtree(copy / "history")
    result = _learn(copy, server.url, repo)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "crawl: kept" in said and "build: kept" in said and "fit-config: kept" in said
    assert "fit-history: lightgbm, history track" in said
    assert "ran again: 'history/" in said and "is missing" in said
    predicted = _predict(str(workflow[0]), "--model", str(copy), "--json")
    assert predicted.exit_code == 0, predicted.output


def test_a_kept_step_says_what_its_files_hold_not_its_record(
    server: SimServer, repo: str, learned: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(learned, copy)
    record = copy / "steps" / "fit-config.step.json"
    record.write_text(json.dumps({**json.loads(record.read_text()), "summary": "RMSLE 0.001"}))
    result = _learn(copy, server.url, repo)
    assert result.exit_code == 0, result.output
    score = json.loads((learned / "steps" / "config.score.json").read_text())
    line = next(x for x in result.output.splitlines() if x.startswith("fit-config:"))
    assert f"RMSLE {score['rmsle']:.3f}" in line and "0.001" not in line


def test_learn_writes_only_into_a_folder_it_began(
    server: SimServer, repo: str, learned: Path, tmp_path: Path
) -> None:
    """A folder holding a `steps/` subfolder (or a learn.json) is not learn's unless learn
    marked it: refused, nothing written. A mark of another format is refused too."""
    taken = tmp_path / "taken"
    (taken / "steps").mkdir(parents=True)
    (taken / "notes.txt").write_text("mine")
    _refused(_learn(taken, server.url, repo), "not a folder `gharuntime learn` began")
    assert sorted(p.name for p in taken.iterdir()) == ["notes.txt", "steps"]
    unmarked = tmp_path / "unmarked"
    shutil.copytree(learned, unmarked)
    (unmarked / ".gharuntime-learn").unlink()
    _refused(_learn(unmarked, server.url, repo), "holds learn.json or steps/", "new or empty")
    other = tmp_path / "other"
    shutil.copytree(learned, other)
    (other / ".gharuntime-learn").write_text('{"format": "gharuntime-learn-folder/0"}')
    _refused(_learn(other, server.url, repo), "gharuntime-learn-folder/0", "another --out")
    mark = json.loads((learned / ".gharuntime-learn").read_text())
    assert mark["format"] == "gharuntime-learn-folder/1"


def test_a_variable_that_holds_no_github_token_is_never_sent(
    server: SimServer, repo: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    before = server.recorder.total
    path_value = os.environ["PATH"]
    for env, value in (("PATH", path_value), ("TEAM_TOKEN", "hunter2-not-a-token")):
        result = _learn(out, server.url, repo, token_env=env, env={env: value})
        _refused(result, f"{env} does not hold a GitHub token", "--token-env")
        assert value not in result.output
        assert not out.exists()
    assert server.recorder.total == before  # nothing was sent


def test_history_from_a_dataset_of_another_contract_is_refused(
    learned: Path, workflow: tuple[Path, str], tmp_path: Path
) -> None:
    dataset = tmp_path / "dataset"
    shutil.copytree(learned / "dataset", dataset)
    manifest = json.loads((dataset / "manifest.json").read_text())
    (dataset / "manifest.json").write_text(json.dumps({**manifest, "schema_version": "9.0.0"}))
    result = _predict(str(workflow[0]), "--model", str(learned), "--history-from", str(dataset))
    _refused(result, "9.0.0", "1.")


def test_a_second_learn_on_the_same_folder_is_refused(
    server: SimServer, repo: str, tmp_path: Path
) -> None:
    out = tmp_path / "mine"
    first = _child(out, server.url, repo)
    try:
        deadline = time.monotonic() + 120
        while not (out / "steps").exists():
            assert first.poll() is None, "the first learn ended before the second started"
            assert time.monotonic() < deadline, "the first learn wrote nothing in 120 s"
            time.sleep(0.01)
        second = _learn(out, server.url, repo)
        assert first.poll() is None, "the first learn stopped"
    finally:
        first.kill()
        first.communicate()
    _refused(second, f"is in use by process {first.pid}", "gharuntime learn", "fix:")


def test_learn_fits_its_trees_to_practise_on_new_jobs(learned_from_dataset: Path) -> None:
    """A learned model is asked about renamed and added jobs: its trees fit with
    LEARN_PARAMS' new_job_share unless the user sets it."""
    from gharuntime.learn import LEARN_PARAMS, fit_params

    assert fit_params("lightgbm", {}) == {"new_job_share": LEARN_PARAMS["new_job_share"]}
    assert fit_params("lightgbm", {"new_job_share": 0.0}) == {"new_job_share": 0.0}
    assert fit_params("median", {}) == {}  # a method without the parameter gets none
    for track in ("history", "config"):
        model = json.loads((learned_from_dataset / track / "model.json").read_text())
        assert model["config"]["new_job_share"] == LEARN_PARAMS["new_job_share"], track
