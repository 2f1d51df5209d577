"""Where a predicted workflow comes from: its identity (the path GitHub records its runs under,
`.github/workflows/ci.yml`) and the repository its local reusable workflows are read from, as
a working tree or as it was at a commit.

The identity is never the string typed on the command line: it is `--path` when given, else
the file's place in its git repository (its real path, so a relative, an absolute and a
symlinked spelling are one file), else its place under a `.github/` folder (a checkout without
`.git`). Both sides of a review use the same identity, so a file compared with itself is the
same workflow to the model and to the history.

A `Side` is one side of a review: the repository's workflows in a working tree (`TreeSide`) or
at a commit (`GitSide`), with the files given on the command line put in place of theirs. Each
side resolves `uses: ./.github/workflows/x.yml` from its own files, so the base of a review is
read whole at its revision, callees included.
"""

from __future__ import annotations

import os
import posixpath
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from gharuntime.errors import GharuntimeError
from gharuntime.readfile import InputFileError, read_text
from gharuntime.sources.gitstore import GitError, GitRepo
from gharuntime.workflow import (
    MAX_YAML_BYTES,
    Workflow,
    WorkflowError,
    local_callee_path,
    parse_workflow,
)

__all__ = [
    "MAX_SCANNED_WORKFLOWS",
    "WORKFLOWS_DIR",
    "CheckoutError",
    "GitSide",
    "Identity",
    "Side",
    "TreeSide",
    "callers_of",
    "check_path",
    "check_revision",
    "git_toplevel",
    "identify",
    "is_called",
    "open_revision",
    "runs_itself",
]

WORKFLOWS_DIR: Final = ".github/workflows"
MAX_SCANNED_WORKFLOWS: Final = 1_000
"""Workflow files read when looking for the callers of a reusable workflow (GitHub reads only
the files directly in `.github/workflows/`; a repository with more is refused)."""
MAX_PATH_CHARS: Final = 1_000


class CheckoutError(GharuntimeError):
    """A workflow whose identity or repository cannot be known, or a revision or path that
    cannot be read; the message says what to give instead."""


def check_path(text: str) -> str:
    """`--path` as an identity: a relative POSIX path inside the repository, written one way
    (`./a/../ci.yml` is `ci.yml`). Raises CheckoutError for anything else."""
    bad = next((c for c in text if ord(c) < 0x20 or ord(c) == 0x7F), None)
    normal = posixpath.normpath(text) if text else ""
    if (
        not text
        or len(text) > MAX_PATH_CHARS
        or bad is not None
        or "\\" in text
        or normal.startswith(("/", "../"))
        or normal in (".", "..")
    ):
        raise CheckoutError(
            f"{text[:100]!r}: not a path inside a repository",
            where="--path",
            fix="give the workflow's path in its repository, e.g. .github/workflows/ci.yml",
        )
    return normal


def check_revision(rev: str) -> str:
    """A revision as `--base-ref` takes it: never an option, a `REV:PATH`, or a name holding
    NUL or a control character. Raises CheckoutError."""
    if (
        not rev
        or rev.startswith("-")
        or len(rev) > 200
        or any(c in rev for c in ":")
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in rev)
    ):
        raise CheckoutError(
            f"{rev[:100]!r}: not a git revision",
            where="--base-ref",
            fix="give a commit, branch or tag, e.g. origin/main",
        )
    return rev


def git_toplevel(folder: Path) -> Path | None:
    """The real path of the git work tree holding `folder`, None when there is none (or git
    cannot be run)."""
    try:
        done = subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", str(folder), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    top = done.stdout.strip()
    if done.returncode != 0 or not top:
        return None
    return Path(os.path.realpath(top))


@dataclass(frozen=True)
class Identity:
    """A workflow's identity and the repository it belongs to: `root` is that repository's
    folder (None: not known, so no local reusable workflow can be read), `git` whether it is a
    git work tree, `source` how the identity was found: `--path`, `git`, `.github folder` or
    `file name` (a file outside any repository, only for a plain prediction)."""

    path: str
    root: Path | None
    git: bool
    source: str


def _github_root(real: Path) -> Path | None:
    return next((p.parent for p in real.parents if p.name == ".github"), None)


