from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import requests
from crawler_support import (
    SINCE,
    TOKENS,
    UNTIL,
    comparable,
    decoded,
    keys,
    make_client,
    repo_names,
    run_crawl,
    store_records,
    world_truth,
)

from gharuntime.crawler.crawl import (
    CrawlOptions,
    crawl,
    default_window,
    in_shard,
    parse_time,
    split_window,
)
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.sim import END, Scale, ServerConfig, SimServer, World, serve
from gharuntime.sim.dump import dump_world
from gharuntime.sim.world import iso, parse_iso

DAY = 86400


def test_split_window_halves_share_only_their_middle_second() -> None:
    halves = split_window("2025-01-01T00:00:00Z", "2025-01-01T00:00:09Z")
    assert halves == (
        ("2025-01-01T00:00:00Z", "2025-01-01T00:00:04Z"),
        ("2025-01-01T00:00:04Z", "2025-01-01T00:00:09Z"),
    )


def test_short_window_does_not_split() -> None:
    assert split_window("2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z") is None


def test_default_window_is_90_days_to_now() -> None:
    now = datetime(2025, 4, 1, 12, 0, 0, 500, tzinfo=timezone.utc)
    assert default_window(90, now) == ("2025-01-01T12:00:00Z", "2025-04-01T12:00:00Z")


def test_parse_time_reads_dates_and_offsets_as_utc() -> None:
    assert parse_time("2025-01-02") == datetime(2025, 1, 2, tzinfo=timezone.utc)
    assert parse_time("2025-01-02T01:00:00-08:00") == datetime(2025, 1, 2, 9, tzinfo=timezone.utc)


def test_shards_partition_repositories_and_ignore_case() -> None:
    names = [f"owner{i}/repo{i}" for i in range(200)]
    parts = [[n for n in names if in_shard(n, (k, 4))] for k in range(1, 5)]
    assert sorted(n for p in parts for n in p) == sorted(names)
    assert all(20 < len(p) < 80 for p in parts)
    assert in_shard("Owner7/Repo7", (1, 4)) == in_shard("owner7/repo7", (1, 4))


