"""The simulated GitHub over real HTTP: endpoints, pagination, filters, caps, redirects."""

from __future__ import annotations

import base64
import io
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from gharuntime.logarchive import job_file_name, read_archive
from gharuntime.sim import Scale, SimServer, World, serve
from gharuntime.sim.logs import job_log
from gharuntime.sim.world import END, LOG_RETENTION_DAYS, RepoWorld, iso


@pytest.fixture()
def gh(sim_server: SimServer) -> Iterator[requests.Session]:
    session = requests.Session()
    session.headers["Authorization"] = "Bearer test-token"
    yield session
    session.close()


def _repo(world: World, *, runs: int = 5) -> RepoWorld:
    for meta in world.metas():
        if not (meta.private or meta.old_name or meta.actions_disabled):
            rw = world.repo(meta.index)
            if len(rw.runs) >= runs:
                return rw
    raise AssertionError("no repository with enough runs")


def _all_pages(
    session: requests.Session, url: str, key: str, **params: Any
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    next_url: str | None = url
    first = True
    while next_url:
        r = session.get(next_url, params=params if first else None)
        first = False
        r.raise_for_status()
        items.extend(r.json()[key])
        next_url = r.links.get("next", {}).get("url")
    return items


def test_get_repository_serves_its_listing_data(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    body = gh.get(f"{sim_server.url}/repos/{rw.meta.full_name}").json()
    assert (body["id"], body["language"], body["size"]) == (
        rw.meta.id,
        rw.meta.language,
        rw.meta.size_kb,
    )


def test_run_listing_pages_hold_every_run_newest_first(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world, runs=8)
    items = _all_pages(
        gh, f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs", "workflow_runs", per_page=3
    )
    assert [r["id"] for r in items] == [r.id for r in reversed(rw.runs)]


def test_link_header_names_next_and_last(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world, runs=8)
    r = gh.get(f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs", params={"per_page": 2})
    assert len(r.json()["workflow_runs"]) == 2
    assert (
        "page=2" in r.links["next"]["url"]
        and f"page={(len(rw.runs) + 1) // 2}" in r.links["last"]["url"]
    )


def test_per_page_is_capped_at_100(gh: requests.Session, sim_server: SimServer) -> None:
    r = gh.get(f"{sim_server.url}/search/repositories", params={"q": "stars:>=0", "per_page": 500})
    assert (
        r.json()["total_count"] > 0
        and "per_page=100" in r.links.get("next", {"url": "per_page=100"})["url"]
    )


def test_created_range_filter_matches_ground_truth(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world, runs=8)
    lo, hi = rw.runs[1].created, rw.runs[-2].created
    spec = f"{iso(lo)}..{iso(hi)}"
    items = _all_pages(
        gh,
        f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs",
        "workflow_runs",
        created=spec,
    )
    expected = {r.id for r in rw.runs if lo <= r.created <= hi}
    assert {r["id"] for r in items} == expected


def test_created_lower_bound_filter(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world, runs=8)
    cut = rw.runs[len(rw.runs) // 2].created
    items = _all_pages(
        gh,
        f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs",
        "workflow_runs",
        created=f">={iso(cut)}",
    )
    assert {r["id"] for r in items} == {r.id for r in rw.runs if r.created >= cut}


def test_status_event_and_branch_filters(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world, runs=8)
    url = f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs"
    success = _all_pages(gh, url, "workflow_runs", status="success")
    assert {r["id"] for r in success} == {r.id for r in rw.runs if r.latest.conclusion == "success"}
    push = _all_pages(gh, url, "workflow_runs", event="push", branch=rw.meta.default_branch)
    assert {r["id"] for r in push} == {
        r.id for r in rw.runs if r.event == "push" and r.branch == rw.meta.default_branch
    }


def test_per_workflow_listing_holds_only_its_runs(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world, runs=8)
    wf = rw.runs[0].workflow
    items = _all_pages(
        gh,
        f"{sim_server.url}/repos/{rw.meta.full_name}/actions/workflows/{wf.id}/runs",
        "workflow_runs",
    )
    assert {r["id"] for r in items} == {r.id for r in rw.runs if r.workflow is wf}


@pytest.fixture(scope="module")
def busy_server() -> Iterator[SimServer]:
    """One repository with more than 1,000 runs."""
    world = World(1, Scale(1, 1.0, 1100, 120))
    with serve(world) as server:
        yield server


def test_filtered_listing_stops_at_1000_results(busy_server: SimServer) -> None:
    rw = busy_server.world.repo(0)
    assert len(rw.runs) > 1000
    url = f"{busy_server.url}/repos/{rw.meta.full_name}/actions/runs"
    items = _all_pages(
        requests.Session(), url, "workflow_runs", per_page=100, created=">=2000-01-01"
    )
    assert len(items) == 1000


def test_unfiltered_listing_has_no_cap(busy_server: SimServer) -> None:
    rw = busy_server.world.repo(0)
    url = f"{busy_server.url}/repos/{rw.meta.full_name}/actions/runs"
    assert len(_all_pages(requests.Session(), url, "workflow_runs", per_page=100)) == len(rw.runs)


def test_attempt_jobs_are_those_of_that_attempt(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw, run = next(
        (rw, r)
        for rw in sim_world.repos()
        for r in rw.runs
        if len(r.attempts) > 1 and not rw.meta.private and not rw.meta.old_name
    )
    base = f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs/{run.id}"
    first = gh.get(f"{base}/attempts/1/jobs").json()["jobs"]
    assert [j["id"] for j in first] == [j.id for j in run.attempts[0].jobs]
    assert {j["run_attempt"] for j in first} == {1}
    assert gh.get(f"{base}/attempts/1").json()["run_attempt"] == 1
    latest = gh.get(f"{base}/jobs").json()["jobs"]
    assert [j["id"] for j in latest] == [j.id for j in run.latest.jobs]
    every = gh.get(f"{base}/jobs", params={"filter": "all"}).json()
    assert every["total_count"] == sum(len(a.jobs) for a in run.attempts)


def test_get_job_and_missing_attempt(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    run = rw.runs[0]
    job = run.latest.jobs[0]
    assert (
        gh.get(f"{sim_server.url}/repos/{rw.meta.full_name}/actions/jobs/{job.id}").json()["name"]
        == job.name
    )
    assert (
        gh.get(
            f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs/{run.id}/attempts/9"
        ).status_code
        == 404
    )


def test_log_download_redirects_to_a_blob(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    job = next(
        j
        for r in reversed(rw.runs)
        for j in r.latest.jobs
        if j.status == "completed" and j.steps and j.completed > END - 80 * 86400
    )
    r = gh.get(
        f"{sim_server.url}/repos/{rw.meta.full_name}/actions/jobs/{job.id}/logs",
        allow_redirects=False,
    )
    assert r.status_code == 302 and "/_blobs/logs/" in r.headers["Location"]
    text = requests.get(r.headers["Location"]).text
    assert text.lstrip("\ufeff").startswith(iso(job.steps[0].started)[:-1])


def test_logs_older_than_retention_are_gone(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw, job = next(
        (rw, j)
        for rw in sim_world.repos()
        if not (rw.meta.private or rw.meta.old_name)
        for r in rw.runs
        for j in r.latest.jobs
        if j.completed < END - LOG_RETENTION_DAYS * 86400
    )
    assert (
        gh.get(f"{sim_server.url}/repos/{rw.meta.full_name}/actions/jobs/{job.id}/logs").status_code
        == 410
    )


def test_contents_at_a_ref_decode_to_the_workflow_text(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    run = rw.runs[0]
    body = gh.get(
        f"{sim_server.url}/repos/{rw.meta.full_name}/contents/{run.workflow.path}",
        params={"ref": run.commit.sha},
    ).json()
    text, blob = rw.file_at(run.workflow.path, run.commit.sha)  # type: ignore[misc]
    assert base64.b64decode(body["content"]).decode() == text and body["sha"] == blob


def test_contents_of_an_absent_file_is_404(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    r = gh.get(
        f"{sim_server.url}/repos/{rw.meta.full_name}/contents/.github/workflows/nope.yml",
        params={"ref": rw.commits[-1].sha},
    )
    assert r.status_code == 404


def test_get_commit_lists_changed_workflow_files(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    body = gh.get(f"{sim_server.url}/repos/{rw.meta.full_name}/commits/{rw.commits[0].sha}").json()
    assert {f["filename"] for f in body["files"]} == {w.path for w in rw.workflows}


def test_search_qualifiers_and_sort(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    body = gh.get(
        f"{sim_server.url}/search/repositories",
        params={"q": "stars:>=100 language:python", "sort": "stars"},
    ).json()
    expected = sorted(
        (
            m
            for m in sim_world.metas()
            if m.stars >= 100 and m.language == "Python" and not m.private
        ),
        key=lambda m: -m.stars,
    )
    assert [i["id"] for i in body["items"]] == [m.id for m in expected]


def test_search_pushed_qualifier(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    body = gh.get(
        f"{sim_server.url}/search/repositories", params={"q": "pushed:>=2026-10-15"}
    ).json()
    assert body["total_count"] == sum(
        1 for m in sim_world.metas() if m.pushed_at >= END - 17 * 86400 and not m.private
    )


def test_renamed_repository_answers_301(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    meta = next(m for m in sim_world.metas() if m.old_name)
    r = gh.get(f"{sim_server.url}/repos/{meta.old_name}/actions/runs", allow_redirects=False)
    assert r.status_code == 301
    assert r.headers["Location"] == f"{sim_server.url}/repositories/{meta.id}/actions/runs"
    assert gh.get(r.headers["Location"]).json()["total_count"] == len(
        sim_world.repo(meta.index).runs
    )


def test_private_and_missing_repositories_are_404(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    meta = next(m for m in sim_world.metas() if m.private)
    assert gh.get(f"{sim_server.url}/repos/{meta.full_name}").status_code == 404
    assert gh.get(f"{sim_server.url}/repos/nobody/nothing").status_code == 404


def test_bad_token_is_401(sim_server: SimServer) -> None:
    r = requests.get(f"{sim_server.url}/rate_limit", headers={"Authorization": "Bearer"})
    assert r.status_code == 401 and r.json()["message"] == "Bad credentials"


def _graphql_blob(gh: requests.Session, url: str, query: str) -> dict[str, Any]:
    r = gh.post(f"{url}/graphql", json={"query": query})
    assert r.status_code == 200
    return r.json()  # type: ignore[no-any-return]


def test_graphql_aliased_repositories_answer_blob_oids(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    run = rw.runs[0]
    path = run.workflow.path
    q = (
        f'query {{ r0: repository(owner: "{rw.meta.owner}", name: "{rw.meta.name}") {{ object(expression: "{run.commit.sha}:{path}") {{ ... on Blob {{ oid }} }} }} '
        f'r1: repository(owner: "{rw.meta.owner}", name: "{rw.meta.name}") {{ object(expression: "{rw.commits[0].sha}:.github/workflows/none.yml") {{ ... on Blob {{ oid }} }} }} }}'
    )
    data = _graphql_blob(gh, sim_server.url, q)["data"]
    assert data["r0"]["object"]["oid"] == rw.file_at(path, run.commit.sha)[1]  # type: ignore[index]
    assert data["r1"]["object"] is None


def test_graphql_aliased_objects_in_one_repository(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    runs = rw.runs[:3]
    fields = " ".join(
        f'a{i}: object(expression: "{r.commit.sha}:{r.workflow.path}") {{ ... on Blob {{ oid }} }}'
        for i, r in enumerate(runs)
    )
    q = f'{{ repository(owner: "{rw.meta.owner}", name: "{rw.meta.name}") {{ {fields} }} }}'
    data = _graphql_blob(gh, sim_server.url, q)["data"]["repository"]
    assert [data[f"a{i}"]["oid"] for i in range(len(runs))] == [
        rw.file_at(r.workflow.path, r.commit.sha)[1] for r in runs
    ]  # type: ignore[index]


def test_graphql_gives_blob_texts_by_oid(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    run = rw.runs[0]
    text, oid = rw.file_at(run.workflow.path, run.commit.sha)  # type: ignore[misc]
    fields = (
        f'b0: object(oid: "{oid}") {{ ... on Blob {{ oid byteSize isBinary isTruncated text }} }} '
        f'b1: object(oid: "{"0" * 40}") {{ ... on Blob {{ oid text }} }}'
    )
    q = f'{{ repository(owner: "{rw.meta.owner}", name: "{rw.meta.name}") {{ {fields} }} }}'
    data = _graphql_blob(gh, sim_server.url, q)["data"]["repository"]
    assert data["b0"] == {
        "oid": oid,
        "byteSize": len(text.encode()),
        "isBinary": False,
        "isTruncated": False,
        "text": text,
    }
    assert data["b1"] is None


def test_graphql_unknown_repository_is_an_error_entry(
    gh: requests.Session, sim_server: SimServer
) -> None:
    body = _graphql_blob(
        gh,
        sim_server.url,
        'query { r0: repository(owner: "x", name: "y") { object(expression: "a:b") { ... on Blob { oid } } } }',
    )
    assert body["data"]["r0"] is None and body["errors"][0]["type"] == "NOT_FOUND"


def test_search_stops_at_1000_results_but_counts_all() -> None:
    world = World(1, Scale(1100))
    with serve(world) as server:
        public = sum(1 for m in world.metas() if not m.private)
        items = _all_pages(
            requests.Session(),
            f"{server.url}/search/repositories",
            "items",
            q="stars:>=0",
            per_page=100,
        )
        first = requests.get(f"{server.url}/search/repositories", params={"q": "stars:>=0"}).json()
    assert len(items) == 1000 and first["total_count"] == public > 1000


def test_bad_filters_and_pagination_are_422(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    url = f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs"
    assert gh.get(url, params={"created": ">=yesterday"}).status_code == 422
    assert gh.get(url, params={"per_page": "many"}).status_code == 422


def test_workflow_by_file_name(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw = _repo(sim_world)
    wf = rw.workflows[0]
    body = gh.get(
        f"{sim_server.url}/repos/{rw.meta.full_name}/actions/workflows/{wf.path.rsplit('/', 1)[1]}"
    ).json()
    assert (body["id"], body["path"]) == (wf.id, wf.path)
    listed = gh.get(f"{sim_server.url}/repos/{rw.meta.full_name}/actions/workflows").json()
    assert [w["path"] for w in listed["workflows"]] == [w.path for w in rw.workflows]


def test_a_client_that_hangs_up_mid_request_prints_no_traceback(
    sim_server: SimServer, capfd: pytest.CaptureFixture[str]
) -> None:
    import socket
    import struct
    import time
    from urllib.parse import urlsplit

    parts = urlsplit(sim_server.url)
    sock = socket.create_connection((parts.hostname, parts.port))
    sock.sendall(b"GET /rate_limit HTTP/1.1\r\nHost: x")  # no end of headers: the server waits
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()  # linger 0: the peer sees a reset, as when a crawler is killed
    time.sleep(0.3)
    assert requests.get(sim_server.url + "/rate_limit", timeout=5).status_code == 200
    assert "Traceback" not in capfd.readouterr().err


def test_a_run_attempts_logs_are_one_zip_of_every_job_that_ran(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    """GET .../runs/{run_id}/attempts/{n}/logs answers 302 to a zip: each job's full log by job
    name at the top, one file per step that ran in the job's folder."""
    rw, run = next(
        (rw, r)
        for rw in sim_world.repos()
        if not rw.meta.private
        for r in rw.runs
        if r.latest.status == "completed"
        and r.created > END - 60 * 86400
        and sum(1 for j in r.attempts[0].jobs if j.steps) > 1
    )
    attempt = run.attempts[0]
    url = f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs/{run.id}/attempts/1/logs"
    first = gh.get(url, allow_redirects=False)
    assert first.status_code == 302
    blob = requests.get(first.headers["Location"])
    assert blob.headers["Content-Type"] == "application/zip"
    files = read_archive(blob.content)
    ran = [j for j in attempt.jobs if j.steps]
    assert sorted(files) == sorted(job_file_name(j.name) for j in ran)
    for job in ran:
        assert files[job_file_name(job.name)].decode() == job_log(job)
    names = zipfile.ZipFile(io.BytesIO(blob.content)).namelist()
    job = ran[0]
    steps = [n for n in names if n.startswith(job_file_name(job.name) + "/")]
    assert len(steps) == sum(1 for s in job.steps if s.conclusion != "skipped")


def test_an_expired_attempts_log_archive_is_gone(
    gh: requests.Session, sim_server: SimServer, sim_world: World
) -> None:
    rw, run = next(
        (rw, r)
        for rw in sim_world.repos()
        if not rw.meta.private
        for r in rw.runs
        if r.latest.status == "completed"
        and r.latest.updated < END - 100 * 86400
        and any(j.steps for j in r.attempts[0].jobs)
    )
    url = f"{sim_server.url}/repos/{rw.meta.full_name}/actions/runs/{run.id}/attempts/1/logs"
    assert gh.get(url, allow_redirects=False).status_code == 410


@pytest.mark.timeout(20)
def test_a_server_never_started_stops_at_once() -> None:
    """stop() once waited forever for a serving loop that never ran; started, it stops too."""
    from gharuntime.sim import ServerConfig

    idle = SimServer(World(seed=1, scale="tiny"), ServerConfig())
    idle.stop()
    used = SimServer(World(seed=1, scale="tiny"), ServerConfig())
    url = used.start()
    assert requests.get(url + "/rate_limit", timeout=10).status_code in (200, 401)
    used.stop()
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/rate_limit", timeout=5)