def identify(file: Path, given: str | None = None, *, required: bool = False) -> Identity:
    """The identity of the workflow `file` (see the module's docstring). `required`: a file
    outside any repository without `given` is refused (a review, or a lookup in the
    repository's history, would match nothing by a guessed path); otherwise it is named
    `.github/workflows/NAME`, where GitHub reads workflows from."""
    real = Path(os.path.realpath(file))
    top = git_toplevel(real.parent)
    if given is not None:
        path = check_path(given)
        if top is not None:
            return Identity(path, top, True, "--path")
        parts = len(Path(path).parts)
        root = real.parents[parts - 1] if len(real.parents) >= parts else None
        if root is not None and (root / path) != real:
            root = None
        return Identity(path, root, False, "--path")
    if top is not None:
        try:
            return Identity(real.relative_to(top).as_posix(), top, True, "git")
        except ValueError:
            pass
    github = _github_root(real)
    if github is not None:
        return Identity(real.relative_to(github).as_posix(), github, False, ".github folder")
    if required:
        raise CheckoutError(
            "not inside a git repository (nor under a .github/ folder), so the path GitHub "
            "records its runs under is unknown",
            where=str(file),
            fix="run it on the file in the repository's checkout, or give its path there: "
            f"--path {WORKFLOWS_DIR}/{real.name}",
        )
    return Identity(f"{WORKFLOWS_DIR}/{real.name}", None, False, "file name")


@dataclass
class Side:
    """One side of a review: the repository's workflow files, `overlay` holding the files given
    on the command line in place of theirs (by identity). `label` says where it was read."""

    label: str
    overlay: dict[str, str] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)  # overlay path → the file it came from
    _parsed: dict[str, Workflow | None] = field(default_factory=dict, init=False, repr=False)

    def where(self, path: str) -> str:
        """Where the text of `path` on this side was read, for a message."""
        return self.origin.get(path) or f"{path} ({self.label})"

    def _read(self, path: str, strict: bool) -> str | None:
        raise NotImplementedError

    def _names(self) -> list[str]:
        raise NotImplementedError

    def read(self, path: str, *, strict: bool = False) -> str | None:
        """The text of the workflow at `path` (an identity), None when it is not there.
        `strict`: a file that is there but cannot be read (a folder, binary, too large) raises
        CheckoutError instead of reading as absent."""
        if path in self.overlay:
            return self.overlay[path]
        return self._read(path, strict)

    def workflows(self) -> list[str]:
        """Every workflow file GitHub would read (directly in .github/workflows/), sorted."""
        given = [p for p in self.overlay if posixpath.dirname(p) == WORKFLOWS_DIR]
        names = sorted({*self._names(), *given})
        if len(names) > MAX_SCANNED_WORKFLOWS:
            raise CheckoutError(
                f"{len(names):,} workflow files in {WORKFLOWS_DIR}/ ({self.label}); callers are "
                f"looked for among at most {MAX_SCANNED_WORKFLOWS:,}",
                fix="review the file alone: --no-callers",
            )
        return names

    def workflow(self, path: str) -> Workflow | None:
        """The parsed workflow at `path`; None when it is not there or is not a workflow."""
        if path not in self._parsed:
            text = self.read(path)
            try:
                self._parsed[path] = parse_workflow(text, path) if text is not None else None
            except WorkflowError:
                self._parsed[path] = None
        return self._parsed[path]

    def resolver(self) -> Callable[[str], Workflow | None]:
        """`uses: ./.github/workflows/x.yml` → the called workflow on this side."""

        def resolve(uses: str) -> Workflow | None:
            path = local_callee_path(uses)
            return self.workflow(path) if path is not None else None

        return resolve


@dataclass
class TreeSide(Side):
    """The workflows in a folder (a working tree); `root` None: none can be read."""

    root: Path | None = None

    def _file(self, path: str) -> Path | None:
        if self.root is None:
            return None
        file = self.root / path
        real = Path(os.path.realpath(file))
        if not real.is_relative_to(self.root):  # a link out of the repository is not read
            return None
        return file

    def _read(self, path: str, strict: bool) -> str | None:
        file = self._file(path)
        if file is None or not os.path.lexists(file):
            return None
        try:
            return read_text(file, MAX_YAML_BYTES)
        except InputFileError as exc:
            if strict:
                raise CheckoutError(f"{exc}", fix="give a workflow's YAML file") from None
            return None

    def _names(self) -> list[str]:
        if self.root is None:
            return []
        folder = self.root / WORKFLOWS_DIR
        try:
            entries = list(os.scandir(folder)) if folder.is_dir() else []
        except OSError:
            return []
        return [
            f"{WORKFLOWS_DIR}/{e.name}"
            for e in entries[: MAX_SCANNED_WORKFLOWS + 1]
            if e.name.endswith((".yml", ".yaml")) and e.is_file()
        ]


