"""The dataset card's provenance section for an api-json build: where the records came from,
their licences, each project's date range, which fields the sources lack (every null counted)
and how the workflow files were found."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["PLACED_WITHOUT_RUN", "api_json_provenance"]

PLACED_WITHOUT_RUN: Final = "jobs placed without a run record (from their own fields)"
"""The derived count, in the manifest, of jobs a jobs-only source placed by their own fields."""


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(out)


def api_json_provenance(provenance: Mapping[str, Any]) -> str:
    """Markdown for the card's provenance paragraph of an api-json build."""
    parts = [
        "Built from GitHub REST API job and run records as their collectors committed them "
        "(`gharuntime build --source api-json`), with each run's workflow YAML read from the "
        "project's git history at the run's head_sha. **These are real GitHub Actions jobs of "
        f"{len(provenance.get('projects') or [])} project(s), not a sample of GitHub**: what a "
        "model learns here is what these projects' CI does."
    ]
    if provenance.get("description"):
        parts.append(str(provenance["description"]))
    sources = provenance.get("sources") or []
    parts.append(
        "Record sources:\n\n"
        + _table(
            ("source", "read as", "commit", "JSON files", "job records", "run records", "licence"),
            [
                (
                    f"`{s.get('label')}`",
                    s.get("kind"),
                    f"`{str(s.get('commit'))[:12]}`" if s.get("commit") else "-",
                    f"{s.get('files', 0):,}",
                    f"{s.get('jobs', 0):,}",
                    f"{s.get('runs', 0):,}",
                    s.get("licence") or "not detected",
                )
                for s in sources
            ],
        )
    )
    histories = provenance.get("yaml_histories") or []
    parts.append(
        "Workflow YAML histories:\n\n"
        + (
            _table(
                ("history", "HEAD", "licence"),
                [
                    (
                        f"`{h.get('label')}`",
                        f"`{str(h.get('commit'))[:12]}`",
                        h.get("licence") or "not detected",
                    )
                    for h in histories
                ],
            )
            if histories
            else "none given: every row lacks its workflow YAML."
        )
    )
    projects = provenance.get("projects") or []
    if projects:
        parts.append(
            "Projects (rows kept):\n\n"
            + _table(
                ("repository", "jobs", "runs", "first job", "last job", "job key resolved"),
                [
                    (
                        f"`{p['repo']}`",
                        f"{p['rows']:,}",
                        f"{p['runs']:,}",
                        p["first"],
                        p["last"],
                        f"{p['job_key_resolved']:,}",
                    )
                    for p in projects
                ],
            )
        )
    calls = provenance.get("reusable_calls") or {}
    if calls:
        statuses = sorted({k for v in calls.values() for k in v})
        parts.append(
            "Jobs of calls to reusable workflows (rows kept, by the source of their run record): "
            "`followed` is a job of a workflow of the same repository read at the run's commit "
            "(its own block, steps, matrix, runner and `needs`; plain `with:` inputs filled in); "
            "`unknown_inputs` the same with some `with:` inputs given as expressions, left as "
            "written; `remote` a call to another repository's workflow (not read: the row keeps "
            "the caller's block); `missing_callee` a called file missing at that commit or not "
            "parsing; `cycle` and `too_deep` calls GitHub refuses.\n\n"
            + _table(
                ("source", *statuses),
                [
                    (f"`{src}`", *(f"{v.get(k, 0):,}" for k in statuses))
                    for src, v in sorted(calls.items())
                ],
            )
        )
    nulls = provenance.get("null_counts") or {}
    if nulls:
        parts.append(
            "What the sources do not say stays null (never filled in); null values per column "
            "of the rows kept:\n\n"
            + _table(("column", "null rows"), [(f"`{k}`", f"{v:,}") for k, v in nulls.items()])
        )
    derived = provenance.get("derived") or {}
    how = [(k, v) for k, v in derived.items() if isinstance(v, dict)]
    if how:
        parts.append(
            "How fields a record may lack were filled (counts before the filters): "
            "`created_at` is the job's own, else its run attempt's `run_started_at`, else the "
            "run's `created_at` (those two include the wait for `needs`); `run_attempt` is the "
            "job's, else its run's, else 1 (GitHub's API had no run attempts before 2021); "
            "`runner_labels` are the job record's, else the YAML `runs-on` of its job key; "
            "a workflow file is the run's `path` at head_sha, else the file at head_sha whose "
            "`name:` is the run's workflow name, else the file other runs of the same workflow "
            "id name; `repo` is one name per repository id, the name its latest run record "
            "gives (older records may carry an earlier name).\n\n"
            + "\n".join(
                f"- {k}: " + ", ".join(f"{name} {n:,}" for name, n in v.items()) for k, v in how
            )
        )
    placed = derived.get(PLACED_WITHOUT_RUN)
    if isinstance(placed, int) and placed:
        parts.append(
            f"{placed:,} jobs came from a jobs-only source (job records and no run record) and "
            "were placed from their own fields: the repository from `run_url` (its id from a run "
            "or repository record of that name, else a stable negative id from the name, never "
            "one of GitHub's), `head_sha`, the workflow name and attempt from the job, the "
            "workflow's path and id from the repository's workflow listing where one was given, "
            "else the file at head_sha of that name; `event`, `head_branch`, `run_number` and "
            "the commit message are not in a job record and stay null (counted above). A "
            "repository renamed between jobs keeps one row name per name in its jobs' URLs."
        )
    prov = provenance.get("provenance") or {}  # provenance.parquet's entry
    if prov:
        parts.append(
            f"Per-row provenance is in `{prov.get('path')}` ({prov.get('rows', 0):,} rows; "
            f"columns {', '.join(f'`{c}`' for c in prov.get('columns', []))}; its sha256 is in "
            "manifest.json)."
        )
    return "\n\n".join(parts)
