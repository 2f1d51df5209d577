"""A Hub served from git repositories on 127.0.0.1, for the tests and the benchmarks: olah (the
test extra's Hub mirror, offline mode) serving a local git repository whose branch holds a
dataset folder, and the environment a `gharuntime` process needs to use such a Hub. The
upload-accepting endpoint is `gharuntime.sim.hub.serve_hub`."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

__all__ = ["branch", "free_port", "git_dataset_repo", "hub_env", "serve_olah", "tag"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    out = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def git_dataset_repo(mirrors: Path, repo_id: str, folders: list[Path]) -> list[str]:
    """A git repository at mirrors/datasets/ORG/NAME whose main branch holds each folder in
    turn (one commit per folder, the folder's files as plain git blobs); returns the commits."""
    repo = mirrors / "datasets" / repo_id
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    commits = []
    for folder in folders:
        for child in repo.iterdir():
            if child.name != ".git":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        shutil.copytree(folder, repo, dirs_exist_ok=True)
        # git decides what changed from file stats; a copy keeps the source's mtime, and the
        # fixture's manifest.json is the same size in every version, so a stale index could
        # keep the previous version's blob: without an index every file is hashed
        (repo / ".git" / "index").unlink(missing_ok=True)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"publish {folder.name}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    return commits


def tag(mirrors: Path, repo_id: str, name: str, commit: str) -> None:
    """Tag `commit` of the dataset repository `repo_id` as `name`."""
    _git(mirrors / "datasets" / repo_id, "tag", name, commit)


def branch(mirrors: Path, repo_id: str, name: str, commit: str) -> None:
    """A branch `name` of the dataset repository `repo_id` at `commit`."""
    _git(mirrors / "datasets" / repo_id, "branch", name, commit)


@contextmanager
def serve_olah(mirrors: Path, work: Path, probe_repo: str) -> Iterator[str]:
    """olah in offline mirror mode over `mirrors`; yields its URL once
    /api/datasets/PROBE_REPO/refs answers (its / page errors by design)."""
    port = free_port()
    config = work / "olah.toml"
    config.write_text(
        f"""[basic]
host = "127.0.0.1"
port = {port}
repos-path = "{work / "olah-repos"}"
mirror-netloc = "127.0.0.1:{port}"
mirror-lfs-netloc = "127.0.0.1:{port}"
mirrors-path = ["{mirrors}"]

[accessibility]
offline = true
""",
        encoding="utf-8",
    )
    log = open(work / "olah.out", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "olah.server", "-c", str(config), "--log-path", str(work / "logs")],
        cwd=work,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    "olah exited: " + (work / "olah.out").read_text(errors="replace")[-2000:]
                )
            try:
                if requests.get(f"{url}/api/datasets/{probe_repo}/refs", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("olah did not answer within 30 s")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def hub_env(home: Path, endpoint: str, **extra: str) -> dict[str, str]:
    """An environment for a `gharuntime` subprocess: its own Hub cache, Xet off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(
        HF_HOME=str(home),
        HF_ENDPOINT=endpoint,
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        NO_COLOR="1",
        COLUMNS="200",
    )
    env.update(extra)
    return env
