"""The test Hub's HTTP handler: each endpoint huggingface_hub's client calls, as it calls it.

One function per route (`create_repo`, `commit`, `resolve_file`, ...) and one table, `ROUTES`,
that maps a method and a path to it; `Handler` is the plumbing they share (body, answers, faults,
the repository and revision a path names)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, BinaryIO, ClassVar, Protocol
from urllib.parse import parse_qs, quote, unquote, urlsplit

import yaml

from gharuntime.errors import GharuntimeError
from gharuntime.sim.hub.store import (
    COMMIT_RE,
    GITATTRIBUTES,
    HubHTTPError,
    Store,
    file_entry,
    git_blob_oid,
    lfs_pointer,
)


class HubServer(Protocol):
    """What the handler needs from the server around it (`server.HubServer` is one); a protocol,
    so that this module does not import the server that imports it."""

    store: Store
    page_size: int

    @property
    def url(self) -> str: ...

    def fault_for(self, method: str, path: str) -> str | None: ...

    def record(self, method: str, path: str, received: int = 0, sent: int = 0) -> None: ...

    def user(self, authorization: str | None) -> str | None: ...


__all__ = ["ROUTES", "Handler", "Route", "make_handler"]

_LFS_SUFFIXES = (".parquet", ".arrow", ".png", ".jpg", ".bin", ".gz", ".zst", ".safetensors")
_REGULAR_MAX = 10 * 1024 * 1024


class _Dropped(GharuntimeError):
    """A fault hung up on the client."""


_RESOLVE = re.compile(r"^/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
_LFS_BATCH = re.compile(r"^/datasets/(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/batch$")
_LFS_OBJECT = re.compile(r"^/lfs/(?P<oid>[0-9a-f]{64})(?P<verify>/verify)?$")

Query = dict[str, list[str]]
"""The query string, as parse_qs gives it."""


class Handler(BaseHTTPRequestHandler):
    """The plumbing every route shares: the request body, answers and errors, faults, and the
    repository and revision a path names. `make_handler` binds it to one server (`hub`)."""

    protocol_version = "HTTP/1.1"
    hub: ClassVar[HubServer]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def body_chunks(self) -> Iterator[bytes]:
        """The request body as it arrives (Content-Length or chunked)."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                line = self.rfile.readline(1024)
                if not line:
                    raise _Dropped()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return
                data = self.rfile.read(size)
                if len(data) < size:
                    raise _Dropped()
                self.rfile.readline(4)
                self.hub.record("", "", received=len(data))
                yield data
        else:
            left = int(self.headers.get("Content-Length") or 0)
            while left > 0:
                data = self.rfile.read(min(left, 1 << 20))
                if not data:
                    raise _Dropped()
                left -= len(data)
                self.hub.record("", "", received=len(data))
                yield data

    def body(self) -> bytes:
        return b"".join(self.body_chunks())

    def json_body(self) -> Any:
        try:
            return json.loads(self.body() or b"{}")
        except ValueError as exc:
            raise HubHTTPError(400, f"request body is not JSON: {exc}") from exc

    def _drop(self) -> None:
        """Read about half the body, then hang up without answering."""
        left = int(self.headers.get("Content-Length") or 0) // 2 or 1
        with contextlib.suppress(OSError):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                self.rfile.readline(1024)
            else:
                self.rfile.read(left)
            self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def send(
        self,
        status: int,
        payload: Any = None,
        *,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        content_type: str = "application/json",
        length: int | None = None,
    ) -> None:
        if body is None:
            body = json.dumps(payload if payload is not None else {}).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
            self.hub.record("", "", sent=len(body))

    def _error(self, exc: HubHTTPError) -> None:
        headers = {"X-Error-Message": str(exc)}
        if exc.code:
            headers["X-Error-Code"] = exc.code
        self.send(exc.status, {"error": str(exc)}, headers=headers)

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        self.hub.record(method, url.path)
        fault = self.hub.fault_for(method, url.path)
        try:
            if fault == "drop":
                self._drop()
                return
            if fault == "500":
                self.body()
                raise HubHTTPError(500, "injected server error")
            route(self, method, url.path, path, parse_qs(url.query))
        except _Dropped:
            self.close_connection = True
        except HubHTTPError as exc:
            self._error(exc)
        except (ConnectionError, BrokenPipeError):
            self.close_connection = True

    def writer(self) -> str:
        user = self.hub.user(self.headers.get("Authorization"))
        if user is None:
            raise HubHTTPError(401, "Invalid credentials in Authorization header")
        return user

    def repo(self, repo_id: str) -> dict[str, Any]:
        repo = self.hub.store.repo(repo_id)
        if repo is None or (
            repo.get("private") and self.hub.user(self.headers.get("Authorization")) is None
        ):
            raise HubHTTPError(
                401 if repo is not None else 404,
                f"Repository Not Found for url: {self.path}",
                "RepoNotFound",
            )
        return repo

    def resolve(self, repo: Mapping[str, Any], rev: str) -> str:
        rev = unquote(rev)
        for kind in ("branches", "tags"):
            name = rev.removeprefix(f"refs/{'heads' if kind == 'branches' else 'tags'}/")
            if name in repo[kind]:
                return str(repo[kind][name])
        if COMMIT_RE.match(rev) and self.hub.store.commit(rev) is not None:
            return rev
        raise HubHTTPError(404, f"Invalid rev id: {rev}", "RevisionNotFound")

    def files(self, commit: str) -> dict[str, Any]:
        record = self.hub.store.commit(commit)
        assert record is not None
        files: dict[str, Any] = record["files"]
        return files

    def send_object(self, sha256: str, size: int, headers: dict[str, str]) -> None:
        start, end, status = 0, size - 1, 200
        rng = self.headers.get("Range")
        if rng and (m := re.fullmatch(r"bytes=(\d*)-(\d*)", rng.strip())) and size > 0:
            if m[1]:
                start = int(m[1])
                end = min(int(m[2]), size - 1) if m[2] else size - 1
            else:
                start = max(0, size - int(m[2] or 0))
            if start >= size:
                self.send(
                    416,
                    {"error": "range not satisfiable"},
                    headers={"Content-Range": f"bytes */{size}"},
                )
                return
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        length = max(0, end - start + 1)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command == "HEAD":
            return
        with open(self.hub.store.object_path(sha256), "rb") as fh:
            _copy_range(fh, self.wfile, start, length)
        self.hub.record("", "", sent=length)


