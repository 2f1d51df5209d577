"""Read files straight out of a git repository (bare or not) without checking anything out:
one long-lived `git cat-file --batch` process answers every object request, so reading 100k
small files costs one process, not 100k.

Used by the api-json source for two things: the results archives (`YYYY/MM/DD/N/job.json` in a
git history of 100k files) and the projects' histories, where each run's workflow YAML is read
at its head_sha.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO

from gharuntime.errors import GharuntimeError

__all__ = ["GitError", "GitRepo", "looks_like_git_dir"]

_GIT = ("git", "-c", "safe.directory=*", "-c", "core.quotePath=false")
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _kind(mode: str) -> str:
    """What a tree entry of `mode` is: a file (100644, 100755), a symlink, a submodule's
    commit or a tree."""
    if mode.startswith("100"):
        return "blob"
    return {"120000": "symlink", "160000": "commit"}.get(mode, "tree")


def _request(what: str) -> bytes:
    """One line of `git cat-file --batch` input; a name holding a line break (or NUL) would
    be read as two requests and put every later answer out of step, so it is refused."""
    if "\n" in what or "\0" in what or "\r" in what:
        raise GitError(
            f"{what!r}: an object name holding a line break cannot be asked of git",
            fix="give a commit, branch or tag and a path without line breaks",
        )
    return what.encode("utf-8", "surrogateescape") + b"\n"


class GitError(GharuntimeError):
    """A folder that is not a git repository, or git missing or failing."""


def looks_like_git_dir(path: Path) -> bool:
    """True for a bare repository or a `.git` folder (HEAD, objects/ and refs/ inside), or a
    work tree whose `.git` is such a folder."""
    if (path / ".git").is_dir():
        path = path / ".git"
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


class _Batch:
    """One `git cat-file --batch` (or --batch-check) process and its pipes."""

    def __init__(self, git_dir: Path, check: bool) -> None:
        mode = "--batch-check" if check else "--batch"
        self.proc = subprocess.Popen(
            [*_GIT, f"--git-dir={git_dir}", "cat-file", mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.lock = threading.Lock()

    def header(self) -> tuple[str, str, int] | None:
        """(object name, type, size) of the next answer, or None when it is missing. git
        echoes the name asked for in its "missing" answer, spaces and all (`HEAD:my ci.yml
        missing`), so an answer is an object only in git's exact form: a hex id, a type and a
        size, three fields."""
        line = self.stdout.readline()
        if not line:
            raise GitError("git cat-file stopped answering")
        parts = line.decode("utf-8", "replace").rstrip("\n").split(" ")
        if len(parts) == 3 and _OID.fullmatch(parts[0]) and parts[2].isdigit():
            return parts[0], parts[1], int(parts[2])
        return None  # "<what> missing" / "<what> ambiguous" / "dangling ..."

    def body(self, size: int) -> bytes:
        data = self.stdout.read(size)
        self.stdout.read(1)  # the newline after every object
        return data

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.stdin.close()
        self.proc.wait()
        self.stdout.close()


class GitRepo:
    """A git repository read through git itself; raises GitError when `path` is not one."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        git_dir = self.path / ".git" if (self.path / ".git").is_dir() else self.path
        self.git_dir = git_dir
        if not self.path.is_dir():
            raise GitError(f"{self.path}: not a folder")
        try:
            done = subprocess.run(
                [*_GIT, f"--git-dir={git_dir}", "rev-parse", "--verify", "-q", "HEAD^{commit}"],
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError as exc:
            raise GitError(f"cannot run git to read {self.path}: {exc}") from exc
        if done.returncode != 0:
            raise GitError(
                f"{self.path}: not a git repository with a commit at HEAD "
                f"({(done.stderr or 'git rev-parse HEAD failed').strip().splitlines()[-1:]})"
            )
        self.head = done.stdout.strip()
        self._cat: _Batch | None = None
        self._check: _Batch | None = None

    def __enter__(self) -> GitRepo:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for batch in (self._cat, self._check):
            if batch is not None:
                batch.close()
        self._cat = self._check = None

    def remote_name(self) -> str | None:
        """owner/name of the `origin` remote's URL, when the repository has one."""
        done = subprocess.run(
            [*_GIT, f"--git-dir={self.git_dir}", "config", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            check=False,
        )
        url = done.stdout.strip().removesuffix("/").removesuffix(".git")
        if not url:
            return None
        parts = url.replace(":", "/").split("/")
        return "/".join(parts[-2:]) if len(parts) >= 2 else None

    def files(self, ref: str = "HEAD") -> Iterator[tuple[str, str]]:
        """(path, blob sha) of every file in the tree of `ref`."""
        proc = subprocess.Popen(
            [*_GIT, f"--git-dir={self.git_dir}", "ls-tree", "-r", "-z", "--end-of-options", ref],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stderr is not None
        buf = b""
        try:
            while True:
                block = proc.stdout.read(1 << 16)
                if not block:
                    break
                buf += block
                *entries, buf = buf.split(b"\0")
                for entry in entries:
                    meta, _, path = entry.partition(b"\t")
                    mode_type_sha = meta.split()
                    if len(mode_type_sha) == 3 and mode_type_sha[1] == b"blob":
                        yield path.decode("utf-8", "replace"), mode_type_sha[2].decode()
            err = proc.stderr.read().decode("utf-8", "replace")
        finally:
            proc.stdout.close()
            proc.stderr.close()
            if proc.poll() is None:
                proc.kill()
        if proc.wait() != 0:
            raise GitError(f"{self.path}: git ls-tree {ref} failed: {err.strip()}")

    def read(self, what: str) -> tuple[str, bytes] | None:
        """(type, bytes) of an object named `what` (a sha, or `rev:path`); None when missing."""
        if self._cat is None:
            self._cat = _Batch(self.git_dir, check=False)
        batch = self._cat
        with batch.lock:
            batch.stdin.write(_request(what))
            batch.stdin.flush()
            head = batch.header()
            if head is None:
                return None
            return head[1], batch.body(head[2])

    def read_many(self, names: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """(name, bytes or None) for each object name, in order: a second process reads them
        while a thread writes the requests, so git never waits for us between objects."""
        wanted = list(names)
        lines = [_request(name) for name in wanted]
        batch = _Batch(self.git_dir, check=False)

        def feed() -> None:
            try:
                for line in lines:
                    batch.stdin.write(line)
                batch.stdin.flush()
            except (OSError, ValueError):
                pass
            finally:
                with contextlib.suppress(OSError):
                    batch.stdin.close()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for name in wanted:
                head = batch.header()
                yield name, (batch.body(head[2]) if head is not None else None)
        finally:
            batch.proc.kill()
            writer.join(timeout=5)
            batch.proc.wait()
            batch.stdout.close()

    def object_type(self, what: str) -> str | None:
        """'commit', 'tree', 'blob', ... for an object name, or None when it is not there."""
        found = self.object_info(what)
        return found[0] if found is not None else None

    def object_info(self, what: str) -> tuple[str, int] | None:
        """(type, size in bytes) of an object, without reading it; None when it is not there."""
        if self._check is None:
            self._check = _Batch(self.git_dir, check=True)
        batch = self._check
        with batch.lock:
            batch.stdin.write(_request(what))
            batch.stdin.flush()
            head = batch.header()
        return (head[1], head[2]) if head is not None else None

    def commit_of(self, rev: str) -> str | None:
        """The commit id `rev` (a sha, branch or tag) names, None when there is none by that
        name. `rev` reaches git after `--end-of-options`, so it is never read as an option."""
        try:
            done = subprocess.run(
                [*_GIT, f"--git-dir={self.git_dir}", "rev-parse", "--verify", "-q",
                 "--end-of-options", f"{rev}^{{commit}}"],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            raise GitError(f"cannot run git in {self.path}: {exc}") from exc
        oid = done.stdout.strip()
        return oid if done.returncode == 0 and _OID.fullmatch(oid) else None

    def entry_at(self, commit: str, path: str) -> tuple[str, str] | None:
        """(kind, object id) of what `path` names in `commit`'s tree: kind `blob`, `tree`,
        `symlink` or `commit` (a submodule); None when it is not there. The path is walked one
        tree at a time and never handed to git as text, so a name with spaces, a colon or a
        line break is a name like any other."""
        if not _OID.fullmatch(commit):
            raise GitError(f"{commit!r}: not a commit id")
        oid, kind = commit + "^{tree}", "tree"
        for part in [p for p in path.split("/") if p]:
            if kind != "tree":
                return None
            listing = self.tree(oid)
            if listing is None or part not in listing:
                return None
            mode, oid = listing[part]
            kind = _kind(mode)
        return kind, oid

    def listing_at(self, commit: str, folder: str) -> dict[str, tuple[str, str]]:
        """{name: (kind, object id)} of the entries of `folder` in `commit`'s tree (empty when
        there is no such folder)."""
        found = self.entry_at(commit, folder)
        if found is None or found[0] != "tree":
            return {}
        return {
            name: (_kind(mode), oid) for name, (mode, oid) in (self.tree(found[1]) or {}).items()
        }

    def tree(self, what: str) -> dict[str, tuple[str, str]] | None:
        """{name: (mode, sha)} of the tree object `what` (e.g. `SHA:.github/workflows`)."""
        found = self.read(what)
        if found is None or found[0] != "tree":
            return None
        data = found[1]
        out: dict[str, tuple[str, str]] = {}
        i = 0
        while i < len(data):
            sp = data.index(b" ", i)
            nul = data.index(b"\0", sp)
            mode = data[i:sp].decode()
            name = data[sp + 1 : nul].decode("utf-8", "replace")
            out[name] = (mode, data[nul + 1 : nul + 21].hex())
            i = nul + 21
        return out
