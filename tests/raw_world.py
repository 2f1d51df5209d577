"""Small raw stores for the build's tests, written with RawStoreWriter from GitHub's own example
payloads (reference/github-rest/examples) and real recorded responses (reference/recorded-api):
real shapes — run paths ending `@ref`, step times in -08:00, jobs without `created_at`.

Only ids, names, times, statuses and labels are changed, each where a test needs it."""

from __future__ import annotations

import base64
import copy
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from gharuntime.contract import RawKind
from gharuntime.rawstore import RawStoreWriter

CI_YAML = """name: CI
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
  test:
    name: Test ${{ matrix.python }} on ${{ matrix.os }}
    needs: lint
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        python: ["3.10", "3.11"]
        exclude:
          - os: windows-latest
            python: "3.10"
        include:
          - os: macos-latest
            python: "3.12"
    steps:
      - run: pytest
  build:
    runs-on: ubuntu-22.04
    needs: [lint, test]
    strategy:
      matrix:
        arch: [x64, arm64]
    steps:
      - run: make
  call:
    uses: ./.github/workflows/reusable.yml
  dyn:
    runs-on: ubuntu-latest
    strategy:
      matrix: ${{ fromJSON(needs.lint.outputs.matrix) }}
    steps:
      - run: echo
"""

BAD_YAML = "name: broken\non: [push\njobs:\n  a: {runs-on: ubuntu-latest\n"

LOG_HEADER = (
    "2020-01-20T17:42:40.1000000Z Requested labels: {labels}\n"
    "2020-01-20T17:42:40.2000000Z Job defined at: octocat/Hello-World/.github/workflows/ci.yml@refs/heads/master\n"
    "2020-01-20T17:42:41.2732778Z ##[group]Runner Image\n"
    "2020-01-20T17:42:41.2733238Z Image: {image}\n"
    "2020-01-20T17:42:41.2733585Z Version: 20230917.1.0\n"
    "2020-01-20T17:42:41.2736350Z ##[endgroup]\n"
    "2020-01-20T17:43:00.0000000Z hello\n"
)


def example(shared: Path, name: str) -> Any:
    return json.loads((shared / "reference/github-rest/examples" / name).read_text())


def iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class RawWorld:
    """Builds a raw store of one repository (GitHub's example repository) and its runs."""

    shared: Path
    repo: dict[str, Any] = field(init=False)
    run_template: dict[str, Any] = field(init=False)
    job_template: dict[str, Any] = field(init=False)
    records: list[tuple[RawKind, str, Any]] = field(default_factory=list)
    next_job_id: int = 399_444_496

    def __post_init__(self) -> None:
        self.repo = example(self.shared, "full-repository-default-response.json")
        self.repo["language"] = "Python"  # GitHub's example lacks this required field
        self.run_template = example(self.shared, "workflow-run.json")
        self.job_template = example(self.shared, "job.json")
        self.add(RawKind.REPOSITORY, str(self.repo["id"]), self.repo)
        workflow = example(self.shared, "workflow.json")
        workflow["path"] = ".github/workflows/ci.yml"
        self.add(RawKind.WORKFLOW, str(workflow["id"]), workflow)

    @property
    def repo_id(self) -> int:
        return int(self.repo["id"])

    def add(self, kind: RawKind, key: str, body: Any) -> None:
        self.records.append((kind, key, body))

    def workflow_file(
        self, text: str, blob_sha: str, path: str = ".github/workflows/ci.yml"
    ) -> None:
        body = example(self.shared, "content-file-response-if-content-is-a-file.json")
        encoded = base64.b64encode(text.encode()).decode()
        # GitHub wraps base64 content at 60 characters with newlines.
        body["content"] = "\n".join(encoded[i : i + 60] for i in range(0, len(encoded), 60))
        body["sha"] = blob_sha
        body["path"] = path
        body["name"] = path.rsplit("/", 1)[-1]
        self.add(RawKind.WORKFLOW_FILE, f"{self.repo_id}:{path}:{blob_sha}", body)

    def run(
        self,
        run_id: int,
        created: datetime,
        *,
        attempt: int = 1,
        head_sha: str = "acb5820ced9479c074f688cc328bf03f341a511d",
        blob_sha: str | None = "blob-ci-1",
        branch: str = "master",
        path: str = ".github/workflows/ci.yml@master",
    ) -> dict[str, Any]:
        run = copy.deepcopy(self.run_template)
        run.update(
            id=run_id,
            run_attempt=attempt,
            status="completed",
            conclusion="success",
            head_sha=head_sha,
            head_branch=branch,
            path=path,
            name="CI",
            workflow_id=161335,
            created_at=iso(created),
            run_started_at=iso(created),
        )
        run["repository"]["id"] = self.repo_id
        run["repository"]["full_name"] = self.repo["full_name"]
        run["head_commit"]["message"] = "Fix all the bugs\n\nlong body"
        self.add(RawKind.RUN, f"{run_id}:{attempt}", run)
        self.add(
            RawKind.WORKFLOW_REF,
            f"{self.repo_id}:.github/workflows/ci.yml:{head_sha}",
            {
                "repo_id": self.repo_id,
                "path": ".github/workflows/ci.yml",
                "head_sha": head_sha,
                "blob_sha": blob_sha,
            },
        )
        return run

    def job(
        self,
        run: dict[str, Any],
        name: str,
        *,
        queued: float = 5.0,
        duration: float = 119.0,
        labels: list[str] | None = None,
        status: str = "completed",
        conclusion: str | None = "success",
        job_id: int | None = None,
        created_at: bool = True,
        log: str | None = None,
        log_status: str = "ok",
    ) -> int:
        """A job of `run`, created `queued` s before it starts, running `duration` s."""
        job = copy.deepcopy(self.job_template)
        if job_id is None:
            job_id = self.next_job_id
            self.next_job_id += 1
        created = datetime.fromisoformat(run["created_at"].replace("Z", "+00:00"))
        started = created + timedelta(seconds=queued)
        job.update(
            id=job_id,
            run_id=run["id"],
            run_attempt=run["run_attempt"],
            name=name,
            status=status,
            conclusion=conclusion,
            started_at=iso(started),
            completed_at=iso(started + timedelta(seconds=duration)),
            labels=labels if labels is not None else ["ubuntu-latest"],
            head_sha=run["head_sha"],
        )
        if created_at:
            job["created_at"] = iso(created)
        else:
            job.pop("created_at", None)
        self.add(RawKind.JOB, str(job_id), job)
        if log is not None:
            self.add(
                RawKind.LOG,
                str(job_id),
                {
                    "job_id": job_id,
                    "status": log_status,
                    "bytes": len(log.encode()) if log_status in ("ok", "too_large") else None,
                    "text": log if log_status == "ok" else None,
                },
            )
        return job_id

    def write(
        self,
        root: Path,
        *,
        per_shard: int = 1_000_000,
        source: str = "test",
        synthetic: bool = False,
    ) -> Path:
        meta = {"source": source, **({"synthetic": "1"} if synthetic else {})}
        writer = RawStoreWriter(root, meta=meta)
        for i, (kind, key, body) in enumerate(self.records, start=1):
            writer.add(kind, key, body, self.repo_id)
            if i % per_shard == 0:
                writer.flush()
        writer.close()
        return root


T0 = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def standard_world(shared: Path) -> RawWorld:
    """CI_YAML, three runs of its jobs, one hour apart; every API job name GitHub would give."""
    w = RawWorld(shared)
    w.workflow_file(CI_YAML, "blob-ci-1")
    names = [
        ("lint", 30.0, ["ubuntu-latest"]),
        ("Test 3.10 on ubuntu-latest", 100.0, ["ubuntu-latest"]),
        ("Test 3.11 on ubuntu-latest", 110.0, ["ubuntu-latest"]),
        ("Test 3.11 on windows-latest", 200.0, ["windows-latest"]),
        ("Test 3.12 on macos-latest", 150.0, ["macos-latest"]),
        ("build (x64)", 60.0, ["ubuntu-22.04"]),
        ("build (arm64)", 90.0, ["ubuntu-22.04"]),
        ("call / deploy", 20.0, ["ubuntu-latest"]),
        ("dyn (a, b)", 10.0, ["ubuntu-latest"]),
        ("mystery job", 12.0, ["self-hosted", "gpu"]),
    ]
    for r in range(3):
        run = w.run(30_433_642 + r, T0 + timedelta(hours=r))
        for name, duration, labels in names:
            w.job(run, name, duration=duration + r, labels=labels)
    return w
