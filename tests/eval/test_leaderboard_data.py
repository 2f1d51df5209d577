"""What a result stores for the leaderboard (result_version 2): per-resample values of the
primary metrics, fingerprints of the resamples and records, and the data of its plots."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gharuntime.dataset import load, read_manifest
from gharuntime.eval import evaluate_file

RESAMPLES = 40
PRIMARY = ("rmsle", "mae", "median_ape", "within_2x", "spearman")


def _write(path: Path, dataset: Path, scale: float, drop: int = 0) -> Path:
    rows = load(dataset, "temporal", "test")
    lines = [
        json.dumps({"id": rid, "duration_s": round(d * scale, 2)})
        for rid, d in zip(rows["id"], rows["duration_s"], strict=True)
    ]
    path.write_text("".join(line + "\n" for line in lines[drop:]), encoding="utf-8")
    return path


def _score(path: Path, dataset: Path, **kw: Any) -> dict[str, Any]:
    return evaluate_file(path, dataset, options={"track": "config"}, resamples=RESAMPLES, **kw)


@pytest.fixture(scope="module")
def pair(
    fixture_dataset_master: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("pair")
    a = _score(_write(tmp / "a.jsonl", fixture_dataset_master, 1.3), fixture_dataset_master)
    b = _score(_write(tmp / "b.jsonl", fixture_dataset_master, 0.5), fixture_dataset_master)
    return a, b


def test_per_resample_values_give_the_stored_intervals(
    pair: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    a, _ = pair
    assert a["result_version"] == 2
    per = a["bootstrap"]["per_resample"]["duration_s"]
    assert sorted(per) == sorted(PRIMARY)
    for metric in PRIMARY:
        values = np.array([v for v in per[metric] if v is not None], dtype=float)
        assert len(per[metric]) == RESAMPLES
        block = a["metrics"]["duration_s"][metric]
        low, high = np.quantile(values, [0.025, 0.975])
        assert (low, high) == pytest.approx((block["ci_low"], block["ci_high"]))


def test_two_results_share_resamples_and_their_difference_is_paired(
    pair: tuple[dict[str, Any], dict[str, Any]], fixture_dataset_master: Path, tmp_path: Path
) -> None:
    a, b = pair
    assert a["bootstrap"]["repo_ids_sha256"] == b["bootstrap"]["repo_ids_sha256"]
    assert a["dataset"]["record_ids_sha256"] == b["dataset"]["record_ids_sha256"]
    # the same pair scored together with --vs: its A − B interval is the paired one
    both = evaluate_file(
        _write(tmp_path / "a.jsonl", fixture_dataset_master, 1.3),
        fixture_dataset_master,
        options={"track": "config"},
        vs=_write(tmp_path / "b.jsonl", fixture_dataset_master, 0.5),
        resamples=RESAMPLES,
    )
    pa = np.array(a["bootstrap"]["per_resample"]["duration_s"]["rmsle"])
    pb = np.array(b["bootstrap"]["per_resample"]["duration_s"]["rmsle"])
    diff = both["comparison"]["difference"]["duration_s"]["rmsle"]
    assert tuple(np.quantile(pa - pb, [0.025, 0.975])) == pytest.approx(
        (diff["ci_low"], diff["ci_high"])
    )


def test_fingerprints_name_the_split_records_and_repositories(
    pair: tuple[dict[str, Any], dict[str, Any]], fixture_dataset_master: Path
) -> None:
    a, _ = pair
    rows = load(fixture_dataset_master, "temporal", "test")
    ids = "\n".join(str(i) for i in rows["id"].to_list())
    assert a["dataset"]["record_ids_sha256"] == hashlib.sha256(ids.encode()).hexdigest()
    repos = np.unique(rows["repo_id"].to_numpy()).astype("<i8")
    assert a["bootstrap"]["repo_ids_sha256"] == hashlib.sha256(repos.tobytes()).hexdigest()
    source = read_manifest(fixture_dataset_master)["source"]
    assert a["dataset"]["source_kind"] == source["kind"] == "fixture"
    assert a["dataset"]["synthetic"] is True


def test_plot_sample_is_the_same_records_for_every_method(
    pair: tuple[dict[str, Any], dict[str, Any]], fixture_dataset_master: Path
) -> None:
    a, b = pair
    sa, sb = a["plot_data"]["sample"], b["plot_data"]["sample"]
    assert sa["actual"] == sb["actual"]
    rows = load(fixture_dataset_master, "temporal", "test")
    assert sa["size"] == min(500, rows.height) == len(sa["actual"])
    truth = {round(float(d), 6) for d in rows["duration_s"]}
    assert all(round(y, 6) in truth for y in sa["actual"])
    # each predicted value is its actual times the method's scale (rounded to 0.01 s)
    for y, p in zip(sa["actual"], sa["predicted"], strict=True):
        assert p == pytest.approx(y * 1.3, abs=0.006)
    for y, p in zip(sb["actual"], sb["predicted"], strict=True):
        assert p == pytest.approx(y * 0.5, abs=0.006)


def test_error_quantiles_of_a_constant_ratio(
    pair: tuple[dict[str, Any], dict[str, Any]], fixture_dataset_master: Path
) -> None:
    a, _ = pair
    q = a["plot_data"]["abs_log_ratio_quantiles"]
    assert q["q"][0] == 0.0 and q["q"][50] == 0.5 and q["q"][-1] == 1.0
    y = load(fixture_dataset_master, "temporal", "test")["duration_s"].to_numpy()
    p = np.round(y * 1.3, 2)
    expected = np.sort(np.abs(np.log(np.maximum(p, 1)) - np.log(np.maximum(y, 1))))
    assert q["value"][-1] == pytest.approx(expected[-1])
    assert q["value"][0] == pytest.approx(expected[0])
    assert q["value"] == sorted(q["value"])


def test_a_failure_is_infinitely_far_and_has_no_predicted_value(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    sub = _write(tmp_path / "p.jsonl", fixture_dataset_master, 1.0, drop=3)
    result = _score(sub, fixture_dataset_master, allow_partial=True)
    q = result["plot_data"]["abs_log_ratio_quantiles"]["value"]
    assert q[-1] is None and q[0] == 0.0
    rows = load(fixture_dataset_master, "temporal", "test")
    if rows.height <= 500:  # the sample is every record, so the three failures are in it
        assert result["plot_data"]["sample"]["predicted"].count(None) == 3


def test_written_result_keeps_number_lists_on_one_line(
    pair: tuple[dict[str, Any], dict[str, Any]], tmp_path: Path
) -> None:
    from gharuntime.eval import write_result

    a, _ = pair
    doc = {**a, "note": "a string with [\n 1,\n 2] inside stays as it is"}
    out = tmp_path / "r.json"
    write_result(doc, out)
    text = out.read_text()
    assert json.loads(text) == doc
    rmsle = [line for line in text.splitlines() if line.strip().startswith('"rmsle": [')]
    assert len(rmsle) == 1 and rmsle[0].rstrip(",").count(",") == RESAMPLES - 1
