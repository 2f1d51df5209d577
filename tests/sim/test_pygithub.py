"""PyGithub, a widely used client written against the real API, walks the simulated GitHub the way
its users do. The crawler and the simulator are ours; PyGithub is not, so what it parses, pages
and completes lazily is a second, independent check of the simulated GitHub's conformance
(beside the OpenAPI schemas in tests/sim/test_contract.py).

Two rules for every object PyGithub hands out:
- every attribute it exposes parses: reading it raises nothing, lazy completion included (that
  fetches the object's own `url`, so every served URL must lead back to the same object);
- no `None` where GitHub always sends a value: a field GitHub's schema lists as required and not
  nullable reads as a value.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import requests

from gharuntime.sim import END, LOG_RETENTION_DAYS, SimServer, World
from gharuntime.sim.logs import job_log
from gharuntime.sim.model import DAY
from gharuntime.sim.world import RepoWorld

github = pytest.importorskip("github", reason="PyGithub is in the `test` extra")
from github import Auth, Github, GithubException  # noqa: E402
from github.GithubObject import GithubObject  # noqa: E402

TOKEN = "ghp_pygithubconformance0000000000000000"

# PyGithub models a job's step as a completable object, but GitHub's step objects carry no `url`
# (see the job schema; asserted in test_a_step_has_no_url_in_githubs_schema), so reading these
# three on a step fails inside PyGithub whatever the server sends. Nothing else is exempt.
_PYGITHUB_STEP_GAPS = {"url", "raw_data", "raw_headers"}


def _required_non_nullable(schema: dict[str, Any]) -> set[str]:
    props = schema.get("properties", {})
    return {k for k in schema.get("required", []) if not props.get(k, {}).get("nullable", False)}


@pytest.fixture(scope="module")
def schemas(shared_dir: Path) -> dict[str, dict[str, Any]]:
    """GitHub's response schemas by object kind, from shared/reference/github-rest/."""
    ref = shared_dir / "reference" / "github-rest"

    def body(op: str) -> dict[str, Any]:
        doc = json.loads((ref / f"{op}.json").read_text())
        schema: dict[str, Any] = doc["responses"]["200"]["content"]["application/json"]["schema"]
        return schema

    job = body("actions__get-job-for-workflow-run")
    content = body("repos__get-content")
    file_schema = next(
        s
        for s in content.get("oneOf", [content])
        if s.get("properties", {}).get("type", {}).get("enum") == ["file"]
        or "content" in s.get("required", [])
    )
    return {
        "Repository": body("repos__get"),
        "RepositorySearchResult": body("search__repos")["properties"]["items"]["items"],
        "Workflow": body("actions__get-workflow"),
        "WorkflowRun": body("actions__get-workflow-run"),
        "WorkflowJob": job,
        "WorkflowStep": job["properties"]["steps"]["items"],
        "Commit": body("repos__get-commit"),
        "ContentFile": file_schema,
    }


@pytest.fixture(scope="module")
def gh(sim_server: SimServer) -> Iterator[Github]:
    client = Github(auth=Auth.Token(TOKEN), base_url=sim_server.url, per_page=7, retry=None)
    yield client
    client.close()


def _public(world: World) -> list[RepoWorld]:
    return [rw for rw in world.repos() if not rw.meta.private]


