"""The rows of an api-json build (`gharuntime.source_kinds.api_json`): job and run API records
as found in the wild (read by gharuntime.sources.api_json) plus the projects' git histories for
the workflow YAML at each head_sha → candidate rows, their per-row provenance and the counts the
card shows. Below the kind, beside the rest of the builder's resolution (job keys, workflow
files at a commit).

What the records do not say stays null (repository language, stars, size, topics, creation
time, default branch, runner image, log size), and the card counts the nulls of every column.
Two contract columns may not be null; where a record lacks them the build says what it used:
`created_at` is the job's own `created_at`, else its run attempt's `run_started_at`, else the
run's `created_at` (counted per kind in the card: the last two include the wait for `needs`);
`run_attempt` is the job's, else its run's, else 1 (GitHub's API had no attempts before 2021;
counted as `absent_assumed_1`).

Each row's provenance (source, file, the source's commit; the history and commit its YAML came
from and how its workflow file was found) is a frame of its own, which the kind writes to
`provenance.parquet` beside `data/`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import polars as pl

from gharuntime.builder.build import BuildError
from gharuntime.builder.jobkeys import local_calls, resolve_job_keys, resolve_unit, yaml_sha256
from gharuntime.builder.workflows_at import WorkflowFinder, detect_licence, most_common
from gharuntime.progress import Progress
from gharuntime.sources._columns import Problems
from gharuntime.sources.api_json import RUN_SCHEMA, ApiSource, ApiTables
from gharuntime.sources.base import Texts, to_datetime, with_runner_os
from gharuntime.sources.gitstore import GitError, GitRepo, looks_like_git_dir

__all__ = [
    "PLACED_WITHOUT_RUN",
    "api_candidates",
    "cross_repo_ids",
    "source_infos",
    "surrogate_repo_id",
]

PLACED_WITHOUT_RUN: Final = "jobs placed without a run record (from their own fields)"
"""The derived count, in the manifest, of jobs a jobs-only source placed by their own fields."""
_STRS = pl.List(pl.String)

_RESOLVED_SCHEMA = {
    "head_sha": pl.String(),
    "run_workflow_path": pl.String(),
    "workflow_name": pl.String(),
    "workflow_id": pl.Int64(),
    "yaml_history": pl.String(),
    "yaml_commit": pl.String(),
    "workflow_path": pl.String(),
    "workflow_path_how": pl.String(),
    "workflow_sha256": pl.String(),
    "resolve_unit": pl.String(),
}


def _callees(finder: WorkflowFinder, history: int, sha: str, text: str) -> dict[str, str | None]:
    """{path: text, or None when missing or not text} of every same-repository workflow the
    file calls at commit `sha`, nested calls included (a cycle is read once, flagged later)."""
    files = finder.listing(history, sha)
    out: dict[str, str | None] = {}
    todo = local_calls(text)
    while todo:
        path = todo.pop(0)
        if path in out:
            continue
        blob = files.get(path)
        callee = finder.text(history, blob) if blob is not None else None
        out[path] = callee
        if callee is not None:
            todo.extend(p for p in local_calls(callee) if p not in out)
    return out


def surrogate_repo_id(name: str) -> int:
    """A negative id for a repository known only by its owner/name (a jobs-only dump): stable
    for the name (case-insensitive), never one of GitHub's ids, which are positive."""
    digest = hashlib.sha256(f"repository:{name.lower()}".encode()).digest()
    return -(int.from_bytes(digest[:7], "big") + 1)