@dataclass
class GitSide(Side):
    """The workflows at `commit` of the git repository `repo`."""

    repo: GitRepo | None = None
    commit: str = ""

    def _read(self, path: str, strict: bool) -> str | None:
        assert self.repo is not None
        where = f"{self.label}:{path}"
        found = self.repo.entry_at(self.commit, path)
        if found is None:
            return None
        kind, oid = found
        if kind != "blob":
            if strict:
                raise CheckoutError(f"{where} is a {kind}, not a file", fix="name a workflow file")
            return None
        info = self.repo.object_info(oid)
        if info is not None and info[1] > MAX_YAML_BYTES:  # never read whole
            if strict:
                raise CheckoutError(
                    f"{where} is {info[1]:,} bytes, over the {MAX_YAML_BYTES:,}-byte limit"
                )
            return None
        data = self.repo.read(oid)
        if data is None:
            return None
        try:
            return data[1].decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            if strict:
                raise CheckoutError(f"{where}: not UTF-8 text ({exc.reason})") from None
            return None

    def _names(self) -> list[str]:
        assert self.repo is not None
        listing = self.repo.listing_at(self.commit, WORKFLOWS_DIR)
        return [
            f"{WORKFLOWS_DIR}/{name}"
            for name, (kind, _) in listing.items()
            if kind == "blob" and name.endswith((".yml", ".yaml"))
        ]


def open_revision(root: Path, rev: str) -> tuple[GitRepo, str]:
    """The git repository at `root` and the commit `rev` names there. Raises CheckoutError for
    a revision it does not have (with the fetch to run)."""
    rev = check_revision(rev)
    try:
        repo = GitRepo(root)
    except GitError:
        raise CheckoutError(
            "the git repository has no commit to read a base from",
            where=str(root),
            fix="commit first, or give the old file with --base FILE",
        ) from None
    try:
        commit = repo.commit_of(rev)
    except GitError:
        repo.close()
        raise
    if commit is None:
        repo.close()
        raise CheckoutError(
            f"{rev}: no such revision in {root}",
            where="--base-ref",
            fix="fetch it first (actions/checkout with fetch-depth: 0), or name another",
        )
    return repo, commit


def is_called(*workflows: Workflow | None) -> bool:
    """Whether any of these (one file before and after a change) is a reusable workflow."""
    return any(w is not None and "workflow_call" in w.events for w in workflows)


def runs_itself(*workflows: Workflow | None) -> bool:
    """Whether any of these has a trigger of its own besides `workflow_call`, so GitHub records
    runs under its own path too."""
    return any(w is not None and any(e != "workflow_call" for e in w.events) for w in workflows)


def _calls(workflow: Workflow) -> set[str]:
    return {
        path
        for spec in workflow.jobs.values()
        if spec.uses and (path := local_callee_path(spec.uses)) is not None
    }


def callers_of(sides: Iterable[Side], target: str) -> list[str]:
    """The workflows GitHub records `target`'s runs under: those of the repository, on any of
    `sides`, with a trigger of their own whose local calls reach `target`, directly or through
    other reusable workflows. Sorted; empty when none calls it."""
    roots: set[str] = set()
    for side in sides:
        graph: dict[str, set[str]] = {}
        own: dict[str, bool] = {}
        for name in side.workflows():
            wf = side.workflow(name)
            if wf is not None:
                graph[name] = _calls(wf)
                own[name] = runs_itself(wf)
        reached = {target}
        frontier = [target]
        while frontier:
            called = frontier.pop()
            for name, calls in graph.items():
                if called in calls and name not in reached:
                    reached.add(name)
                    frontier.append(name)
        roots |= {n for n in reached if n != target and own.get(n)}
    return sorted(roots)