def _read_every_attribute(obj: GithubObject, skip: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    """Every public property PyGithub defines on `obj`'s class, read (completing lazily)."""
    values: dict[str, Any] = {}
    for name, member in inspect.getmembers(type(obj)):
        if name.startswith("_") or name in skip or not isinstance(member, property):
            continue
        values[name] = getattr(obj, name)  # any exception fails the test with its name
    return values


def _conforms(obj: GithubObject, schema: dict[str, Any], skip: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    values = _read_every_attribute(obj, skip)
    nones = sorted(k for k in _required_non_nullable(schema) if k in values and values[k] is None)
    assert nones == [], f"{type(obj).__name__}: None where GitHub always sends a value: {nones}"


def test_a_step_has_no_url_in_githubs_schema(schemas: dict[str, dict[str, Any]]) -> None:
    assert "url" not in schemas["WorkflowStep"]["properties"]
    assert "url" in schemas["WorkflowJob"]["properties"]


def test_search_pages_through_every_public_repository_once(
    gh: Github, sim_world: World, schemas: dict[str, dict[str, Any]]
) -> None:
    found = list(gh.search_repositories("stars:>=0"))
    names = [r.full_name for r in found]
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(m.full_name for m in sim_world.metas() if not m.private)
    assert len(found) > 7  # more than one page of per_page=7
    _conforms(found[0], schemas["RepositorySearchResult"])


def test_repository_workflows_and_their_attributes(
    gh: Github, sim_world: World, schemas: dict[str, dict[str, Any]]
) -> None:
    kinds = set()
    for rw in _public(sim_world)[:7]:
        repo = gh.get_repo(rw.meta.full_name)
        _conforms(repo, schemas["Repository"])
        assert repo.id == rw.meta.id
        assert repo.language == rw.meta.language
        assert repo.owner.login == rw.meta.owner
        assert repo.owner.created_at is not None  # completes through GET /users/{login}
        kinds.add(repo.owner.type)
        if rw.meta.actions_disabled:
            continue
        workflows = list(repo.get_workflows())
        assert sorted(w.id for w in workflows) == sorted(w.id for w in rw.workflows)
        for wf in workflows:
            _conforms(wf, schemas["Workflow"])
    assert kinds == {"User", "Organization"}


def test_run_listings_page_exactly_the_worlds_runs(gh: Github, sim_world: World) -> None:
    checked = 0
    for rw in _public(sim_world)[:4]:
        if rw.meta.actions_disabled or not rw.runs:
            continue
        repo = gh.get_repo(rw.meta.full_name)
        listed = [r.id for r in repo.get_workflow_runs()]
        assert listed == [r.id for r in reversed(rw.runs)]  # newest first, each once
        for wf in repo.get_workflows():
            ids = [r.id for r in wf.get_runs()]
            assert ids == [r.id for r in reversed(rw.runs) if r.workflow.id == wf.id]
        checked += 1
    assert checked >= 3


def test_run_filters_match_the_world(gh: Github, sim_world: World) -> None:
    rw = max(
        (r for r in _public(sim_world) if not r.meta.actions_disabled),
        key=lambda r: len(r.runs),
    )
    repo = gh.get_repo(rw.meta.full_name)
    newest_first = list(reversed(rw.runs))

    def ids(**kw: Any) -> list[int]:
        return [r.id for r in repo.get_workflow_runs(**kw)]

    events = {r.event for r in rw.runs}
    assert len(events) >= 2
    for event in sorted(events):
        assert ids(event=event) == [r.id for r in newest_first if r.event == event]
    default = rw.meta.default_branch
    assert ids(branch=default) == [r.id for r in newest_first if r.branch == default]
    assert ids(status="completed") == [r.id for r in newest_first if r.latest.status == "completed"]
    middle = rw.runs[len(rw.runs) // 2].created
    day = datetime.fromtimestamp(middle, tz=timezone.utc).strftime("%Y-%m-%d")
    start = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=timezone.utc).timestamp()
    assert ids(created=f">={day}") == [r.id for r in newest_first if r.created >= start]


def test_runs_attempts_jobs_and_steps(
    gh: Github, sim_world: World, schemas: dict[str, dict[str, Any]]
) -> None:
    active = [rw for rw in _public(sim_world) if not rw.meta.actions_disabled and rw.runs]
    rerun_repo = next(rw for rw in active if any(len(r.attempts) > 1 for r in rw.runs))
    multi_attempt = 0
    for rw in [*active[:2], rerun_repo]:
        repo = gh.get_repo(rw.meta.full_name)
        rerun = [r for r in rw.runs if len(r.attempts) > 1][:1]
        for world_run in rw.runs[-2:] + rerun:
            run = repo.get_workflow_run(world_run.id)
            _conforms(run, schemas["WorkflowRun"])
            assert run.run_attempt == len(world_run.attempts)
            assert run.head_sha == world_run.commit.sha
            assert run.actor.login == world_run.commit.author
            assert run.actor.created_at is not None  # completes through GET /users/{login}
            assert run.repository.full_name == rw.meta.full_name
            for n, world_attempt in enumerate(world_run.attempts, start=1):
                attempt = run.get_attempt(n)
                _conforms(attempt, schemas["WorkflowRun"])
                assert attempt.run_attempt == n
                assert attempt.status == world_attempt.status
                if n > 1:
                    assert attempt.previous_attempt_url is not None
            multi_attempt += len(world_run.attempts) > 1
            every = [j for a in world_run.attempts for j in a.jobs]
            assert [j.id for j in run.jobs("all")] == [j.id for j in every]
            latest = list(run.jobs())
            assert [j.id for j in latest] == [j.id for j in world_run.latest.jobs]
            for job, world_job in zip(latest, world_run.latest.jobs, strict=True):
                _conforms(job, schemas["WorkflowJob"])
                assert job.name == world_job.name
                assert job.run_attempt == world_job.run_attempt
                assert [s.name for s in job.steps] == [s.name for s in world_job.steps]
                for step in job.steps:
                    _conforms(step, schemas["WorkflowStep"], _PYGITHUB_STEP_GAPS)
            if world_run.latest.status == "completed":
                timing = run.timing()
                total = sum(
                    int((j.completed - j.started) * 1000)
                    for j in world_run.latest.jobs
                    if j.status == "completed"
                )
                assert sum(b["total_ms"] for b in timing.billable.values()) == total
    assert multi_attempt >= 1, "no re-run in the sample: the attempts path went untested"


def test_a_jobs_log_url_leads_to_its_log(gh: Github, sim_world: World) -> None:
    cutoff = END - LOG_RETENTION_DAYS * DAY
    fresh = expired = 0
    for rw in _public(sim_world):
        if rw.meta.actions_disabled:
            continue
        repo = gh.get_repo(rw.meta.full_name)
        for world_run in rw.runs:
            job = next(
                (j for j in world_run.latest.jobs if j.status == "completed" and j.steps), None
            )
            if job is None:
                continue
            if job.completed >= cutoff and fresh < 2:
                url = repo.get_workflow_run(world_run.id).jobs()
                gh_job = next(j for j in url if j.id == job.id)
                location = gh_job.logs_url()
                answer = requests.get(location, timeout=10)
                assert answer.status_code == 200
                assert answer.text == job_log(job)
                fresh += 1
            elif job.completed < cutoff and expired < 1:
                gh_job = next(
                    j for j in repo.get_workflow_run(world_run.id).jobs() if j.id == job.id
                )
                with pytest.raises(GithubException) as gone:
                    gh_job.logs_url()
                assert gone.value.status == 410
                expired += 1
            if fresh >= 2 and expired >= 1:
                return
    assert fresh >= 1


def test_contents_at_a_ref_and_commits(
    gh: Github, sim_world: World, schemas: dict[str, dict[str, Any]]
) -> None:
    checked = 0
    for rw in _public(sim_world)[:5]:
        if rw.meta.actions_disabled or not rw.runs:
            continue
        repo = gh.get_repo(rw.meta.full_name)
        for world_run in (rw.runs[0], rw.runs[-1]):
            sha = world_run.commit.sha
            path = world_run.workflow.path
            file = repo.get_contents(path, ref=sha)
            assert not isinstance(file, list)
            _conforms(file, schemas["ContentFile"])
            at = rw.file_at(path, sha)
            assert at is not None
            assert file.decoded_content.decode() == at[0]
            assert file.sha == at[1]
            commit = repo.get_commit(sha)
            _conforms(commit, schemas["Commit"])
            assert commit.sha == sha
            assert commit.commit.message == world_run.commit.message
            assert commit.author.login == world_run.commit.author
            checked += 1
    assert checked >= 4


def test_a_bot_author_is_typed_as_a_bot(gh: Github) -> None:
    bot = gh.get_user("dependabot[bot]")
    assert bot.type == "Bot"
    assert gh.get_user("alice").type == "User"
    with pytest.raises(GithubException) as missing:
        gh.get_user("nobody-here").name  # noqa: B018
    assert missing.value.status == 404


def test_rate_limit_counts_this_tokens_requests(gh: Github, sim_server: SimServer) -> None:
    before = gh.get_rate_limit().resources.core
    assert before.limit == 5000
    gh.get_repo(next(m for m in _metas(sim_server) if not m.private).full_name)
    after = gh.get_rate_limit().resources.core
    assert after.remaining == before.remaining - 1  # /rate_limit itself is free, as on GitHub


def _metas(server: SimServer) -> Iterator[Any]:
    return server.world.metas()


def test_a_repeated_conditional_request_is_a_304(gh: Github, sim_server: SimServer) -> None:
    meta = next(m for m in _metas(sim_server) if not m.private)
    repo = gh.get_repo(meta.full_name)
    assert repo.etag
    before = sim_server.recorder.not_modified
    changed = repo.update()
    assert changed is False
    assert sim_server.recorder.not_modified == before + 1
