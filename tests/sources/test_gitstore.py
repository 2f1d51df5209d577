"""Reading files out of git without a checkout (gharuntime.sources.gitstore), on real git."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from gharuntime.sources.gitstore import GitError, GitRepo, looks_like_git_dir


def _blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / ".github" / "workflows" / "ci.yml").write_bytes(b"name: CI\n")
    (work / "a b.json").write_bytes(b'{"x": 1}')
    (work / "d").mkdir()
    (work / "d" / "\u00e9.json").write_bytes(b"[]")
    cfg = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "add", "-A"], check=True)
    subprocess.run(["git", *cfg, "-C", str(work), "commit", "-qm", "one"], check=True)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return bare


def test_files_and_reads(repo: Path) -> None:
    assert looks_like_git_dir(repo)
    with GitRepo(repo) as g:
        files = dict(g.files())
        assert files == {
            ".github/workflows/ci.yml": _blob_sha(b"name: CI\n"),
            "a b.json": _blob_sha(b'{"x": 1}'),
            "d/\u00e9.json": _blob_sha(b"[]"),
        }
        names = [files["a b.json"], "0" * 40, f"{g.head}:d/\u00e9.json", "nope"]
        assert list(g.read_many(names)) == [
            (names[0], b'{"x": 1}'),
            (names[1], None),
            (names[2], b"[]"),
            (names[3], None),
        ]
        assert g.object_type(g.head) == "commit"
        assert g.object_type("1" * 40) is None
        tree = g.tree(f"{g.head}:.github/workflows")
        assert tree == {"ci.yml": ("100644", _blob_sha(b"name: CI\n"))}
        assert g.tree(f"{g.head}:a b.json") is None  # a blob, not a tree
        assert g.read(f"{g.head}:.github/workflows/ci.yml") == ("blob", b"name: CI\n")


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        GitRepo(tmp_path)
    fake = tmp_path / "fake.git"
    for sub in ("objects", "refs"):
        (fake / sub).mkdir(parents=True)
    (fake / "HEAD").write_text("garbage\n")
    assert looks_like_git_dir(fake)
    with pytest.raises(GitError, match=r"fake\.git"):
        GitRepo(fake)


def test_a_missing_name_with_spaces_reads_as_missing_and_the_reader_stays_in_step(
    repo: Path,
) -> None:
    """git echoes the name asked for in its "missing" answer: `HEAD:my ci.yml missing` has three
    fields and once read as `int("missing")`. Every later answer must still be the right one."""
    with GitRepo(repo) as g:
        assert g.read("HEAD:.github/workflows/my ci.yml") is None
        assert g.read("HEAD:a blob 12") is None
        assert g.object_type("HEAD:no such 1 2") is None
        assert g.read("HEAD:a b.json") == ("blob", b'{"x": 1}')
        names = ["HEAD:x y z", "HEAD:a b.json"]
        assert [data for _, data in g.read_many(names)] == [None, b'{"x": 1}']


def test_a_name_with_a_line_break_is_refused_not_sent(repo: Path) -> None:
    with GitRepo(repo) as g:
        for name in ("HEAD:a\nb", "HEAD\n", "x\0y"):
            with pytest.raises(GitError, match="line break"):
                g.read(name)
        assert g.read("HEAD:a b.json") == ("blob", b'{"x": 1}')  # still in step


def test_paths_are_walked_through_trees_and_refs_are_never_options(
    repo: Path, tmp_path: Path
) -> None:
    with GitRepo(repo) as g:
        commit = g.commit_of("HEAD")
        assert commit is not None and len(commit) == 40
        assert g.commit_of("--output=" + str(tmp_path / "x")) is None
        assert not (tmp_path / "x").exists()
        assert g.commit_of("no-such-branch") is None
        kind, oid = g.entry_at(commit, "a b.json") or ("", "")
        assert kind == "blob" and g.read(oid) == ("blob", b'{"x": 1}')
        assert g.entry_at(commit, "d/\u00e9.json") is not None
        assert g.entry_at(commit, "d")[0] == "tree"  # type: ignore[index]
        assert g.entry_at(commit, "a b.json/x") is None
        assert g.entry_at(commit, "no/such") is None
        assert set(g.listing_at(commit, ".github/workflows")) == {"ci.yml"}
        assert g.listing_at(commit, "nothing") == {}
