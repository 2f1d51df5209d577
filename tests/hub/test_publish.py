"""Publishing with the real huggingface_hub client to the project's Hub endpoint on 127.0.0.1
(gharuntime.sim.hub), downloading back with the real snapshot_download, and the faults."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from huggingface_hub import HfApi, snapshot_download

from gharuntime.dataset import read_manifest
from gharuntime.hub import HubError, download, publish
from gharuntime.sim.hub import HubFault, HubServer, serve_hub

TOKEN = "hf_publish_secret_4242"


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    with serve_hub(tmp_path / "hub-store", tokens={TOKEN: "alice"}, page_size=4) as server:
        yield server


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.relative_to(folder).as_posix().startswith(".")
    }


def test_published_revision_downloads_back_byte_for_byte(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path
) -> None:
    result = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    assert len(result.commit) == 40
    assert result.url == f"{hub.url}/datasets/org/bench/tree/v1.0"
    got = Path(
        snapshot_download(
            "org/bench",
            repo_type="dataset",
            revision="v1.0",
            endpoint=hub.url,
            cache_dir=tmp_path / "cache",
        )
    )
    assert got.name == result.commit
    mine = _files(fixture_dataset)
    assert {k: v for k, v in _files(got).items()} == mine
    assert "croissant.json" in mine  # the Croissant metadata goes up with the data
    # data files went up through LFS basic transfer, each verified
    parquet = [p for p in mine if p.endswith(".parquet")]
    assert hub.traffic.count("PUT", r"^/lfs/[0-9a-f]{64}$") == len(parquet)
    assert hub.traffic.count("POST", r"^/lfs/[0-9a-f]{64}/verify$") == len(parquet)


def test_one_commit_holds_the_whole_folder_and_the_tag_names_it(
    hub: HubServer, fixture_dataset: Path
) -> None:
    result = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    api = HfApi(endpoint=hub.url, token=TOKEN)
    refs = api.list_repo_refs("org/bench", repo_type="dataset")
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1.0", result.commit)]
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", result.commit)]
    assert hub.traffic.count("POST", r"/commit/main$") == 1
    # the tree (paged 4 entries at a time through Link) lists every file with its sha256
    tree = {
        f.path: f
        for f in api.list_repo_tree(
            "org/bench", repo_type="dataset", revision="v1.0", recursive=True
        )
    }
    assert hub.traffic.count("GET", r"/tree/v1.0$") > 2  # followed Link headers
    manifest = read_manifest(fixture_dataset)
    for entry in manifest["files"]:
        lfs = getattr(tree[entry["path"]], "lfs", None)
        assert lfs is not None and lfs.sha256 == entry["sha256"]
    assert {"README.md", "manifest.json", ".gitattributes"} <= set(tree)


def test_republishing_an_unchanged_folder_uploads_nothing(
    hub: HubServer, fixture_dataset: Path
) -> None:
    first = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    before = len(hub.traffic.requests)
    again = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    later = hub.traffic.requests[before:]
    assert again.commit == first.commit
    assert again.changed == []
    assert not [r for r in later if r[0] == "PUT" or "/commit/" in r[1]]


def test_a_changed_file_is_the_only_one_sent(hub: HubServer, fixture_dataset: Path) -> None:
    publish(fixture_dataset, "org/bench", endpoint=hub.url, token=TOKEN)
    card = fixture_dataset / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + "\nMore words.\n", encoding="utf-8")
    before = len(hub.traffic.requests)
    result = publish(fixture_dataset, "org/bench", endpoint=hub.url, token=TOKEN)
    assert result.changed == ["README.md"]
    assert not [r for r in hub.traffic.requests[before:] if r[0] == "PUT"]


def test_an_invalid_folder_is_refused_before_anything_is_sent(
    hub: HubServer, fixture_dataset: Path
) -> None:
    first = sorted(fixture_dataset.glob("data/temporal/*.parquet"))[0]
    first.write_bytes(first.read_bytes()[:-10])
    with pytest.raises(HubError, match="not a valid dataset folder"):
        publish(fixture_dataset, "org/bench", endpoint=hub.url, token=TOKEN)
    assert hub.traffic.requests == []


def test_a_release_tag_is_never_moved(hub: HubServer, fixture_dataset: Path) -> None:
    first = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    card = fixture_dataset / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + "\nchanged\n", encoding="utf-8")
    with pytest.raises(HubError, match=r"tag v1\.0 already names commit"):
        publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    refs = HfApi(endpoint=hub.url).list_repo_refs("org/bench", repo_type="dataset")
    assert [t.target_commit for t in refs.tags] == [first.commit]


def test_a_wrong_token_is_refused_and_not_repeated(hub: HubServer, fixture_dataset: Path) -> None:
    with pytest.raises(HubError) as info:
        publish(fixture_dataset, "org/bench", endpoint=hub.url, token="hf_wrong_token_9999")
    assert "401" in str(info.value)
    assert "hf_wrong_token_9999" not in str(info.value)


def test_a_private_repository_needs_the_token_to_download(
    hub: HubServer, fixture_dataset: Path
) -> None:
    publish(fixture_dataset, "org/secret", private=True, endpoint=hub.url, token=TOKEN)
    with pytest.raises(HubError, match="private: set HF_TOKEN"):
        download("org/secret", endpoint=hub.url)
    got = download("org/secret", endpoint=hub.url, token=TOKEN)
    assert (got.root / "manifest.json").is_file()


def test_resolve_answers_with_the_headers_the_client_reads(
    hub: HubServer, fixture_dataset: Path
) -> None:
    result = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    entry = read_manifest(fixture_dataset)["files"][0]
    base = f"{hub.url}/datasets/org/bench/resolve/v1.0"
    head = requests.head(f"{base}/{entry['path']}", timeout=10)
    assert head.status_code == 200
    assert head.headers["X-Repo-Commit"] == result.commit
    assert head.headers["X-Linked-Etag"] == f'"{entry["sha256"]}"'
    assert head.headers["X-Linked-Size"] == str(entry["bytes"])
    ranged = requests.get(f"{base}/{entry['path']}", headers={"Range": "bytes=0-3"}, timeout=10)
    assert ranged.status_code == 206 and ranged.content == b"PAR1"
    manifest = requests.get(f"{base}/manifest.json", timeout=10)
    data = (fixture_dataset / "manifest.json").read_bytes()
    git_oid = hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()
    assert manifest.content == data and manifest.headers["ETag"] == f'"{git_oid}"'
    missing = requests.head(f"{base}/nope.txt", timeout=10)
    assert (missing.status_code, missing.headers["X-Error-Code"]) == (404, "EntryNotFound")
    bad_rev = requests.head(f"{hub.url}/datasets/org/bench/resolve/v9/README.md", timeout=10)
    assert (bad_rev.status_code, bad_rev.headers["X-Error-Code"]) == (404, "RevisionNotFound")
    no_repo = requests.get(f"{hub.url}/api/datasets/org/none/refs", timeout=10)
    assert (no_repo.status_code, no_repo.headers["X-Error-Code"]) == (404, "RepoNotFound")
    conflict = requests.post(
        f"{hub.url}/api/repos/create",
        json={"name": "bench", "organization": "org", "type": "dataset"},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    )
    assert conflict.status_code == 409
    assert conflict.json()["url"] == f"{hub.url}/datasets/org/bench"


def _main_commit(hub: HubServer) -> str:
    refs = HfApi(endpoint=hub.url).list_repo_refs("org/bench", repo_type="dataset")
    return str(refs.branches[0].target_commit)


@pytest.mark.parametrize("kind", ["500", "drop"])
def test_a_failed_commit_leaves_the_revision_absent_and_a_rerun_completes_it(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path, kind: str
) -> None:
    hub.faults.append(HubFault("POST", r"/commit/main$", kind=kind, times=1))
    with pytest.raises(HubError, match="run the same command again"):
        publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    refs = HfApi(endpoint=hub.url).list_repo_refs("org/bench", repo_type="dataset")
    assert refs.tags == []  # no release
    initial = _main_commit(hub)
    listed = HfApi(endpoint=hub.url).list_repo_files("org/bench", repo_type="dataset")
    assert listed == [".gitattributes"]  # main still at the repository's first commit
    puts = hub.traffic.count("PUT", r"^/lfs/")
    result = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    assert result.commit != initial
    assert hub.traffic.count("PUT", r"^/lfs/") == puts  # objects kept: not sent twice
    got = download("org/bench@v1.0", endpoint=hub.url, cache_dir=tmp_path / "c")
    assert _files(got.root) == _files(fixture_dataset)


def test_a_connection_dropped_mid_upload_stores_nothing_partial(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path
) -> None:
    # the client retries the dropped PUT; the half-received body must not become an object
    hub.faults.append(HubFault("PUT", r"^/lfs/", kind="drop", times=1))
    result = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    store = hub.store.root / "objects"
    for obj in store.iterdir():
        assert hashlib.sha256(obj.read_bytes()).hexdigest() == obj.name
    assert not list((hub.store.root / "tmp").iterdir())
    got = download(f"org/bench@{result.commit}", endpoint=hub.url, cache_dir=tmp_path / "c")
    assert _files(got.root) == _files(fixture_dataset)


def test_a_commit_naming_an_object_never_uploaded_is_refused(
    hub: HubServer, fixture_dataset: Path
) -> None:
    publish(fixture_dataset, "org/bench", endpoint=hub.url, token=TOKEN)
    before = _main_commit(hub)
    lines = [
        {"key": "header", "value": {"summary": "sneaky", "description": ""}},
        {
            "key": "lfsFile",
            "value": {"path": "x.parquet", "algo": "sha256", "oid": "1" * 64, "size": 3},
        },
    ]
    answer = requests.post(
        f"{hub.url}/api/datasets/org/bench/commit/main",
        data=b"".join(json.dumps(x).encode() + b"\n" for x in lines),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/x-ndjson"},
        timeout=10,
    )
    assert answer.status_code == 422
    assert _main_commit(hub) == before


def test_a_failed_tag_leaves_the_release_absent_and_a_rerun_tags_the_same_commit(
    hub: HubServer, fixture_dataset: Path
) -> None:
    hub.faults.append(HubFault("POST", r"/tag/", kind="500", times=1))
    with pytest.raises(HubError, match="500"):
        publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    api = HfApi(endpoint=hub.url)
    assert api.list_repo_refs("org/bench", repo_type="dataset").tags == []
    committed = _main_commit(hub)
    puts = hub.traffic.count("PUT", r"^/lfs/")
    result = publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    assert result.commit == committed and result.changed == []
    assert hub.traffic.count("PUT", r"^/lfs/") == puts
    tags = api.list_repo_refs("org/bench", repo_type="dataset").tags
    assert [(t.name, t.target_commit) for t in tags] == [("v1.0", committed)]


@pytest.mark.slow  # huggingface_hub retries a 500 five times, backing off 1 + 2 + 4 + 8 + 8 s
def test_a_file_the_server_keeps_refusing_leaves_no_revision_and_a_rerun_sends_only_it(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path
) -> None:
    entry = read_manifest(fixture_dataset)["files"][0]
    hub.faults.append(HubFault("PUT", rf"^/lfs/{entry['sha256']}$", kind="500", times=1000))
    with pytest.raises(HubError, match=re.escape(entry["path"])):
        publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    api = HfApi(endpoint=hub.url)
    assert api.list_repo_files("org/bench", repo_type="dataset") == [".gitattributes"]
    assert api.list_repo_refs("org/bench", repo_type="dataset").tags == []
    hub.faults.clear()
    before = len(hub.traffic.requests)
    publish(fixture_dataset, "org/bench", tag="v1.0", endpoint=hub.url, token=TOKEN)
    rerun_puts = [p for m, p in hub.traffic.requests[before:] if m == "PUT"]
    assert rerun_puts == [f"/lfs/{entry['sha256']}"]  # the others were kept from the first try
    got = download("org/bench@v1.0", endpoint=hub.url, cache_dir=tmp_path / "c")
    assert _files(got.root) == _files(fixture_dataset)


def test_a_croissant_file_that_no_longer_matches_is_not_published(
    hub: HubServer, fixture_dataset: Path
) -> None:
    path = fixture_dataset / "croissant.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["distribution"][0]["sha256"] = "0" * 64
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(HubError, match=r"croissant\.json describes other data"):
        publish(fixture_dataset, "org/bench", endpoint=hub.url, token=TOKEN)
    assert hub.traffic.count("POST", r"/commit/main$") == 0
