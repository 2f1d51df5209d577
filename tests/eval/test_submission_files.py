"""One naming rule for a submission's files, one writer, and the old metadata names still read
with a deprecation notice."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gharuntime.dataset import load
from gharuntime.eval import evaluate_file
from gharuntime.eval.api import input_files
from gharuntime.eval.submission_files import SubmissionFiles, write_submission_files


@pytest.mark.parametrize(
    ("name", "meta", "quantiles"),
    [
        ("runs/a.jsonl", "runs/a.meta.json", "runs/a.quantiles.jsonl"),
        ("X.txt", "X.txt.meta.json", "X.txt.quantiles.jsonl"),
        ("Z", "Z.meta.json", "Z.quantiles.jsonl"),
        ("v1.2.jsonl", "v1.2.meta.json", "v1.2.quantiles.jsonl"),
    ],
)
def test_one_rule_names_every_sidecar(name: str, meta: str, quantiles: str) -> None:
    files = SubmissionFiles(Path(name))
    assert (files.meta, files.quantiles) == (Path(meta), Path(quantiles))


@pytest.mark.parametrize(
    ("name", "old"),
    [("preds.jsonl", "preds.jsonl.meta.json"), ("X.txt", "X.meta.json")],
)
def test_an_old_metadata_name_is_read_with_a_deprecation_notice(
    tmp_path: Path, name: str, old: str
) -> None:
    files = SubmissionFiles(tmp_path / name)
    notices: list[str] = []
    assert files.find_meta(notices) is None and notices == []
    (tmp_path / old).write_text("{}")
    assert files.find_meta(notices) == tmp_path / old
    assert len(notices) == 1
    assert old in notices[0] and "rename it to" in notices[0] and str(files.meta) in notices[0]
    files.meta.write_text("{}")  # the current name wins, silently
    notices.clear()
    assert files.find_meta(notices) == files.meta and notices == []


def test_the_writer_writes_all_three_and_drops_a_stale_range(tmp_path: Path) -> None:
    ids = ["1", "2"]
    preds = {"duration_s": np.array([12.34, 5.0]), "log_bytes": np.array([1000.4, 7.6])}
    q = {
        "p10": {"duration_s": np.array([3.0, 2.0]), "log_bytes": np.array([10.0, 1.0])},
        "p90": {"duration_s": np.array([2.0, 9.0]), "log_bytes": np.array([99.0, 9.0])},
    }
    files = write_submission_files(tmp_path / "s.jsonl", ids, preds, {"method": "m"}, q)
    lines = [json.loads(x) for x in files.predictions.read_text().splitlines()]
    assert lines == [
        {"id": "1", "duration_s": 12.3, "log_bytes": 1000.0},
        {"id": "2", "duration_s": 5.0, "log_bytes": 8.0},
    ]
    assert json.loads((tmp_path / "s.meta.json").read_text()) == {"method": "m"}
    ranges = [json.loads(x) for x in (tmp_path / "s.quantiles.jsonl").read_text().splitlines()]
    # made non-decreasing in the level: record 1's p90 (2.0) is raised to its p10 (3.0)
    assert ranges[0] == {
        "id": "1",
        "duration_s_p10": 3.0,
        "duration_s_p90": 3.0,
        "log_bytes_p10": 10.0,
        "log_bytes_p90": 99.0,
    }
    write_submission_files(tmp_path / "s.jsonl", ids, preds, {"method": "m"})
    assert not (tmp_path / "s.quantiles.jsonl").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl", "s.meta.json"]


def test_eval_reads_an_old_metadata_name_and_warns(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    rows = load(fixture_dataset_master, "temporal", "test")
    sub = tmp_path / "a.jsonl"
    sub.write_text(
        "".join(
            json.dumps({"id": rid, "duration_s": d}) + "\n"
            for rid, d in zip(rows["id"], rows["duration_s"], strict=True)
        )
    )
    (tmp_path / "a.jsonl.meta.json").write_text(json.dumps({"method": "old", "track": "config"}))
    said: list[str] = []
    result = evaluate_file(
        sub, fixture_dataset_master, resamples=5, progress=lambda m, _d, _t: said.append(m)
    )
    assert result["meta"]["method"] == "old"  # the old file was read
    deprecations = [w for w in result["warnings"] if "old name" in w]
    assert len(deprecations) == 1 and "a.jsonl.meta.json" in deprecations[0]
    assert deprecations[0] in said
    # and eval's --out guard knows the old name is an input
    assert tmp_path / "a.jsonl.meta.json" in input_files(sub)
