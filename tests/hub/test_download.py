"""Downloading from a real Hub server: olah serving a local git repository (offline mirror
mode) on 127.0.0.1. Tags, branches and commit ids; the Hub cache offline; a corrupted file;
and `eval`, `baseline`, `validate` and `gharuntime.load` taking ORG/NAME[@REV]."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from hub_servers import branch, free_port, git_dataset_repo, hub_env, serve_olah, tag

import gharuntime
from gharuntime import dataset
from gharuntime.cli.main import cli
from gharuntime.dataset import read_manifest, write_dataset
from gharuntime.fixture import fixture_jobs

REPO = "org/bench"


@dataclass(frozen=True)
class Mirror:
    url: str
    v1: Path  # the folder committed first: tag v1.0, branch dev
    v2: Path  # the folder committed second: main
    c1: str
    c2: str


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mirror]:
    work = tmp_path_factory.mktemp("olah")
    v1, v2 = work / "v1", work / "v2"
    write_dataset(fixture_jobs(seed=0), v1, provenance={"kind": "fixture", "seed": 0})
    write_dataset(fixture_jobs(seed=1), v2, provenance={"kind": "fixture", "seed": 1})
    mirrors = work / "mirrors"
    c1, c2 = git_dataset_repo(mirrors, REPO, [v1, v2])
    tag(mirrors, REPO, "v1.0", c1)
    branch(mirrors, REPO, "dev", c1)
    with serve_olah(mirrors, work, REPO) as url:
        yield Mirror(url, v1, v2, c1, c2)


@pytest.fixture()
def hub_home(tmp_path: Path, mirror: Mirror, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh Hub cache, the mirror as the endpoint, no token."""
    for key in [k for k in os.environ if k.startswith(("HF_", "HUGGINGFACE_"))]:
        if key != "HF_HUB_DISABLE_XET":
            monkeypatch.delenv(key)
    monkeypatch.delenv("GHARUNTIME_DATASET", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_ENDPOINT", mirror.url)
    return tmp_path / "hf"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def _line(stdout: str, key: str) -> str:
    return next(ln.split(None, 1)[1] for ln in stdout.splitlines() if ln.startswith(key + " "))


def _same_files(a: Path, b: Path) -> bool:
    def files(root: Path) -> dict[str, bytes]:
        return {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in root.rglob("*")
            if p.is_file() and not p.name.startswith(".")
        }

    return files(a) == files(b)


@pytest.mark.parametrize(
    ("revision", "which"), [("@v1.0", "v1"), ("@dev", "v1"), ("", "v2"), ("@c1", "v1")]
)
def test_download_resolves_tags_branches_and_commits(
    hub_home: Path, mirror: Mirror, tmp_path: Path, revision: str, which: str
) -> None:
    revision = revision.replace("c1", mirror.c1)
    code, out, err = _run("download", REPO + revision, "--to", str(tmp_path / "copy"))
    assert code == 0, err
    want = mirror.v1 if which == "v1" else mirror.v2
    assert _line(out, "commit") == (mirror.c1 if which == "v1" else mirror.c2)
    assert _same_files(tmp_path / "copy", want)


def test_load_reads_a_split_of_a_hub_revision(hub_home: Path, mirror: Mirror) -> None:
    got = gharuntime.load(f"{REPO}@v1.0", config="temporal", split="train")
    assert got.equals(gharuntime.load(mirror.v1, config="temporal", split="train"))
    assert got.height == read_manifest(mirror.v1)["splits"]["temporal"]["train"]


def test_the_dataset_layer_opens_a_hub_id_through_the_one_resolver(
    hub_home: Path, mirror: Mirror
) -> None:
    """`gharuntime.dataset.open_dataset` and `load` take ORG/NAME@REV as gharuntime.load does:
    the Hub client registered itself as their opener (the dataset layer cannot import it)."""
    opened = dataset.open_dataset(f"{REPO}@v1.0")
    assert (opened.repo_id, opened.revision, opened.commit) == (REPO, "v1.0", mirror.c1)
    assert _same_files(opened.root, mirror.v1)
    want = dataset.load(mirror.v1, config="cross_repo", split="test")
    assert dataset.load(f"{REPO}@v1.0", config="cross_repo", split="test").equals(want)
    assert dataset.load(opened, config="cross_repo", split="test").equals(want)


def test_offline_download_is_served_from_the_cache(hub_home: Path, mirror: Mirror) -> None:
    assert _run("download", f"{REPO}@v1.0")[0] == 0
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens: the network is not used
    env = hub_env(hub_home, closed, HF_HUB_OFFLINE="1")
    cmd = [sys.executable, "-c", "from gharuntime.cli.main import main; main()", "download"]
    done = subprocess.run([*cmd, f"{REPO}@v1.0"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert _line(done.stdout, "commit") == mirror.c1
    # a revision never downloaded cannot come from the cache: a clear error, exit 2
    missing = subprocess.run([*cmd, f"{REPO}@main"], env=env, capture_output=True, text=True)
    assert missing.returncode == 2
    assert "not in the Hub cache" in missing.stderr and "Traceback" not in missing.stderr


def _corrupt_one_cached_file(hub_home: Path, mirror: Mirror) -> str:
    rel = read_manifest(mirror.v1)["files"][0]["path"]
    snapshot = hub_home / "hub" / "datasets--org--bench" / "snapshots" / mirror.c1
    blob = (snapshot / rel).resolve()
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0xFF
    blob.write_bytes(bytes(data))
    return str(rel)


def test_a_corrupted_cached_file_is_named_and_nothing_is_used(
    hub_home: Path, mirror: Mirror, tmp_path: Path
) -> None:
    assert _run("download", f"{REPO}@v1.0")[0] == 0
    rel = _corrupt_one_cached_file(hub_home, mirror)
    copy = tmp_path / "copy"
    code, _, err = _run("download", f"{REPO}@v1.0", "--to", str(copy))
    assert code == 2
    assert rel in err and "does not match manifest.json" in err and "Traceback" not in err
    assert not copy.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".copy")]
    # the same check guards everything that takes a Hub id
    result = tmp_path / "r.json"
    code, _, err = _run("eval", "--gold", "--dataset", f"{REPO}@v1.0", "--out", str(result))
    assert code == 2 and rel in err and not result.exists()
    # --force fetches a good copy again
    code, _, err = _run("download", f"{REPO}@v1.0", "--force")
    assert code == 0, err


def test_baseline_validate_and_eval_take_a_hub_id(
    hub_home: Path, mirror: Mirror, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = tmp_path / "median.jsonl"
    code, _, err = _run(
        "baseline", "median", "--dataset", f"{REPO}@v1.0", "--track", "config", "--out", str(sub)
    )
    assert code == 0, err
    assert _run("validate", f"{REPO}@dev")[0] == 0
    out = tmp_path / "result.json"
    code, _, err = _run("eval", str(sub), "--dataset", f"{REPO}@v1.0", "--out", str(out))
    assert code == 0, err
    dataset = json.loads(out.read_text())["dataset"]
    assert (dataset["id"], dataset["kind"], dataset["commit"]) == (
        f"{REPO}@v1.0",
        "hub",
        mirror.c1,
    )
    # with no --dataset, eval scores against $GHARUNTIME_DATASET (else the pinned benchmark)
    monkeypatch.setenv("GHARUNTIME_DATASET", f"{REPO}@{mirror.c1}")
    pinned = tmp_path / "pinned.json"
    code, _, err = _run("eval", str(sub), "--out", str(pinned))
    assert code == 0, err
    got = json.loads(pinned.read_text())
    assert got["dataset"]["commit"] == mirror.c1
    assert got["metrics"] == json.loads(out.read_text())["metrics"]


def test_eval_without_a_dataset_explains_the_pinned_benchmark_when_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub_home: Path
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    sub = tmp_path / "s.jsonl"
    sub.write_text('{"id": "1", "duration_s": 1.0}\n')
    code, _, err = _run("eval", str(sub), "--track", "config")
    assert code == 2
    flat = " ".join(err.split())
    assert gharuntime.hub.DEFAULT_DATASET in flat
    assert "GHARUNTIME_DATASET" in flat and "--dataset" in flat
    assert "Traceback" not in err


def test_a_missing_revision_is_a_clear_error(hub_home: Path) -> None:
    code, _, err = _run("download", f"{REPO}@v9.9")
    assert code == 2 and "v9.9" in err and "Traceback" not in err


def test_load_matches_polars_on_the_downloaded_files(hub_home: Path, mirror: Mirror) -> None:
    got = gharuntime.hub.download(f"{REPO}@v1.0")
    paths = sorted((got.root / "data" / "cross_repo").glob("test-*.parquet"))
    assert gharuntime.load(f"{REPO}@v1.0", config="cross_repo", split="test").equals(
        pl.read_parquet(paths)
    )


def _snapshot(hub_home: Path, mirror: Mirror) -> Path:
    return hub_home / "hub" / "datasets--org--bench" / "snapshots" / mirror.c1


def _rewrite_manifest(snapshot: Path, rel: str, data: bytes) -> None:
    """Tamper as an attacker with write access to the cache would: the manifest's blob now
    vouches for `data` as `rel`, so the per-file sha256 check alone passes."""
    blob = (snapshot / "manifest.json").resolve()
    manifest = json.loads(blob.read_text())
    for entry in manifest["files"]:
        if entry["path"] == rel:
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["bytes"] = len(data)
    blob.write_text(json.dumps(manifest, indent=2))


def test_a_cached_manifest_altered_to_match_a_changed_file_is_refused(
    hub_home: Path, mirror: Mirror, tmp_path: Path
) -> None:
    assert _run("download", f"{REPO}@v1.0")[0] == 0
    rel = _corrupt_one_cached_file(hub_home, mirror)
    snapshot = _snapshot(hub_home, mirror)
    _rewrite_manifest(snapshot, rel, (snapshot / rel).read_bytes())
    copy = tmp_path / "copy"
    code, _, err = _run("download", f"{REPO}@v1.0", "--to", str(copy))
    assert code == 2, err
    flat = " ".join(err.split())
    assert "do not match the revision" in flat and "Traceback" not in err
    assert not copy.exists()
    result = tmp_path / "r.json"
    code, _, err = _run("eval", "--gold", "--dataset", f"{REPO}@v1.0", "--out", str(result))
    assert code == 2 and "do not match the revision" in " ".join(err.split())
    assert not result.exists()
    assert _run("download", f"{REPO}@v1.0", "--force")[0] == 0  # the fix the message gives


@pytest.mark.parametrize("target", ["file", "fifo"])
def test_a_cache_link_leaving_its_blobs_is_refused_unread(
    hub_home: Path, mirror: Mirror, tmp_path: Path, target: str
) -> None:
    assert _run("download", f"{REPO}@v1.0")[0] == 0
    snapshot = _snapshot(hub_home, mirror)
    rel = read_manifest(mirror.v1)["files"][0]["path"]
    outside = tmp_path / "outside"
    if target == "fifo":
        os.mkfifo(outside)  # opening it would block until a writer comes
    else:
        outside.write_bytes(b"SECRET-OUTSIDE-THE-CACHE")
    (snapshot / rel).unlink()
    (snapshot / rel).symlink_to(outside)
    if target == "file":
        _rewrite_manifest(snapshot, rel, outside.read_bytes())
    copy = tmp_path / "copy"
    code, _, err = _run("download", f"{REPO}@v1.0", "--to", str(copy))
    assert code == 2, err
    assert "outside its blobs/ folder" in " ".join(err.split()) and "Traceback" not in err
    assert not copy.exists()


@pytest.mark.parametrize("to", ["/dev/null", "file"])
def test_download_to_what_is_not_a_folder_is_refused_first(
    hub_home: Path, tmp_path: Path, to: str
) -> None:
    dest = tmp_path / "a-file" if to == "file" else Path(to)
    if to == "file":
        dest.write_text("keep me")
    code, _, err = _run("download", f"{REPO}@v1.0", "--to", str(dest))
    assert code == 2, err
    flat = " ".join(err.split())
    assert ("is not a folder" in flat or "is a file" in flat) and "Traceback" not in err
    assert not (hub_home / "hub").exists()  # refused before anything was downloaded
    if to == "file":
        assert dest.read_text() == "keep me"
