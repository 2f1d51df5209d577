"""`--source api-json`: files, folders or git repositories of GitHub jobs/runs API JSON, with
the workflow YAML read from the --yaml-git histories at each run's head_sha. The kind whole:
its options (PATHS, --yaml-git, --cross-repo, --workers), its config, its Source
(`ApiJsonSource`: records read by gharuntime.sources.api_json, placed and resolved by
gharuntime.builder.api_rows), the per-row provenance file it adds to the dataset and what the
card says of it.

What the records do not say stays null (repository language, stars, size, topics, creation
time, default branch, runner image, log size), and the card counts the nulls of every column."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import click
import polars as pl

from gharuntime.builder.api_rows import (
    PLACED_WITHOUT_RUN,
    api_candidates,
    cross_repo_ids,
    source_infos,
)
from gharuntime.builder.build import BuildError
from gharuntime.builder.card import table
from gharuntime.builder.workflows_at import WorkflowFinder, detect_licence, open_histories
from gharuntime.contract import COLUMNS, SPLITS
from gharuntime.dataset import sha256_file
from gharuntime.parquet import write_parquet
from gharuntime.progress import Progress
from gharuntime.source_kinds.base import (
    PATHS,
    WORKERS,
    SourceConfig,
    SourceOption,
    SourceOptionError,
)
from gharuntime.sources.api_json import ApiSource, read_api_json
from gharuntime.sources.base import AddFiles, Candidates, CardText, Source

__all__ = [
    "CROSS_REPO",
    "PROVENANCE_FILE",
    "YAML_GIT",
    "ApiJsonConfig",
    "ApiJsonSource",
    "api_json_card",
    "parse_cross_repo",
]

PROVENANCE_FILE = "provenance.parquet"

YAML_GIT = SourceOption(
    click.Option(
        ["--yaml-git"],
        multiple=True,
        type=click.Path(path_type=Path, exists=True, file_okay=False),
        help="api-json: a git repository (bare or not) of the project whose workflow YAML to "
        "read at each run's head_sha; repeat for several projects.",
    ),
    rank=30,
)
CROSS_REPO = SourceOption(
    click.Option(
        ["--cross-repo", "cross_repo"],
        multiple=True,
        metavar="OWNER/NAME=SPLIT",
        help="api-json: fix a repository's cross_repo split (train, validation or test), e.g. "
        "--cross-repo apache/ozone=train --cross-repo apache/ratis=test.",
    ),
    rank=40,
)


def parse_cross_repo(items: tuple[str, ...]) -> dict[str, str]:
    """OWNER/NAME=SPLIT items as {owner/name: split}."""
    fixed: dict[str, str] = {}
    for item in items:
        name, sep, split = item.rpartition("=")
        if not sep or not name or split not in SPLITS:
            raise SourceOptionError(
                f"{item[:200]!a}: write OWNER/NAME=SPLIT with SPLIT one of {', '.join(SPLITS)}",
                option="--cross-repo",
            )
        fixed[name] = split
    return fixed


@dataclass(frozen=True)
class ApiJsonConfig(SourceConfig):
    """API JSON paths, the YAML histories, fixed cross_repo splits and YAML workers."""

    kind: ClassVar[str] = "api-json"
    options: ClassVar[tuple[SourceOption, ...]] = (PATHS, YAML_GIT, CROSS_REPO, WORKERS)
    summary: ClassVar[str] = "files, folders or git repositories of jobs/runs API JSON"

    paths: tuple[Path, ...]
    yaml_git: tuple[Path, ...] = ()
    cross_repo: dict[str, str] = field(default_factory=dict)
    workers: int = 1

    @classmethod
    def from_options(cls, out: Path, values: Mapping[str, Any]) -> ApiJsonConfig:
        """PATHS (at least one), --yaml-git, --cross-repo OWNER/NAME=SPLIT."""
        paths = tuple(values[PATHS.name])
        if not paths:
            raise SourceOptionError(
                "give files, folders or git repositories of API JSON: --source api-json PATH...",
                option="PATHS",
            )
        return cls(
            paths,
            tuple(values[YAML_GIT.name]),
            parse_cross_repo(tuple(values[CROSS_REPO.name])),
            values[WORKERS.name],
        )

    def source(self) -> Source:
        return ApiJsonSource(
            list(self.paths),
            yaml_git=list(self.yaml_git),
            cross_repo=self.cross_repo,
            workers=self.workers,
        )

    def reads(self) -> list[Path]:
        return [*self.paths, *self.yaml_git]


@dataclass(frozen=True)
class ApiJsonSource:
    """Folders or git repositories of job/run API JSON, with the workflow YAML read from the
    `yaml_git` histories at each run's head_sha, as a build Source.

    `cross_repo` fixes the cross_repo split of named repositories ({"owner/name": "train"});
    the others keep the contract's hash rule. `description` adds a paragraph to the card."""

    paths: Sequence[Path | ApiSource]
    yaml_git: Sequence[Path] = ()
    cross_repo: Mapping[str, str] | None = None
    workers: int = 1
    description: str | None = None

    def read(self, progress: Progress | None = None) -> Candidates:
        """read_api_json's records, placed and resolved to candidate rows (BuildError when no
        job record is found or none can be placed, SourceError when a path cannot be read)."""
        sources = [p if isinstance(p, ApiSource) else ApiSource(Path(p)) for p in self.paths]
        # every --yaml-git is checked before the (long) read of the records
        for repo in open_histories(self.yaml_git):
            repo[1].close()
        tables = read_api_json(sources, progress=progress)
        problems = tables.problems
        if tables.jobs.height == 0:
            counts = "; ".join(
                f"{k} {v} (e.g. {(problems.examples.get(k) or ['-'])[0]})"
                for k, v in sorted(problems.counts.items())
            )
            raise BuildError(
                f"no job record found in {', '.join(str(s.path) for s in sources)} "
                f"({sum(s['files'] for s in tables.sources)} JSON files read"
                + (f"; problems: {counts}" if counts else "")
                + "); pass folders or git repositories of GitHub jobs API JSON"
            )
        histories = open_histories(self.yaml_git)
        finder = WorkflowFinder((label, repo) for label, repo, _ in histories)
        try:
            infos = source_infos(tables, sources)
            yaml_infos = [{**info, "licence": detect_licence(repo)} for _, repo, info in histories]
            candidates, row_provenance, texts, derived = api_candidates(
                tables, finder, problems, workers=self.workers, progress=progress
            )
        finally:
            finder.close()
        del tables
        if candidates.height == 0:
            raise BuildError(
                "no job record could be placed (in a source with run records, every job lacks "
                "its run; in a jobs-only source, its run_url names no repository; problems: "
                + ", ".join(f"{k} {v}" for k, v in sorted(problems.counts.items()))
                + ")"
            )
        fixed = cross_repo_ids(candidates, self.cross_repo)
        licences = {i.get("licence") for i in [*infos, *yaml_infos]}
        provenance = {
            "kind": "api-json",
            "synthetic": False,
            "sources": infos,
            "yaml_histories": yaml_infos,
            "licence": "apache-2.0" if licences == {"Apache-2.0"} else None,
            "description": self.description,
            "derived": derived,
            "provenance_columns": row_provenance.columns,
        }
        if fixed:
            provenance["cross_repo_fixed"] = {name: split for name, (_, split) in fixed.items()}
        frames = [candidates]
        del candidates  # only `frames` holds the rows: the build frees them stage by stage
        return Candidates(
            frame=frames.pop(),
            problems=problems,
            provenance=provenance,
            build={"records": int(sum(i["jobs"] + i["runs"] for i in infos))},
            texts=texts,
            cross_repo={rid: split for rid, split in fixed.values()} or None,
            card=api_json_card,
            add_files=_provenance_file(row_provenance),
        )


