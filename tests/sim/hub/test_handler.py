"""gharuntime.sim.hub.handler: each endpoint of the test Hub, over real HTTP on 127.0.0.1, as
huggingface_hub's client calls it: repositories, NDJSON commits, LFS uploads, tags, listings,
downloads with ranges, and the error codes the client reads."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from gharuntime.sim.hub import HubServer, git_blob_oid, serve_hub

TOKEN = "hf_handler_secret"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
README = b"---\nlicense: mit\npretty_name: Bench\n---\n# Bench\n"
CSV = b"id,duration_s\n1,30\n2,45\n"


@dataclass(frozen=True)
class Hub:
    """The module's one running server, and the repository id this test has to itself (a
    server for each test would cost half a second each to stop)."""

    server: HubServer
    repo: str

    @property
    def url(self) -> str:
        return self.server.url


_SERIAL = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubServer]:
    with serve_hub(tmp_path_factory.mktemp("hub"), tokens={TOKEN: "alice"}, page_size=2) as hub:
        yield hub


@pytest.fixture()
def hub(server: HubServer) -> Hub:
    return Hub(server, f"org/ds{next(_SERIAL)}")


def _create(hub: Hub, **body: Any) -> requests.Response:
    org, name = hub.repo.split("/")
    payload = {"type": "dataset", "organization": org, "name": name, **body}
    return requests.post(f"{hub.url}/api/repos/create", json=payload, headers=AUTH, timeout=10)


def _file(path: str, data: bytes) -> dict[str, Any]:
    content = base64.b64encode(data).decode()
    return {"key": "file", "value": {"path": path, "content": content, "encoding": "base64"}}


def _commit(
    hub: Hub, lines: list[dict[str, Any]], rev: str = "main", **header: Any
) -> requests.Response:
    first = {"key": "header", "value": {"summary": "update", "description": "", **header}}
    body = b"".join(json.dumps(x).encode() + b"\n" for x in [first, *lines])
    return requests.post(
        f"{hub.url}/api/datasets/{hub.repo}/commit/{rev}",
        data=body,
        headers={**AUTH, "Content-Type": "application/x-ndjson"},
        timeout=10,
    )


def _main(hub: Hub) -> str:
    refs = requests.get(f"{hub.url}/api/datasets/{hub.repo}/refs", timeout=10).json()
    (branch,) = refs["branches"]
    return str(branch["targetCommit"])


def _files(hub: Hub, rev: str = "main") -> list[str]:
    info = requests.get(f"{hub.url}/api/datasets/{hub.repo}/revision/{rev}", timeout=10).json()
    return [s["rfilename"] for s in info["siblings"]]


def _published(hub: Hub) -> str:
    assert _create(hub).status_code == 200
    answer = _commit(
        hub, [_file("README.md", README), _file("data/a.csv", CSV), _file("data/sub/b.csv", b"b")]
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["commitOid"])


# --- repositories -----------------------------------------------------------------------------


def test_creating_a_repository_needs_a_known_token_and_a_dataset(hub: Hub) -> None:
    url = f"{hub.url}/api/repos/create"
    org, name = hub.repo.split("/")
    body = {"type": "dataset", "organization": org, "name": name}
    for headers in ({}, {"Authorization": "Bearer hf_wrong"}, {"Authorization": TOKEN}):
        answer = requests.post(url, json=body, headers=headers, timeout=10)
        assert answer.status_code == 401
        assert answer.headers["X-Error-Message"] == "Invalid credentials in Authorization header"
    assert _create(hub, type="model").status_code == 400
    assert _create(hub, name="").status_code == 400
    assert _create(hub, name="a/b").status_code == 400
    assert requests.get(f"{hub.url}/api/datasets/{hub.repo}", timeout=10).status_code == 404
    made = _create(hub)
    assert made.status_code == 200
    assert made.json() == {
        "url": f"{hub.url}/datasets/{hub.repo}",
        "name": hub.repo,
        "id": hub.repo,
    }
    again = _create(hub)
    assert again.status_code == 409 and again.json()["url"] == f"{hub.url}/datasets/{hub.repo}"
    info = requests.get(f"{hub.url}/api/datasets/{hub.repo}", timeout=10).json()
    assert info["id"] == hub.repo and info["private"] is False and info["cardData"] is None
    assert [s["rfilename"] for s in info["siblings"]] == [".gitattributes"]
    assert info["sha"] == _main(hub)


def test_a_private_repository_is_hidden_from_a_request_without_a_token(hub: Hub) -> None:
    assert _create(hub, private=True).status_code == 200
    base = f"{hub.url}/api/datasets/{hub.repo}"
    hidden = requests.get(base, timeout=10)
    assert (hidden.status_code, hidden.headers["X-Error-Code"]) == (401, "RepoNotFound")
    resolve = f"{hub.url}/datasets/{hub.repo}/resolve/main/.gitattributes"
    assert requests.get(resolve, timeout=10).status_code == 401
    shown = requests.get(base, headers=AUTH, timeout=10)
    assert shown.status_code == 200 and shown.json()["private"] is True
    assert requests.get(resolve, headers=AUTH, timeout=10).content.startswith(b"*.parquet")


def test_unknown_repositories_and_endpoints_answer_404(hub: Hub) -> None:
    missing = requests.get(f"{hub.url}/api/datasets/org/none/refs", timeout=10)
    assert (missing.status_code, missing.headers["X-Error-Code"]) == (404, "RepoNotFound")
    other = requests.get(f"{hub.url}/api/models/{hub.repo}", timeout=10)
    assert other.status_code == 404 and "no such endpoint" in other.json()["error"]


# --- commits and downloads --------------------------------------------------------------------


def test_a_commit_is_downloaded_back_with_the_headers_the_client_reads(hub: Hub) -> None:
    commit = _published(hub)
    assert _main(hub) == commit
    assert _files(hub) == [".gitattributes", "README.md", "data/a.csv", "data/sub/b.csv"]
    info = requests.get(f"{hub.url}/api/datasets/{hub.repo}", timeout=10).json()
    assert info["cardData"] == {"license": "mit", "pretty_name": "Bench"}
    url = f"{hub.url}/datasets/{hub.repo}/resolve/main/data/a.csv"
    got = requests.get(url, timeout=10)
    assert got.status_code == 200 and got.content == CSV
    assert got.headers["ETag"] == f'"{git_blob_oid(CSV)}"'
    assert got.headers["X-Repo-Commit"] == commit
    assert "X-Linked-Etag" not in got.headers  # a regular file, not LFS
    head = requests.head(url, timeout=10)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["Content-Length"] == str(len(CSV))
    by_commit = requests.get(
        f"{hub.url}/datasets/{hub.repo}/resolve/{commit}/data/a.csv", timeout=10
    )
    assert by_commit.content == CSV
    missing = requests.head(f"{hub.url}/datasets/{hub.repo}/resolve/main/nope.csv", timeout=10)
    assert (missing.status_code, missing.headers["X-Error-Code"]) == (404, "EntryNotFound")
    bad_rev = requests.head(f"{hub.url}/datasets/{hub.repo}/resolve/v9/data/a.csv", timeout=10)
    assert (bad_rev.status_code, bad_rev.headers["X-Error-Code"]) == (404, "RevisionNotFound")


@pytest.mark.parametrize(
    ("header", "status", "body"),
    [
        ("bytes=0-3", 206, CSV[0:4]),
        ("bytes=5-", 206, CSV[5:]),
        ("bytes=-4", 206, CSV[-4:]),
        ("bytes=3-1000", 206, CSV[3:]),
    ],
)
def test_a_range_answers_its_bytes(hub: Hub, header: str, status: int, body: bytes) -> None:
    _published(hub)
    url = f"{hub.url}/datasets/{hub.repo}/resolve/main/data/a.csv"
    got = requests.get(url, headers={"Range": header}, timeout=10)
    assert (got.status_code, got.content) == (status, body)
    start = len(CSV) - len(body) if header.startswith("bytes=-") else int(header[6:].split("-")[0])
    assert got.headers["Content-Range"] == f"bytes {start}-{start + len(body) - 1}/{len(CSV)}"


def test_a_range_past_the_end_is_not_satisfiable(hub: Hub) -> None:
    _published(hub)
    url = f"{hub.url}/datasets/{hub.repo}/resolve/main/data/a.csv"
    got = requests.get(url, headers={"Range": f"bytes={len(CSV)}-"}, timeout=10)
    assert got.status_code == 416 and got.headers["Content-Range"] == f"bytes */{len(CSV)}"


def test_a_commit_that_cannot_apply_changes_nothing(hub: Hub) -> None:
    before = _published(hub)
    stale = _commit(hub, [_file("x.txt", b"x")], parentCommit="0" * 40)
    assert stale.status_code == 412
    no_branch = _commit(hub, [_file("x.txt", b"x")], rev="dev")
    assert (no_branch.status_code, no_branch.headers["X-Error-Code"]) == (404, "RevisionNotFound")
    for path in ("../escape.txt", "/abs.txt", "a/../../b", ""):
        assert _commit(hub, [_file(path, b"x")]).status_code == 400, path
    assert _commit(hub, [{"key": "symlink", "value": {"path": "l"}}]).status_code == 400
    never_uploaded = {"path": "x.parquet", "oid": "1" * 64, "size": 3}
    assert _commit(hub, [{"key": "lfsFile", "value": never_uploaded}]).status_code == 422
    not_ndjson = requests.post(
        f"{hub.url}/api/datasets/{hub.repo}/commit/main",
        data=b"{not json\n",
        headers=AUTH,
        timeout=10,
    )
    assert not_ndjson.status_code == 400
    headless = requests.post(
        f"{hub.url}/api/datasets/{hub.repo}/commit/main",
        data=json.dumps(_file("x.txt", b"x")).encode(),
        headers=AUTH,
        timeout=10,
    )
    assert headless.status_code == 400 and "header" in headless.json()["error"]
    no_token = requests.post(f"{hub.url}/api/datasets/{hub.repo}/commit/main", data=b"", timeout=10)
    assert no_token.status_code == 401
    assert _main(hub) == before
    assert "x.txt" not in _files(hub)


def test_a_commit_with_the_right_parent_deletes_files_and_folders(hub: Hub) -> None:
    first = _published(hub)
    answer = _commit(
        hub,
        [{"key": "deletedFolder", "value": {"path": "data/"}}, _file("new.txt", b"n")],
        parentCommit=first,
    )
    assert answer.status_code == 200
    second = answer.json()["commitOid"]
    assert _main(hub) == second != first
    assert _files(hub) == [".gitattributes", "README.md", "new.txt"]
    assert _files(hub, first) == [".gitattributes", "README.md", "data/a.csv", "data/sub/b.csv"]
    third = _commit(hub, [{"key": "deletedFile", "value": {"path": "new.txt"}}])
    assert third.status_code == 200 and _files(hub) == [".gitattributes", "README.md"]


# --- LFS --------------------------------------------------------------------------------------


def test_preupload_sends_binary_and_parquet_files_to_lfs_and_names_known_ones(
    hub: Hub,
) -> None:
    _published(hub)
    files = [
        {"path": "data/a.csv", "size": len(CSV), "sample": base64.b64encode(CSV).decode()},
        {"path": "t.parquet", "size": 10, "sample": base64.b64encode(b"PAR1").decode()},
        {"path": "blob.txt", "size": 5, "sample": base64.b64encode(b"ab\x00cd").decode()},
        {"path": "big.txt", "size": 11 * 2**20, "sample": ""},
    ]
    answer = requests.post(
        f"{hub.url}/api/datasets/{hub.repo}/preupload/main",
        json={"files": files},
        headers=AUTH,
        timeout=10,
    )
    assert answer.status_code == 200
    got = {f["path"]: (f["uploadMode"], f["oid"]) for f in answer.json()["files"]}
    assert got == {
        "data/a.csv": ("regular", git_blob_oid(CSV)),  # already there: its git oid
        "t.parquet": ("lfs", None),
        "blob.txt": ("lfs", None),
        "big.txt": ("lfs", None),
    }
    assert answer.json()["commitOid"] == _main(hub)


def test_an_lfs_upload_is_verified_committed_and_downloaded(hub: Hub) -> None:
    assert _create(hub).status_code == 200
    data = b"PAR1" + bytes(range(256)) * 40 + b"PAR1"
    oid = hashlib.sha256(data).hexdigest()
    batch_url = f"{hub.url}/datasets/{hub.repo}.git/info/lfs/objects/batch"
    batch = {
        "operation": "upload",
        "transfers": ["basic"],
        "objects": [{"oid": oid, "size": len(data)}],
    }
    answer = requests.post(batch_url, json=batch, headers=AUTH, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == "application/vnd.git-lfs+json"
    (obj,) = answer.json()["objects"]
    upload, verify = obj["actions"]["upload"]["href"], obj["actions"]["verify"]["href"]
    assert (upload, verify) == (f"{hub.url}/lfs/{oid}", f"{hub.url}/lfs/{oid}/verify")
    early = requests.post(verify, json={"oid": oid, "size": len(data)}, timeout=10)
    assert early.status_code == 404  # nothing uploaded yet

    def chunks() -> Iterator[bytes]:  # sent chunked, as a streaming client sends it
        for i in range(0, len(data), 1000):
            yield data[i : i + 1000]

    assert requests.put(upload, data=chunks(), timeout=10).status_code == 200
    wrong_size = requests.post(verify, json={"oid": oid, "size": len(data) + 1}, timeout=10)
    assert wrong_size.status_code == 404
    assert requests.post(verify, json={"oid": oid, "size": len(data)}, timeout=10).ok
    again = requests.post(batch_url, json=batch, headers=AUTH, timeout=10).json()["objects"][0]
    assert "actions" not in again  # the server holds it: nothing to send
    lfs_line = {
        "key": "lfsFile",
        "value": {"path": "t.parquet", "algo": "sha256", "oid": oid, "size": len(data)},
    }
    assert _commit(hub, [lfs_line]).status_code == 200
    got = requests.get(f"{hub.url}/datasets/{hub.repo}/resolve/main/t.parquet", timeout=10)
    assert got.content == data
    assert got.headers["X-Linked-Etag"] == f'"{oid}"'
    assert got.headers["X-Linked-Size"] == str(len(data))
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {len(data)}\n"
    assert got.headers["ETag"] == f'"{git_blob_oid(pointer.encode())}"'


def test_a_batch_names_a_malformed_object_and_refuses_other_transfers(hub: Hub) -> None:
    assert _create(hub).status_code == 200
    url = f"{hub.url}/datasets/{hub.repo}.git/info/lfs/objects/batch"
    bad = requests.post(
        url, json={"objects": [{"oid": "xyz", "size": 3}]}, headers=AUTH, timeout=10
    )
    assert bad.json()["objects"][0]["error"]["code"] == 422
    other = requests.post(url, json={"transfers": ["ssh"], "objects": []}, headers=AUTH, timeout=10)
    assert other.status_code == 422


def test_an_upload_whose_bytes_do_not_match_its_oid_is_refused(hub: Hub) -> None:
    oid = "0" * 64
    answer = requests.put(f"{hub.url}/lfs/{oid}", data=b"not that content", timeout=10)
    assert answer.status_code == 400
    assert not (hub.server.store.root / "objects" / oid).exists()


# --- tags, refs, listings ---------------------------------------------------------------------


def test_a_tag_names_a_commit_once(hub: Hub) -> None:
    commit = _published(hub)
    url = f"{hub.url}/api/datasets/{hub.repo}/tag/main"
    assert requests.post(url, json={"tag": "v1.0"}, headers=AUTH, timeout=10).status_code == 200
    assert requests.post(url, json={"tag": "v1.0"}, headers=AUTH, timeout=10).status_code == 409
    assert requests.post(url, json={"tag": "a b"}, headers=AUTH, timeout=10).status_code == 400
    assert requests.post(url, json={"tag": "v2"}, timeout=10).status_code == 401
    refs = requests.get(f"{hub.url}/api/datasets/{hub.repo}/refs", timeout=10).json()
    assert refs["tags"] == [{"name": "v1.0", "ref": "refs/tags/v1.0", "targetCommit": commit}]
    assert refs["branches"] == [{"name": "main", "ref": "refs/heads/main", "targetCommit": commit}]
    _commit(hub, [_file("later.txt", b"l")])
    for rev in ("v1.0", "refs%2Ftags%2Fv1.0", commit):
        info = requests.get(f"{hub.url}/api/datasets/{hub.repo}/revision/{rev}", timeout=10).json()
        assert info["sha"] == commit and "later.txt" not in [
            s["rfilename"] for s in info["siblings"]
        ]


def _listing(hub: Hub, url: str) -> tuple[list[dict[str, Any]], int]:
    """Every entry of a tree listing, following its Link headers; and the pages it took."""
    entries, pages = [], 0
    next_url: str | None = url
    while next_url:
        answer = requests.get(next_url, timeout=10)
        assert answer.status_code == 200
        page = answer.json()
        assert len(page) <= hub.server.page_size
        entries += page
        pages += 1
        next_url = answer.links.get("next", {}).get("url")
    return entries, pages


def test_the_tree_lists_a_level_or_everything_in_pages(hub: Hub) -> None:
    _published(hub)
    base = f"{hub.url}/api/datasets/{hub.repo}/tree/main"
    top, pages = _listing(hub, base)
    assert [(e["type"], e["path"]) for e in top] == [
        ("file", ".gitattributes"),
        ("file", "README.md"),
        ("directory", "data"),
    ]
    assert pages == 2  # page size 2
    everything, pages = _listing(hub, f"{base}?recursive=true")
    assert [e["path"] for e in everything] == [
        ".gitattributes",
        "README.md",
        "data",
        "data/a.csv",
        "data/sub",
        "data/sub/b.csv",
    ]
    assert pages == 3
    a_csv = next(e for e in everything if e["path"] == "data/a.csv")
    assert a_csv == {
        "type": "file",
        "path": "data/a.csv",
        "oid": git_blob_oid(CSV),
        "size": len(CSV),
    }
    sub, _ = _listing(hub, f"{base}/data")
    assert [e["path"] for e in sub] == ["data/a.csv", "data/sub"]
    missing = requests.get(f"{base}/nowhere", timeout=10)
    assert (missing.status_code, missing.headers["X-Error-Code"]) == (404, "EntryNotFound")


def test_paths_info_answers_json_and_form_requests(hub: Hub) -> None:
    _published(hub)
    url = f"{hub.url}/api/datasets/{hub.repo}/paths-info/main"
    as_json = requests.post(url, json={"paths": ["data/a.csv", "data", "nope"]}, timeout=10)
    assert [(e["type"], e["path"]) for e in as_json.json()] == [
        ("file", "data/a.csv"),
        ("directory", "data"),
    ]
    as_form = requests.post(url, data={"paths": ["README.md", "/data/sub/"]}, timeout=10)
    assert [(e["type"], e["path"]) for e in as_form.json()] == [
        ("file", "README.md"),
        ("directory", "data/sub"),
    ]


def test_validate_yaml_reads_the_cards_front_matter(hub: Hub) -> None:
    url = f"{hub.url}/api/validate-yaml"
    good = requests.post(url, json={"content": README.decode()}, timeout=10)
    assert good.status_code == 200 and good.json() == {"errors": [], "warnings": []}
    for content in ("---\n- a list\n---\n", "---\nkey: [unclosed\n---\n"):
        bad = requests.post(url, json={"content": content}, timeout=10)
        assert bad.status_code == 400 and bad.json()["errors"], content
    assert requests.post(url, json={"content": "no front matter"}, timeout=10).status_code == 200
    assert requests.post(url, data=b"{not json", timeout=10).status_code == 400


def test_huggingface_hubs_client_uploads_and_downloads(hub: Hub, tmp_path: Path) -> None:
    huggingface_hub = pytest.importorskip("huggingface_hub")
    api = huggingface_hub.HfApi(endpoint=hub.url, token=TOKEN)
    api.create_repo(hub.repo, repo_type="dataset")
    puts_before = hub.server.traffic.count("PUT", r"^/lfs/[0-9a-f]{64}$")
    (tmp_path / "big.parquet").write_bytes(b"PAR1" + b"\x00" * 2048 + b"PAR1")
    api.upload_file(
        path_or_fileobj=str(tmp_path / "big.parquet"),
        path_in_repo="data/big.parquet",
        repo_id=hub.repo,
        repo_type="dataset",
    )
    api.upload_file(
        path_or_fileobj=CSV, path_in_repo="small.csv", repo_id=hub.repo, repo_type="dataset"
    )
    assert api.list_repo_files(hub.repo, repo_type="dataset") == [
        ".gitattributes",
        "data/big.parquet",
        "small.csv",
    ]
    puts = hub.server.traffic.count("PUT", r"^/lfs/[0-9a-f]{64}$") - puts_before
    assert puts == 1  # the parquet file went by LFS, the CSV inline
    got = huggingface_hub.hf_hub_download(
        hub.repo,
        "data/big.parquet",
        repo_type="dataset",
        endpoint=hub.url,
        cache_dir=tmp_path / "cache",
        token=TOKEN,
    )
    assert Path(got).read_bytes() == (tmp_path / "big.parquet").read_bytes()


def test_two_repositories_whose_ids_differ_only_in_where_the_slash_is_are_two(
    hub: Hub,
) -> None:
    assert _create(hub, organization="a__b", name="c").status_code == 200
    assert _create(hub, organization="a", name="b__c").status_code == 200


OID = "a" * 64


@pytest.mark.parametrize(
    ("method", "path", "answered_by"),
    [
        ("POST", "/api/repos/create", "create_repo"),
        ("POST", "/api/validate-yaml", "validate_yaml"),
        ("POST", "/datasets/o/n.git/info/lfs/objects/batch", "lfs_batch"),
        ("PUT", f"/lfs/{OID}", "lfs_put"),
        ("POST", f"/lfs/{OID}/verify", "lfs_verify"),
        ("GET", "/datasets/o/n/resolve/main/data/train.parquet", "resolve_file"),
        ("HEAD", "/datasets/o/n/resolve/v1.0/README.md", "resolve_file"),
        ("GET", "/api/datasets/o/n", "info"),
        ("GET", "/api/datasets/o/n/", "info"),
        ("GET", "/api/datasets/o/n/revision/v1.0", "info"),
        ("GET", "/api/datasets/o/n/refs", "refs"),
        ("GET", "/api/datasets/o/n/tree/main", "tree"),
        ("GET", "/api/datasets/o/n/tree/main/data/temporal", "tree"),
        ("POST", "/api/datasets/o/n/preupload/main", "preupload"),
        ("POST", "/api/datasets/o/n/commit/main", "commit"),
        ("POST", "/api/datasets/o/n/tag/main", "tag"),
        ("POST", "/api/datasets/o/n/paths-info/main", "paths_info"),
        ("HEAD", "/api/datasets/o/n", None),
        ("GET", "/api/datasets/o/n/commit/main", None),
        ("GET", "/api/datasets/o/n/revision", None),
        ("GET", "/api/repos/create", None),
        ("POST", "/api/repos/create\n", None),
    ],
)
def test_one_table_routes_each_method_and_path_to_one_function(
    method: str, path: str, answered_by: str | None
) -> None:
    from gharuntime.sim.hub.handler import ROUTES

    found = [
        r.run.__name__
        for r in ROUTES
        if (r.methods is None or method in r.methods) and r.pattern.match(path)
    ]
    assert (found[0] if found else None) == answered_by
