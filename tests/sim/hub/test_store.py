"""gharuntime.sim.hub.store: the test Hub's storage. Objects are kept by their sha256 and only
once the hash checks, commit records are content-addressed, and each repository's refs file is
replaced whole; git's object ids are git's."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from gharuntime.sim.hub import git_blob_oid
from gharuntime.sim.hub.store import COMMIT_RE, HubHTTPError, Store, file_entry, lfs_pointer


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_git_blob_oid_is_gits_object_id() -> None:
    # `git hash-object` of these contents, as git prints them
    assert git_blob_oid(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert git_blob_oid(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_blob_oid_agrees_with_git_hash_object(tmp_path: Path) -> None:
    data = bytes(range(256)) * 5 + "ü\n".encode()
    (tmp_path / "blob").write_bytes(data)
    shown = subprocess.run(
        ["git", "hash-object", str(tmp_path / "blob")], capture_output=True, text=True, check=True
    )
    assert git_blob_oid(data) == shown.stdout.strip()


def test_an_lfs_pointer_is_the_git_lfs_spec_text() -> None:
    sha = _sha(b"payload")
    assert lfs_pointer(sha, 7) == (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize 7\n".encode()
    )


def test_a_file_entry_names_the_blob_git_would_hold() -> None:
    data = b"a,b\n1,2\n"
    sha = _sha(data)
    assert file_entry(sha, len(data), False, data) == {
        "sha256": sha,
        "size": len(data),
        "lfs": False,
        "git_oid": git_blob_oid(data),
    }
    # an LFS file is a pointer in git: its git oid is the pointer's
    lfs = file_entry(sha, 10_000, True, None)
    assert lfs["git_oid"] == git_blob_oid(lfs_pointer(sha, 10_000)) != git_blob_oid(data)


def test_put_bytes_keeps_each_content_once_under_its_sha256(tmp_path: Path) -> None:
    store = Store(tmp_path / "hub")
    assert sorted(p.name for p in store.root.iterdir()) == ["commits", "objects", "repos", "tmp"]
    sha = store.put_bytes(b"content")
    assert sha == _sha(b"content")
    assert store.object_path(sha).read_bytes() == b"content"
    assert store.put_bytes(b"content") == sha
    assert [p.name for p in (store.root / "objects").iterdir()] == [sha]
    assert store.has_object(sha) and store.has_object(sha, 7)
    assert not store.has_object(sha, 8)  # another size: not that object
    assert not store.has_object(_sha(b"other"))
    assert not list((store.root / "tmp").iterdir())


def test_receive_object_keeps_an_upload_whose_hash_checks(tmp_path: Path) -> None:
    store = Store(tmp_path)
    blocks = [b"first block;", b"second", b""]
    expected = _sha(b"".join(blocks))
    store.receive_object(expected, iter(blocks))
    assert store.object_path(expected).read_bytes() == b"first block;second"
    assert not list((tmp_path / "tmp").iterdir())


def test_receive_object_refuses_an_upload_whose_hash_does_not_check(tmp_path: Path) -> None:
    store = Store(tmp_path)
    claimed = _sha(b"what was announced")
    with pytest.raises(HubHTTPError) as caught:
        store.receive_object(claimed, iter([b"what was sent"]))
    assert caught.value.status == 400
    assert _sha(b"what was sent") in str(caught.value) and claimed in str(caught.value)
    assert not store.has_object(claimed)
    assert not list((tmp_path / "objects").iterdir()) and not list((tmp_path / "tmp").iterdir())


def test_an_upload_broken_off_midway_leaves_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path)

    def dropped() -> Iterator[bytes]:
        yield b"half of it"
        raise ConnectionResetError("the client hung up")

    with pytest.raises(ConnectionResetError):
        store.receive_object(_sha(b"half of it and the rest"), dropped())
    assert not list((tmp_path / "objects").iterdir()) and not list((tmp_path / "tmp").iterdir())


def test_a_repository_record_round_trips_under_a_flat_name(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.repo("org/ds") is None
    record = {"private": True, "branches": {"main": "a" * 40}, "tags": {"v1": "b" * 40}}
    store.save_repo("org/ds", record)
    assert store.repo("org/ds") == record
    assert [p.name for p in (tmp_path / "repos").iterdir()] == ["org%2Fds.json"]
    store.save_repo("org/ds", {**record, "tags": {}})  # replaced whole
    assert store.repo("org/ds") == {**record, "tags": {}}
    assert store.repo("org/other") is None


def test_ids_that_differ_only_in_where_the_slash_is_are_two_records(tmp_path: Path) -> None:
    """'a__b/c' and 'a/b__c' once shared a file ('/' written as '__')."""
    store = Store(tmp_path)
    store.save_repo("a__b/c", {"n": 1})
    store.save_repo("a/b__c", {"n": 2})
    store.save_repo("a%2Fb/c", {"n": 3})  # a percent sign is encoded too
    assert [store.repo(r) for r in ("a__b/c", "a/b__c", "a%2Fb/c")] == [
        {"n": 1},
        {"n": 2},
        {"n": 3},
    ]
    assert len(list((tmp_path / "repos").iterdir())) == 3


def test_commits_are_addressed_by_their_content(tmp_path: Path) -> None:
    store = Store(tmp_path)
    files = {"b.txt": file_entry(_sha(b"b"), 1, False, b"b"), "a.txt": {"sha256": "x"}}
    first = store.write_commit(None, files, "initial", "")
    assert COMMIT_RE.match(first)
    record = store.commit(first)
    assert record is not None
    assert record["parents"] == [] and record["summary"] == "initial"
    assert list(record["files"]) == ["a.txt", "b.txt"]  # sorted
    on_disk = json.loads((tmp_path / "commits" / f"{first}.json").read_text(encoding="utf-8"))
    assert on_disk == record
    assert first == hashlib.sha1(json.dumps(record, sort_keys=True).encode()).hexdigest()
    second = store.write_commit(first, {}, "remove all", "details")
    assert second != first
    child = store.commit(second)
    assert child is not None and child["parents"] == [first] and child["description"] == "details"


def test_commit_lookup_refuses_what_is_not_a_commit_id(tmp_path: Path) -> None:
    store = Store(tmp_path)
    oid = store.write_commit(None, {}, "s", "")
    assert store.commit(oid) is not None
    assert store.commit(oid.upper()) is None  # ids are lower-case hex
    assert store.commit(oid[:12]) is None
    assert store.commit("../commits/" + oid) is None
    assert store.commit("0" * 40) is None  # well formed, never written
