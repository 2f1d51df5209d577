"""gharuntime.folderfiles: a dataset folder's files, with every link leaving the folder set
apart (never listed), hidden paths left out, and a Hub cache snapshot's links into its own
blobs/ allowed."""

from __future__ import annotations

from pathlib import Path

from gharuntime.folderfiles import folder_files


def test_links_leaving_are_set_apart(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    (root / "figures").mkdir(parents=True)
    (root / "README.md").write_text("card")
    outside = tmp_path / "secret"
    outside.write_text("x")
    (root / "figures" / "out.png").symlink_to(outside)
    (root / "figures" / "in.md").symlink_to(Path("..") / "README.md")
    (root / "dir").symlink_to(tmp_path)
    (root / ".hidden").symlink_to(outside)
    (root / ".cache").mkdir()
    (root / ".cache" / "f").write_text("y")
    walked = folder_files(root)
    assert walked.leaving == [".hidden", "dir", "figures/out.png"]
    assert list(walked.files) == ["README.md", "figures/in.md"]


def test_a_hub_cache_snapshot_may_link_into_its_blobs(tmp_path: Path) -> None:
    repo = tmp_path / "datasets--o--n"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / "abc").write_text("data")
    snap = repo / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True)
    (snap / "manifest.json").symlink_to(Path("../../blobs/abc"))
    (tmp_path / "secret").write_text("x")
    (repo / "blobs" / "evil").symlink_to(tmp_path / "secret")  # a blob that leads out
    (snap / "evil.md").symlink_to(Path("../../blobs/evil"))
    walked = folder_files(snap)
    assert list(walked.files) == ["manifest.json"] and walked.leaving == ["evil.md"]
