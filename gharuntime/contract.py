"""The GHARuntime data contract: the one place that says what a job row, a split, a track, a
dataset folder and a raw store are. Every stage (simulate, crawl, build, eval, baselines,
leaderboard) imports it instead of restating it, so they cannot drift apart.

Bump SCHEMA_VERSION on any change a reader could notice (a column added, renamed, retyped, a
role or a split rule changed) and say what changed in CHANGES below.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import Enum
from typing import Final

import polars as pl

__all__ = [
    "CHANGES",
    "COLUMNS",
    "COLUMN_BY_NAME",
    "CONFIGS",
    "DATASET_LAYOUT",
    "HISTORY_COLUMN",
    "HISTORY_MAX",
    "PRIMARY_TARGET",
    "RAW_STORE_FORMAT",
    "SCHEMA_VERSION",
    "SIMULATED_HEADER",
    "SPLITS",
    "SPLIT_FRACTIONS",
    "TARGETS",
    "TEMPORAL_MIN_RUNS",
    "TRACKS",
    "Column",
    "DatasetLayout",
    "RawKind",
    "RawStoreLayout",
    "Role",
    "Track",
    "cross_repo_bucket",
    "input_columns",
    "job_table_schema",
    "split_file_name",
]

SCHEMA_VERSION: Final = "1.2.0"
"""Version of the job table, the splits and the dataset folder layout."""

CHANGES: Final = {
    "1.0.0": "First release: job table, temporal and cross_repo configs, config/history/multi tracks.",
    "1.1.0": "cross_repo: a build may fix the split of named repositories (manifest "
    "`split_rules.cross_repo`, {repo_id: split}; e.g. train on one project, test on another), so "
    "a split may be empty; the hash rule places every other repository. Optional "
    "`provenance.parquet` beside data/ (row id -> where the record came from). Readers of 1.0.0 "
    "folders are unaffected.",
    "1.2.0": "temporal: each repository's own runs are ordered by creation time and split 80/10/10 "
    "within the repository (at least one run each in validation and test; a repository with "
    "fewer than TEMPORAL_MIN_RUNS runs goes to train whole), so every repository with enough runs is in the test split; before, all runs of all "
    "repositories were ordered together and a repository whose history ended early sat in train "
    "only. The manifest's `composition` lists rows, runs and time range per repository per split "
    "and the share of test rows whose job group (repo_id, workflow_path, job_name) is in train. "
    "Reusable workflows of the same repository are followed: a caller job becomes its callee's "
    "jobs (job_key `caller/callee`). Every dataset folder carries `croissant.json` (Croissant "
    "1.1 metadata, named by the manifest's `croissant`); folders without it stay valid. Readers "
    "of 1.1.0 folders are unaffected.",
}


class Role(str, Enum):
    """What a column may be used for."""

    INPUT = "input"  # known before the job runs; a method may read it (subject to its track)
    TARGET = "target"  # what a method predicts; never an input
    META = "meta"  # identity, provenance or outcome-leaking fields; never an input


@dataclass(frozen=True)
class Column:
    """One column of the job table."""

    name: str
    dtype: pl.DataType
    role: Role
    meaning: str
    nullable: bool = True
    history_only: bool = False  # an input only on tracks that allow history


_TS = pl.Datetime("us", "UTC")
_STRS = pl.List(pl.String)

COLUMNS: Final[tuple[Column, ...]] = (
    # identity
    Column(
        "id",
        pl.String(),
        Role.META,
        "Row id: GitHub's job id as text, or a stable hash where the source has none.",
        nullable=False,
    ),
    # repository
    Column(
        "repo",
        pl.String(),
        Role.INPUT,
        "Repository full name owner/name at crawl time.",
        nullable=False,
    ),
    Column(
        "repo_id",
        pl.Int64(),
        Role.INPUT,
        "GitHub's numeric repository id (stable across renames).",
        nullable=False,
    ),
    Column(
        "repo_language",
        pl.String(),
        Role.INPUT,
        "Primary language GitHub detected for the repository.",
    ),
    Column("repo_stars", pl.Int64(), Role.INPUT, "Stargazer count at crawl time."),
    Column("repo_size_kb", pl.Int64(), Role.INPUT, "Repository size in KB as GitHub reports it."),
    Column("repo_topics", _STRS, Role.INPUT, "Repository topics."),
    Column("repo_fork", pl.Boolean(), Role.INPUT, "Whether the repository is a fork."),
    Column("repo_created_at", _TS, Role.INPUT, "When the repository was created (UTC)."),
    # run
    Column(
        "run_id",
        pl.Int64(),
        Role.META,
        "GitHub's workflow run id; all attempts share it.",
        nullable=False,
    ),
    Column(
        "run_attempt",
        pl.Int32(),
        Role.INPUT,
        "Attempt number of the run, 1 for the first.",
        nullable=False,
    ),
    Column("run_number", pl.Int64(), Role.INPUT, "Per-workflow run counter."),
    Column("event", pl.String(), Role.INPUT, "Trigger event: push, pull_request, schedule, ..."),
    Column("head_branch", pl.String(), Role.INPUT, "Branch the run ran on."),
    Column(
        "is_default_branch",
        pl.Boolean(),
        Role.INPUT,
        "Whether head_branch is the repository's default branch.",
    ),
    Column("head_sha", pl.String(), Role.INPUT, "Commit the run ran on."),
    Column(
        "head_commit_message", pl.String(), Role.INPUT, "First line of the head commit's message."
    ),
    # workflow
    Column("workflow_id", pl.Int64(), Role.META, "GitHub's workflow id."),
    Column(
        "workflow_path",
        pl.String(),
        Role.INPUT,
        "Workflow file path, without any @ref suffix.",
        nullable=False,
    ),
    Column("workflow_name", pl.String(), Role.INPUT, "Workflow name as GitHub shows it."),
    Column(
        "workflow_yaml",
        pl.String(),
        Role.INPUT,
        "Full workflow YAML at head_sha, or null when not collected.",
    ),
    Column(
        "workflow_sha256",
        pl.String(),
        Role.INPUT,
        "sha256 of workflow_yaml's UTF-8 bytes, or null.",
    ),
    # job
    Column("job_id", pl.Int64(), Role.META, "GitHub's job id, or null where the source has none."),
    Column(
        "job_name",
        pl.String(),
        Role.INPUT,
        "Job name as GitHub shows it, e.g. 'test (ubuntu-latest, 3.11)'.",
        nullable=False,
    ),
    Column(
        "job_key",
        pl.String(),
        Role.INPUT,
        "The job's key in the workflow YAML, or null when unresolved.",
    ),
    Column(
        "job_yaml", pl.String(), Role.INPUT, "The job's own YAML block, or null when unresolved."
    ),
    Column(
        "matrix",
        pl.String(),
        Role.INPUT,
        "Resolved matrix values as a JSON object, or null without a matrix.",
    ),
    Column("runner_labels", _STRS, Role.INPUT, "runs-on labels of the job."),
    Column(
        "runner_os",
        pl.String(),
        Role.INPUT,
        "Linux, Windows or macOS, from labels (or the log), null if unknown.",
    ),
    Column(
        "runner_image",
        pl.String(),
        Role.META,
        "Runner image and version read from the log, when known.",
    ),
    Column("needs", _STRS, Role.INPUT, "Job keys this job waits for."),
    Column("step_names", _STRS, Role.INPUT, "Names of the job's steps as GitHub lists them."),
    # timestamps
    Column(
        "created_at",
        _TS,
        Role.INPUT,
        "When the job was queued (UTC); known before it runs.",
        nullable=False,
    ),
    Column(
        "started_at",
        _TS,
        Role.META,
        "When a runner picked the job up (UTC); leaks the outcome.",
        nullable=False,
    ),
    Column(
        "completed_at",
        _TS,
        Role.META,
        "When the job finished (UTC); leaks the outcome.",
        nullable=False,
    ),
    Column(
        "conclusion",
        pl.String(),
        Role.META,
        "success, failure, cancelled, timed_out, ...; leaks the outcome.",
        nullable=False,
    ),
    # history
    Column(
        "history_duration_s",
        pl.List(pl.Float64),
        Role.INPUT,
        "Durations (s) of up to 5 earlier rows of this dataset (so only jobs that passed every "
        "filter, by default successful ones) of the same repo + workflow path + job name, "
        "completed strictly before this job was created, most recent first.",
        nullable=False,
        history_only=True,
    ),
    # targets
    Column(
        "duration_s",
        pl.Float64(),
        Role.TARGET,
        "completed_at - started_at in seconds; the primary target.",
        nullable=False,
    ),
    Column(
        "queue_s", pl.Float64(), Role.TARGET, "started_at - created_at in seconds.", nullable=False
    ),
    Column(
        "log_bytes",
        pl.Int64(),
        Role.TARGET,
        "Size of the job's log in bytes; null when logs were not collected.",
    ),
)

COLUMN_BY_NAME: Final = {c.name: c for c in COLUMNS}
HISTORY_COLUMN: Final = "history_duration_s"
HISTORY_MAX: Final = 5
PRIMARY_TARGET: Final = "duration_s"
TARGETS: Final = tuple(c.name for c in COLUMNS if c.role is Role.TARGET)


def job_table_schema() -> pl.Schema:
    """The polars schema of the job table, in contract column order."""
    return pl.Schema({c.name: c.dtype for c in COLUMNS})


@dataclass(frozen=True)
class Track:
    """A comparison track: which inputs a method may read and which targets it predicts."""

    name: str
    uses_history: bool
    targets: tuple[str, ...]
    meaning: str


TRACKS: Final = {
    t.name: t
    for t in (
        Track("config", False, ("duration_s",), "Configuration inputs only; predict duration."),
        Track(
            "history",
            True,
            ("duration_s",),
            "Configuration inputs plus history_duration_s; predict duration.",
        ),
        Track(
            "multi",
            False,
            ("duration_s", "queue_s", "log_bytes"),
            "Configuration inputs only; predict all three targets.",
        ),
    )
}


def input_columns(track: str) -> tuple[str, ...]:
    """Columns a method on `track` may read."""
    t = TRACKS[track]
    return tuple(
        c.name for c in COLUMNS if c.role is Role.INPUT and (t.uses_history or not c.history_only)
    )


SPLITS: Final = ("train", "validation", "test")
SPLIT_FRACTIONS: Final = {"train": 0.8, "validation": 0.1, "test": 0.1}

TEMPORAL_MIN_RUNS: Final = 3
"""A repository with fewer runs than this cannot fill the three temporal splits: it goes to
train whole."""

CONFIGS: Final = {
    "temporal": "Split each repository's runs by the run's creation time: of each repository's "
    "n runs, the latest 10% (at least one) test, the 10% before them (at least one) validate, "
    "the earlier ones train, so every repository is in every split (one with fewer than "
    f"{TEMPORAL_MIN_RUNS} runs trains whole). All attempts and jobs of a run land in one split.",
    "cross_repo": "Split by repository: each repository falls in exactly one split, chosen by a "
    "stable hash of its id (80/10/10), so test repositories are never seen in training; a build "
    "may instead fix named repositories' split (manifest `split_rules`).",
}


def cross_repo_bucket(repo_id: int) -> str:
    """The cross_repo split of a repository: stable across rebuilds, machines and Python versions."""
    digest = hashlib.sha256(f"gharuntime:cross_repo:{repo_id}".encode()).digest()
    x = int.from_bytes(digest[:8], "big") / 2**64
    if x < SPLIT_FRACTIONS["train"]:
        return "train"
    if x < SPLIT_FRACTIONS["train"] + SPLIT_FRACTIONS["validation"]:
        return "validation"
    return "test"


def split_file_name(split: str, index: int, count: int) -> str:
    """Hugging Face style shard name: train-00000-of-00002.parquet."""
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


@dataclass(frozen=True)
class DatasetLayout:
    """Relative paths inside a dataset folder."""

    card: str = "README.md"  # Hugging Face dataset card with YAML front matter
    manifest: str = "manifest.json"  # schema version, source, build params, file hashes, counts
    data: str = "data"  # data/<config>/<split>-NNNNN-of-NNNNN.parquet
    figures: str = "figures"  # plots the card embeds
    provenance: str = "provenance.parquet"  # optional: row id -> source, file, commit (1.1.0)
    croissant: str = "croissant.json"  # Croissant 1.1 metadata; manifest `croissant` names it


DATASET_LAYOUT: Final = DatasetLayout()


class RawKind(str, Enum):
    """Kinds of record in a raw store. Each record's `body` is the API object as received."""

    REPOSITORY = "repository"  # GET /repos/{owner}/{repo}
    WORKFLOW = "workflow"  # an item of GET /repos/{o}/{r}/actions/workflows
    RUN = "run"  # a workflow run attempt object (list runs, get run, or get run attempt)
    JOB = "job"  # an item of GET .../runs/{id}/attempts/{n}/jobs
    WORKFLOW_FILE = "workflow_file"  # GraphQL Blob text (source "graphql") or GET .../contents/{path}?ref=SHA (base64)
    WORKFLOW_REF = "workflow_ref"  # {repo_id, path, head_sha, blob_sha}: which file a run used
    LOG = "log"  # {job_id, status: ok|expired|missing|too_large, bytes, text (redacted) or null}
    ERROR = "error"  # {what, where, status, message}: something the writer could not fetch


