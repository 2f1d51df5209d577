"""Fixtures and helpers for the crawler's tests: a seeded simulated GitHub on 127.0.0.1, crawls
into temporary raw stores, and the world's own ground truth to compare them with.

Loaded as a pytest plugin from conftest.py (`pytest_plugins`)."""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gharuntime.crawler.client import EtagCache, GitHubClient, RetryPolicy, Token
from gharuntime.crawler.crawl import CrawlOptions, CrawlResult, crawl
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.rawstore import iter_records
from gharuntime.sim import END, ServerConfig, SimServer, World, serve
from gharuntime.sim.world import iso, parse_iso
from gharuntime.workflow import strip_ref

DAY = 86400
SINCE, UNTIL = iso(END - 60 * DAY), iso(END)
WORLD_SEED = 5

# Fake tokens shaped like GitHub's, built at run time: tests grep every output for them.
TOKENS = {
    "ghp_" + "alice1" + "Q" * 30: "alice",
    "ghp_" + "alice2" + "R" * 30: "alice",
    "ghp_" + "bob111" + "S" * 30: "bob",
}


def fast_policy() -> RetryPolicy:
    return RetryPolicy(max_retries=6, backoff_base=0.01, backoff_cap=0.05, secondary_wait=0.2)


@pytest.fixture(scope="session")
def crawl_world() -> World:
    """A tiny seeded world: 12 repositories (renamed, archived, private, no-Actions among them)."""
    return World(seed=WORLD_SEED, scale="tiny")


@pytest.fixture()
def crawl_server(crawl_world: World) -> Iterator[SimServer]:
    """The simulated GitHub serving `crawl_world`, with three tokens of two accounts."""
    with serve(crawl_world, ServerConfig(tokens=TOKENS)) as server:
        yield server


@pytest.fixture()
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.txt"
    path.write_text("# crawl tokens\n" + "\n".join(TOKENS) + "\n")
    return path


def repo_names(world: World, *, public_only: bool = False) -> list[str]:
    """Every repository as a user would list it (old names for renamed ones)."""
    names = []
    for m in world.metas():
        if public_only and m.private:
            continue
        names.append(m.old_name or m.full_name)
    return names


def make_client(url: str, events: list[CrawlEvent] | None = None, **policy: Any) -> GitHubClient:
    tokens = [Token(t, f"token {i + 1}") for i, t in enumerate(TOKENS)]
    pol = fast_policy()
    for k, v in policy.items():
        setattr(pol, k, v)
    client = GitHubClient(url, tokens, policy=pol, etags=EtagCache(), seed=0)
    if events is not None:
        client.on_event = events.append
    return client


def run_crawl(
    out: Path,
    url: str,
    names: list[str],
    *,
    events: list[CrawlEvent] | None = None,
    policy: dict[str, Any] | None = None,
    **opts: Any,
) -> CrawlResult:
    """An in-process crawl of `names` over the window [SINCE, UNTIL]."""
    client = make_client(url, events, **(policy or {}))
    client.identify()
    options = CrawlOptions(repos=names, since=SINCE, until=UNTIL, **opts)
    return crawl(out, options, client, on_event=(events.append if events is not None else _drop))


def _drop(event: CrawlEvent) -> None:
    pass


def store_records(*roots: Path) -> dict[tuple[str, str], Any]:
    """(kind, key) -> body of every record; fails on a duplicate (kind, key)."""
    seen: Counter[tuple[str, str]] = Counter()
    out: dict[tuple[str, str], Any] = {}
    for rec in iter_records(list(roots)):
        key = (rec.kind.value, rec.key)
        seen[key] += 1
        out[key] = rec.body
    dupes = [k for k, n in seen.items() if n > 1]
    assert not dupes, f"stored twice: {dupes[:5]}"
    return out


@dataclass
class Truth:
    """What the world says a crawl of [SINCE, UNTIL] must store."""

    runs: set[str]  # "id:attempt"
    jobs: set[str]
    refs: dict[str, str | None]  # "repo_id:path:head_sha" -> blob sha
    files: dict[str, str]  # "repo_id:path:blob" -> text


def world_truth(world: World, since: str = SINCE, until: str = UNTIL) -> Truth:
    runs: set[str] = set()
    jobs: set[str] = set()
    refs: dict[str, str | None] = {}
    files: dict[str, str] = {}
    for rw, run in world.completed_runs(parse_iso(since), parse_iso(until)):
        for att in run.attempts:
            runs.add(f"{run.id}:{att.number}")
            jobs.update(str(j.id) for j in att.jobs)
        path, _ = strip_ref(run.path)
        at = rw.file_at(path, run.commit.sha)
        refs[f"{rw.meta.id}:{path}:{run.commit.sha}"] = at[1] if at else None
        if at:
            files[f"{rw.meta.id}:{path}:{at[1]}"] = at[0]
    return Truth(runs, jobs, refs, files)


def comparable(records: dict[tuple[str, str], Any]) -> dict[tuple[str, str], Any]:
    """Records as two equal crawls must store them. A workflow file is fetched at whichever head
    SHA first showed its blob, so its `url` and links name that ref: keep its blob sha and text."""
    return {k: (v["sha"], decoded(v)) if k[0] == "workflow_file" else v for k, v in records.items()}


def keys(records: dict[tuple[str, str], Any], kind: str) -> set[str]:
    return {k for (kd, k) in records if kd == kind}


def decoded(body: dict[str, Any]) -> str:
    """A stored workflow file's text: a GraphQL Blob's `text`, or the contents API's base64."""
    if body.get("source") == "graphql":
        return str(body["text"])
    return base64.b64decode(body["content"]).decode()


def gharuntime_exe() -> str:
    exe = Path(sys.executable).parent / "gharuntime"
    return str(exe) if exe.exists() else (shutil.which("gharuntime") or "gharuntime")


def cli_crawl(
    out: Path,
    url: str,
    repos_file: Path,
    token_file: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    cwd: Path,
) -> subprocess.Popen[str]:
    """Start `gharuntime crawl` as a separate process (so it can be killed for real)."""
    import os

    args = [
        gharuntime_exe(),
        "crawl",
        "--out",
        str(out),
        "--repos",
        str(repos_file),
        "--token-file",
        str(token_file),
        "--api-url",
        url,
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--backoff",
        "0.01",
        "0.05",
        "--secondary-wait",
        "0.2",
        *extra,
    ]
    full_env = {k: v for k, v in os.environ.items() if k != "GITHUB_TOKEN"}
    full_env.update(env or {})
    return subprocess.Popen(
        args,
        cwd=cwd,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
