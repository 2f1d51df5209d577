"""The files of a dataset folder, walked in one place so that nothing outside it is ever read or
uploaded: a symlink whose target leaves the folder (`figures/x.png` pointing at a token file)
is set apart, never listed as a file; `validate` reports each one and `publish` refuses the
folder. A Hugging Face cache snapshot is the one layout whose links may leave: each of its
files is a link into the repository's own `blobs/` folder (and checked there by sha256)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FolderFiles", "folder_files", "stays_inside", "target_kind"]


@dataclass(frozen=True)
class FolderFiles:
    """`files`: relative POSIX path → path of every file inside the folder (hidden paths left
    out); `leaving`: relative paths of the symlinks whose target lies outside it."""

    files: dict[str, Path] = field(default_factory=dict)
    leaving: list[str] = field(default_factory=list)


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path == f or path.is_relative_to(f) for f in folders)


def _allowed(root: Path) -> list[Path]:
    """Where the links of `root` may lead: the folder itself and, for a Hub cache snapshot
    (`.../datasets--ORG--NAME/snapshots/COMMIT`), that repository's `blobs/`."""
    real = root.resolve()
    allowed = [real]
    if real.parent.name == "snapshots" and (real.parent.parent / "blobs").is_dir():
        allowed.append((real.parent.parent / "blobs").resolve())
    return allowed


def stays_inside(root: Path, path: Path) -> bool:
    """Whether `path` (a file named inside `root`), links followed, is still inside `root`
    (or, for a Hub cache snapshot, its repository's `blobs/`): for readers that open one file
    by name rather than walking the folder."""
    return _inside(path.resolve(), _allowed(root))


def folder_files(root: Path) -> FolderFiles:
    """Every file under `root` (links followed only while they stay inside; hidden paths such
    as `.cache/` left out) and every link that leaves it, hidden or not, sorted by path."""
    allowed = _allowed(root)
    out = FolderFiles()
    for base, dirs, names in os.walk(root, followlinks=False):
        here = Path(base)
        rel_base = here.relative_to(root)
        hidden = any(part.startswith(".") for part in rel_base.parts)
        for name in [*dirs, *names]:
            path = here / name
            rel = (rel_base / name).as_posix()
            if path.is_symlink() and not _inside(path.resolve(), allowed):
                out.leaving.append(rel)  # hidden too: a link out is never harmless
            elif name in names and not hidden and not name.startswith(".") and path.is_file():
                out.files[rel] = path
    out.leaving.sort()
    return FolderFiles(dict(sorted(out.files.items())), out.leaving)


def target_kind(link: Path) -> str:
    """What `link` leads to, from its target's mode alone (nothing is opened, so a FIFO cannot
    block): "a file", "a folder", "a device, pipe or socket (not a regular file)"."""
    try:
        mode = link.stat().st_mode
    except OSError:
        return "nothing (a dangling link)"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a device, pipe or socket (not a regular file)"