def _runs_from_jobs(tables: ApiTables, runs: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Run rows made from the jobs' own fields, for the jobs of a jobs-only source (one that
    holds job records and no run record: an archive of job records alone; in a source with run
    records, a job without its run is lost input, counted): the repository from run_url (its
    id from a run or repository record of that name, else `surrogate_repo_id`), head_sha, workflow name, attempt and
    the first job's created_at from the jobs, the workflow path and id from the repository's
    workflow listing when one is given and names it once; the event, branch, run number and
    commit message stay null. A job whose run_url names no repository cannot be placed."""
    jobs_only = [i for i, info in enumerate(tables.sources) if not info["runs"] and info["jobs"]]
    lone = (
        tables.jobs.join(runs.select("run_id"), on="run_id", how="anti")
        .filter(pl.col("job_repo").is_not_null() & pl.col("src").is_in(jobs_only))
        .sort("run_id", "job_id")
    )
    if lone.height == 0:
        return pl.DataFrame(schema=RUN_SCHEMA), {}
    made = lone.group_by("run_id", maintain_order=True).agg(
        pl.col("job_run_attempt").max().alias("run_attempt"),
        pl.col("job_repo").first().alias("repo"),
        pl.col("job_head_sha").drop_nulls().first().alias("head_sha"),
        pl.col("job_workflow_name").drop_nulls().first().alias("workflow_name"),
        pl.col("job_created_at").min().alias("run_created_at"),
        pl.col("src").first().alias("run_src"),
        pl.col("job_file").first().alias("run_file"),
        pl.len().alias("_jobs"),
    )
    made = made.with_columns(pl.col("repo").str.to_lowercase().alias("_key"))
    known = runs.filter(pl.col("repo").is_not_null() & pl.col("repo_id").is_not_null()).select(
        pl.col("repo_id").alias("repository_id"),
        pl.col("repo").str.to_lowercase().alias("repository_name"),
    )
    repos = pl.concat([known, tables.repositories]).unique(
        "repository_name", keep="first", maintain_order=True
    )
    made = made.join(repos, left_on="_key", right_on="repository_name", how="left")
    names = sorted(set(made.filter(pl.col("repository_id").is_null())["_key"].to_list()))
    surrogate = pl.DataFrame(
        {"_key": names, "_surrogate": [surrogate_repo_id(n) for n in names]},
        schema={"_key": pl.String, "_surrogate": pl.Int64},
    )
    listing = tables.workflows.filter(pl.col("listed_repo").is_not_null()).unique(
        maintain_order=True
    )
    by_name = listing.filter(pl.len().over("listed_repo", "listed_name") == 1)
    # a job record without workflow_name (GitHub added it in 2022): a repository whose listing
    # holds one workflow ran that one
    only = listing.filter(pl.len().over("listed_repo") == 1).select(
        pl.col("listed_repo").alias("_key"),
        *(
            pl.col(c).alias(f"_only_{c}")
            for c in ("listed_workflow_id", "listed_name", "listed_path")
        ),
    )
    made = (
        made.join(surrogate, on="_key", how="left")
        .join(
            by_name,
            left_on=["_key", "workflow_name"],
            right_on=["listed_repo", "listed_name"],
            how="left",
        )
        .join(only, on="_key", how="left")
    )
    no_name = pl.col("workflow_name").is_null()
    made = made.with_columns(
        pl.when(no_name).then(pl.col(f"_only_{c}")).otherwise(pl.col(c)).alias(c)
        for c in ("listed_workflow_id", "listed_path")
    ).with_columns(pl.coalesce("workflow_name", "_only_listed_name").alias("workflow_name"))
    placed = {
        PLACED_WITHOUT_RUN: int(made["_jobs"].sum()),
        "repository id of those jobs": {
            "a run or repository record": int(
                made.filter(pl.col("repository_id").is_not_null())["_jobs"].sum()
            ),
            "negative id from the name (no repository record)": int(
                made.filter(pl.col("repository_id").is_null())["_jobs"].sum()
            ),
        },
        "workflow path of those jobs": {
            "workflow listing": int(
                made.filter(pl.col("listed_path").is_not_null())["_jobs"].sum()
            ),
            "found by workflow name at head_sha, or unknown": int(
                made.filter(pl.col("listed_path").is_null())["_jobs"].sum()
            ),
        },
    }
    null = pl.lit(None)
    rows = made.select(
        "run_id",
        "run_attempt",
        pl.coalesce("repository_id", "_surrogate").alias("repo_id"),
        "repo",
        null.cast(pl.Boolean).alias("repo_fork"),
        null.cast(pl.Int64).alias("run_number"),
        null.cast(pl.String).alias("event"),
        null.cast(pl.String).alias("head_branch"),
        "head_sha",
        null.cast(pl.String).alias("head_commit_message"),
        pl.col("listed_workflow_id").alias("workflow_id"),
        pl.col("listed_path").alias("run_workflow_path"),
        "workflow_name",
        "run_created_at",
        null.cast(pl.Int64).alias("run_started_at"),
        "run_src",
        "run_file",
    )
    return rows.cast(pl.Schema(RUN_SCHEMA)), placed


def _latest_runs(runs: pl.DataFrame, problems: Problems) -> pl.DataFrame:
    """One record per run id: the highest attempt (a record without attempt counts as 0), the
    last one read on ties."""
    ordered = runs.with_row_index("_n").sort(
        pl.col("run_attempt").fill_null(0), "_n", descending=[False, False]
    )
    latest = ordered.unique("run_id", keep="last", maintain_order=True).drop("_n")
    repeats = runs.height - runs.select("run_id", "run_attempt").n_unique()
    if repeats:
        problems.add("duplicate_run_record", n=repeats)
    return latest


def _resolve_workflows(
    runs: pl.DataFrame,
    finder: WorkflowFinder,
    problems: Problems,
    progress: Progress | None,
) -> tuple[pl.DataFrame, dict[str, str], dict[str, dict[str, str | None]]]:
    """Per distinct (head_sha, path, name, workflow id): the history, commit, file, its sha256
    and its resolution unit (the file with the reusable workflows it calls at that commit);
    {sha256: YAML text}; and {unit: {callee path: text or None}}."""
    keys = runs.select("head_sha", "run_workflow_path", "workflow_name", "workflow_id").unique(
        maintain_order=True
    )
    id_paths = most_common(
        (int(i), str(p))
        for i, p in runs.select("workflow_id", "run_workflow_path").drop_nulls().iter_rows()
    )
    id_names = most_common(
        (int(i), str(n))
        for i, n in runs.select("workflow_id", "workflow_name").drop_nulls().iter_rows()
    )
    texts: dict[str, str] = {}
    units: dict[str, dict[str, str | None]] = {}
    rows = []
    for k, (sha, path, name, wid) in enumerate(keys.iter_rows()):
        found = finder.find(sha, path, name, wid, id_paths, id_names)
        label = finder.repos[found.history][0] if found.history is not None else None
        digest = unit = None
        if found.blob is not None and found.history is not None:
            text = finder.text(found.history, found.blob)
            if text is None:
                problems.add("workflow_file_not_text", f"{label}:{sha}:{found.path}")
            else:
                digest = yaml_sha256(text)
                texts.setdefault(digest, text)
                called = _callees(finder, found.history, sha, text) if sha else {}
                unit = resolve_unit(digest, called)
                if called:
                    units.setdefault(unit, called)
        rows.append(
            (
                sha,
                path,
                name,
                wid,
                label,
                sha if found.history is not None else None,
                found.path,
                found.how,
                digest,
                unit,
            )
        )
        if progress is not None and (k + 1) % 200 == 0:
            progress("finding workflow files at head_sha", k + 1, keys.height)
    return pl.DataFrame(rows, schema=_RESOLVED_SCHEMA, orient="row"), texts, units


def _yaml_problems(resolved: pl.DataFrame, runs: pl.DataFrame, problems: Problems) -> None:
    """Count runs (not distinct keys) whose YAML could not be found, naming a run file each."""
    keys = ["head_sha", "run_workflow_path", "workflow_name", "workflow_id"]
    joined = runs.join(resolved, on=keys, how="left", nulls_equal=True)
    labels = {
        "commit_not_in_history": "head_sha_not_in_git_history",
        "path_missing_at_commit": "workflow_file_missing_at_head_sha",
        "ambiguous_name": "workflow_file_ambiguous",
        "not_found": "workflow_file_not_found",
    }
    for how, kind in labels.items():
        bad = joined.filter(pl.col("workflow_path_how") == how)
        if bad.height:
            r = bad.row(0, named=True)
            problems.add(
                kind,
                f"{r['run_source']}:{r['run_file']}: run {r['run_id']} head_sha {r['head_sha']}"
                + (f" workflow {r['workflow_name']!r}" if r["workflow_name"] else ""),
                n=bad.height,
            )


def _count(frame: pl.DataFrame, column: str) -> dict[str, int]:
    return {
        str(k): int(n)
        for k, n in frame.group_by(column).len().sort(column, nulls_last=True).iter_rows()
    }


def source_infos(tables: ApiTables, paths: Sequence[ApiSource]) -> list[dict[str, Any]]:
    """The reader's per-source info plus each git source's licence."""
    by_label = {}
    for s in paths:
        if looks_like_git_dir(Path(s.path)):
            try:
                with GitRepo(Path(s.path)) as repo:
                    by_label[str(Path(s.path).resolve())] = detect_licence(repo)
            except GitError:
                pass
    out = []
    for info, s in zip(tables.sources, paths, strict=False):
        out.append({**info, "licence": s.licence or by_label.get(str(Path(s.path).resolve()))})
    return out


def api_candidates(
    tables: ApiTables,
    finder: WorkflowFinder,
    problems: Problems,
    *,
    workers: int,
    progress: Progress | None,
) -> tuple[pl.DataFrame, pl.DataFrame, Texts, dict[str, Any]]:
    """Candidate rows (contract columns + status, job_key_how), their provenance, the texts,
    and counts for the card."""
    labels = pl.DataFrame(
        {
            "src": list(range(len(tables.sources))),
            "source": [s["label"] for s in tables.sources],
            "source_commit": [s["commit"] for s in tables.sources],
        },
        schema={"src": pl.Int32, "source": pl.String, "source_commit": pl.String},
    )
    runs = _latest_runs(tables.runs, problems).join(
        labels.rename({"src": "run_src", "source": "run_source"}).drop("source_commit"),
        on="run_src",
        how="left",
    )
    made, placed = _runs_from_jobs(tables, runs)
    if made.height:
        runs = pl.concat(
            [
                runs,
                made.join(
                    labels.rename({"src": "run_src", "source": "run_source"}).drop("source_commit"),
                    on="run_src",
                    how="left",
                ).select(runs.columns),
            ]
        )
    jobs = tables.jobs.join(labels, on="src", how="left")
    jobs = jobs.join(runs, on="run_id", how="left")
    orphans = jobs.filter(pl.col("run_file").is_null())
    if orphans.height:
        r = orphans.row(0, named=True)
        problems.add(
            "job_without_run",
            f"{r['source']}:{r['job_file']}: job {r['job_id']} of run {r['run_id']}: no run "
            f"record (files with such jobs: {orphans['job_file'].n_unique()})",
            n=orphans.height,
        )
        jobs = jobs.filter(pl.col("run_file").is_not_null())
    no_repo = jobs.filter(pl.col("repo_id").is_null())
    if no_repo.height:
        r = no_repo.row(0, named=True)
        problems.add(
            "job_without_repository_id",
            f"{r['run_source']}:{r['run_file']}: run {r['run_id']} has no repository.id",
            n=no_repo.height,
        )
        jobs = jobs.filter(pl.col("repo_id").is_not_null())
    used_runs = runs.join(jobs.select("run_id").unique(), on="run_id", how="semi")
    # One name per repository id, as the contract's `repo` is the name at collection time: the
    # name of its latest run record (apache/hadoop-ozone became apache/ozone).
    latest_name = (
        used_runs.filter(pl.col("repo").is_not_null())
        .sort("run_created_at", "run_id", nulls_last=False)
        .group_by("repo_id")
        .agg(pl.col("repo").last().alias("repo_latest"))
    )
    jobs = jobs.join(latest_name, on="repo_id", how="left")
    renamed = jobs.filter(pl.col("repo") != pl.col("repo_latest"))
    renames = {
        f"{old} -> {new}": int(n)
        for old, new, n in renamed.group_by("repo", "repo_latest").len().sort("repo").iter_rows()
    }

    resolved, yaml_by_sha, callees = _resolve_workflows(used_runs, finder, problems, progress)
    _yaml_problems(resolved, used_runs, problems)
    keys = ["head_sha", "run_workflow_path", "workflow_name", "workflow_id"]
    jobs = jobs.join(resolved, on=keys, how="left", nulls_equal=True)

    def bad_yaml(sha: str, message: str) -> None:
        problems.add("workflow_yaml_does_not_parse", f"workflow {sha[:12]}: {message}")

    keyed = resolve_job_keys(
        jobs.filter(pl.col("workflow_sha256").is_not_null()).select(
            "resolve_unit", "workflow_sha256", "job_name"
        ),
        yaml_by_sha,
        callees=callees,
        on_bad_yaml=bad_yaml,
        workers=workers,
        progress=progress,
    )
    texts = Texts(
        workflows=pl.DataFrame(
            {"workflow_sha256": list(yaml_by_sha), "workflow_yaml": list(yaml_by_sha.values())},
            schema={"workflow_sha256": pl.String, "workflow_yaml": pl.String},
        ).sort("workflow_sha256"),
        jobs=keyed.filter(pl.col("job_yaml").is_not_null()).select(
            "resolve_unit", "job_name", "job_yaml"
        ),
    )
    jobs = jobs.join(
        keyed.drop("job_yaml", "workflow_sha256"), on=["resolve_unit", "job_name"], how="left"
    )

    attempt = pl.coalesce("job_run_attempt", "run_attempt")
    # run_started_at belongs to the run record's attempt; the run's created_at to its first.
    same_attempt = (
        pl.col("job_run_attempt").is_null()
        | pl.col("run_attempt").is_null()
        | (pl.col("job_run_attempt") == pl.col("run_attempt"))
    )
    first_attempt = pl.col("job_run_attempt").is_null() | (pl.col("job_run_attempt") == 1)
    created = pl.coalesce(
        "job_created_at",
        pl.when(same_attempt).then(pl.col("run_started_at")),
        pl.when(first_attempt).then(pl.col("run_created_at")),
    )
    has_api_labels = pl.col("api_labels").list.len() > 0
    jobs = jobs.with_columns(
        pl.when(pl.col("job_run_attempt").is_not_null())
        .then(pl.lit("job"))
        .when(pl.col("run_attempt").is_not_null())
        .then(pl.lit("run"))
        .otherwise(pl.lit("absent_assumed_1"))
        .alias("run_attempt_from"),
        pl.when(pl.col("job_created_at").is_not_null())
        .then(pl.lit("job created_at"))
        .when(same_attempt & pl.col("run_started_at").is_not_null())
        .then(pl.lit("run run_started_at"))
        .when(created.is_not_null())
        .then(pl.lit("run created_at"))
        .otherwise(pl.lit("absent"))
        .alias("created_at_from"),
        pl.when(has_api_labels.fill_null(False))
        .then(pl.lit("job record"))
        .when(pl.col("yaml_labels").list.len() > 0)
        .then(pl.lit("workflow YAML runs-on"))
        .otherwise(pl.lit("absent"))
        .alias("labels_from"),
    )
    null = pl.lit(None)
    rows = jobs.select(
        pl.col("job_id").cast(pl.String).alias("id"),
        pl.coalesce("repo_latest", "repo", "job_repo").alias("repo"),
        "repo_id",
        null.cast(pl.String).alias("repo_language"),
        null.cast(pl.Int64).alias("repo_stars"),
        null.cast(pl.Int64).alias("repo_size_kb"),
        null.cast(_STRS).alias("repo_topics"),
        "repo_fork",
        null.cast(pl.Int64).cast(pl.Datetime("us", "UTC")).alias("repo_created_at"),
        "run_id",
        attempt.fill_null(1).cast(pl.Int32).alias("run_attempt"),
        "run_number",
        "event",
        "head_branch",
        null.cast(pl.Boolean).alias("is_default_branch"),
        pl.coalesce("head_sha", "job_head_sha").alias("head_sha"),
        "head_commit_message",
        "workflow_id",
        pl.coalesce("workflow_path", "run_workflow_path").fill_null("").alias("workflow_path"),
        pl.coalesce("workflow_name", "job_workflow_name").alias("workflow_name"),
        null.cast(pl.String).alias("workflow_yaml"),
        "workflow_sha256",
        "job_id",
        "job_name",
        "job_key",
        null.cast(pl.String).alias("job_yaml"),
        "matrix",
        pl.when(has_api_labels.fill_null(False))
        .then(pl.col("api_labels"))
        .otherwise(pl.col("yaml_labels"))
        .alias("runner_labels"),
        null.cast(pl.String).alias("runner_image"),
        "needs",
        "step_names",
        *to_datetime("started_at", "completed_at"),
        created.cast(pl.Int64).cast(pl.Datetime("us", "UTC")).alias("created_at"),
        pl.col("conclusion").fill_null(""),
        ((pl.col("completed_at") - pl.col("started_at")) / 1e6).alias("duration_s"),
        ((pl.col("started_at") - created) / 1e6).alias("queue_s"),
        null.cast(pl.Int64).alias("log_bytes"),
        "status",
        pl.when(pl.col("workflow_sha256").is_null())
        .then(pl.lit("no_yaml"))
        .otherwise(pl.col("job_key_how"))
        .alias("job_key_how"),
        "resolve_unit",
    )
    provenance = jobs.select(
        pl.col("job_id").cast(pl.String).alias("id"),
        "source",
        "source_commit",
        pl.col("job_file").alias("job_file"),
        "run_source",
        "run_file",
        "yaml_history",
        "yaml_commit",
        "workflow_path_how",
        "created_at_from",
        "run_attempt_from",
        "labels_from",
        "reusable",
    )
    counts = {
        "workflow_path_how (runs)": _count(
            used_runs.join(resolved, on=keys, how="left", nulls_equal=True),
            "workflow_path_how",
        ),
        "created_at_from (jobs)": _count(jobs, "created_at_from"),
        "run_attempt_from (jobs)": _count(jobs, "run_attempt_from"),
        "runner_labels_from (jobs)": _count(jobs, "labels_from"),
        "repository renamed (jobs, recorded under the old name)": renames,
        "runs_read": runs.height,
        "distinct_workflow_files": len(yaml_by_sha),
        "workflow files read with the reusable workflows they call": len(callees),
        **placed,
    }
    return with_runner_os(rows), provenance, texts, counts


def cross_repo_ids(
    candidates: pl.DataFrame, cross_repo: Mapping[str, str] | None
) -> dict[str, tuple[int, str]]:
    """{name: (repo_id, split)} for the repositories whose cross_repo split is fixed."""
    if not cross_repo:
        return {}
    ids = {
        str(name).lower(): int(rid)
        for name, rid in candidates.select("repo", "repo_id").unique().iter_rows()
    }
    out = {}
    for name, split in cross_repo.items():
        if split not in ("train", "validation", "test"):
            raise BuildError(
                f"--cross-repo {name}={split}: the split must be train, validation or test"
            )
        rid = ids.get(name.lower())
        if rid is None:
            raise BuildError(
                f"--cross-repo names {name!r}, which holds no job record; repositories read: "
                + ", ".join(sorted(ids))
            )
        out[name] = (rid, split)
    return out