# -- against the simulated GitHub ---------------------------------------------------------------
def test_crawl_stores_exactly_the_worlds_completed_runs_and_jobs(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    run_crawl(tmp_path, crawl_server.url, repo_names(crawl_world))
    records = store_records(tmp_path)
    truth = world_truth(crawl_world)
    assert truth.runs and keys(records, "run") == truth.runs
    assert keys(records, "job") == truth.jobs


def test_stored_yaml_is_the_file_at_each_runs_head_sha(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    run_crawl(tmp_path, crawl_server.url, repo_names(crawl_world))
    records = store_records(tmp_path)
    truth = world_truth(crawl_world)
    refs = {k: records[("workflow_ref", k)]["blob_sha"] for k in keys(records, "workflow_ref")}
    assert refs == truth.refs
    files = {k: decoded(records[("workflow_file", k)]) for k in keys(records, "workflow_file")}
    assert files == truth.files


def test_yaml_is_fetched_once_per_distinct_content(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    run_crawl(tmp_path, crawl_server.url, repo_names(crawl_world))
    truth = world_truth(crawl_world)
    assert len(truth.refs) > len(truth.files)  # the world reuses files across runs
    # per repository: one GraphQL query for the blob ids at every head SHA, one for the text of
    # each distinct blob; the contents API is not needed when GraphQL gives every text whole
    repos_with_runs = {k.split(":")[0] for k in truth.refs}
    assert crawl_server.recorder.count("graphql") == 2 * len(repos_with_runs)
    assert crawl_server.recorder.count("repos/get-content") == 0
    assert len(keys(store_records(tmp_path), "workflow_file")) == len(truth.files)


def test_a_text_graphql_cuts_short_comes_from_the_contents_api(
    crawl_world: World, tmp_path: Path
) -> None:
    """GitHub marks a Blob.text it cut short with isTruncated; such a file is fetched whole."""
    truth = world_truth(crawl_world)
    sizes = sorted(len(t.encode()) for t in truth.files.values())
    limit = sizes[len(sizes) // 2]  # about half the files are longer
    longer = sum(1 for n in sizes if n > limit)
    assert 0 < longer < len(sizes)
    with serve(crawl_world, ServerConfig(tokens=TOKENS, graphql_text_limit=limit)) as server:
        run_crawl(tmp_path, server.url, repo_names(crawl_world))
        assert server.recorder.count("repos/get-content") == longer
    records = store_records(tmp_path)
    files = {k: decoded(records[("workflow_file", k)]) for k in keys(records, "workflow_file")}
    assert files == truth.files  # every text whole, whichever way it came


def test_missing_repository_is_reported_and_skipped(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    names = ["nobody/does-not-exist", *repo_names(crawl_world, public_only=True)]
    result = run_crawl(tmp_path, crawl_server.url, names)
    records = store_records(tmp_path)
    error = records[("error", "repository:nobody/does-not-exist")]
    assert error["status"] == 404 and error["where"] == "nobody/does-not-exist"
    assert [f["where"] for f in result.failures] == ["nobody/does-not-exist"]
    assert keys(records, "run") == world_truth(crawl_world).runs


def test_renamed_repository_is_followed_and_stored_under_its_new_name(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    renamed = [m for m in crawl_world.metas() if m.old_name and not m.private]
    assert renamed, "the tiny world has a renamed repository"
    meta = renamed[0]
    events: list[CrawlEvent] = []
    run_crawl(tmp_path, crawl_server.url, [meta.old_name or ""], events=events)
    records = store_records(tmp_path)
    assert records[("repository", str(meta.id))]["full_name"] == meta.full_name
    assert any(e.kind == "repository" and e.data.get("to") == meta.full_name for e in events)


def test_max_runs_per_workflow_keeps_the_most_recent_completed(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    run_crawl(tmp_path, crawl_server.url, repo_names(crawl_world), max_runs_per_workflow=2)
    records = store_records(tmp_path)
    expected: set[str] = set()
    by_workflow: dict[int, list[Any]] = {}
    for _, run in crawl_world.completed_runs(parse_iso(SINCE), parse_iso(UNTIL)):
        by_workflow.setdefault(run.workflow.id, []).append(run)
    for runs in by_workflow.values():
        for run in sorted(runs, key=lambda r: r.created)[-2:]:
            expected.update(f"{run.id}:{a.number}" for a in run.attempts)
    assert keys(records, "run") == expected


def test_a_listing_over_1000_results_is_split_into_windows(tmp_path: Path) -> None:
    since = iso(END - 120 * DAY)
    for seed in range(30):  # the first seeded one-repository world with just over 1,000 runs
        world = World(seed=seed, scale=Scale(repos=1, workflows_per_repo=4, runs_per_workflow=350))
        truth = world_truth(world, since, UNTIL)
        if 1000 < len({k.split(":")[0] for k in truth.runs}) < 1600:
            break
    assert len({k.split(":")[0] for k in truth.runs}) > 1000
    with serve(world, ServerConfig(tokens=TOKENS)) as server:
        client = make_client(server.url)
        opts = CrawlOptions(repos=repo_names(world), since=since, until=UNTIL, concurrency=4)
        crawl(tmp_path, opts, client)
        listings = server.recorder.count("actions/list-workflow-runs-for-repo")
    records = store_records(tmp_path)
    assert keys(records, "run") == truth.runs
    assert listings > 12  # split windows, each within the cap


def test_shards_crawl_disjoint_parts_that_make_up_the_whole(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    names = repo_names(crawl_world)
    for k in (1, 2):
        run_crawl(tmp_path / f"part{k}", crawl_server.url, names, shard=(k, 2))
    one, two = store_records(tmp_path / "part1"), store_records(tmp_path / "part2")
    assert keys(one, "repository") and keys(two, "repository")
    assert not keys(one, "run") & keys(two, "run")
    assert keys(one, "run") | keys(two, "run") == world_truth(crawl_world).runs


def test_search_selects_repositories_up_to_max_repos(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    query = "archived:false"
    answer = requests.get(
        crawl_server.url + "/search/repositories",
        params={"q": query, "per_page": 100},
        headers={"Authorization": f"Bearer {next(iter(TOKENS))}"},
        timeout=30,
    ).json()
    expected = [item["full_name"] for item in answer["items"]][:3]
    client = make_client(crawl_server.url)
    opts = CrawlOptions(search=query, max_repos=3, since=SINCE, until=UNTIL)
    result = crawl(tmp_path, opts, client)
    stored = {b["full_name"] for (k, _), b in store_records(tmp_path).items() if k == "repository"}
    assert result.repositories == 3 and stored == set(expected)


def test_each_repository_is_announced_complete_once_and_a_rerun_fetches_nothing(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    names = repo_names(crawl_world)
    first: list[CrawlEvent] = []
    run_crawl(tmp_path, crawl_server.url, names, events=first)
    again: list[CrawlEvent] = []
    run_crawl(tmp_path, crawl_server.url, names, events=again)
    for events in (first, again):
        done = [e.data["name"] for e in events if e.data.get("state") == "done"]
        assert sorted(done) == sorted(names)
    asked = Counter(e.data["endpoint"] for e in again if e.kind == "request")
    # Only `identify` (accounts of the tokens, one probe) runs: the crawl itself is done.
    assert set(asked) <= {"user", "rate_limit", "repository"} and asked["repository"] == 1


def test_a_rerun_with_logs_fetches_the_logs_of_jobs_already_stored(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    names = repo_names(crawl_world, public_only=True)[:3]
    run_crawl(tmp_path, crawl_server.url, names)
    assert not keys(store_records(tmp_path), "log")
    run_crawl(tmp_path, crawl_server.url, names, logs=True)
    records = store_records(tmp_path)
    assert keys(records, "job") and keys(records, "log") == keys(records, "job")


def test_a_whole_world_crawl_stores_what_simulate_dump_writes(
    crawl_world: World, crawl_server: SimServer, tmp_path: Path
) -> None:
    """The crawler and `simulate dump` agree on the raw store: same kinds, keys and bodies
    (logs included: same statuses, same redacted text)."""
    dump_world(crawl_world, tmp_path / "dump", logs=True)
    client = make_client(crawl_server.url)
    everything = CrawlOptions(
        repos=repo_names(crawl_world, public_only=True),
        since=iso(END - 400 * DAY),
        until=UNTIL,
        logs=True,
    )
    crawl(tmp_path / "crawl", everything, client)
    crawled = store_records(tmp_path / "crawl")
    dumped = store_records(tmp_path / "dump")
    for kind in ("repository", "workflow", "run", "job", "workflow_ref", "workflow_file", "log"):
        assert keys(crawled, kind) == keys(dumped, kind), kind
    base = _api_base(dumped)
    same_host = json.loads(json.dumps(list(crawled.items())).replace(crawl_server.url, base))
    assert comparable({tuple(k): v for k, v in same_host}) == comparable(dumped)


def _api_base(records: dict[tuple[str, str], Any]) -> str:
    """The API root the dump wrote into its URLs (…/repos/owner/name)."""
    repo = next(v for (k, _), v in records.items() if k == "repository")
    return str(repo["url"]).split("/repos/")[0]
