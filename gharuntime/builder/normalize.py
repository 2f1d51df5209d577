"""Raw store tables → candidate job rows: the contract's columns (history aside) plus `status`,
before any filter. Joins run in polars; per-row Python work happens only once per distinct
workflow file, job name or label set."""

from __future__ import annotations

import polars as pl

from gharuntime.builder.jobkeys import resolve_job_keys, yaml_sha256
from gharuntime.progress import Progress
from gharuntime.sources._columns import Problems
from gharuntime.sources.base import Texts, to_datetime, with_runner_os
from gharuntime.sources.raw import RawTables

__all__ = ["CANDIDATE_EXTRA", "Texts", "normalize_raw"]

CANDIDATE_EXTRA = ("status", "job_key_how")
"""Columns a candidate row carries beyond the contract's, for the filters and the report."""

_TS = pl.Datetime("us", "UTC")


def normalize_raw(
    t: RawTables, problems: Problems, *, workers: int = 1, progress: Progress | None = None
) -> tuple[pl.DataFrame, Texts]:
    """Candidate job rows from a raw store (without the YAML texts, see Texts); records that
    cannot be placed are counted."""
    runs = t.runs.unique(["run_id", "run_attempt"], keep="last", maintain_order=True)
    if runs.height < t.runs.height:
        problems.add("duplicate_run_record", n=t.runs.height - runs.height)
    repos = t.repositories.unique("repo_id", keep="last", maintain_order=True)
    workflows = t.workflows.unique("workflow_id", keep="last", maintain_order=True)

    jobs = t.jobs.join(runs, on=["run_id", "run_attempt"], how="left")
    orphan = jobs.filter(pl.col("repo_id").is_null())
    if orphan.height:
        problems.add(
            "job_without_run",
            f"job {orphan['job_id'][0]} of run {orphan['run_id'][0]} attempt "
            f"{orphan['run_attempt'][0]}: no run record",
            n=orphan.height,
        )
        jobs = jobs.filter(pl.col("repo_id").is_not_null())

    jobs = jobs.join(repos, on="repo_id", how="left").join(workflows, on="workflow_id", how="left")
    no_repo = jobs.filter(pl.col("repo").is_null()).height
    if no_repo:
        problems.add("job_without_repository_record", n=no_repo)

    # Which workflow file each run used, and its text.
    refs = t.workflow_refs.filter(pl.col("blob_sha").is_not_null()).unique(
        ["repo_id", "workflow_path", "head_sha"], keep="last", maintain_order=True
    )
    files = t.workflow_files.unique(
        ["repo_id", "workflow_path", "blob_sha"], keep="last", maintain_order=True
    )
    distinct = files["workflow_yaml"].unique().sort()
    yaml_table = pl.DataFrame(
        {"workflow_yaml": distinct, "workflow_sha256": [yaml_sha256(x) for x in distinct]},
        schema={"workflow_yaml": pl.String, "workflow_sha256": pl.String},
    )
    files = files.join(yaml_table, on="workflow_yaml", how="left").drop("workflow_yaml")
    jobs = jobs.join(refs, on=["repo_id", "workflow_path", "head_sha"], how="left").join(
        files, on=["repo_id", "workflow_path", "blob_sha"], how="left"
    )

    def bad_yaml(sha: str, message: str) -> None:
        problems.add("workflow_yaml_does_not_parse", f"workflow {sha[:12]}: {message}")

    keyed = jobs.filter(pl.col("workflow_sha256").is_not_null())
    keys = resolve_job_keys(
        keyed.select("workflow_sha256", "job_name"),
        dict(zip(yaml_table["workflow_sha256"], yaml_table["workflow_yaml"], strict=True)),
        on_bad_yaml=bad_yaml,
        workers=workers,
        progress=progress,
    )
    texts = Texts(
        workflows=yaml_table.select("workflow_sha256", "workflow_yaml"),
        jobs=keys.filter(pl.col("job_yaml").is_not_null()).select(
            "workflow_sha256", "job_name", "job_yaml"
        ),
    )
    jobs = jobs.join(
        keys.drop("job_yaml", "resolve_unit", "reusable"),
        on=["workflow_sha256", "job_name"],
        how="left",
    )

    logs = t.logs.unique("job_id", keep="last", maintain_order=True)
    jobs = jobs.join(logs, on="job_id", how="left")

    labels = (
        pl.when(pl.col("api_labels").list.len() > 0)
        .then(pl.col("api_labels"))
        .when(pl.col("log_labels").list.len() > 0)
        .then(pl.col("log_labels"))
        .otherwise(pl.col("yaml_labels"))
    )
    created = pl.coalesce("created_at", "run_started_at", "run_created_at")
    rows = jobs.select(
        pl.col("job_id").cast(pl.String).alias("id"),
        pl.coalesce(
            "repo", "run_repo", pl.lit("unknown/") + pl.col("repo_id").cast(pl.String)
        ).alias("repo"),
        "repo_id",
        "repo_language",
        "repo_stars",
        "repo_size_kb",
        "repo_topics",
        "repo_fork",
        *to_datetime("repo_created_at"),
        "run_id",
        "run_attempt",
        "run_number",
        "event",
        "head_branch",
        (pl.col("head_branch") == pl.col("default_branch")).alias("is_default_branch"),
        "head_sha",
        "head_commit_message",
        "workflow_id",
        pl.col("workflow_path").fill_null(""),
        pl.coalesce("workflow_name", "workflow_record_name").alias("workflow_name"),
        "workflow_sha256",
        "job_id",
        "job_name",
        "job_key",
        "matrix",
        labels.alias("runner_labels"),
        pl.col("log_image").alias("runner_image"),
        "needs",
        "step_names",
        created.cast(_TS).alias("created_at"),
        *to_datetime("started_at", "completed_at"),
        pl.col("conclusion").fill_null(""),
        ((pl.col("completed_at") - pl.col("started_at")) / 1e6).alias("duration_s"),
        ((pl.col("started_at") - created) / 1e6).alias("queue_s"),
        pl.when(pl.col("log_status").is_in(["ok", "too_large"]))
        .then(pl.col("log_bytes"))
        .alias("log_bytes"),
        "status",
        pl.when(pl.col("workflow_sha256").is_null())
        .then(pl.lit("no_yaml"))
        .otherwise(pl.col("job_key_how"))
        .alias("job_key_how"),
    )
    return with_runner_os(rows), texts
