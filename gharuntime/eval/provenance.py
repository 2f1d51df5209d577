"""Where a result comes from, and what a reader must be warned of.

Every result document carries `provenance` (the gharuntime version, the git commit of the
gharuntime source tree when it is a git checkout, whether that tree had uncommitted changes, and
the command line) and `warnings` (e.g. too few repositories for the intervals to mean much).
A split with no records is not scored at all (`EmptySplit`).

A result names the files it read relative to the folder it was scored in (`result_path`), so it
names no folder of the machine that made it: the submission and its sidecar, and each absolute
path on the command line (`result_command`). A local dataset is named by its folder's name
(`gharuntime.dataset_ref.LocalDataset.id`); its revision says exactly which one it was.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Any, Final

from gharuntime.dataset import DatasetError
from gharuntime.version import __version__

__all__ = [
    "MIN_REPOSITORIES",
    "EmptySplit",
    "add_provenance",
    "check_not_empty",
    "library_versions",
    "provenance",
    "result_command",
    "result_path",
    "source_commit",
    "warnings_for",
]

MIN_REPOSITORIES: Final = 10
"""Below this many repositories in the scored split, repository-bootstrap intervals are
unreliable (few distinct resamples; one repository can be all of one)."""

_SOURCE_ROOT: Final = Path(__file__).resolve().parents[2]  # the folder holding gharuntime/


class EmptySplit(DatasetError):
    """The split to score holds no records."""


def source_commit(root: Path = _SOURCE_ROOT) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout holding gharuntime's source; (None, None) when it is
    not a git checkout (an installed wheel) or git is not available."""
    git = shutil.which("git")
    if git is None or not (root / ".git").exists() or not (root / "gharuntime").is_dir():
        return None, None
    try:
        head = subprocess.run(
            [git, "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            [git, "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (head or None), bool(status.strip())


_LIBRARIES: Final = (
    "numpy",
    "polars",
    "pyarrow",
    "lightgbm",
    "xgboost-cpu",
    "xgboost",
    "catboost",
    "optuna",
    "scikit-learn",
    "torch",
    "transformers",
)


@lru_cache(maxsize=1)
def _library_versions() -> tuple[tuple[str, str], ...]:
    found = []
    for name in _LIBRARIES:
        try:
            found.append((name, importlib.metadata.version(name)))
        except importlib.metadata.PackageNotFoundError:
            continue
    return tuple(found)


def library_versions() -> dict[str, str]:
    """The installed versions of the libraries a result's numbers depend on (the fits, the
    arithmetic, the Parquet reader), so a result that does not reproduce can say which moved."""
    return dict(_library_versions())


def result_path(path: Path | str, start: Path | str | None = None) -> str:
    """How a result names a file or folder: relative to `start` (the current directory, where
    it is scored), `..` steps for one outside it, '/' between parts. A path with no relative
    form (another drive, on Windows) is kept as given."""
    try:
        relative = os.path.relpath(path, os.curdir if start is None else start)
    except ValueError:
        return str(path)
    return PurePath(relative).as_posix()


def result_command(argv: Sequence[str], start: Path | str | None = None) -> list[str]:
    """`argv` as a result records it: each absolute path (an argument, or an option's value
    after `=`) named by `result_path`; every other argument as given."""
    out = []
    for arg in argv:
        option, equals, value = arg.partition("=")
        if os.path.isabs(arg):
            out.append(result_path(arg, start))
        elif equals and option.startswith("-") and os.path.isabs(value):
            out.append(f"{option}={result_path(value, start)}")
        else:
            out.append(arg)
    return out


def provenance(command: Sequence[str] | None = None) -> dict[str, Any]:
    """The `provenance` object of a result: version, git commit and dirtiness of the source tree
    (null when it is not a git checkout), the command line (argv list, its absolute paths
    relative to the current directory: `result_command`; null when called as a library without
    one), and the numeric libraries' versions."""
    commit, dirty = source_commit()
    return {
        "gharuntime_version": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "command": result_command(command) if command is not None else None,
        "libraries": library_versions(),
    }


def check_not_empty(rows: int, config: str, split: str) -> None:
    """Raise EmptySplit when the split to score has no records: there is nothing to score."""
    if rows == 0:
        raise EmptySplit(
            f"the {config}/{split} split has 0 records: there is nothing to score (choose another "
            "--config/--split, or rebuild the dataset with more data)"
        )


def warnings_for(result: dict[str, Any]) -> list[str]:
    """What a reader of this result must know before trusting its intervals."""
    out = []
    repos = int(result.get("dataset", {}).get("repositories") or 0)
    boot = result.get("bootstrap") or {}
    if repos < MIN_REPOSITORIES and boot.get("cluster") == "run_id":
        out.append(
            f"only {repos} repositor{'y' if repos == 1 else 'ies'} in the scored split (fewer than "
            f"{MIN_REPOSITORIES}): the intervals resample its {boot.get('clusters')} workflow runs, "
            "so they say how sure the figures are for these repositories' jobs, not for other "
            "repositories"
        )
    elif repos < MIN_REPOSITORIES:
        out.append(
            f"only {repos} repositor{'y' if repos == 1 else 'ies'} in the scored split (fewer than "
            f"{MIN_REPOSITORIES}): the repository-bootstrap intervals are unreliable"
            + (" (zero width: every resample is the same repository)" if repos == 1 else "")
        )
    return out


def add_provenance(result: dict[str, Any], command: Sequence[str] | None = None) -> dict[str, Any]:
    """`result` with `provenance` and `warnings` filled in (changed in place and returned)."""
    result["provenance"] = provenance(command)
    result["warnings"] = [*result.get("warnings", []), *warnings_for(result)]
    return result
