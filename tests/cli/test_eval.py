"""`gharuntime eval` on the command line: exit codes, output, and the result file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli
from gharuntime.dataset import load


@pytest.fixture()
def submission(fixture_dataset_master: Path, tmp_path: Path) -> Path:
    rows = load(fixture_dataset_master, "temporal", "test")
    path = tmp_path / "preds.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": r, "duration_s": round(d * 1.2, 1)}) + "\n"
            for r, d in zip(rows["id"], rows["duration_s"], strict=True)
        )
    )
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["eval", *args])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_scores_a_submission_and_writes_the_result(
    submission: Path, fixture_dataset_master: Path, tmp_path: Path
) -> None:
    out = tmp_path / "result.json"
    code, output = _run(
        str(submission), "--dataset", str(fixture_dataset_master), "--track", "config",
        "--method", "scaled", "--resamples", "100", "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    assert "MAE" in output and "within 2×" in output and "decile: D10" in output
    result = json.loads(out.read_text())
    assert result["result_version"] == 2 and result["meta"]["method"] == "scaled"
    assert not list(tmp_path.glob(".result.json.*"))  # no temporary file left behind


def test_invalid_submission_exits_2_and_writes_nothing(
    submission: Path, fixture_dataset_master: Path, tmp_path: Path
) -> None:
    with submission.open("a") as f:
        f.write('{"id": "nope", "duration_s": 1}\n{"id": 5}\n')
    out = tmp_path / "result.json"
    code, output = _run(
        str(submission), "--dataset", str(fixture_dataset_master), "--track", "config",
        "--out", str(out),
    )  # fmt: skip
    assert code == 2
    assert not out.exists()
    assert "unknown_id" in output and "bad_id" in output
    assert f"{submission}:" in output and "no result written" in output


def test_invalid_submission_json_lists_problems(
    submission: Path, fixture_dataset_master: Path
) -> None:
    with submission.open("a") as f:
        f.write("nope\n")
    result = CliRunner().invoke(
        cli,
        ["eval", str(submission), "-d", str(fixture_dataset_master), "--track", "config", "--json"],
    )
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert report["valid"] is False and report["problems"][0]["kind"] == "not_json"


def test_json_prints_the_result(submission: Path, fixture_dataset_master: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["eval", str(submission), "-d", str(fixture_dataset_master), "--track", "config",
         "--json", "--resamples", "20"],
    )  # fmt: skip
    assert result.exit_code == 0
    assert json.loads(result.stdout)["track"] == "config"


def test_gold_self_check_passes(fixture_dataset_master: Path) -> None:
    code, output = _run(
        "--gold", "--dataset", str(fixture_dataset_master), "--config", "temporal",
        "--split", "test", "--resamples", "50",
    )  # fmt: skip
    assert code == 0, output
    assert "self-check passed" in output and "B: constant" in output


def test_vs_shows_the_difference(
    submission: Path, fixture_dataset_master: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(submission.read_text().replace('"duration_s": ', '"duration_s": 1'))
    code, output = _run(
        str(submission), "--vs", str(other), "-d", str(fixture_dataset_master),
        "--track", "config", "--resamples", "50",
    )  # fmt: skip
    assert code == 0, output
    assert "A − B" in output


def test_unreachable_hub_id_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    code, output = _run("preds.jsonl", "--dataset", "someone/gharuntime@main", "--track", "config")
    assert code == 2
    assert "someone/gharuntime@main" in output and "not in the Hub cache" in " ".join(
        output.split()
    )


def test_missing_track_is_reported(submission: Path, fixture_dataset_master: Path) -> None:
    code, output = _run(str(submission), "--dataset", str(fixture_dataset_master))
    assert code == 2 and "no track declared" in output


def test_submission_or_gold_is_required(fixture_dataset_master: Path) -> None:
    code, output = _run("--dataset", str(fixture_dataset_master))
    assert code == 2 and "--gold" in output


def test_help_teaches_with_examples() -> None:
    code, output = _run("--help")
    assert code == 0 and "Example" in output and "--allow-partial" in output


def test_unwritable_out_is_a_clear_error(
    submission: Path, fixture_dataset_master: Path, tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, output = _run(
        str(submission), "-d", str(fixture_dataset_master), "--track", "config",
        "--resamples", "10", "--out", str(blocker / "result.json"),
    )  # fmt: skip
    assert code == 2 and "cannot write" in output


def test_the_result_records_its_provenance(
    submission: Path, fixture_dataset_master: Path, tmp_path: Path
) -> None:
    import shutil
    import subprocess

    out = tmp_path / "r.json"
    code, _ = _run(
        str(submission), "--dataset", str(fixture_dataset_master), "--track", "config",
        "--resamples", "20", "--out", str(out),
    )  # fmt: skip
    assert code == 0
    result = json.loads(out.read_text())
    prov = result["provenance"]
    assert set(prov) == {"gharuntime_version", "git_commit", "git_dirty", "command", "libraries"}
    assert prov["command"][0] == "gharuntime"
    import numpy
    import polars

    assert prov["libraries"]["numpy"] == numpy.__version__
    assert prov["libraries"]["polars"] == polars.__version__
    root = Path(__file__).resolve().parents[2]
    if shutil.which("git") and (root / ".git").exists():
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        assert prov["git_commit"] == head
        assert isinstance(prov["git_dirty"], bool)
    assert result["dataset"]["repositories"] >= 10
    assert result["warnings"] == []


def _small_dataset(tmp_path: Path, repos: int) -> Path:
    from gharuntime.dataset import write_dataset
    from gharuntime.fixture import fixture_jobs

    out = tmp_path / f"ds{repos}"
    write_dataset(fixture_jobs(repos=repos, runs_per_repo=10), out, provenance={"kind": "fixture"})
    return out


def test_few_repositories_warn_that_intervals_are_unreliable(tmp_path: Path) -> None:
    ds = _small_dataset(tmp_path, 3)
    out = tmp_path / "gold.json"
    code, output = _run(
        "--gold", "--dataset", str(ds), "--config", "temporal", "--split", "test",
        "--resamples", "20", "--out", str(out),
    )  # fmt: skip
    assert code == 0, output
    result = json.loads(out.read_text())
    assert 1 <= result["dataset"]["repositories"] <= 3
    # under 5 repositories the bootstrap resamples workflow runs, and the warning says so
    assert result["bootstrap"]["cluster"] == "run_id"
    (warning,) = [w for w in result["warnings"] if "fewer than 10" in w]
    assert f"resample its {result['bootstrap']['clusters']} workflow runs" in warning
    assert "not for other repositories" in " ".join(output.split())


def test_the_warning_names_what_the_bootstrap_resampled() -> None:
    from gharuntime.eval.provenance import warnings_for

    by_repo = warnings_for({"dataset": {"repositories": 7}, "bootstrap": {"cluster": "repo_id"}})
    assert len(by_repo) == 1 and "repository-bootstrap intervals are unreliable" in by_repo[0]
    one = warnings_for({"dataset": {"repositories": 1}, "bootstrap": {"cluster": "repo_id"}})
    assert "zero width" in one[0]
    runs = warnings_for(
        {"dataset": {"repositories": 1}, "bootstrap": {"cluster": "run_id", "clusters": 513}}
    )
    assert "513 workflow runs" in runs[0] and "zero width" not in runs[0]
    assert warnings_for({"dataset": {"repositories": 10}, "bootstrap": {}}) == []


def test_a_split_with_no_records_is_an_error(tmp_path: Path) -> None:
    from gharuntime.dataset import read_manifest

    ds = _small_dataset(tmp_path, 2)
    counts = read_manifest(ds)["splits"]["cross_repo"]
    empty = next(s for s, n in counts.items() if n == 0)  # 2 repositories cannot fill 3 splits
    code, output = _run(
        "--gold", "--dataset", str(ds), "--config", "cross_repo", "--split", empty,
        "--resamples", "20",
    )  # fmt: skip
    assert code == 2
    assert "0 records" in output and "Traceback" not in output


def _multi(path: Path, dataset: Path, make: Callable[[str], dict[str, object]]) -> Path:
    rows = load(dataset, "temporal", "test")
    path.write_text("".join(json.dumps(make(r)) + "\n" for r in rows["id"].to_list()))
    return path


def test_multi_submission_missing_a_target_the_dataset_holds_is_refused_once(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    sub = _multi(
        tmp_path / "m.jsonl",
        fixture_dataset_master,
        lambda r: {"id": r, "duration_s": 60, "log_bytes": 2000},
    )
    code, output = _run(str(sub), "--dataset", str(fixture_dataset_master), "--track", "multi")
    assert code == 2
    text = " ".join(output.split())
    assert "missing_target" in text and "on all 120 lines: no 'queue_s'" in text
    assert "a target of track 'multi' that this dataset holds" in text
    assert "every record gives 'id' and duration_s, queue_s, log_bytes" in text
    assert text.count("no 'queue_s'") == 1  # one problem for the file, not one per line


def test_a_target_name_the_contract_does_not_know_is_refused_with_the_fix(
    no_logs_dataset: Path, tmp_path: Path
) -> None:
    sub = _multi(
        tmp_path / "m.jsonl",
        no_logs_dataset,
        lambda r: {"id": r, "duration_s": 60, "queue": 5},
    )
    code, output = _run(str(sub), "--dataset", str(no_logs_dataset), "--track", "multi")
    assert code == 2
    text = " ".join(output.split())
    assert "unknown_target" in text
    assert (
        "'queue' is not a target the contract knows (duration_s, queue_s, log_bytes) (did you "
        "mean 'queue_s'?); track 'multi' predicts duration_s, queue_s on this dataset: rename "
        "the key or drop it"
    ) in text
    assert "no 'queue_s'" in text  # and the target it meant is missing


def test_multi_tables_say_which_target_is_left_out(no_logs_dataset: Path, tmp_path: Path) -> None:
    sub = _multi(
        tmp_path / "m.jsonl",
        no_logs_dataset,
        lambda r: {"id": r, "duration_s": 60, "queue_s": 5},
    )
    code, output = _run(
        str(sub), "--dataset", str(no_logs_dataset), "--track", "multi", "--resamples", "20"
    )
    assert code == 0, output
    text = " ".join(output.split())
    assert (
        "queue_s · temporal/test" in text
        and "multi summary · mean over duration_s, queue_s" in text
    )
    assert "mean RMSLE" in text
    assert "log_bytes: left out, not scored: the dataset holds no value of it" in text
