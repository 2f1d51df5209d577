"""benchmarks/predict_review_real.py on a tiny repository made here: a workflow changed twice in
the dataset's validation and test periods (and once by a workflow its runs never use), runs
whose durations are set so that the actual change and the noise are known by hand; its goals;
bad input refused with exit 2."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from script_support import load_script

from gharuntime.contract import job_table_schema
from gharuntime.dataset import write_dataset
from gharuntime.history import history_durations

REPO = "octo/demo"
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
COMMITS = 20
RUNS_PER_COMMIT = 3

_JOBS = {
    "build": "    runs-on: ubuntu-latest\n    steps:\n      - run: make\n",
    "test": "    runs-on: ubuntu-latest\n    steps:\n      - run: make test\n",
    "lint": "    runs-on: ubuntu-latest\n    steps:\n      - run: make lint\n",
    "docs": "    runs-on: ubuntu-latest\n    steps:\n      - run: make docs\n",
}


def _jobs_at(i: int) -> list[str]:
    """The jobs of ci.yml at commit i: lint added by commit 17, docs by commit 19."""
    return ["build", "test"] + (["lint"] if i >= 17 else []) + (["docs"] if i >= 19 else [])


def _job_yaml(job: str, i: int) -> str:
    """A job's YAML at commit i: commit 12 (before the validation period) changes build's
    command, not its duration."""
    return _JOBS[job].replace("run: make\n", "run: make -j2\n") if i >= 12 else _JOBS[job]


def _workflow(i: int) -> str:
    jobs = "".join(f"  {j}:\n{_job_yaml(j, i)}" for j in _jobs_at(i))
    return "name: CI\non: push\njobs:\n" + jobs


def _git(repo: Path, *args: str, when: datetime | None = None) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    if when is not None:
        env |= {"GIT_AUTHOR_DATE": when.isoformat(), "GIT_COMMITTER_DATE": when.isoformat()}
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return done.stdout.strip()


def _make_repo(root: Path) -> tuple[list[str], str]:
    """Commit i at day i, 00:00 UTC: ci.yml as _workflow(i); commit 18 also adds stale.yml,
    which the recorded runs never use; a side branch off commit 1 is never merged. Returns the
    main line's SHAs and the side commit's."""
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    shas = []
    side = ""
    for i in range(COMMITS):
        folder = root / ".github" / "workflows"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ci.yml").write_text(_workflow(i), encoding="utf-8")
        if i == 18:
            (folder / "stale.yml").write_text(
                "on: schedule\njobs:\n  stale:\n    runs-on: ubuntu-latest\n"
                "    steps:\n      - run: echo\n",
                encoding="utf-8",
            )
        (root / "src.txt").write_text(f"{i}\n", encoding="utf-8")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"change {i}", when=START + timedelta(days=i))
        shas.append(_git(root, "rev-parse", "HEAD"))
        if i == 1:
            _git(root, "checkout", "-q", "-b", "side")
            (root / "src.txt").write_text("side\n", encoding="utf-8")
            _git(root, "commit", "-q", "-am", "side", when=START + timedelta(days=1, hours=6))
            side = _git(root, "rev-parse", "HEAD")
            _git(root, "checkout", "-q", "main")
    return shas, side


def _duration(job: str, run_index: int) -> float:
    """build 100 s, lint 50 s, docs 30 s; test alternates 200 s / 210 s run by run, so any 3
    runs' median against the next 3's differs by exactly 10 s: the noise."""
    return {"build": 100.0, "lint": 50.0, "docs": 30.0}.get(job, 200.0 + 10.0 * (run_index % 2))


def _runs_of(i: int) -> int:
    """Runs of commit i: 3, but 2 of commit 17 (its third run after is commit 18's first)."""
    return 2 if i == 17 else RUNS_PER_COMMIT


def _run_id(i: int, k: int) -> int:
    return 1000 + i * RUNS_PER_COMMIT + k


def _failed(i: int, k: int, job: str) -> bool:
    """`build` fails in commit 19's first two runs: the dataset keeps successful jobs only, so
    those runs have no row of it."""
    return i == 19 and k < 2 and job == "build"


def _rows(shas: list[str], side: str | None = None, runs: Any = _runs_of) -> pl.DataFrame:
    """The runs of each commit at day i, hours 1, 2, 3 (`test` by their order on the main
    line), less the _failed jobs; the side commit's one run at day 1, hour 12, its test 500 s."""
    rows: list[dict[str, Any]] = []
    plan = [(i, sha, k) for i, sha in enumerate(shas) for k in range(runs(i))]
    plan += [(1, side, 9)] if side else []
    for index, (i, sha, k) in enumerate(plan):
        yaml_text = _workflow(i)
        created = START + timedelta(days=i, hours=12 if k == 9 else 1 + k)
        for job in _jobs_at(i):
            if _failed(i, k, job):
                continue
            seconds = 500.0 if k == 9 and job == "test" else _duration(job, index)
            rows.append(
                {
                    "id": f"{index}-{job}",
                    "repo": REPO,
                    "repo_id": 7,
                    "repo_language": "C",
                    "repo_stars": 10,
                    "repo_size_kb": 100,
                    "repo_topics": [],
                    "repo_fork": False,
                    "repo_created_at": START - timedelta(days=400),
                    "run_id": _run_id(i, k),
                    "run_attempt": 1,
                    "run_number": index + 1,
                    "event": "push",
                    "head_branch": "main",
                    "is_default_branch": True,
                    "head_sha": sha,
                    "head_commit_message": f"change {i}",
                    "workflow_id": 70,
                    "workflow_path": ".github/workflows/ci.yml",
                    "workflow_name": "CI",
                    "workflow_yaml": yaml_text,
                    "workflow_sha256": hashlib.sha256(yaml_text.encode()).hexdigest(),
                    "job_id": len(rows) + 1,
                    "job_name": job,
                    "job_key": job,
                    "job_yaml": _job_yaml(job, i),
                    "matrix": None,
                    "runner_labels": ["ubuntu-latest"],
                    "runner_os": "Linux",
                    "runner_image": None,
                    "needs": [],
                    "step_names": ["Set up job", "Run make", "Complete job"],
                    "created_at": created,
                    "started_at": created + timedelta(seconds=5),
                    "completed_at": created + timedelta(seconds=5 + seconds),
                    "conclusion": "success",
                    "history_duration_s": [],
                    "duration_s": seconds,
                    "queue_s": 5.0,
                    "log_bytes": 100,
                }
            )
    jobs = pl.DataFrame(rows, schema=job_table_schema())
    return jobs.with_columns(history_durations(jobs))


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("review-real")
    shas, side = _make_repo(root / "demo")
    dataset = root / "dataset"
    write_dataset(_rows(shas, side), dataset, provenance={"kind": "test", "synthetic": True})
    return {"root": root, "shas": shas, "dataset": dataset, "mirror": root / "demo"}


def _main(args: list[str]) -> int:
    code: int = load_script("predict_review_real").main(args)
    return code


@pytest.mark.slow
def test_replays_the_workflow_changes_against_their_runs(
    case: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # every path given relative to where it is run, as the docs' command gives them: predict
    # runs inside the clones, so the script must not hand those paths on as typed
    monkeypatch.chdir(case["root"])
    dataset = os.path.relpath(case["dataset"], case["root"])
    mirror = os.path.relpath(case["mirror"], case["root"])
    args = ["--dataset", dataset, "--work", "work", "--earlier"]
    assert _main([*args, "--repo", f"{REPO}={mirror}"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    result = json.loads(out[-1])
    assert "| goal |" in "\n".join(out[:-1])
    assert "| earlier workflow changes (--earlier; shown, not a goal) |" in "\n".join(out[:-1])
    shas = case["shas"]
    repo = result["repos"][REPO]
    commits = {c["commit"]: c for c in repo["commits"]}
    # 60 runs: validation = the last of commit 15's and the runs of 16-17, test = 18-19; the
    # workflow changes in those periods: 17, 18 (stale.yml) and 19
    assert list(commits) == [shas[17], shas[18], shas[19]]
    assert commits[shas[18]]["files_changed"] == [".github/workflows/stale.yml"]
    assert "recorded runs" in commits[shas[18]]["skipped"]
    c17, c19 = commits[shas[17]], commits[shas[19]]
    assert (c17["period"], c19["period"]) == ("validation", "test")
    assert c17["files_reviewed"] == c19["files_reviewed"] == [".github/workflows/ci.yml"]
    assert c17["base"] == shas[16] and c19["base"] == shas[18]
    assert c17["at"] == "2026-01-18T00:00:00Z"
    assert c17["runs_before"] == [_run_id(16, k) for k in range(3)]
    # commit 18 changes no workflow the runs use: it bounds neither side
    assert c17["runs_after"] == [_run_id(17, 0), _run_id(17, 1), _run_id(18, 0)]
    assert c19["runs_before"] == [_run_id(18, k) for k in range(3)]
    assert c19["runs_after"] == [_run_id(19, k) for k in range(3)]
    # c17: lint +50 s, test's median 200 -> 210; c19: docs +30 s, test 210 -> 200, build still
    # 100 s (the one run where it succeeded: the 2 failed runs have no row of it, not 0 s).
    # The side branch's run (test 500 s) is off the line: the noise stays 10 s
    assert (c17["actual_delta_s"], c19["actual_delta_s"]) == (60.0, 20.0)
    assert c17["noise_s"] == c19["noise_s"] == 10.0
    assert c17["noise_p10_p90_s"] == c19["noise_p10_p90_s"] == 10.0
    assert c17["beyond_noise"] and c19["beyond_noise"]
    assert c17["beyond_noise_p10_p90"] and c19["beyond_noise_p10_p90"]
    assert c17["errors"] == c19["errors"] == []
    # every job of the runs after is a job of the review, by GitHub's name
    assert (c17["actual_rows"], c19["actual_rows"]) == (9, 10)
    assert c17["matched_rows"] == 9 and c19["matched_rows"] == 10
    for c in (c17, c19):
        assert sum(f["rows"] for f in c["by_basis"].values()) == c["matched_rows"]
        # predict's own Δ of the recorded workflow, with its P10-P90 and verdict beside it
        (measure,) = c["predicted_range"]
        assert measure["workflow"] == ".github/workflows/ci.yml"
        assert measure["delta"] == c["predicted_delta_s"]
        assert measure["delta_p10"] <= measure["delta"] <= measure["delta_p90"]
        assert c["predict_beyond_noise"] is measure["beyond_noise"]
    # a job added with no earlier run is the config-track model's guess (learn fits both)
    assert result["fit"] == "learn --from-dataset"
    assert {r["name"] for r in c19["worst_rows"]["config fallback"]} == {"docs"}
    summary = repo["summary"]
    assert summary["commits_in_periods"] == 3 and summary["commits_reviewed"] == 2
    assert summary["jobs"]["matched_share"] == 1.0
    assert sum(f["rows"] for f in summary["by_basis"].values()) == 19
    # the config-fallback goal is scored over every row with no run of its own
    by = summary["by_basis"]
    own = summary["no_run_of_their_own"]
    assert own["rows"] == by["config fallback"]["rows"] + by["matrix siblings"]["rows"] >= 1
    sign = summary["sign"]
    assert (sign["with_3_and_3"], sign["beyond_noise"]) == (2, 2)
    right = sum(c["sign_right"] is True for c in (c17, c19))
    assert sign["right"] == sign["agrees_with_3_and_3"] == sign["right_p10_p90"] == right
    # --earlier: the changes before the validation period, shown apart from the goals. Commit
    # 0 adds ci.yml (nothing before it to compare); commit 12 changes build's command and no
    # duration: its 3-vs-3 is test's ±10 s, inside the noise, graded all the same
    earlier = repo["earlier"]
    c0, c12 = earlier["commits"]
    assert (c0["commit"], c12["commit"]) == (shas[0], shas[12])
    assert "skipped" in c0 and c12["period"] == "earlier" and "skipped" not in c12
    assert c12["runs_before"] == [_run_id(11, k) for k in range(3)]
    assert c12["runs_after"] == [_run_id(12, k) for k in range(3)]
    assert abs(c12["actual_delta_s"]) == c12["noise_s"] == 10.0
    assert c12["beyond_noise"] is False and c12["sign_agrees"] is not None
    assert c12["self_delta_s"] == 0.0
    # build runs `make -j2` now, predicted from its runs of `make`: predict says so
    assert c12["old_steps_jobs"] == 1
    assert c17["old_steps_jobs"] == c19["old_steps_jobs"] == summary["old_steps_jobs"] == 0
    assert earlier["summary"]["commits_before_validation"] == 2
    assert earlier["summary"]["commits_reviewed"] == 1
    assert earlier["summary"]["sign"]["with_3_and_3"] == 1
    assert [g["pass"] for g in repo["goals"]][1] is True  # names matched 100%
    assert result["goals_pass"] == all(g["pass"] for g in repo["goals"])
    # one model per period, fitted on the rows before it began: its first run's creation
    fitted = {
        p.name: json.loads(p.read_text())
        for p in (case["root"] / "work" / "models").glob("*.fitted.json")
    }
    # (an earlier commit: one of its own, fitted on the rows before the commit)
    assert {name: doc["before"] for name, doc in fitted.items()} == {
        "octo+demo-validation.fitted.json": (START + timedelta(days=15, hours=3)).isoformat(),
        "octo+demo-test.fitted.json": (START + timedelta(days=18, hours=1)).isoformat(),
        f"octo+demo-earlier-{shas[12][:12]}.fitted.json": (START + timedelta(days=12)).isoformat(),
    }


def _summary(**over: Any) -> dict[str, Any]:
    def fig(rows: int, rmsle: float | None, coverage: float | None = None) -> dict[str, Any]:
        return {"rows": rows, "rmsle": rmsle, "coverage": coverage, "within_2x": None}

    summary: dict[str, Any] = {
        "by_basis": {
            "history": fig(100, 0.20, 0.70),
            "config fallback": fig(10, 0.60),
            "from-history matrix": fig(0, None),
            "unknown": fig(0, None),
        },
        "no_run_of_their_own": fig(10, 0.60),
        "self_compare": {"commits": 5, "nonzero": 0, "failed": 0, "max_abs_delta_s": 0.0},
        "sign": {"beyond_noise": 2, "right": 2},
        "jobs": {"matched_share": 0.95},
    }
    for key, value in over.items():
        part, _, name = key.partition("__")
        if name:
            summary[part] = {**summary[part], name: value}
        elif key in summary:
            summary[key] = value
        else:
            summary["by_basis"][part.replace("_", " ")] = value
    return summary


def test_goals_pass_at_their_bounds() -> None:
    goals = load_script("predict_review_real").goals(_summary())
    assert [g["pass"] for g in goals] == [True] * 5


@pytest.mark.parametrize(
    ("over", "failed"),
    [
        ({"self_compare__nonzero": 1}, 0),
        ({"self_compare__failed": 1}, 0),
        ({"self_compare__commits": 0}, 0),
        ({"jobs__matched_share": 0.9499}, 1),
        ({"history": {"rows": 100, "rmsle": 0.2001, "coverage": 0.8}}, 2),
        ({"history": {"rows": 100, "rmsle": 0.1, "coverage": 0.69}}, 2),
        ({"history": {"rows": 100, "rmsle": 0.1, "coverage": 0.91}}, 2),
        ({"history": {"rows": 0, "rmsle": None, "coverage": None}}, 2),
        ({"no_run_of_their_own": {"rows": 3, "rmsle": 0.61, "coverage": None}}, 3),
        # the config fallback's own figure is shown, not the goal's: the goal reads both bases
        ({"config_fallback": {"rows": 3, "rmsle": 0.61, "coverage": None}}, None),
        ({"sign__right": 1}, 4),
    ],
)
def test_each_goal_fails_past_its_bound(over: dict[str, Any], failed: int | None) -> None:
    goals = load_script("predict_review_real").goals(_summary(**over))
    assert [i for i, g in enumerate(goals) if not g["pass"]] == ([] if failed is None else [failed])


def test_no_fallback_rows_and_no_commit_over_the_noise_pass() -> None:
    summary = _summary(
        config_fallback={"rows": 0, "rmsle": None, "coverage": None},
        sign__beyond_noise=0,
        sign__right=0,
    )
    assert all(g["pass"] for g in load_script("predict_review_real").goals(summary))


def test_a_mirror_that_is_no_repository_is_refused(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    args = ["--dataset", str(case["dataset"]), "--work", str(tmp_path / "w")]
    assert _main([*args, "--repo", f"{REPO}={plain}"]) == 2
    err = capsys.readouterr().err
    assert f"{plain}: not a git repository" in err and "git clone --mirror" in err
    assert not (tmp_path / "w").exists()


def test_a_folder_inside_a_repository_is_refused(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inner = case["mirror"] / ".github"
    args = ["--dataset", str(case["dataset"]), "--work", str(tmp_path / "w")]
    assert _main([*args, "--repo", f"{REPO}={inner}"]) == 2
    assert "not a git repository but a folder inside" in capsys.readouterr().err


def test_a_dataset_without_the_repositorys_validation_rows_is_refused(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = tmp_path / "small"
    # two runs: too few for the temporal split, the repository goes to train whole
    rows = _rows(case["shas"][:2], runs=lambda i: 1)
    write_dataset(rows, small, provenance={"kind": "test", "synthetic": True})
    args = ["--dataset", str(small), "--work", str(tmp_path / "w")]
    assert _main([*args, "--repo", f"{REPO}={case['mirror']}"]) == 2
    err = capsys.readouterr().err
    assert f"no {REPO} rows in the temporal validation split" in err and "fix:" in err


@pytest.mark.parametrize("dataset", ["missing", "empty"])
def test_no_dataset_or_another_repository_is_refused(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], dataset: str
) -> None:
    folder = tmp_path / dataset
    if dataset == "empty":
        folder.mkdir()
    args = ["--dataset", str(folder), "--work", str(tmp_path / "w")]
    assert _main([*args, "--repo", f"{REPO}={case['mirror']}"]) == 2
    assert "not a dataset this script can read" in capsys.readouterr().err
    args = ["--dataset", str(case["dataset"]), "--work", str(tmp_path / "w")]
    assert _main([*args, "--repo", f"other/name={case['mirror']}"]) == 2
    assert "holds no rows of other/name (it holds octo/demo)" in capsys.readouterr().err


def test_noise_is_measured_on_the_windows_with_no_workflow_change() -> None:
    """10 runs of 0 s then 10 of 100 s: of the 15 windows of 3 runs against the next 3, the
    3 around the step say +100 s and the 12 others 0 s: P2.5 0, P97.5 100, noise 50 s. A workflow
    change at the step leaves out the 5 windows that straddle it: 10 windows of 0 s."""
    script = load_script("predict_review_real")
    runs = [
        script.Run(i, START + timedelta(hours=i), i, "ci.yml", {"j": 0.0 if i < 10 else 100.0})
        for i in range(20)
    ]

    def noise_of(straddles: Any) -> tuple[float | None, int]:
        swings = script.swings_of(runs, straddles)
        return script.noise_from(swings), len(swings)

    assert noise_of(lambda lo, hi: False) == (50.0, 15)
    assert noise_of(lambda lo, hi: lo < 10 <= hi) == (0.0, 10)
    # a second change, at 4, leaves out 4 windows more: too few to measure the noise
    assert noise_of(lambda lo, hi: lo < 10 <= hi or lo < 4 <= hi) == (None, 6)


def test_the_goals_noise_is_the_95_band_and_predicts_band_is_shown_beside() -> None:
    """41 windows swinging 0, 1, ..., 40 s: the goal's noise is half the P2.5-P97.5 width
    (1 to 39: 19 s), the band predict states for a review half the P10-P90 width (4 to 36:
    16 s); under 10 windows there is none."""
    script = load_script("predict_review_real")
    swings = [float(x) for x in range(41)]
    assert script.noise_from(swings) == 19.0
    assert script.noise_from(swings, script.SHOWN_LEVELS) == 16.0
    assert script.noise_from(swings[:9]) is None


def test_as_often_is_the_share_of_no_change_windows_swinging_as_much() -> None:
    """The same 15 windows (3 of +100 s, 12 of 0 s): a change of 100 s either way, or of 50 s,
    is seen in 3 of 15 windows with nothing changed; 101 s in none; 0 s in all. Too few
    windows, or no actual change, say nothing."""
    script = load_script("predict_review_real")
    runs = [
        script.Run(i, START + timedelta(hours=i), i, "ci.yml", {"j": 0.0 if i < 10 else 100.0})
        for i in range(20)
    ]
    swings = script.swings_of(runs, lambda lo, hi: False)
    assert sorted(swings) == [0.0] * 12 + [100.0] * 3
    assert [script.as_often(swings, x) for x in (100.0, -100.0, 50.0)] == [0.2, 0.2, 0.2]
    assert script.as_often(swings, 101.0) == 0.0
    assert script.as_often(swings, 0.0) == 1.0
    assert script.as_often(swings[:9], 100.0) is None
    assert script.as_often(swings, None) is None


def _run(i: int, jobs: dict[str, float]) -> Any:
    return load_script("predict_review_real").Run(i, START + timedelta(hours=i), i, "ci.yml", jobs)


def test_a_job_missing_from_a_run_failed_there_and_took_no_zero_seconds() -> None:
    """The dataset holds successful jobs only. `b` succeeds in 1 of the 3 runs after: its
    median is that run's, not 0 s; `c` ran before and never succeeded after: left out while
    the workflow still has it, counted as removed when the change removed it; `d` is added."""
    script = load_script("predict_review_real")
    before = [_run(i, {"a": 100.0, "b": 50.0, "c": 300.0}) for i in range(3)]
    after = [_run(3, {"a": 110.0, "b": 50.0}), _run(4, {"a": 110.0}), _run(5, {"a": 110.0})]
    kept = ({"a", "b", "c"}, {"a", "b", "c"})
    assert script.three_vs_three(before, after, kept) == 10.0
    assert script.three_vs_three(before, after, ({"a", "b", "c"}, {"a", "b"})) == -290.0
    added = [_run(i, {**r.jobs, "d": 20.0}) for i, r in enumerate(after, 3)]
    assert script.three_vs_three(before, added, ({"a", "b", "c"}, {"a", "b", "c", "d"})) == 30.0
    # no workflow change between the halves (the noise's windows): a job in one half only
    # failed in the other
    assert script.three_vs_three(before, after) == 10.0


def _side(basis: str, seconds: float) -> dict[str, Any]:
    return {"duration_s": seconds, "p10": seconds / 2, "p90": seconds * 2, "basis": basis}


def test_review_rows_are_read_by_predicts_names_and_bases() -> None:
    """A review as `predict --base-ref --format json` writes it: `reviews[]`, each row with its
    status, `old_name` for a moved job and each side's `basis` in predict's words."""
    script = load_script("predict_review_real")
    rows = [
        ("moved", "CI / build", "build", _side("history", 10), _side("history", 11)),
        ("unchanged", "CI / basic (unit)", None, None, _side("from-history matrix", 20)),
        ("added", "CI / docs", None, None, _side("config fallback", 30)),
        ("added", "CI / lint", None, None, _side("config only", 40)),
        ("added", "CI / remote", None, None, _side("a basis newer than this script", 50)),
        ("removed", "old", None, _side("history", 60), None),
    ]
    doc = {
        "workflow": ".github/workflows/post-commit.yml",
        "reviews": [
            {
                "workflow": ".github/workflows/post-commit.yml",
                "jobs": [
                    {"status": st, "name": n, "old_name": o, "basis": (a or b or {})["basis"]}
                    | {"before": b, "after": a}
                    for st, n, o, b, a in rows
                ],
            }
        ],
    }
    reviews = script.reviews_of(doc)
    predicted = script.predicted_jobs(reviews)
    assert {n: p.basis for n, p in predicted.items()} == {
        "CI / build": "history",
        "CI / basic (unit)": "from-history matrix",
        "CI / docs": "config fallback",
        "CI / lint": "config only",
        "CI / remote": "unknown",
    }
    assert (predicted["CI / build"].status, predicted["CI / build"].old_name) == ("moved", "build")
    assert predicted["CI / docs"].duration_s == 30.0 and predicted["CI / docs"].p90 == 60.0
    # the moved job is on the base side under its old name
    assert script.side_names(reviews) == (
        {"build", "old"},
        {"CI / build", "CI / basic (unit)", "CI / docs", "CI / lint", "CI / remote"},
    )
