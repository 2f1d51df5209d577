"""`gharuntime diff OLD NEW` on folders and on Hub ids (olah serving a git repository on
127.0.0.1), its bad inputs, and `gharuntime build --previous`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hub_servers import git_dataset_repo, serve_olah, tag
from raw_world import T0, RawWorld, standard_world

from gharuntime.cli.main import cli
from gharuntime.dataset import read_manifest, write_dataset
from gharuntime.fixture import fixture_jobs
from gharuntime.release_diff import diff_datasets, side_from_folder
from gharuntime.validation import validate_folder

REPO = "org/releases"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("cli-diff")
    old, new = root / "r1", root / "r2"
    write_dataset(fixture_jobs(seed=0, repos=6), old, provenance={"kind": "fixture"})
    write_dataset(fixture_jobs(seed=1, repos=8), new, provenance={"kind": "fixture"})
    return old, new


def test_help_teaches() -> None:
    code, out, _ = _run("diff", "--help")
    assert code == 0
    assert "ORG/NAME[@REVISION]" in out and "--json" in out and "Exit codes" in out


def test_markdown_by_default_and_json_for_tools(releases: tuple[Path, Path]) -> None:
    old, new = releases
    code, out, err = _run("diff", str(old), str(new))
    assert code == 0, err
    assert out.startswith(f"## Changes from {old} to {new}\n")
    assert "2 added, 0 removed" in out
    code, out, err = _run("diff", str(old), str(new), "--json")
    assert code == 0, err
    assert json.loads(out) == diff_datasets(
        side_from_folder(old, str(old)), side_from_folder(new, str(new))
    )


def test_bad_inputs_exit_2_with_a_message(releases: tuple[Path, Path], tmp_path: Path) -> None:
    old, _ = releases
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    cases = {
        str(tmp_path): "not a dataset folder (no manifest.json)",
        str(tmp_path / "file.txt"): "not a folder",
        str(tmp_path / "missing"): "no such folder, and not a Hub id (ORG/NAME[@REVISION])",
    }
    for bad, message in cases.items():
        code, out, err = _run("diff", str(old), bad)
        assert code == 2, (bad, err)
        assert message in err and "Traceback" not in err and out == ""
    (tmp_path / "manifest.json").write_text("{", encoding="utf-8")
    code, _, err = _run("diff", str(tmp_path), str(old))
    assert code == 2 and "unreadable manifest" in err


@pytest.fixture(scope="module")
def hub(releases: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("olah-diff")
    mirrors = work / "mirrors"
    c1, _ = git_dataset_repo(mirrors, REPO, list(releases))
    tag(mirrors, REPO, "v1.0", c1)
    with serve_olah(mirrors, work, REPO) as url:
        yield url


@pytest.fixture()
def hub_home(tmp_path: Path, hub: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in [k for k in os.environ if k.startswith(("HF_", "HUGGINGFACE_"))]:
        if key != "HF_HUB_DISABLE_XET":
            monkeypatch.delenv(key)
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_ENDPOINT", hub)
    return tmp_path / "hf"


def test_hub_revisions_are_downloaded_and_compared(
    hub_home: Path, releases: tuple[Path, Path]
) -> None:
    old, new = releases
    code, out, err = _run("diff", f"{REPO}@v1.0", REPO, "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["old"]["dataset"] == f"{REPO}@v1.0" and got["new"]["dataset"] == REPO
    assert got["old"]["revision"] == read_manifest(old)["revision"]
    assert got["new"]["revision"] == read_manifest(new)["revision"]
    want = diff_datasets(side_from_folder(old, f"{REPO}@v1.0"), side_from_folder(new, REPO))
    assert got == want
    # a Hub release against a local folder
    code, out, err = _run("diff", f"{REPO}@v1.0", str(new))
    assert code == 0, err and out


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("org/nothing@v1.0", "no such dataset repository"),
        # olah answers an unknown revision as an unknown repository; the error names both
        (f"{REPO}@v9.9", f"{REPO}@v9.9 at http://127.0.0.1:"),
    ],
)
def test_a_hub_id_that_does_not_resolve_exits_2(
    hub_home: Path, releases: tuple[Path, Path], spec: str, message: str
) -> None:
    code, out, err = _run("diff", spec, str(releases[1]))
    assert code == 2, err
    assert message in err and "Traceback" not in err and out == ""


@pytest.fixture()
def stores(shared_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    a = standard_world(shared_dir).write(tmp_path / "a")
    w = RawWorld(shared_dir)
    w.next_job_id = 900_000_000
    w.job(w.run(42, T0), "lint")
    return a, w.write(tmp_path / "b")


def test_build_previous_puts_the_diff_into_the_card(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    first, second = tmp_path / "v1", tmp_path / "v2"
    code, _, err = _run("build", "--raw", str(stores[0]), "--out", str(first))
    assert code == 0, err
    code, _, err = _run(
        "build", "--raw", str(stores[0]), str(stores[1]), "--out", str(second), "--previous",
        str(first),
    )  # fmt: skip
    assert code == 0, err
    card = (second / "README.md").read_text(encoding="utf-8")
    section = card[card.index("## Changes since the previous release") :]
    assert section.index("### Changes from") < section.index("## How to cite")
    assert f"Compared with `{first}`" in section
    m1, m2 = read_manifest(first), read_manifest(second)
    assert f"| jobs | {m1['rows']:,} | {m2['rows']:,} |" in section
    assert m2["build"]["previous"] == {
        "dataset": str(first),
        "revision": m1["revision"],
        "schema_version": m1["schema_version"],
    }
    assert m2["revision"] != m1["revision"]
    assert validate_folder(second) == []


def test_build_previous_that_is_not_a_dataset_builds_nothing(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "ds"
    code, _, err = _run(
        "build", "--raw", str(stores[0]), "--out", str(out), "--previous", str(tmp_path)
    )
    assert code == 2
    assert "--previous" in err and "not a dataset folder" in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize("odd", ["x" * 300, "\udcff", "/proc/self/mem", "", "a/b/c/d"])
def test_odd_names_exit_2_without_traceback(releases: tuple[Path, Path], odd: str) -> None:
    for args in (("diff", odd, str(releases[0])), ("diff", str(releases[0]), odd)):
        code, out, err = _run(*args)
        assert code == 2, (odd, err)
        assert "Traceback" not in err and out == ""


def test_a_folder_with_unreadable_data_exits_2(releases: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(releases[1], broken)
    for path in (broken / "data").rglob("*.parquet"):
        path.write_bytes(b"not parquet")
    code, out, err = _run("diff", str(releases[0]), str(broken))
    assert code == 2 and out == ""
    flat = " ".join(err.split())
    assert "is not the" in flat and "manifest.json lists" in flat  # its sha256, before it is read
    assert "gharuntime validate" in flat and "Traceback" not in err


@pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index")
def test_a_downloaded_release_reads_with_mlcroissant(
    hub_home: Path, releases: tuple[Path, Path]
) -> None:
    """The Hub cache holds every file as a symlink into its blobs; the Croissant file's relative
    paths and globs still reach the rows."""
    mlc = pytest.importorskip("mlcroissant")
    from gharuntime.dataset import load
    from gharuntime.hub import open_dataset

    root = open_dataset(f"{REPO}@v1.0").root
    assert (root / "croissant.json").is_symlink()
    records = list(mlc.Dataset(root / "croissant.json").records("cross_repo/train"))
    want = load(releases[0], "cross_repo", "train")
    assert sorted(r["cross_repo/train/id"].decode() for r in records) == sorted(want["id"])


def test_build_previous_takes_a_hub_release(
    hub_home: Path, releases: tuple[Path, Path], stores: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "ds"
    code, _, err = _run(
        "build", "--raw", str(stores[0]), "--out", str(out), "--previous", f"{REPO}@v1.0"
    )
    assert code == 0, err
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"### Changes from `{REPO}@v1.0` to this release" in card
    previous = read_manifest(out)["build"]["previous"]
    assert previous["revision"] == read_manifest(releases[0])["revision"]
    code, _, err = _run(
        "build", "--raw", str(stores[0]), "--out", str(tmp_path / "x"), "--previous", "org/none"
    )
    assert code == 2 and "no such dataset repository" in err
    assert not (tmp_path / "x").exists()


TAMPER = {
    "split count": lambda m: m["splits"]["temporal"].update(train=10**12),
    "split count as text": lambda m: m["splits"]["temporal"].update(train="<h1>many</h1>"),
    "rows": lambda m: m.update(rows=-5),
    "filter count": lambda m: m.update(filters={**(m.get("filters") or {}), "dropped": "lots"}),
    "revision": lambda m: m.update(revision="0" * 64),
    "file rows": lambda m: m["files"][0].update(rows=m["files"][0]["rows"] + 1),
    "file sha256": lambda m: m["files"][0].update(sha256="f" * 64),
}


@pytest.mark.parametrize("case", sorted(TAMPER))
def test_a_manifest_edited_after_the_build_is_refused(
    releases: tuple[Path, Path], tmp_path: Path, case: str
) -> None:
    """What diff shows (and build --previous writes into the card) comes from the manifest: an
    edited one is refused, exit 2, naming manifest.json, never rendered."""
    import shutil

    tampered = tmp_path / "tampered"
    shutil.copytree(releases[0], tampered)
    manifest = json.loads((tampered / "manifest.json").read_text())
    TAMPER[case](manifest)
    (tampered / "manifest.json").write_text(json.dumps(manifest))
    for args in (
        ("diff", str(tampered), str(releases[1])),
        ("diff", str(releases[1]), str(tampered)),
    ):
        code, out, err = _run(*args)
        flat = " ".join(err.split())
        assert code == 2 and out == "", (case, err)
        assert "manifest.json" in flat and "gharuntime validate" in flat, flat
        assert "Traceback" not in err
