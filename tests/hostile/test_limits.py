"""Unbounded work: every hostile workflow below is refused by `predict` (and by the parser the
build and the simulated GitHub share) with the limit named, in a subprocess capped at 2 GB of
address space and a minute, because each limit is checked on counts before anything is
expanded; and a reusable-workflow path is read only inside the repository."""

from __future__ import annotations

import json
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import check, invoke, run_limited

from gharuntime.workflow import WorkflowError, expand_jobs, local_callee_path, parse_workflow

WF = ".github/workflows"


def _job(matrix: str, extra: str = "") -> str:
    return f"on: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n{matrix}{extra}    steps: [{{run: make}}]\n"


def _chain(levels: int, fan: int) -> dict[str, str]:
    """Reusable workflows each calling the next with a matrix of `fan`: fan**levels jobs."""
    values = ", ".join(str(i) for i in range(fan))
    files = {
        f"{WF}/c{i}.yml": "on: {workflow_call: {}}\njobs:\n  j:\n"
        f"    strategy: {{matrix: {{a: [{values}]}}}}\n    uses: ./{WF}/c{i + 1}.yml\n"
        for i in range(levels - 1)
    }
    files[f"{WF}/c{levels - 1}.yml"] = (
        "on: {workflow_call: {}}\njobs:\n  j:\n    runs-on: ubuntu-latest\n"
        f"    strategy: {{matrix: {{a: [{values}]}}}}\n    steps: [{{run: make}}]\n"
    )
    files[f"{WF}/main.yml"] = f"on: push\njobs:\n  j:\n    uses: ./{WF}/c0.yml\n"
    return files


TEN = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"
HOSTILE: dict[str, tuple[dict[str, str], str]] = {
    # nine lines, 10**9 combinations
    "product": (
        {f"{WF}/main.yml": _job("".join(f"        a{i}: {TEN}\n" for i in range(9)))},
        "1,000,000,000 jobs",
    ),
    # one list aliased nine times: a few hundred bytes
    "aliased": (
        {
            f"{WF}/main.yml": _job(
                f"        a0: &v {TEN}\n" + "".join(f"        a{i}: *v\n" for i in range(1, 9))
            )
        },
        "1,000,000,000 jobs",
    ),
    # excludes that cannot bring 10**6 combinations anywhere near 256
    "exclude": (
        {
            f"{WF}/main.yml": _job(
                f"        a: &v {TEN}\n        b: *v\n        c: *v\n        d: *v\n        e: *v\n        f: *v\n        exclude:\n"
                + "".join(
                    f"          - {{a: 0, b: {i % 10}, c: {i // 10 % 10}}}\n" for i in range(20_000)
                )
            )
        },
        "exclude:",
    ),
    # a long include list against a full matrix
    "include": (
        {
            f"{WF}/main.yml": _job(
                "        a: ["
                + ", ".join(str(i) for i in range(250))
                + "]\n        include:\n"
                + "".join(f"          - {{a: {i % 250}, k: {i}}}\n" for i in range(50_000))
            )
        },
        "include:",
    ),
    # seven levels of calls, a matrix of 10 at each: 10**7 jobs
    "chain": (_chain(7, 10), "4,096 jobs"),
}


