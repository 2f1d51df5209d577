"""Hostile input, round 4 (#37 items 3 and 5): compressed inputs whose size their names do not
tell, and JSON text that UTF-8 cannot hold.

- A gzip line that decompresses to GBs (GHALogs' runs.json.gz, a raw-store shard) is read past
  in bounded pieces and counted, never held: the build keeps every other record, within a memory
  cap far below the line's size.
- A lone surrogate (`"\\ud800"`, valid JSON, not UTF-8) in any text field of an api-json, GHALogs
  or raw-store record makes that record malformed and counted; the build goes on.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import run_limited

from gharuntime import rawstore
from gharuntime.rawstore import RawKind, RawStoreWriter, iter_records
from gharuntime.readfile import bounded_lines
from gharuntime.sources import api_json, ghalogs
from gharuntime.sources.api_json import ApiSource, read_api_json
from gharuntime.sources.ghalogs import read_ghalogs

GB = 1 << 30
_SPACES = gzip.compress(b" " * (16 << 20), compresslevel=9)


def _endless_line(decompressed: int) -> bytes:
    """gzip members that decompress to `decompressed` bytes of one line (no newline), cheaply."""
    return _SPACES * (decompressed // (16 << 20))


def _ghalogs_dump(folder: Path, shared_dir: Path, bomb: bytes) -> Path:
    ref = shared_dir / "reference/ghalogs"
    run = json.loads((ref / "run.json").read_text())
    repo = json.loads((ref / "repository.json").read_text())
    folder.mkdir(parents=True)
    good = gzip.compress((json.dumps(run, default=str) + "\n").encode())
    (folder / "runs.json.gz").write_bytes(bomb + gzip.compress(b"\n") + good)
    (folder / "repositories.json.gz").write_bytes(
        gzip.compress((json.dumps(repo, default=str) + "\n").encode())
    )
    return folder


def test_bounded_lines_reads_past_a_long_line_and_keeps_the_rest() -> None:
    data = b"a\n" + b"x" * 100 + b"\n" + b"y" * 10 + b"\nlast"
    got = list(bounded_lines(io.BytesIO(data), 10))
    assert got == [(1, b"a\n"), (2, None), (3, b"y" * 10 + b"\n"), (4, b"last")]
    assert list(bounded_lines(io.BytesIO(b"z" * 11), 10)) == [(1, None)]
    assert list(bounded_lines(io.BytesIO(b""), 10)) == []


def test_ghalogs_line_over_the_cap_is_counted_not_held(
    tmp_path: Path, shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ghalogs, "MAX_RECORD_BYTES", 1 << 20)
    dump = _ghalogs_dump(tmp_path / "dump", shared_dir, _endless_line(32 << 20))
    rows, problems, _ = read_ghalogs(dump)
    assert rows.height == 18  # the real record after the bomb is read whole
    assert problems.counts == {"unreadable_record": 1}
    assert "runs.json.gz:1: over 1,048,576 bytes" in problems.examples["unreadable_record"][0]


def test_ghalogs_bomb_builds_within_bounded_memory(tmp_path: Path, shared_dir: Path) -> None:
    """3 GB of one line in a 3 MB file, built under a 1.5 GB address-space cap: before, the
    line was read whole (MemoryError, a traceback); now it is counted and the rest is built."""
    dump = _ghalogs_dump(tmp_path / "dump", shared_dir, _endless_line(3 * GB))
    assert (dump / "runs.json.gz").stat().st_size < 8 << 20
    out = run_limited(
        ["build", "--source", "ghalogs", str(dump), "--out", str(tmp_path / "ds")],
        tmp_path,
        memory_mb=1536,
        timeout=300,
    )
    assert "Traceback" not in out.output and "MemoryError" not in out.output, out.output[-2000:]
    assert out.code in (0, 1), out.output[-2000:]  # 1: records were lost, and it says so
    assert "unreadable_record" in out.output or "unreadable record" in out.output
    assert (tmp_path / "ds" / "manifest.json").is_file()


def test_raw_store_line_over_the_cap_is_reported_and_the_rest_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = RawStoreWriter(tmp_path)
    w.add(RawKind.RUN, "1", {"id": 1})
    w._buffer.append(b'{"kind": "run", "key": "2", "body": "' + b"x" * 5000 + b'"}\n')
    w.add(RawKind.RUN, "3", {"id": 3})
    w.close()
    monkeypatch.setattr(rawstore, "MAX_RECORD_BYTES", 1000)
    errors: list[tuple[str, str]] = []
    got = list(iter_records([tmp_path], on_error=lambda where, m: errors.append((where, m))))
    assert [r.key for r in got] == ["1", "3"]
    assert len(errors) == 1 and errors[0][0].endswith(":2"), errors
    assert "over 1,000 bytes" in errors[0][1]


def _surrogate(obj: dict[str, Any], *path: str) -> dict[str, Any]:
    """`obj` with the text at `path` replaced by one holding a lone surrogate."""
    doc = json.loads(json.dumps(obj))
    node = doc
    for key in path[:-1]:
        node = node[key] if not isinstance(node, list) else node[int(key)]
    last = path[-1]
    if isinstance(node, list):
        node[int(last)] = "bad \ud800 text"
    else:
        node[last] = "bad \ud800 text"
    return doc


_JOB = {
    "id": 11,
    "run_id": 7,
    "run_attempt": 1,
    "name": "build",
    "status": "completed",
    "conclusion": "success",
    "created_at": "2024-01-01T00:00:00Z",
    "started_at": "2024-01-01T00:00:05Z",
    "completed_at": "2024-01-01T00:01:05Z",
    "labels": ["ubuntu-latest"],
    "steps": [{"name": "Checkout"}],
    "head_sha": "a" * 40,
    "workflow_name": "CI",
    "run_url": "https://api.github.com/repos/o/r/actions/runs/7",
}
_RUN = {
    "id": 7,
    "run_attempt": 1,
    "repository": {"id": 3, "full_name": "o/r", "fork": False},
    "run_number": 1,
    "event": "push",
    "head_branch": "main",
    "head_sha": "a" * 40,
    "head_commit": {"message": "fix"},
    "workflow_id": 5,
    "path": ".github/workflows/ci.yml",
    "name": "CI",
    "created_at": "2024-01-01T00:00:00Z",
    "run_started_at": "2024-01-01T00:00:01Z",
}


@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("job", ("name",)),
        ("job", ("conclusion",)),
        ("job", ("labels", "0")),
        ("job", ("steps", "0", "name")),
        ("job", ("workflow_name",)),
        ("run", ("head_branch",)),
        ("run", ("head_commit", "message")),
        ("run", ("repository", "full_name")),
        ("run", ("path",)),
    ],
)
def test_api_json_lone_surrogate_is_a_malformed_record(
    tmp_path: Path, kind: str, path: tuple[str, ...]
) -> None:
    other_job = {**_JOB, "id": 12}
    job = _surrogate(_JOB, *path) if kind == "job" else _JOB
    run = _surrogate(_RUN, *path) if kind == "run" else _RUN
    # json.dumps writes the surrogate as the escape "\ud800": valid JSON, not valid UTF-8 text
    (tmp_path / "jobs.json").write_text(json.dumps({"jobs": [job, other_job]}))
    (tmp_path / "runs.json").write_text(json.dumps({"workflow_runs": [run]}))
    t = read_api_json([ApiSource(tmp_path, "dump")])
    assert t.problems.counts == {f"malformed_{kind}_record": 1}, t.problems.counts
    assert "lone surrogate" in t.problems.examples[f"malformed_{kind}_record"][0]
    assert t.jobs.height == (1 if kind == "job" else 2)
    assert t.runs.height == (0 if kind == "run" else 1)


def test_api_json_build_with_a_lone_surrogate_exits_with_it_counted(tmp_path: Path) -> None:
    src = tmp_path / "dump"
    src.mkdir()
    (src / "jobs.json").write_text(
        json.dumps({"jobs": [_surrogate(_JOB, "name"), {**_JOB, "id": 12}]})
    )
    (src / "runs.json").write_text(json.dumps({"workflow_runs": [_RUN]}))
    out = run_limited(
        ["build", "--source", "api-json", str(src), "--out", str(tmp_path / "ds")],
        tmp_path,
        memory_mb=4096,
    )
    assert "Traceback" not in out.output and "UnicodeEncodeError" not in out.output, out.output
    assert out.code in (0, 1), out.output[-2000:]
    assert "malformed_job_record" in out.output or "malformed job record" in out.output


@pytest.mark.parametrize("field", ["workflow_path", "repository_name", "_id"])
def test_ghalogs_lone_surrogate_is_an_unreadable_record(
    tmp_path: Path, shared_dir: Path, field: str
) -> None:
    ref = shared_dir / "reference/ghalogs"
    run = json.loads((ref / "run.json").read_text())
    repo = json.loads((ref / "repository.json").read_text())
    dump = tmp_path / "dump"
    dump.mkdir()
    lines = [json.dumps({**run, field: "x\ud800y"}), json.dumps(run)]
    (dump / "runs.json.gz").write_bytes(gzip.compress("\n".join(lines).encode() + b"\n"))
    (dump / "repositories.json.gz").write_bytes(gzip.compress(json.dumps(repo).encode()))
    rows, problems, _ = read_ghalogs(dump)
    assert problems.counts == {"unreadable_record": 1}
    assert (
        "runs.json.gz:1: a text holds a lone surrogate" in problems.examples["unreadable_record"][0]
    )
    assert rows.height == 18  # the clean copy of the run
    rows.write_parquet(tmp_path / "rows.parquet")  # Arrow takes every kept text


def test_raw_store_lone_surrogate_is_an_unreadable_record(tmp_path: Path) -> None:
    w = RawStoreWriter(tmp_path)
    w.add(RawKind.RUN, "1", {"id": 1, "head_branch": "x\ud800y"})
    w.add(RawKind.RUN, "2", {"id": 2, "head_branch": "main \U0001f600"})  # a real pair stays
    w.close()
    errors: list[tuple[str, str]] = []
    got = list(iter_records([tmp_path], on_error=lambda where, m: errors.append((where, m))))
    assert [r.key for r in got] == ["2"]
    assert len(errors) == 1 and "lone surrogate" in errors[0][1], errors


def _dict_bomb(pieces: int) -> bytes:
    """gzip members that decompress to one JSON list of empty objects, `[{},{},...]`, 16 MiB
    a piece (each piece 16 KB compressed: 54 pieces are a 0.9 MB file of 900 MB)."""
    piece = gzip.compress(b"{}," * ((16 << 20) // 3), compresslevel=9)
    return gzip.compress(b"[") + piece * pieces + gzip.compress(b"{}]")


def test_api_json_objects_are_counted_before_a_file_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past MAX_FILE_CONTAINERS objects and arrays, a file is counted unreadable, unparsed,
    whether gzip, plain JSON or JSON Lines; at the cap it is read."""
    monkeypatch.setattr(api_json, "MAX_FILE_CONTAINERS", 1000)
    (tmp_path / "jobs.json").write_text(json.dumps({"jobs": [_JOB]}))
    (tmp_path / "runs.json").write_text(json.dumps({"workflow_runs": [_RUN]}))
    (tmp_path / "many.json").write_text("[" + ",".join(["{}"] * 1001) + "]")
    (tmp_path / "many.jsonl").write_text("[]\n" * 1001)
    (tmp_path / "many.json.gz").write_bytes(gzip.compress(b"[" + b"[]," * 1000 + b"[]]"))
    (tmp_path / "enough.jsonl").write_text("{}\n" * 1000)
    t = read_api_json([ApiSource(tmp_path, "dump")])
    assert t.jobs.height == 1 and t.runs.height == 1
    assert t.problems.counts["unreadable_file"] == 3
    said = t.problems.examples["unreadable_file"]
    assert sorted(x.split(":", 2)[1] for x in said) == ["many.json", "many.json.gz", "many.jsonl"]
    assert all("holds over 1,000 JSON objects and arrays" in x for x in said), said
    assert t.problems.counts["unrecognized_record"] == 1000  # enough.jsonl: read, each counted


def test_api_json_object_bomb_builds_within_bounded_memory(tmp_path: Path) -> None:
    """A 0.3 MB .json.gz of 300 MB of `[{},{},...]` (100 million empty objects, under the
    1 GiB cap), built under a 1.5 GB address-space cap: before, it was parsed whole
    (MemoryError, a traceback); now it is counted unreadable, unparsed, and the rest is built."""
    src = tmp_path / "dump"
    src.mkdir()
    (src / "bomb.json.gz").write_bytes(_dict_bomb(18))
    assert (src / "bomb.json.gz").stat().st_size < 400_000
    (src / "jobs.json").write_text(json.dumps({"jobs": [_JOB]}))
    (src / "runs.json").write_text(json.dumps({"workflow_runs": [_RUN]}))
    out = run_limited(
        ["build", "--source", "api-json", str(src), "--out", str(tmp_path / "ds")],
        tmp_path,
        memory_mb=1536,
        timeout=300,
    )
    assert "Traceback" not in out.output and "MemoryError" not in out.output, out.output[-2000:]
    assert out.code in (0, 1), out.output[-2000:]
    assert "unreadable_file" in out.output or "unreadable file" in out.output, out.output