def _entries(files: Mapping[str, Any], under: str, recursive: bool) -> list[Any]:
    prefix = under.strip("/") + "/" if under.strip("/") else ""
    dirs: set[str] = set()
    out: list[dict[str, Any]] = []
    for p in sorted(files):
        if not p.startswith(prefix):
            continue
        tail = p[len(prefix) :].split("/")
        for i in range(1, len(tail)):
            d = prefix + "/".join(tail[:i])
            if (recursive or i == 1) and d not in dirs:
                dirs.add(d)
                out.append({"type": "directory", "path": d, "oid": git_blob_oid(d.encode())})
        if recursive or len(tail) == 1:
            out.append(_file_json(p, files[p]))
    return sorted(out, key=lambda e: str(e["path"]))


def _file_json(p: str, f: Mapping[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "file", "path": p, "oid": f["git_oid"]}
    if f["lfs"]:
        size = len(lfs_pointer(f["sha256"], f["size"]))
        entry["size"] = f["size"]
        entry["lfs"] = {"oid": f["sha256"], "size": f["size"], "pointerSize": size}
    else:
        entry["size"] = f["size"]
    return entry


# --- routes --------------------------------------------------------------------------------------


def create_repo(h: Handler, m: re.Match[str], query: Query) -> None:
    """POST /api/repos/create: a new dataset repository with its .gitattributes."""
    h.writer()
    body = h.json_body()
    if body.get("type") != "dataset":
        raise HubHTTPError(400, "this Hub keeps dataset repositories only")
    org, name = body.get("organization"), body.get("name")
    if not org or not name or not re.fullmatch(r"[\w.-]+", f"{org}{name}"):
        raise HubHTTPError(400, "a repository needs an organization and a name")
    repo_id = f"{org}/{name}"
    url = f"{h.hub.url}/datasets/{repo_id}"
    with h.hub.store.lock:
        if h.hub.store.repo(repo_id) is not None:
            h.send(409, {"error": "You already created this dataset repo", "url": url})
            return
        sha = h.hub.store.put_bytes(GITATTRIBUTES)
        files = {".gitattributes": file_entry(sha, len(GITATTRIBUTES), False, GITATTRIBUTES)}
        first = h.hub.store.write_commit(None, files, "initial commit", "")
        private = body.get("visibility") == "private" or bool(body.get("private"))
        h.hub.store.save_repo(
            repo_id,
            {"private": private, "branches": {"main": first}, "tags": {}},
        )
    h.send(200, {"url": url, "name": repo_id, "id": repo_id})


def validate_yaml(h: Handler, m: re.Match[str], query: Query) -> None:
    """POST /api/validate-yaml: is a card's front matter a YAML mapping."""
    body = h.json_body()
    content = str(body.get("content", ""))
    errors = []
    if content.startswith("---"):
        front = content.split("---", 2)[1] if content.count("---") >= 2 else ""
        try:
            data = yaml.safe_load(front)
            if data is not None and not isinstance(data, dict):
                errors.append({"message": "metadata is not a mapping"})
        except yaml.YAMLError as exc:
            errors.append({"message": f"metadata is not valid YAML: {exc}"})
    if errors:
        h.send(400, {"errors": errors, "warnings": []})
    else:
        h.send(200, {"errors": [], "warnings": []})


def preupload(h: Handler, m: re.Match[str], query: Query) -> None:
    """POST .../preupload/REV: which files go by LFS, and which the head already has."""
    repo_id, rev = unquote(m["repo"]), unquote(m["rev"])
    h.writer()
    repo = h.repo(repo_id)
    head = h.files(h.resolve(repo, rev))
    body = h.json_body()
    out = []
    for f in body.get("files", []):
        p, size = str(f.get("path")), int(f.get("size", 0))
        sample = base64.b64decode(f.get("sample", ""))
        lfs = p.endswith(_LFS_SUFFIXES) or size > _REGULAR_MAX or b"\x00" in sample
        known = head.get(p)
        oid = None
        if known is not None and known["lfs"] == lfs:
            oid = known["sha256"] if lfs else known["git_oid"]
        out.append(
            {
                "path": p,
                "uploadMode": "lfs" if lfs else "regular",
                "shouldIgnore": False,
                "oid": oid,
            }
        )
    h.send(200, {"files": out, "commitOid": h.resolve(repo, rev)})


def lfs_batch(h: Handler, m: re.Match[str], query: Query) -> None:
    """POST DATASET.git/info/lfs/objects/batch: where to upload each object not here."""
    repo_id = m["repo"]
    h.writer()
    h.repo(repo_id)
    body = h.json_body()
    if "basic" not in body.get("transfers", ["basic"]):
        raise HubHTTPError(422, "only the basic transfer is offered")
    objects = []
    for obj in body.get("objects", []):
        oid, size = str(obj.get("oid")), int(obj.get("size", -1))
        if not re.fullmatch(r"[0-9a-f]{64}", oid) or size < 0:
            objects.append(
                {"oid": oid, "size": size, "error": {"code": 422, "message": "bad object"}}
            )
        elif h.hub.store.has_object(oid, size):
            objects.append({"oid": oid, "size": size})  # already here: no actions
        else:
            href = f"{h.hub.url}/lfs/{oid}"
            objects.append(
                {
                    "oid": oid,
                    "size": size,
                    "authenticated": True,
                    "actions": {
                        "upload": {"href": href},
                        "verify": {"href": f"{href}/verify"},
                    },
                }
            )
    h.send(
        200,
        {"transfer": "basic", "objects": objects, "hash_algo": "sha256"},
        content_type="application/vnd.git-lfs+json",
    )


def lfs_put(h: Handler, m: re.Match[str], query: Query) -> None:
    """PUT /lfs/OID: an object's bytes, kept only when their sha256 is OID."""
    oid = m["oid"]
    h.hub.store.receive_object(oid, h.body_chunks())
    h.send(200, {})


def lfs_verify(h: Handler, m: re.Match[str], query: Query) -> None:
    """POST /lfs/OID/verify (or any other method): is the object here, whole."""
    oid = m["oid"]
    body = h.json_body()
    if not h.hub.store.has_object(oid, int(body.get("size", -1))):
        raise HubHTTPError(404, f"object {oid} of size {body.get('size')} not uploaded")
    h.send(200, {})


def commit(h: Handler, m: re.Match[str], query: Query) -> None:
    """POST .../commit/REV: an NDJSON commit (header, files, LFS files, deletions)."""
    repo_id, rev = unquote(m["repo"]), unquote(m["rev"])
    h.writer()
    repo = h.repo(repo_id)
    lines = [ln for ln in h.body().split(b"\n") if ln.strip()]
    try:
        items = [json.loads(ln) for ln in lines]
    except ValueError as exc:
        raise HubHTTPError(400, f"commit body is not NDJSON: {exc}") from exc
    if not items or items[0].get("key") != "header":
        raise HubHTTPError(400, "a commit starts with its header line")
    header = items[0]["value"]
    blobs: dict[str, bytes] = {}
    changes: list[tuple[str, dict[str, Any] | None]] = []
    for item in items[1:]:
        key, value = item.get("key"), item.get("value", {})
        p = str(value.get("path", ""))
        if not p or p.startswith("/") or ".." in p.split("/"):
            raise HubHTTPError(400, f"bad path in commit: {p!r}")
        if key == "file":
            data = base64.b64decode(value.get("content", ""))
            sha = hashlib.sha256(data).hexdigest()
            blobs[sha] = data
            changes.append((p, file_entry(sha, len(data), False, data)))
        elif key == "lfsFile":
            oid, size = str(value.get("oid")), int(value.get("size", -1))
            if not h.hub.store.has_object(oid, size):
                raise HubHTTPError(
                    422, f"{p}: LFS object {oid} was never uploaded", "EntryNotFound"
                )
            changes.append((p, file_entry(oid, size, True, None)))
        elif key in ("deletedFile", "deletedFolder"):
            changes.append((p, None))
        else:
            raise HubHTTPError(400, f"unknown commit line {key!r}")
    for data in blobs.values():
        h.hub.store.put_bytes(data)
    with h.hub.store.lock:
        repo = h.repo(repo_id)
        if rev.removeprefix("refs/heads/") not in repo["branches"]:
            raise HubHTTPError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        branch = rev.removeprefix("refs/heads/")
        parent = repo["branches"][branch]
        if header.get("parentCommit") and header["parentCommit"] != parent:
            raise HubHTTPError(412, "parentCommit is not the head of the branch")
        files = dict(h.files(parent))
        for p, entry in changes:
            if entry is None:
                for k in [k for k in files if k == p or k.startswith(p.rstrip("/") + "/")]:
                    del files[k]
            else:
                files[p] = entry
        oid = h.hub.store.write_commit(
            parent,
            files,
            str(header.get("summary", "")),
            str(header.get("description", "")),
        )
        repo["branches"][branch] = oid
        h.hub.store.save_repo(repo_id, repo)  # one rename: the revision appears whole
    h.send(
        200,
        {
            "commitUrl": f"{h.hub.url}/datasets/{repo_id}/commit/{oid}",
            "commitOid": oid,
            "pullRequestUrl": None,
        },
    )


def tag(h: Handler, m: re.Match[str], query: Query) -> None:
    """POST .../tag/REV: a tag at REV."""
    repo_id, rev = unquote(m["repo"]), unquote(m["rev"])
    h.writer()
    body = h.json_body()
    tag = str(body.get("tag", ""))
    if not re.fullmatch(r"[\w.-]+", tag):
        raise HubHTTPError(400, f"bad tag name {tag!r}")
    with h.hub.store.lock:
        repo = h.repo(repo_id)
        target = h.resolve(repo, rev)
        if tag in repo["tags"]:
            raise HubHTTPError(409, f"tag {tag} already exists")
        repo["tags"][tag] = target
        h.hub.store.save_repo(repo_id, repo)
    h.send(200, {})


def refs(h: Handler, m: re.Match[str], query: Query) -> None:
    """GET .../refs: branches and tags."""
    repo_id = unquote(m["repo"])
    repo = h.repo(repo_id)

    def refs(kind: str, prefix: str) -> list[dict[str, str]]:
        return [
            {"name": n, "ref": f"refs/{prefix}/{n}", "targetCommit": c}
            for n, c in sorted(repo[kind].items())
        ]

    h.send(
        200,
        {
            "branches": refs("branches", "heads"),
            "tags": refs("tags", "tags"),
            "converts": [],
            "pullRequests": [],
        },
    )


def info(h: Handler, m: re.Match[str], query: Query) -> None:
    """GET /api/datasets/REPO[/revision/REV]: the repository at REV (default main)."""
    repo_id = unquote(m["repo"])
    given = m.groupdict().get("rev")  # absent from the route without /revision/
    rev = "main" if given is None else unquote(given)
    repo = h.repo(repo_id)
    commit = h.resolve(repo, rev)
    record = h.hub.store.commit(commit)
    assert record is not None
    card: Any = None
    readme = record["files"].get("README.md")
    if readme is not None:
        text = h.hub.store.object_path(readme["sha256"]).read_text(encoding="utf-8")
        if text.startswith("---") and text.count("---") >= 2:
            with contextlib.suppress(yaml.YAMLError):
                card = yaml.safe_load(text.split("---", 2)[1])
    h.send(
        200,
        {
            "_id": repo_id,
            "id": repo_id,
            "author": repo_id.split("/")[0],
            "sha": commit,
            "private": bool(repo.get("private")),
            "disabled": False,
            "gated": False,
            "lastModified": record["date"],
            "tags": [],
            "cardData": card,
            "siblings": [{"rfilename": p} for p in sorted(record["files"])],
        },
    )


def tree(h: Handler, m: re.Match[str], query: Query) -> None:
    """GET .../tree/REV[/PATH]: the files and folders under PATH, paged."""
    repo_id, rev = unquote(m["repo"]), unquote(m["rev"])
    sub = unquote(m["sub"] or "")
    repo = h.repo(repo_id)
    commit = h.resolve(repo, rev)
    files = h.files(commit)
    recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
    if sub and sub not in files and not any(k.startswith(sub.rstrip("/") + "/") for k in files):
        raise HubHTTPError(404, f"{sub} does not exist at {rev}", "EntryNotFound")
    entries = _entries(files, sub, recursive)
    start = int(query.get("cursor", ["0"])[0] or 0)
    page = entries[start : start + h.hub.page_size]
    headers = {}
    if start + h.hub.page_size < len(entries):
        params = dict(query)
        params["cursor"] = [str(start + h.hub.page_size)]
        qs = "&".join(f"{k}={quote(v[0])}" for k, v in params.items())
        path = h.path.split("?")[0]
        headers["Link"] = f'<{h.hub.url}{path}?{qs}>; rel="next"'
    h.send(200, page, headers=headers)


def paths_info(h: Handler, m: re.Match[str], query: Query) -> None:
    """POST .../paths-info/REV: the entries of the paths asked for."""
    repo_id, rev = unquote(m["repo"]), unquote(m["rev"])
    repo = h.repo(repo_id)
    files = h.files(h.resolve(repo, rev))
    raw = h.body().decode()
    if h.headers.get("Content-Type", "").startswith("application/json"):
        paths = list(json.loads(raw or "{}").get("paths", []))
    else:
        paths = parse_qs(raw).get("paths", [])
    out = []
    for p in paths:
        p = p.strip("/")
        if p in files:
            out.append(_file_json(p, files[p]))
        elif any(k.startswith(p + "/") for k in files):
            out.append({"type": "directory", "path": p, "oid": git_blob_oid(p.encode())})
    h.send(200, out)


def resolve_file(h: Handler, m: re.Match[str], query: Query) -> None:
    """GET or HEAD /datasets/REPO/resolve/REV/PATH: a file's bytes (ranges too)."""
    repo_id, rev, path = m["repo"], unquote(m["rev"]), unquote(m["path"])
    repo = h.repo(repo_id)
    commit = h.resolve(repo, rev)
    f = h.files(commit).get(path)
    if f is None:
        raise HubHTTPError(404, f"{path} does not exist at {rev}", "EntryNotFound")
    headers = {
        "X-Repo-Commit": commit,
        "ETag": f'"{f["git_oid"]}"',
        "Accept-Ranges": "bytes",
    }
    if f["lfs"]:
        headers["X-Linked-Etag"] = f'"{f["sha256"]}"'
        headers["X-Linked-Size"] = str(f["size"])
    h.send_object(f["sha256"], f["size"], headers)


def _api(rest: str) -> re.Pattern[str]:
    """/api/datasets/OWNER/NAME then `rest` (the path as sent: each part unquoted by its route)."""
    return re.compile(r"^/api/datasets/(?P<repo>[^/]+/[^/]+?)" + rest + r"\Z")


@dataclass(frozen=True)
class Route:
    """`run` answers `methods` (None: any) on a path `pattern` matches: the path as sent
    (`raw`) or percent-decoded."""

    methods: frozenset[str] | None
    pattern: re.Pattern[str]
    run: Callable[[Handler, re.Match[str], Query], None]
    raw: bool = True


def _on(*methods: str) -> frozenset[str]:
    return frozenset(methods)


ROUTES: tuple[Route, ...] = (
    Route(_on("POST"), re.compile(r"^/api/repos/create\Z"), create_repo, raw=False),
    Route(_on("POST"), re.compile(r"^/api/validate-yaml\Z"), validate_yaml, raw=False),
    Route(None, _LFS_BATCH, lfs_batch, raw=False),
    Route(_on("PUT"), _LFS_OBJECT, lfs_put, raw=False),
    Route(None, _LFS_OBJECT, lfs_verify, raw=False),
    Route(None, _RESOLVE, resolve_file),
    Route(_on("GET"), _api(r"/?"), info),
    Route(_on("GET"), _api(r"/revision/(?P<rev>[^/]*)"), info),
    Route(_on("GET"), _api(r"/refs"), refs),
    Route(_on("GET"), _api(r"/tree/(?P<rev>[^/]*)(?:/(?P<sub>.*))?"), tree),
    Route(_on("POST"), _api(r"/preupload/(?P<rev>[^/]*)"), preupload),
    Route(_on("POST"), _api(r"/commit/(?P<rev>[^/]*)"), commit),
    Route(_on("POST"), _api(r"/tag/(?P<rev>[^/]*)"), tag),
    Route(_on("POST"), _api(r"/paths-info/(?P<rev>[^/]*)"), paths_info),
)
"""Every endpoint, the first match wins."""


def route(h: Handler, method: str, raw: str, path: str, query: Query) -> None:
    """Answer with the first route of ROUTES for this method and path; 404 when none."""
    for r in ROUTES:
        if r.methods is None or method in r.methods:
            m = r.pattern.match(raw if r.raw else path)
            if m:
                return r.run(h, m, query)
    raise HubHTTPError(404, f"no such endpoint: {method} {path}")


def make_handler(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    """The handler class of one server."""
    return type("Handler", (Handler,), {"hub": hub})


def _copy_range(src: BinaryIO, dst: Any, start: int, length: int) -> None:
    src.seek(start)
    left = length
    while left > 0:
        block = src.read(min(left, 1 << 20))
        if not block:
            break
        dst.write(block)
        left -= len(block)