@pytest.fixture(scope="module")
def model_root(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> Path:
    root = tmp_path_factory.mktemp("limits")
    shutil.copytree(fixture_dataset_master, root / "ds")
    out = invoke(["baseline", "median", "--dataset", "ds", "--out", "m.jsonl"], root)
    assert out.code == 0, out.output
    return root


def _repo(root: Path, files: dict[str, str]) -> Path:
    repo = root / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return repo


@pytest.mark.parametrize("case", list(HOSTILE))
def test_predict_refuses_work_past_a_limit_within_bounded_memory(
    model_root: Path, case: str
) -> None:
    files, limit = HOSTILE[case]
    repo = _repo(model_root, files)
    out = run_limited(
        ["predict", str(repo / WF / "main.yml"), "--model", str(model_root / "m.model")],
        model_root,
        memory_mb=2048,
        timeout=60,
    )
    check(out, case)
    assert out.code == 2, out.output[-2000:]
    assert limit in out.output, out.output[-2000:]


@pytest.fixture()
def seconds_limit() -> Iterator[None]:
    def stop(*_: Any) -> None:
        raise TimeoutError("took over 20 s")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.parametrize("case", list(HOSTILE))
def test_the_shared_parser_refuses_them_at_once(case: str, seconds_limit: None) -> None:
    """The build (`WorkflowIndex`), the simulated GitHub and `predict` all expand through here."""
    files, limit = HOSTILE[case]
    parsed = {name: parse_workflow(text, name) for name, text in files.items()}

    def resolve(uses: str) -> Any:
        return parsed.get(uses.removeprefix("./"))

    with pytest.raises(WorkflowError, match=limit.replace("*", r"\*")):
        expand_jobs(parsed[f"{WF}/main.yml"], resolve)


@pytest.mark.parametrize(
    "uses",
    [
        "./../outside.yml",
        "./.github/../../outside.yml",
        ".//ABSOLUTE/outside.yml",  # the absolute path of a real file outside the repository
        "./.github/workflows/../../../outside.yml",
    ],
)
def test_a_call_never_reads_outside_the_repository(model_root: Path, uses: str) -> None:
    uses = uses.replace("/ABSOLUTE", str(model_root))
    repo = _repo(
        model_root,
        {f"{WF}/main.yml": f"on: push\njobs:\n  caller:\n    uses: {uses}\n"},
    )
    outside = "on: {workflow_call: {}}\njobs:\n  leaked:\n    runs-on: ubuntu-latest\n    steps: [{run: make}]\n"
    (model_root / "outside.yml").write_text(outside)
    (repo / "outside.yml").write_text(outside)
    out = invoke(
        ["predict", str(repo / WF / "main.yml"), "--model", str(model_root / "m.model"), "--json"],
        model_root,
    )
    check(out, uses)
    assert out.code == 0, out.output
    names = [job["name"] for job in json.loads(out.output)["jobs"]]
    assert not any("leaked" in n for n in names), names


@pytest.mark.parametrize(
    "spelling",
    [
        "./.github/workflows/./main.yml",
        "./.github//workflows/main.yml",
        "./.github/workflows/../workflows/main.yml",
        "./.github/workflows/main.yml@main",
    ],
)
def test_a_self_call_spelled_another_way_is_a_cycle(spelling: str) -> None:
    path = f"{WF}/main.yml"
    wf = parse_workflow(f"on: [push, workflow_call]\njobs:\n  again:\n    uses: {spelling}\n")

    def resolve(uses: str) -> Any:
        return wf if local_callee_path(uses) == path else None

    jobs = expand_jobs(wf, resolve, chain=(path,))
    assert [j.call_problem for j in jobs] == ["cycle"]


def _needs_workflow(needs: dict[str, str | None]) -> str:
    jobs = "".join(
        f"  {k}:\n    runs-on: ubuntu-latest\n"
        + (f"    needs: [{n}]\n" if n else "")
        + "    steps: [{run: make}]\n"
        for k, n in needs.items()
    )
    return "on: push\njobs:\n" + jobs


@pytest.mark.parametrize(
    "needs",
    [
        {"a": "a"},
        {"a": "b", "b": "a"},
        {"x": None, "a": "c", "b": "a", "c": "b", "d": "c"},
    ],
    ids=["self", "pair", "three_and_behind"],
)
def test_a_needs_cycle_is_flagged(model_root: Path, needs: dict[str, str | None]) -> None:
    (model_root / "cycle.yml").write_text(_needs_workflow(needs))
    out = invoke(
        ["predict", "cycle.yml", "--model", str(model_root / "m.model"), "--json"], model_root
    )
    check(out, needs)
    assert out.code == 0, out.output
    doc = json.loads(out.output)
    flagged = {j["key"] for j in doc["jobs"] if "needs_cycle" in j["flags"]}
    assert flagged == {k for k, n in needs.items() if n}
    assert doc["flags"]["needs_cycle"]["jobs"] == len(flagged)


@pytest.mark.slow
def test_a_long_needs_chain_has_a_critical_path(model_root: Path) -> None:
    """3,000 jobs each waiting for the one before: a loop, not 6,000 frames of recursion."""
    n = 3000
    needs = {f"j{i}": (f"j{i - 1}" if i else None) for i in range(n)}
    (model_root / "chain.yml").write_text(_needs_workflow(needs))
    out = invoke(
        ["predict", "chain.yml", "--model", str(model_root / "m.model"), "--json"], model_root
    )
    check(out, "chain")
    assert out.code == 0, out.output[-2000:]
    doc = json.loads(out.output)
    assert doc["critical_path_s"] == pytest.approx(doc["total_job_s"], rel=1e-3)
