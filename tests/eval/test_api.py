"""Evaluation end to end on the fixture dataset: files in, result document out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from gharuntime.dataset import load
from gharuntime.eval import InvalidSubmission, evaluate_file, evaluate_gold
from gharuntime.eval.request import gold_failures

RESAMPLES = 200


def _submission(
    path: Path, dataset: Path, scale: float = 1.1, split: str = "test", drop: int = 0
) -> Path:
    rows = load(dataset, "temporal", split)
    lines = [
        json.dumps({"id": rid, "duration_s": round(d * scale, 2)})
        for rid, d in zip(rows["id"], rows["duration_s"], strict=True)
    ]
    path.write_text("".join(line + "\n" for line in lines[drop:]), encoding="utf-8")
    return path


def _value(result: dict[str, Any], metric: str, target: str = "duration_s") -> float:
    value = result["metrics"][target][metric]["value"]
    assert value is not None
    return float(value)


def test_gold_scores_perfectly(fixture_dataset_master: Path) -> None:
    result = evaluate_gold(fixture_dataset_master, resamples=RESAMPLES)
    for target in ("duration_s", "queue_s", "log_bytes"):
        m = result["metrics"][target]
        assert m["mae"]["value"] == 0 and m["median_ape"]["value"] == 0
        assert m["rmsle"]["value"] == 0 and m["within_2x"]["value"] == 1
        assert m["r2_log"]["value"] == 1
        assert m["spearman"]["value"] == pytest.approx(1.0)
        assert (m["mae"]["ci_low"], m["mae"]["ci_high"]) == (0.0, 0.0)


def test_constant_training_median_has_the_known_values(fixture_dataset_master: Path) -> None:
    result = evaluate_gold(fixture_dataset_master, track="config", resamples=RESAMPLES)
    median = result["comparison"]
    train = load(fixture_dataset_master, "temporal", "train")["duration_s"].to_numpy()
    y = load(fixture_dataset_master, "temporal", "test")["duration_s"].to_numpy()
    c = float(np.median(train))
    ly, lc = np.log1p(y), np.log1p(c)
    hi, lo = np.maximum(max(c, 1), np.maximum(y, 1)), np.minimum(max(c, 1), np.maximum(y, 1))
    assert _value(median, "mae") == pytest.approx(np.mean(np.abs(c - y)))
    assert _value(median, "median_ape") == pytest.approx(np.median(np.abs(c - y) / y))
    assert _value(median, "rmsle") == pytest.approx(np.sqrt(np.mean((lc - ly) ** 2)))
    assert _value(median, "r2_log") == pytest.approx(
        1 - np.sum((ly - lc) ** 2) / np.sum((ly - ly.mean()) ** 2)
    )
    assert _value(median, "within_2x") == pytest.approx(np.mean(hi / lo <= 2))
    assert median["metrics"]["duration_s"]["spearman"]["value"] is None  # constant: undefined
    assert median["submission"]["values"]["duration_s"] == c


def test_submission_metrics_match_scipy(fixture_dataset_master: Path, tmp_path: Path) -> None:
    sub = _submission(tmp_path / "a.jsonl", fixture_dataset_master, scale=1.5)
    result = evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=50)
    rows = load(fixture_dataset_master, "temporal", "test")
    y = rows["duration_s"].to_numpy()
    p = np.round(y * 1.5, 2)
    assert _value(result, "mae") == pytest.approx(np.mean(np.abs(p - y)))
    assert _value(result, "spearman") == pytest.approx(stats.spearmanr(p, y).statistic)
    assert result["counts"]["scored"]["duration_s"] == rows.height
    assert result["dataset"]["rows"] == rows.height


def test_result_records_provenance(fixture_dataset_master: Path, tmp_path: Path) -> None:
    import hashlib

    sub = _submission(tmp_path / "a.jsonl", fixture_dataset_master)
    (tmp_path / "a.meta.json").write_text(
        json.dumps({"method": "scaled", "method_version": "2", "track": "config", "seed": 4})
    )
    result = evaluate_file(sub, fixture_dataset_master, seed=9, resamples=RESAMPLES)
    assert result["result_version"] == 2
    assert result["submission"]["sha256"] == hashlib.sha256(sub.read_bytes()).hexdigest()
    assert result["meta"]["method"] == "scaled" and result["meta"]["seed"] == 4
    assert (
        result["dataset"]["manifest_sha256"]
        == hashlib.sha256((fixture_dataset_master / "manifest.json").read_bytes()).hexdigest()
    )
    manifest = json.loads((fixture_dataset_master / "manifest.json").read_text())
    assert result["dataset"]["revision"] == manifest["revision"]  # content, not the manifest bytes
    assert result["dataset"]["revision"] != result["dataset"]["manifest_sha256"]
    assert result["bootstrap"]["seed"] == 9 and result["bootstrap"]["resamples"] == RESAMPLES
    assert result["bootstrap"]["spearman"].startswith("exact:")  # a small split: re-ranked
    assert result["gharuntime_version"]


def test_same_seed_gives_the_same_result(fixture_dataset_master: Path, tmp_path: Path) -> None:
    sub = _submission(tmp_path / "a.jsonl", fixture_dataset_master)
    a = evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=100)
    b = evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=100)
    assert a == b


def test_vs_gives_intervals_for_the_difference_on_shared_resamples(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    a = _submission(tmp_path / "a.jsonl", fixture_dataset_master, scale=1.05)
    b = _submission(tmp_path / "b.jsonl", fixture_dataset_master, scale=3.0)
    opts = {"track": "config"}
    alone = evaluate_file(a, fixture_dataset_master, options=opts, resamples=RESAMPLES)
    both = evaluate_file(a, fixture_dataset_master, options=opts, vs=b, resamples=RESAMPLES)
    assert both["metrics"] == alone["metrics"]  # A's intervals do not depend on B
    diff = both["comparison"]["difference"]["duration_s"]["mae"]
    assert diff["value"] == pytest.approx(_value(alone, "mae") - _value(both["comparison"], "mae"))
    assert diff["ci_high"] < 0  # A is clearly better (lower MAE)


def test_breakdowns_partition_the_records(fixture_dataset_master: Path, tmp_path: Path) -> None:
    sub = _submission(tmp_path / "a.jsonl", fixture_dataset_master)
    result = evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=50)
    rows = load(fixture_dataset_master, "temporal", "test")
    breakdowns = result["breakdowns"]["duration_s"]
    by_os = {g: e["rows"] for g, e in breakdowns["runner_os"].items()}
    assert by_os == dict(rows["runner_os"].value_counts().iter_rows())
    assert sum(e["rows"] for e in breakdowns["duration_decile"].values()) == rows.height
    assert list(breakdowns["duration_decile"]) == [f"D{i}" for i in range(1, 11)]
    assert {g for g in breakdowns["repo_seen_in_training"]} <= {"seen", "unseen"}


def test_cross_repo_test_is_all_unseen(fixture_dataset_master: Path, tmp_path: Path) -> None:
    rows = load(fixture_dataset_master, "cross_repo", "test")
    sub = tmp_path / "c.jsonl"
    sub.write_text("".join(json.dumps({"id": r, "duration_s": 60.0}) + "\n" for r in rows["id"]))
    result = evaluate_file(
        sub,
        fixture_dataset_master,
        options={"track": "config", "config": "cross_repo"},
        resamples=50,
    )
    groups = result["breakdowns"]["duration_s"]["repo_seen_in_training"]
    assert list(groups) == ["unseen"] and groups["unseen"]["rows"] == rows.height


def test_partial_submission_scores_missing_records_as_failures(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    full = evaluate_file(
        _submission(tmp_path / "f.jsonl", fixture_dataset_master, scale=1.0),
        fixture_dataset_master,
        options={"track": "config"},
        resamples=50,
    )
    partial = evaluate_file(
        _submission(tmp_path / "p.jsonl", fixture_dataset_master, scale=1.0, drop=10),
        fixture_dataset_master,
        options={"track": "config"},
        allow_partial=True,
        resamples=50,
    )
    n = full["counts"]["scored"]["duration_s"]
    assert partial["counts"]["scored"]["duration_s"] == n  # never dropped
    assert partial["counts"]["missing"] == 10
    assert _value(partial, "within_2x") == pytest.approx((n - 10) / n)
    assert _value(full, "within_2x") == 1.0


def test_missing_records_without_allow_partial_are_refused(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    sub = _submission(tmp_path / "p.jsonl", fixture_dataset_master, drop=3)
    with pytest.raises(InvalidSubmission) as info:
        evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=10)
    assert info.value.problems.counts == {"missing_records": 1}


def test_revision_mismatch_is_refused(fixture_dataset_master: Path, tmp_path: Path) -> None:
    sub = _submission(tmp_path / "a.jsonl", fixture_dataset_master)
    with pytest.raises(InvalidSubmission) as info:
        evaluate_file(
            sub,
            fixture_dataset_master,
            options={"track": "config", "dataset_revision": "0" * 64},
            resamples=10,
        )
    assert "revision_mismatch" in info.value.problems.counts


def test_matching_revision_is_accepted(fixture_dataset_master: Path, tmp_path: Path) -> None:
    sub = _submission(tmp_path / "a.jsonl", fixture_dataset_master)
    revision = json.loads((fixture_dataset_master / "manifest.json").read_text())["revision"]
    result = evaluate_file(
        sub,
        fixture_dataset_master,
        options={"track": "config", "dataset_revision": revision},
        resamples=10,
    )
    assert result["meta"]["dataset_revision"] == revision


def test_forbidden_inputs_and_line_problems_are_reported_together(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    sub = _submission(tmp_path / "a.jsonl", fixture_dataset_master)
    with sub.open("a") as f:
        f.write("garbage\n")
    with pytest.raises(InvalidSubmission) as info:
        evaluate_file(
            sub,
            fixture_dataset_master,
            options={"track": "config", "inputs": ("repo", "history_duration_s")},
            resamples=10,
        )
    assert set(info.value.problems.counts) == {"forbidden_input", "not_json"}


def test_multi_track_scores_every_target(fixture_dataset_master: Path, tmp_path: Path) -> None:
    rows = load(fixture_dataset_master, "temporal", "test")
    sub = tmp_path / "m.jsonl"
    sub.write_text(
        "".join(
            json.dumps({"id": r["id"], "duration_s": 60, "queue_s": 5, "log_bytes": 2000}) + "\n"
            for r in rows.iter_rows(named=True)
        )
    )
    result = evaluate_file(sub, fixture_dataset_master, options={"track": "multi"}, resamples=20)
    assert set(result["metrics"]) == {"duration_s", "queue_s", "log_bytes"}
    y = rows["queue_s"].to_numpy()
    assert _value(result, "mae", "queue_s") == pytest.approx(np.mean(np.abs(5 - y)))


def _multi_submission(path: Path, dataset: Path, **targets: float) -> Path:
    rows = load(dataset, "temporal", "test")
    path.write_text("".join(json.dumps({"id": r, **targets}) + "\n" for r in rows["id"].to_list()))
    return path


def test_multi_track_leaves_out_a_target_the_dataset_does_not_hold(
    no_logs_dataset: Path, tmp_path: Path
) -> None:
    sub = _multi_submission(tmp_path / "m.jsonl", no_logs_dataset, duration_s=60, queue_s=5)
    result = evaluate_file(sub, no_logs_dataset, options={"track": "multi"}, resamples=50)
    assert set(result["metrics"]) == set(result["counts"]["scored"]) == {"duration_s", "queue_s"}
    assert set(result["bootstrap"]["per_resample"]) == {"duration_s", "queue_s"}
    assert result["targets"]["scored"] == ["duration_s", "queue_s"]
    assert "holds no value of it" in result["targets"]["left_out"]["log_bytes"]
    # the summary: each target weighs the same, in the point and in every resample
    rmsle = [result["metrics"][t]["rmsle"]["value"] for t in ("duration_s", "queue_s")]
    summary = result["summary"]
    assert summary["targets"] == ["duration_s", "queue_s"]
    assert summary["metrics"]["rmsle"]["value"] == pytest.approx(np.mean(rmsle))
    per = result["bootstrap"]["per_resample"]
    both = np.mean([per["duration_s"]["rmsle"], per["queue_s"]["rmsle"]], axis=0)
    assert summary["per_resample"]["rmsle"] == pytest.approx(both.tolist(), rel=1e-6)
    low, high = np.quantile(summary["per_resample"]["rmsle"], [0.025, 0.975])
    assert summary["metrics"]["rmsle"]["ci_low"] == pytest.approx(low, rel=1e-5)
    assert summary["metrics"]["rmsle"]["ci_high"] == pytest.approx(high, rel=1e-5)


def test_a_left_out_target_in_a_submission_is_not_read(
    no_logs_dataset: Path, tmp_path: Path
) -> None:
    sub = _multi_submission(
        tmp_path / "m.jsonl", no_logs_dataset, duration_s=60, queue_s=5, log_bytes=-1
    )
    result = evaluate_file(sub, no_logs_dataset, options={"track": "multi"}, resamples=20)
    assert set(result["metrics"]) == {"duration_s", "queue_s"}


def test_gold_on_multi_scores_the_targets_the_dataset_holds(no_logs_dataset: Path) -> None:
    result = evaluate_gold(no_logs_dataset, track="multi", resamples=20)
    assert set(result["metrics"]) == {"duration_s", "queue_s"}
    assert gold_failures(result) == []
    assert result["comparison"]["summary_difference"]["rmsle"]["value"] < 0  # truth beats median


def test_multi_comparison_summary_is_paired(fixture_dataset_master: Path, tmp_path: Path) -> None:
    a = _multi_submission(
        tmp_path / "a.jsonl", fixture_dataset_master, duration_s=60, queue_s=5, log_bytes=3000
    )
    b = _multi_submission(
        tmp_path / "b.jsonl", fixture_dataset_master, duration_s=90, queue_s=2, log_bytes=900
    )
    result = evaluate_file(
        a, fixture_dataset_master, options={"track": "multi"}, vs=b, resamples=50
    )
    comparison = result["comparison"]
    diff = comparison["summary_difference"]["rmsle"]
    own = result["summary"]["metrics"]["rmsle"]["value"]
    assert diff["value"] == pytest.approx(own - comparison["summary"]["metrics"]["rmsle"]["value"])
    per_target = [comparison["difference"][t]["rmsle"]["value"] for t in result["metrics"]]
    assert diff["value"] == pytest.approx(np.mean(per_target))


def test_unknown_config_in_metadata_is_a_submission_problem(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    sub = _submission(tmp_path / "a.jsonl", fixture_dataset_master)
    (tmp_path / "a.meta.json").write_text(json.dumps({"track": "config", "config": "weekly"}))
    with pytest.raises(InvalidSubmission) as info:
        evaluate_file(sub, fixture_dataset_master, resamples=10)
    assert "unknown config 'weekly'" in info.value.problems.kept[0].message


def test_a_result_names_no_folder_of_the_machine(
    fixture_dataset_master: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The submission, its sidecar and the command's absolute paths are named relative to the
    folder it was scored in (`..` steps for one outside it); the dataset by its folder's name."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    (here / "runs").mkdir(parents=True)
    elsewhere.mkdir()
    sub = _submission(here / "runs" / "a.jsonl", fixture_dataset_master)
    rows = load(fixture_dataset_master, "temporal", "test")
    (here / "runs" / "a.quantiles.jsonl").write_text(
        "".join(
            json.dumps(
                {"id": i, "duration_s_p10": d / 2, "duration_s_p50": d, "duration_s_p90": 2 * d}
            )
            + "\n"
            for i, d in zip(rows["id"], rows["duration_s"], strict=True)
        )
    )
    other = _submission(elsewhere / "b.jsonl", fixture_dataset_master)
    monkeypatch.chdir(here)
    command = ["gharuntime", "eval", str(sub), "--dataset", str(fixture_dataset_master)]
    command += ["--track", "config", f"--out={elsewhere / 'r.json'}", "--method", "m"]
    result = evaluate_file(
        sub.resolve(),
        fixture_dataset_master.resolve(),
        options={"track": "config"},
        vs=other.resolve(),
        resamples=RESAMPLES,
        command=command,
    )
    assert result["submission"]["path"] == "runs/a.jsonl"
    assert result["intervals"]["sidecar"]["path"] == "runs/a.quantiles.jsonl"
    assert result["comparison"]["submission"]["path"] == "../elsewhere/b.jsonl"
    assert result["dataset"]["id"] == fixture_dataset_master.name
    recorded = result["provenance"]["command"]
    assert recorded[:4] + recorded[5:] == [
        *("gharuntime", "eval", "runs/a.jsonl", "--dataset"),
        *("--track", "config", "--out=../elsewhere/r.json", "--method", "m"),
    ]
    assert recorded[4].startswith("../") and (here / recorded[4]).resolve() == (
        fixture_dataset_master.resolve()
    )
    assert str(tmp_path) not in json.dumps(result)
