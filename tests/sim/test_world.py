"""The simulated world: deterministic, lazy, varied the way real repositories are."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from scipy.stats import spearmanr

from gharuntime.sim.costs import SUITE_NAMES, suite_factor
from gharuntime.sim.world import END, LOG_RETENTION_DAYS, RUN_ID_BASE, RepoWorld, Run, Scale, World
from gharuntime.workflow import expand_jobs, parse_workflow


@pytest.fixture(scope="module")
def small_runs() -> list[tuple[RepoWorld, Run]]:
    """Every run of a 150-repository world, built once for this module."""
    return [(rw, r) for rw in World(2, "small").repos() for r in rw.runs]


def _durations(world: World) -> list[tuple[int, float]]:
    return [
        (j.id, j.completed - j.started)
        for rw in world.repos()
        for r in rw.runs
        for a in r.attempts
        for j in a.jobs
    ]


def test_same_seed_same_world() -> None:
    assert _durations(World(3, "tiny")) == _durations(World(3, "tiny"))


def test_other_seed_other_world() -> None:
    assert _durations(World(3, "tiny")) != _durations(World(4, "tiny"))


def test_one_repository_built_alone_equals_it_built_in_sequence() -> None:
    world = World(5, "tiny")
    in_sequence = list(world.repos())[7]
    alone = World(5, "tiny").repo(7)
    assert [(r.id, r.created, r.latest.conclusion) for r in alone.runs] == [
        (r.id, r.created, r.latest.conclusion) for r in in_sequence.runs
    ]


def test_run_ids_lead_back_to_their_repository(sim_world: World) -> None:
    rw = sim_world.repo(3)
    run = rw.runs[-1]
    job = run.latest.jobs[0]
    assert sim_world.index_of_id("run", run.id) == 3
    assert sim_world.index_of_id("job", job.id) == 3
    assert sim_world.index_of_id("run", RUN_ID_BASE - 1) is None


def test_ids_are_unique_across_the_world(sim_world: World) -> None:
    runs = [r.id for rw in sim_world.repos() for r in rw.runs]
    jobs = [j.id for rw in sim_world.repos() for r in rw.runs for a in r.attempts for j in a.jobs]
    assert len(runs) == len(set(runs)) and len(jobs) == len(set(jobs))


def test_job_names_are_those_of_the_workflow_at_the_head_sha(sim_world: World) -> None:
    checked = 0
    for rw in sim_world.repos():
        for run in rw.runs[:5]:
            text = rw.file_at(run.workflow.path, run.commit.sha)
            assert text is not None
            by_path = {w.path: w for w in rw.workflows}

            def resolve(uses: str, rw=rw, run=run, by_path=by_path):  # type: ignore[no-untyped-def]
                found = rw.file_at(uses.removeprefix("./"), run.commit.sha)
                return (
                    parse_workflow(found[0])
                    if found and uses.removeprefix("./") in by_path
                    else None
                )

            expected = [j.name for j in expand_jobs(parse_workflow(text[0]), resolve)]
            assert [j.name for j in run.attempts[0].jobs] == expected
            checked += 1
    assert checked > 20


def test_matrix_jobs_are_named_the_github_way(sim_world: World) -> None:
    names = {j.name for rw in sim_world.repos() for r in rw.runs for j in r.latest.jobs}
    assert any(re.fullmatch(r"test \([\w.-]+(, [\w.-]+)+\)", n) for n in names)


def test_reusable_workflow_jobs_are_named_caller_slash_callee() -> None:
    world = World(11, Scale(30, 3.5, 4, 60))
    names = {j.name for rw in world.repos() for r in rw.runs for j in r.latest.jobs}
    assert {"call-build / Build", "call-build / check"} <= names


def test_workflow_text_changes_between_head_shas() -> None:
    world = World(2, "small")
    changed = [
        wf for rw in world.repos() for wf in rw.workflows if len({v[2] for v in wf.versions}) > 1
    ]
    assert len(changed) > 10


def test_run_conclusions_cover_what_github_reports(small_runs: list[tuple[RepoWorld, Run]]) -> None:
    seen = Counter(r.latest.conclusion for _, r in small_runs)
    assert {"success", "failure", "cancelled", "skipped", "timed_out"} <= set(seen)
    assert seen["success"] > sum(seen.values()) / 2


def test_some_runs_are_re_run(small_runs: list[tuple[RepoWorld, Run]]) -> None:
    attempts = Counter(len(r.attempts) for _, r in small_runs)
    assert attempts[2] > 0 and attempts[1] > attempts[2]


def test_runs_still_going_at_the_end_are_not_completed(
    small_runs: list[tuple[RepoWorld, Run]],
) -> None:
    late = [r for _, r in small_runs if r.latest.status != "completed"]
    assert late and all(r.latest.conclusion is None for r in late)
    assert all(j.completed > END for r in late for j in r.latest.jobs if j.status != "completed")


def test_runner_labels_include_self_hosted_and_larger_runners() -> None:
    world = World(2, "small")
    labels = {
        label for rw in world.repos() for r in rw.runs for j in r.latest.jobs for label in j.labels
    }
    assert "self-hosted" in labels
    assert any("core" in label for label in labels)
    assert {"windows-latest", "macos-latest"} <= labels


def test_quirks_exist_in_a_tiny_world(sim_world: World) -> None:
    metas = list(sim_world.metas())
    assert any(m.path_ref for m in metas) and any(m.step_tz for m in metas)
    assert any(m.old_name for m in metas) and any(m.private for m in metas)
    assert any(m.archived for m in metas) and any(m.actions_disabled for m in metas)


def test_runs_whose_repository_has_path_ref_end_in_the_branch(sim_world: World) -> None:
    rw = next(
        sim_world.repo(m.index) for m in sim_world.metas() if m.path_ref and not m.actions_disabled
    )
    assert all(r.path == f"{r.workflow.path}@{r.branch}" for r in rw.runs)


def test_completed_runs_respects_the_time_window(sim_world: World) -> None:
    since, until = END - 30 * 86400, END - 10 * 86400
    runs = list(sim_world.completed_runs(since, until))
    assert runs and all(
        since <= r.created < until and r.latest.status == "completed" for _, r in runs
    )


def test_history_spans_beyond_log_retention(sim_world: World) -> None:
    oldest = min(r.created for rw in sim_world.repos() for r in rw.runs)
    assert oldest < END - LOG_RETENTION_DAYS * 86400


def test_step_times_add_up_to_the_job(sim_world: World) -> None:
    for rw in sim_world.repos():
        for r in rw.runs:
            for j in r.latest.jobs:
                if j.status == "completed" and j.steps:
                    assert j.steps[0].started == pytest.approx(j.started)
                    assert j.steps[-1].completed == pytest.approx(j.completed)
                    # only a job carried over by "re-run failed jobs" started before creation
                    assert j.started >= j.created or r.latest.number > 1


def test_scheduled_runs_start_at_their_cron_time(small_runs: list[tuple[RepoWorld, Run]]) -> None:
    scheduled = [r for _, r in small_runs if r.event == "schedule"]
    assert scheduled
    for r in scheduled[:50]:
        cron = parse_workflow(r.workflow.versions[0][1]).raw["on"]["schedule"][0]["cron"].split()
        minute, hour = int(cron[0]), int(cron[1])
        late = (r.created - (hour * 3600 + minute * 60)) % 86400
        assert late < 3 * 3600


def test_re_run_failed_jobs_carries_successful_jobs_over(
    small_runs: list[tuple[RepoWorld, Run]],
) -> None:
    """GitHub's "re-run failed jobs": the jobs that succeeded are copied into the new attempt with
    a new id and the new attempt's created_at, but their original started_at/completed_at."""
    carried = 0
    for _, run in small_runs:
        for before, after in zip(run.attempts, run.attempts[1:], strict=False):
            for old, new in zip(before.jobs, after.jobs, strict=True):
                if new.started < new.created:
                    carried += 1
                    assert old.conclusion == "success" and new.conclusion == "success"
                    assert (new.started, new.completed) == (old.started, old.completed)
                    assert new.created == after.started and new.id != old.id
                    assert new.run_attempt == after.number
    assert carried >= 20