def _provenance_file(row_provenance: pl.DataFrame) -> AddFiles:
    """The provenance file, the null counts and the per-project figures: all computed on the
    rows actually kept, in the dataset's temporary folder before it is validated and renamed
    into place (the card shows them)."""

    def add(manifest: Mapping[str, Any], jobs: pl.DataFrame, folder: Path) -> None:
        kept = row_provenance.join(jobs.select("id"), on="id", how="semi").sort("id")
        path = folder / PROVENANCE_FILE
        write_parquet(kept, path)
        provenance: dict[str, Any] = manifest["source"]  # the manifest being written; filled in
        provenance["provenance"] = {
            "path": PROVENANCE_FILE,
            "rows": kept.height,
            "sha256": sha256_file(path),
            "columns": kept.columns,
        }
        provenance["null_counts"] = {
            c.name: int(jobs[c.name].null_count())
            for c in COLUMNS
            if c.name in jobs.columns and jobs[c.name].null_count()
        }
        projects = (
            jobs.group_by("repo_id")
            .agg(
                pl.col("repo").first(),
                pl.len().alias("rows"),
                pl.col("run_id").n_unique().alias("runs"),
                pl.col("created_at").min().alias("first"),
                pl.col("created_at").max().alias("last"),
                (pl.col("job_key").is_not_null().sum()).alias("job_key_resolved"),
            )
            .sort("repo", "repo_id")
        )
        calls = (
            kept.filter(pl.col("reusable").is_not_null())
            .group_by("run_source", "reusable")
            .len()
            .sort("run_source", "reusable")
        )
        reusable: dict[str, dict[str, int]] = {}
        for src, status, n in calls.iter_rows():
            reusable.setdefault(str(src), {})[str(status)] = int(n)
        provenance["reusable_calls"] = reusable
        provenance["projects"] = [
            {
                "repo": r["repo"],
                "rows": int(r["rows"]),
                "runs": int(r["runs"]),
                "first": f"{r['first']:%Y-%m-%d}",
                "last": f"{r['last']:%Y-%m-%d}",
                "job_key_resolved": int(r["job_key_resolved"]),
            }
            for r in projects.iter_rows(named=True)
        ]

    return add


def api_json_card(provenance: Mapping[str, Any]) -> CardText:
    """What the card says of an api-json build: where the records came from, their licences,
    each project's date range, which fields the sources lack (every null counted) and how the
    workflow files were found."""
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
        + table(
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
            table(
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
            + table(
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
            + table(
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
            + table(("column", "null rows"), [(f"`{k}`", f"{v:,}") for k, v in nulls.items()])
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
    return CardText("\n\n".join(parts))
