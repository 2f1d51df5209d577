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
