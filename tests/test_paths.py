"""gharuntime.paths: the one atomic file write and the folder swap every atomic folder write
uses."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import IO

import pytest

from gharuntime.paths import replace_folder, write_atomic


def test_replace_folder_swaps_in_the_new_folder_and_leaves_nothing_beside_it(
    tmp_path: Path,
) -> None:
    out = tmp_path / "model"
    first = tmp_path / ".model.tmp-1"
    first.mkdir()
    (first / "a.txt").write_text("one")
    replace_folder(first, out)  # nothing there yet
    assert (out / "a.txt").read_text() == "one" and not first.exists()
    second = tmp_path / ".model.tmp-2"
    second.mkdir()
    (second / "b.txt").write_text("two")
    replace_folder(second, out)
    assert sorted(p.name for p in out.iterdir()) == ["b.txt"]  # the old content is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no .old or .tmp left


def test_write_atomic_writes_text_with_the_umasks_mode_and_leaves_no_temporary(
    tmp_path: Path,
) -> None:
    target = tmp_path / "new" / "folder" / "README.md"
    old = os.umask(0o027)
    try:
        write_atomic(target, "one\ntwo ✓\n")
    finally:
        os.umask(old)
    assert target.read_bytes() == "one\ntwo ✓\n".encode()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["README.md"]


def test_write_atomic_sets_a_mode_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "public.json", "{}\n", mode=0o644)
        write_atomic(tmp_path / "private.bin", b"\x00\xff", mode=0o600)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "public.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "private.bin").stat().st_mode) == 0o600
    assert (tmp_path / "private.bin").read_bytes() == b"\x00\xff"


def test_a_failed_write_atomic_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "index.html"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "new \ud800")  # a lone surrogate has no UTF-8 encoding

    def refuse(f: IO[bytes]) -> None:
        f.write(b"half of it")
        raise ValueError("checked what it wrote, and refused it")

    with pytest.raises(ValueError, match="refused"):
        write_atomic(target, refuse, binary=True, fsync=True)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["index.html"]


def test_write_atomic_streams_into_a_temporary_file_in_temp_dir(tmp_path: Path) -> None:
    """A writer sees its file under a temporary name in temp_dir, never at the target."""
    (tmp_path / "objects").mkdir()
    (tmp_path / "tmp").mkdir()
    target = tmp_path / "objects" / "abc"
    seen: list[list[str]] = []

    def lines(f: IO[str]) -> None:
        for i in range(3):
            f.write(f"line {i}\n")
        seen.append(sorted(p.name for p in (tmp_path / "objects").iterdir()))
        seen.append(sorted(p.name.split("-")[0] for p in (tmp_path / "tmp").iterdir()))

    write_atomic(target, lines, temp_dir=tmp_path / "tmp")
    assert seen == [[], [".abc.tmp"]]
    assert target.read_text(encoding="utf-8") == "line 0\nline 1\nline 2\n"
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_name_near_the_file_system_limit_is_written_and_replaced(tmp_path: Path) -> None:
    """A file or folder named with 250 characters (the limit is 255 bytes) is written through
    its temporary sibling and replaced, which a sibling named `.NAME.tmp-PID-…` could not be;
    a killed writer's leftover of that name is still found and removed."""
    from gharuntime.paths import clean_stale_siblings, make_temp_dir, sibling_stem

    name = "x" * 250
    target = tmp_path / name
    write_atomic(target, "one")
    write_atomic(target, "two")
    assert target.read_text() == "two"
    folder = tmp_path / ("d" * 250)
    for text in ("a", "b"):
        new = make_temp_dir(folder)
        (new / "f").write_text(text)
        replace_folder(new, folder)
    assert (folder / "f").read_text() == "b"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, folder.name])
    stem = sibling_stem(folder)
    assert len(stem) < 140 and stem != sibling_stem(tmp_path / ("d" * 249 + "e"))
    assert sibling_stem(tmp_path / "short.json") == "short.json"
    dead = 2**22 + 12345  # above the default pid_max: no such process
    leftover = tmp_path / f".{stem}.tmp-{dead}-abc"
    leftover.mkdir()
    assert clean_stale_siblings(folder) == [leftover] and not leftover.exists()
