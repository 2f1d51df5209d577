from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from gharuntime.contract import RawKind
from gharuntime.rawstore import RawStoreError, RawStoreWriter, iter_records, listed_shards


def _write(root: Path, n: int, prefix: str = "shard") -> None:
    w = RawStoreWriter(root, prefix=prefix, meta={"source": "test"})
    for i in range(n):
        w.add(RawKind.JOB, str(i), {"id": i}, repo_id=7)
        if i % 3 == 2:
            w.flush()
    w.close()


def test_records_round_trip_in_order(tmp_path: Path) -> None:
    _write(tmp_path, 7)
    records = list(iter_records([tmp_path]))
    assert [r.body["id"] for r in records] == list(range(7))
    assert {r.kind for r in records} == {RawKind.JOB} and records[0].repo_id == 7
    assert len(listed_shards(tmp_path)) == 3


def test_unlisted_leftover_shard_is_ignored_and_removed(tmp_path: Path) -> None:
    _write(tmp_path, 3)
    leftover = tmp_path / "shards" / "shard-000009.jsonl.gz"
    leftover.write_bytes(gzip.compress(b'{"kind":"job","repo_id":1,"key":"x","body":{}}\n'))
    assert len(list(iter_records([tmp_path]))) == 3
    RawStoreWriter(tmp_path).close()
    assert not leftover.exists()


def test_flush_commits_caller_statements_with_the_shard(tmp_path: Path) -> None:
    w = RawStoreWriter(tmp_path)
    w.con.execute("CREATE TABLE done (unit TEXT PRIMARY KEY)")
    w.add(RawKind.RUN, "1", {"id": 1})
    w.flush([("INSERT INTO done VALUES (?)", ("repo-a",))])
    assert w.con.execute("SELECT unit FROM done").fetchall() == [("repo-a",)]
    w.close()


def test_truncated_shard_is_reported_not_raised_with_handler(tmp_path: Path) -> None:
    _write(tmp_path, 6)
    name = listed_shards(tmp_path)[0]
    path = tmp_path / "shards" / name
    path.write_bytes(path.read_bytes()[:-10])
    errors: list[tuple[str, str]] = []
    records = list(iter_records([tmp_path], on_error=lambda w, m: errors.append((w, m))))
    assert len(records) >= 3 and errors and "truncated or corrupt" in errors[0][1]
    with pytest.raises(RawStoreError, match="truncated"):
        list(iter_records([tmp_path]))


def test_unreadable_line_names_shard_and_line(tmp_path: Path) -> None:
    w = RawStoreWriter(tmp_path)
    w.add(RawKind.RUN, "1", {"id": 1})
    w._buffer.append(b"{not json\n")
    w.close()
    errors: list[tuple[str, str]] = []
    assert len(list(iter_records([tmp_path], on_error=lambda w, m: errors.append((w, m))))) == 1
    assert errors[0][0].endswith(":2") and "unreadable record" in errors[0][1]


def test_folder_without_state_is_not_a_raw_store(tmp_path: Path) -> None:
    with pytest.raises(RawStoreError, match="not a raw store"):
        list(iter_records([tmp_path]))
