"""Find the workflow file a run used, in the project's git history at the run's head_sha.

A run record names its file in `path` (GitHub added the field in 2021); older records only give
the workflow's `name` and `workflow_id`. In order of preference:
1. `run_path`: the run's own `path`, present at head_sha;
2. `workflow_name`: the one workflow file at head_sha whose `name:` (or, without one, its path,
   as GitHub names it) equals the run's workflow name;
3. `workflow_id_path`: a path other runs of the same workflow id name, present at head_sha;
4. `workflow_id_name`: the one file at head_sha whose `name:` equals a name other runs of the
   same workflow id carry.
Otherwise the run stays without YAML, and why is counted: `commit_not_in_history` (head_sha is
in none of the histories), `path_missing_at_commit`, `ambiguous_name`, `not_found`, `no_history`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gharuntime.sources.gitstore import GitError, GitRepo

__all__ = ["Found", "WorkflowFinder", "detect_licence"]

WORKFLOWS_DIR = ".github/workflows"
_SHA = re.compile(r"^[0-9a-f]{40}$")
_NAME_LINE = re.compile(r"^name:\s*(.+?)\s*$", re.M)


@dataclass(frozen=True)
class Found:
    """Which history holds a run's commit, and which workflow file it ran."""

    history: int | None  # index into WorkflowFinder.repos
    path: str | None
    blob: str | None
    how: str


def _top_level_name(text: str) -> str | None:
    """The workflow's top-level `name:`; a YAML parse only when the quick look is unsure."""
    m = _NAME_LINE.search(text)
    if m and not any(c in m.group(1) for c in "'\"#&*!|>{[%@`"):
        return m.group(1)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    name = doc.get("name") if isinstance(doc, dict) else None
    return str(name) if name is not None else None


def detect_licence(repo: GitRepo) -> str | None:
    """SPDX id of the licence file at HEAD, for the few licences we can tell apart reliably;
    None when there is no licence file or it is another one."""
    for name in ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING"):
        found = repo.read(f"{repo.head}:{name}")
        if found is None or found[0] != "blob":
            continue
        head = found[1][:2000].decode("utf-8", "replace")
        if "Apache License" in head and "Version 2.0" in head:
            return "Apache-2.0"
        if "MIT License" in head or "Permission is hereby granted, free of charge" in head:
            return "MIT"
        return None
    return None


class WorkflowFinder:
    """Answers 'which workflow file did this run use?' from one or more git histories."""

    def __init__(self, repos: Iterable[tuple[str, GitRepo]]) -> None:
        self.repos = list(repos)
        self._commit: dict[str, int | None] = {}
        self._listing: dict[tuple[int, str], dict[str, str]] = {}
        self._names: dict[tuple[int, str], str | None] = {}
        self._texts: dict[tuple[int, str], str | None] = {}

    def history_of(self, sha: str | None) -> int | None:
        """Index of the first history that holds commit `sha`."""
        if not sha or not _SHA.match(sha):
            return None
        if sha not in self._commit:
            self._commit[sha] = next(
                (i for i, (_, r) in enumerate(self.repos) if r.object_type(sha) == "commit"),
                None,
            )
        return self._commit[sha]

    def listing(self, history: int, sha: str) -> dict[str, str]:
        """{path: blob sha} of the workflow files at commit `sha`."""
        key = (history, sha)
        if key not in self._listing:
            tree = self.repos[history][1].tree(f"{sha}:{WORKFLOWS_DIR}") or {}
            self._listing[key] = {
                f"{WORKFLOWS_DIR}/{name}": blob
                for name, (mode, blob) in sorted(tree.items())
                if mode.startswith("100") and name.endswith((".yml", ".yaml"))
            }
        return self._listing[key]

    def text(self, history: int, blob: str) -> str | None:
        """The YAML text of a blob (None when it is not UTF-8 text)."""
        key = (history, blob)
        if key not in self._texts:
            found = self.repos[history][1].read(blob)
            try:
                self._texts[key] = found[1].decode("utf-8") if found else None
            except UnicodeDecodeError:
                self._texts[key] = None
        return self._texts[key]

    def _name(self, history: int, path: str, blob: str) -> str:
        key = (history, blob)
        if key not in self._names:
            text = self.text(history, blob)
            self._names[key] = _top_level_name(text) if text is not None else None
        return self._names[key] or path

    def _by_name(self, history: int, sha: str, name: str) -> tuple[list[str], dict[str, str]]:
        files = self.listing(history, sha)
        return [p for p, b in files.items() if self._name(history, p, b) == name], files

    def find(
        self,
        sha: str | None,
        path: str | None,
        name: str | None,
        workflow_id: int | None,
        id_paths: Mapping[int, list[str]],
        id_names: Mapping[int, list[str]],
    ) -> Found:
        if not self.repos:
            return Found(None, path, None, "no_history")
        h = self.history_of(sha)
        if h is None or sha is None:
            return Found(None, path, None, "commit_not_in_history")
        files = self.listing(h, sha)
        if path:
            if path in files:
                return Found(h, path, files[path], "run_path")
            return Found(h, path, None, "path_missing_at_commit")
        ambiguous = False
        if name:
            hits, _ = self._by_name(h, sha, name)
            if len(hits) == 1:
                return Found(h, hits[0], files[hits[0]], "workflow_name")
            ambiguous = len(hits) > 1
        if workflow_id is not None:
            for known in id_paths.get(workflow_id, []):
                if known in files:
                    return Found(h, known, files[known], "workflow_id_path")
            for known_name in id_names.get(workflow_id, []):
                hits, _ = self._by_name(h, sha, known_name)
                if len(hits) == 1:
                    return Found(h, hits[0], files[hits[0]], "workflow_id_name")
        return Found(h, None, None, "ambiguous_name" if ambiguous else "not_found")

    def close(self) -> None:
        for _, repo in self.repos:
            repo.close()


def open_histories(paths: Iterable[Path]) -> list[tuple[str, GitRepo, dict[str, Any]]]:
    """(label, repository, info) of each history. A path that is not a git repository is
    refused (GitError), never skipped: a build without the YAML it was asked for would come
    out with no workflow text, exit 0, and look complete."""
    from gharuntime.sources.api_json import source_label

    out: list[tuple[str, GitRepo, dict[str, Any]]] = []
    try:
        for path in paths:
            try:
                repo = GitRepo(Path(path))
            except GitError as exc:
                raise GitError(
                    f"--yaml-git is not a git repository ({exc.what})",
                    where=str(path),
                    fix="pass the repository holding the workflow YAML (a clone or a bare "
                    "`.git` folder), or leave --yaml-git out",
                ) from None
            label = source_label(Path(path), repo)
            out.append((label, repo, {"label": label, "commit": repo.head}))
    except BaseException:
        for _, repo, _ in out:
            repo.close()
        raise
    return out


def most_common(pairs: Iterable[tuple[int, str]]) -> dict[int, list[str]]:
    """{key: values by descending count, ties by value} of (key, value) pairs."""
    counts: Counter[tuple[int, str]] = Counter(pairs)
    out: dict[int, list[tuple[int, str]]] = {}
    for (k, v), n in counts.items():
        out.setdefault(k, []).append((-n, v))
    return {k: [v for _, v in sorted(vs)] for k, vs in out.items()}
