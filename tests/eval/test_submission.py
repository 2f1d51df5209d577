"""Reading a submission: every problem, with its line, in one pass."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gharuntime.eval.submission import read_submission
from gharuntime.problems import ProblemLog

IDS = [str(1000 + i) for i in range(50)]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _good(rid: str, value: float = 10.0) -> str:
    return json.dumps({"id": rid, "duration_s": value})


def _raw(rid: str, rest: str) -> str:
    """A line written by hand: '{"id": RID, REST}' (for what json.dumps will not write)."""
    return '{"id": "' + rid + '", ' + rest + "}"


def _read(path: Path, track: str = "config", **kwargs: bool) -> tuple[ProblemLog, object]:
    log = ProblemLog()
    targets = ("duration_s", "queue_s", "log_bytes") if track == "multi" else ("duration_s",)
    parsed = read_submission(path, pl.Series(IDS), targets, track, log, **kwargs)
    return log, parsed


def _lines_of(log: ProblemLog, kind: str) -> list[int | None]:
    return [p.line for p in log.kept if p.kind == kind]


def test_a_complete_submission_has_no_problems(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", [_good(r, float(i)) for i, r in enumerate(IDS)])
    log, parsed = _read(path)
    assert not log
    assert np.array_equal(parsed.predictions["duration_s"], np.arange(50.0))  # type: ignore[attr-defined]
    assert parsed.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()  # type: ignore[attr-defined]


def test_order_of_lines_does_not_matter(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", [_good(r, float(int(r))) for r in reversed(IDS)])
    log, parsed = _read(path)
    assert not log
    assert parsed.predictions["duration_s"][0] == 1000.0  # type: ignore[attr-defined]


def test_every_problem_is_reported_with_its_line(tmp_path: Path) -> None:
    lines = [_good(r) for r in IDS]
    lines[2] = "{not json"
    lines[4] = "[1, 2]"
    lines[6] = json.dumps({"duration_s": 3.0})
    lines[8] = json.dumps({"id": 1008, "duration_s": 3.0})
    lines[10] = json.dumps({"id": IDS[10], "duration_s": "12"})
    lines[12] = json.dumps({"id": IDS[12], "duration_s": -1.0})
    lines[14] = _raw(IDS[14], '"duration_s": NaN')
    lines[16] = _raw(IDS[16], '"duration_s": Infinity')
    lines[18] = json.dumps({"id": IDS[18], "duration_s": 1.0, "queue_s": 2.0})
    lines[20] = json.dumps({"id": IDS[20], "duration_s": True})
    lines[22] = json.dumps({"id": IDS[22]})
    lines[24] = json.dumps({"id": IDS[24], "duration_s": None})
    lines.append(_good(IDS[30]))  # duplicate of line 31
    lines.append(_good("nope"))
    path = _write(tmp_path / "s.jsonl", lines)
    log, _ = _read(path)
    assert _lines_of(log, "not_json") == [3]
    assert _lines_of(log, "not_object") == [5]
    assert _lines_of(log, "bad_id") == [7, 9]
    assert _lines_of(log, "bad_value") == [11, 13, 15, 17, 21, 25]
    assert _lines_of(log, "missing_target") == [23]  # no key at all: the target is missing
    assert _lines_of(log, "target_not_in_track") == [19]
    assert _lines_of(log, "duplicate_id") == [51]
    assert "first on line 31" in next(p.message for p in log.kept if p.kind == "duplicate_id")
    assert _lines_of(log, "unknown_id") == [52]
    # lines 3, 5, 7, 9 named no known record
    assert log.counts["missing_records"] == 1
    assert "4 of 50" in next(p.message for p in log.kept if p.kind == "missing_records")


def test_unknown_ids_list_the_first_twenty_and_count_all(tmp_path: Path) -> None:
    lines = [_good(r) for r in IDS] + [_good(f"x{i}") for i in range(35)]
    log, _ = _read(_write(tmp_path / "s.jsonl", lines))
    assert log.counts["unknown_id"] == 35
    assert _lines_of(log, "unknown_id") == list(range(51, 71))


def test_unknown_fields_are_problems(tmp_path: Path) -> None:
    lines = [_good(r) for r in IDS]
    lines[0] = json.dumps({"id": IDS[0], "duration_s": 1.0, "note": "x"})
    log, _ = _read(_write(tmp_path / "s.jsonl", lines))
    assert _lines_of(log, "unknown_field") == [1]


def test_multi_track_needs_every_target(tmp_path: Path) -> None:
    lines = [json.dumps({"id": r, "duration_s": 1, "queue_s": 2, "log_bytes": 3}) for r in IDS]
    lines[3] = json.dumps({"id": IDS[3], "duration_s": 1, "queue_s": 2})
    log, parsed = _read(_write(tmp_path / "s.jsonl", lines), track="multi")
    assert _lines_of(log, "missing_target") == [4]
    assert "no 'log_bytes', a target of track 'multi' that this dataset holds" in str(log.kept[0])
    assert parsed.predictions["log_bytes"][0] == 3.0  # type: ignore[attr-defined]


def test_missing_records_are_allowed_with_allow_partial(tmp_path: Path) -> None:
    log, parsed = _read(
        _write(tmp_path / "s.jsonl", [_good(r) for r in IDS[:40]]), allow_partial=True
    )
    assert not log
    assert parsed.missing == 10  # type: ignore[attr-defined]


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    lines = [_good(r) for r in IDS]
    lines.insert(10, "")
    lines.insert(20, "   ")
    log, parsed = _read(_write(tmp_path / "s.jsonl", lines))
    assert not log and parsed.lines == 52  # type: ignore[attr-defined]


def test_lines_that_join_into_valid_json_are_still_checked_one_by_one(tmp_path: Path) -> None:
    """A record split over two lines must not pass because the lines happen to join."""
    lines = [_good(r) for r in IDS[2:]]
    lines.insert(0, '{"id": "' + IDS[0] + '", "duration_s": 1, "x": [{"a": 1}')
    lines.insert(1, '{"b": 2}]}')
    lines.insert(2, _raw(IDS[1], '"duration_s": 1') + ", " + _raw(IDS[1], '"duration_s": 1'))
    log, _ = _read(_write(tmp_path / "s.jsonl", lines))
    assert _lines_of(log, "not_json") == [1, 2, 3]


def test_large_files_are_read_in_batches_with_exact_line_numbers(tmp_path: Path) -> None:
    n = 60_000  # more than one 1 MiB batch
    ids = [str(i) for i in range(n)]
    lines = [json.dumps({"id": r, "duration_s": 1.5}) for r in ids]
    lines[45_000] = json.dumps({"id": ids[45_000], "duration_s": -2})
    path = _write(tmp_path / "s.jsonl", lines)
    log = ProblemLog()
    read_submission(path, pl.Series(ids), ("duration_s",), "config", log)
    assert [p.line for p in log.kept] == [45_001]


def test_integer_too_large_for_a_float_is_a_problem(tmp_path: Path) -> None:
    lines = [_good(r) for r in IDS]
    lines[0] = _raw(IDS[0], '"duration_s": 1' + "0" * 400)
    log, _ = _read(_write(tmp_path / "s.jsonl", lines))
    assert _lines_of(log, "bad_value") == [1]


@pytest.mark.parametrize("garbage", [b"\xff\xfe\x00", b"\x00\x00"])
def test_binary_garbage_is_reported_not_raised(tmp_path: Path, garbage: bytes) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(garbage + b"\n" + "".join(_good(r) + "\n" for r in IDS).encode())
    log, _ = _read(path)
    assert _lines_of(log, "not_json") == [1]


def test_batch_and_line_by_line_paths_agree(tmp_path: Path) -> None:
    lines = [_good(r, i * 1.5) for i, r in enumerate(IDS)]
    fast = _write(tmp_path / "fast.jsonl", lines)
    slow = tmp_path / "slow.jsonl"  # CRLF endings send every batch down the line-by-line path
    slow.write_bytes("".join(line + "\r\n" for line in lines).encode())
    (log_a, a), (log_b, b) = _read(fast), _read(slow)
    assert not log_a and not log_b
    assert np.array_equal(a.predictions["duration_s"], b.predictions["duration_s"])  # type: ignore[attr-defined]
    assert np.array_equal(a.present, b.present)  # type: ignore[attr-defined]


def test_last_line_without_newline_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(_good(r) for r in IDS), encoding="utf-8")  # no final newline
    log, parsed = _read(path)
    assert not log and parsed.lines == 50  # type: ignore[attr-defined]