@dataclass(frozen=True)
class RawStoreLayout:
    """The raw store a crawler (or `simulate dump`) writes and the build reads.

    A raw store is a folder:
    - `shards/*.jsonl.gz`: append-only gzip JSON Lines; one record per line, an envelope
      `{"kind": RawKind, "repo_id": int|null, "key": str, "body": <object as received>}`;
      `key` identifies the record within its kind (e.g. the job id) so readers can drop repeats.
    - `state.sqlite`: table `shards(name PRIMARY KEY, records, sha256)` lists every complete
      shard; a shard file that is not listed there is unfinished and readers must ignore it.
      Table `meta(key PRIMARY KEY, value)` holds `format`, `source` and `api_url` (never a token),
      and `synthetic` = `1` when the records come from gharuntime's simulated GitHub (a crawl
      that saw SIMULATED_HEADER, or `simulate dump`).
      Writers may keep their own progress tables beside them.
    Shards are written under a temporary name, renamed, then listed in one transaction, so a kill
    at any moment leaves either a listed, complete shard or an ignorable leftover.
    """

    shards: str = "shards"
    state: str = "state.sqlite"
    shard_suffix: str = ".jsonl.gz"


RAW_STORE_FORMAT: Final = "gharuntime-raw/1"

SIMULATED_HEADER: Final = "X-GHARuntime-Simulated"
"""Every response of gharuntime's simulated GitHub carries this header (value `1`). The crawler
records it in the raw store's meta (`synthetic` = `1`), so whatever is built from that store is
labelled synthetic: known, not guessed from a URL."""
