"""The GitHub endpoints the crawler uses: their paths, and a short name per endpoint for counting.

Paths are relative to the API root (`--api-url`), so one client serves github.com, GitHub
Enterprise Server (`https://HOST/api/v3`) and the simulated GitHub.
"""

from __future__ import annotations

import re
from urllib.parse import quote

__all__ = [
    "attempt_logs",
    "contents",
    "endpoint_name",
    "graphql_blob_query",
    "graphql_blob_text_query",
    "job_logs",
    "repository",
    "resource_of",
    "run_attempt",
    "run_jobs",
    "run_listing",
    "workflow_runs",
    "workflows",
]


def repository(full_name: str) -> str:
    return f"/repos/{full_name}"


def workflows(full_name: str) -> str:
    return f"/repos/{full_name}/actions/workflows"


def run_listing(full_name: str) -> str:
    return f"/repos/{full_name}/actions/runs"


def workflow_runs(full_name: str, workflow_id: int) -> str:
    return f"/repos/{full_name}/actions/workflows/{workflow_id}/runs"


def run_attempt(full_name: str, run_id: int, attempt: int) -> str:
    return f"/repos/{full_name}/actions/runs/{run_id}/attempts/{attempt}"


def run_jobs(full_name: str, run_id: int) -> str:
    return f"/repos/{full_name}/actions/runs/{run_id}/jobs"


def attempt_jobs(full_name: str, run_id: int, attempt: int) -> str:
    return f"/repos/{full_name}/actions/runs/{run_id}/attempts/{attempt}/jobs"


def job_logs(full_name: str, job_id: int) -> str:
    return f"/repos/{full_name}/actions/jobs/{job_id}/logs"


def attempt_logs(full_name: str, run_id: int, attempt: int) -> str:
    return f"/repos/{full_name}/actions/runs/{run_id}/attempts/{attempt}/logs"


def contents(full_name: str, path: str) -> str:
    return f"/repos/{full_name}/contents/{quote(path)}"


def _gql_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def graphql_blob_query(owner: str, name: str, expressions: list[str]) -> str:
    """One GraphQL query asking the blob oid of each `SHA:PATH` expression (aliases a0, a1, ...)."""
    fields = " ".join(
        f"a{i}: object(expression: {_gql_string(e)}) {{ ... on Blob {{ oid }} }}"
        for i, e in enumerate(expressions)
    )
    return f"query {{ repository(owner: {_gql_string(owner)}, name: {_gql_string(name)}) {{ {fields} }} }}"


def graphql_blob_text_query(owner: str, name: str, oids: list[str]) -> str:
    """One GraphQL query asking the text of each blob by its oid (aliases b0, b1, ...); GitHub
    gives `text` null for a binary blob and `isTruncated` true for one cut short."""
    fields = " ".join(
        f"b{i}: object(oid: {_gql_string(o)}) "
        "{ ... on Blob { oid byteSize isBinary isTruncated text } }"
        for i, o in enumerate(oids)
    )
    return f"query {{ repository(owner: {_gql_string(owner)}, name: {_gql_string(name)}) {{ {fields} }} }}"


_NAMES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("graphql", re.compile(r"^/graphql$")),
    ("user", re.compile(r"^/user$")),
    ("rate_limit", re.compile(r"^/rate_limit$")),
    ("search", re.compile(r"^/search/")),
    ("attempt_jobs", re.compile(r"^/repos/[^/]+/[^/]+/actions/runs/\d+/attempts/\d+/jobs$")),
    ("attempt_logs", re.compile(r"^/repos/[^/]+/[^/]+/actions/runs/\d+/attempts/\d+/logs$")),
    ("run_attempt", re.compile(r"^/repos/[^/]+/[^/]+/actions/runs/\d+/attempts/\d+$")),
    ("run_jobs", re.compile(r"^/repos/[^/]+/[^/]+/actions/runs/\d+/jobs$")),
    ("runs", re.compile(r"^/repos/[^/]+/[^/]+/actions/(?:workflows/[^/]+/)?runs$")),
    ("workflows", re.compile(r"^/repos/[^/]+/[^/]+/actions/workflows$")),
    ("job_logs", re.compile(r"^/repos/[^/]+/[^/]+/actions/jobs/\d+/logs$")),
    ("contents", re.compile(r"^/repos/[^/]+/[^/]+/contents/")),
    ("repository", re.compile(r"^/repos/[^/]+/[^/]+$")),
)


def endpoint_name(path: str) -> str:
    """A short name for the endpoint of an API path (`runs`, `run_jobs`, `contents`, ...)."""
    for name, pattern in _NAMES:
        if pattern.search(path):
            return name
    return "other"


def resource_of(path: str) -> str:
    """The rate-limit resource GitHub counts a request against."""
    if path == "/graphql":
        return "graphql"
    if path.startswith("/search/"):
        return "search"
    return "core"
