"""gharuntime.paths: the folder swap every atomic folder write uses."""

from __future__ import annotations

from pathlib import Path

from gharuntime.paths import replace_folder


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