def test_suite_factor_is_deterministic_and_neutral_without_a_suite() -> None:
    assert suite_factor("o/r", "e2e") == suite_factor("o/r", "e2e")
    assert suite_factor("o/r", "e2e") != suite_factor("o/other", "e2e")
    assert suite_factor("o/r", None) == 1.0 and suite_factor("o/r", "not-a-suite") == 1.0
    assert suite_factor("o/r", ["unit"]) == 1.0


def test_test_suites_in_a_matrix_cost_what_their_name_says(
    small_runs: list[tuple[RepoWorld, Run]],
) -> None:
    # apache/ozone's lesson: one job per suite, and the suite decides the duration
    pairs: list[tuple[float, float]] = []
    for _, r in small_runs:
        for j in r.latest.jobs:
            m = re.search(r"[(, ]([a-z0-9]+)\)$", j.name)
            if j.conclusion != "success" or not m or m.group(1) not in SUITE_NAMES:
                continue
            seconds = sum(s.completed - s.started for s in j.steps if s.category == "test")
            pairs.append((float(SUITE_NAMES.index(m.group(1))), seconds))
    assert len(pairs) > 50
    assert len({b for b, _ in pairs}) >= 5
    # SUITE_NAMES runs cheapest first: the suite's name orders its test time, across repositories
    rho = spearmanr([b for b, _ in pairs], [s for _, s in pairs]).statistic
    assert rho > 0.3
