"""The ground truth eval scores against: one split of one config of a dataset, its repositories
(the bootstrap's clusters), the breakdown labels, and what training saw (which repositories,
which job groups, and how recently each group last ran: gharuntime.recency)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import polars as pl

from gharuntime.contract import DATASET_LAYOUT, PRIMARY_TARGET, TARGETS
from gharuntime.dataset import (
    DatasetError,
    LocalDataset,
    dataset_revision,
    open_dataset,
    read_manifest,
    sha256_file,
    split_paths,
)
from gharuntime.dataset_ref import HUB_ID
from gharuntime.parquet import read_parquet
from gharuntime.recency import GroupClock
from gharuntime.splits import GROUP
from gharuntime.targets import TargetsHeld, count_values, targets_held

__all__ = ["HUB_ID", "Truth", "load_truth", "resolve_dataset"]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_TRUTH_COLUMNS: Final = [
    "id",
    "repo_id",
    "run_id",
    "runner_os",
    *GROUP[1:],
    "created_at",
    *TARGETS,
]

MIN_REPOSITORY_CLUSTERS: Final = 5
"""A split of fewer repositories is resampled by workflow run instead: a bootstrap over one to
four repositories gives intervals of (almost) zero width, which would claim certainty that a
test on one or two projects does not have. Runs keep a run's jobs together, as repositories do."""


def resolve_dataset(spec: str) -> LocalDataset:
    """A local folder, or a Hub id ORG/NAME[@REVISION] downloaded and checked against its
    manifest (`gharuntime.dataset.open_dataset`, in eval's words for a bad --dataset); raises
    DatasetError saying what to do instead."""
    path = Path(spec).expanduser()
    if path.exists() and not path.is_dir():
        raise DatasetError(f"{spec}: not a folder; --dataset takes a dataset folder")
    if not path.exists() and not HUB_ID.match(spec):
        raise DatasetError(f"{spec}: no such folder; --dataset takes a dataset folder")
    return open_dataset(spec)


@dataclass(frozen=True)
class Truth:
    """One split's ground truth, row-aligned, with everything the breakdowns need."""

    dataset: LocalDataset
    config: str
    split: str
    manifest_sha256: str | None
    schema_version: str | None
    ids: pl.Series  # String, per row
    repo_id: IntArray  # per row
    repo_ids: IntArray  # sorted unique repositories
    cluster_ids: IntArray  # sorted unique bootstrap clusters (repositories, or runs: cluster_by)
    cluster: IntArray  # per row: index into cluster_ids
    runner_os: pl.Series  # String, per row; "unknown" where null
    targets: dict[str, FloatArray]  # NaN where the truth is null
    seen: BoolArray  # per row: the repository has rows in the config's train split
    train_median: dict[str, float]  # per target, NaN where training has none
    content_revision: str | None = None  # gharuntime.dataset.dataset_revision of the manifest
    source_kind: str | None = None  # the manifest's source.kind (simulated, raw, ghalogs, ...)
    synthetic: bool | None = None  # the manifest's source.synthetic; None when it does not say
    cluster_by: str = "repo_id"  # what the bootstrap resamples: repo_id, or run_id (few repos)
    group_seen: int | None = None  # rows whose job group (GROUP) the train split holds
    train_values: dict[str, int] = field(default_factory=dict)  # per target: train rows with one
    train_rows: int = 0
    recency: IntArray | None = None  # per row: gharuntime.recency.BUCKETS index (None: unknown)
    # per target: the validation split's values when a test split is scored (where ranges are
    # calibrated; gharuntime.eval.shift compares the two), {} otherwise
    reference: dict[str, FloatArray] = field(default_factory=dict)

    def held(self, track: str) -> TargetsHeld:
        """The track's targets this dataset holds on the config (gharuntime.targets: a value in
        its train split) and why the others are left out: what a submission must predict and
        eval scores."""
        if self.train_rows:
            return targets_held(track, self.train_values, config=self.config, rows=self.train_rows)
        # no train split (a method trained elsewhere is scored): what the scored split holds
        values = {t: int(np.count_nonzero(np.isfinite(y))) for t, y in self.targets.items()}
        return targets_held(track, values, config=self.config, rows=self.rows, split=self.split)

    @property
    def rows(self) -> int:
        return len(self.ids)

    @property
    def revision(self) -> str | None:
        """The dataset revision a submission must name: for a folder, `dataset_revision` of its
        manifest (data files, schema version, row-changing build parameters; never ports, paths
        or shard layout)."""
        return self.content_revision or self.manifest_sha256

    @classmethod
    def from_frames(
        cls,
        split_rows: pl.DataFrame,
        train_rows: pl.DataFrame,
        *,
        dataset: LocalDataset,
        config: str,
        split: str,
        manifest_sha256: str | None = None,
        schema_version: str | None = None,
        content_revision: str | None = None,
        source: dict[str, Any] | None = None,
        reference_rows: pl.DataFrame | None = None,
    ) -> Truth:
        """From the split's rows (id, repo_id, runner_os, targets) and the train split's rows
        (repo_id and targets); with the GROUP columns and created_at in both, what training
        saw of each row's job group too. `reference_rows`: the validation split's targets, when
        the split scored is test and the config has one."""
        repo_id = split_rows["repo_id"].to_numpy().astype(np.int64)
        repo_ids, cluster = np.unique(repo_id, return_inverse=True)  # one sort for both
        cluster_ids = repo_ids
        cluster_by = "repo_id"
        if repo_ids.shape[0] < MIN_REPOSITORY_CLUSTERS and "run_id" in split_rows.columns:
            cluster_by = "run_id"
            key = split_rows["run_id"].cast(pl.Int64).fill_null(-1).to_numpy().astype(np.int64)
            cluster_ids, cluster = np.unique(key, return_inverse=True)
        train_repos = train_rows["repo_id"].unique().to_numpy().astype(np.int64)
        targets = {
            t: split_rows[t].cast(pl.Float64).fill_null(float("nan")).to_numpy() for t in TARGETS
        }
        group_seen = None
        if all(c in split_rows.columns and c in train_rows.columns for c in GROUP):
            group_seen = (
                split_rows.select(GROUP)
                .join(
                    train_rows.select(GROUP).unique(), on=list(GROUP), how="semi", nulls_equal=True
                )
                .height
            )
        train_values = count_values(train_rows, TARGETS)
        recency = None
        if all(c in f.columns for f in (split_rows, train_rows) for c in (*GROUP, "created_at")):
            recency = GroupClock.from_frame(train_rows).buckets(split_rows)
        medians: dict[str, float] = {}
        for t in TARGETS:
            value: Any = train_rows[t].cast(pl.Float64).drop_nulls().median()
            medians[t] = float(value) if value is not None else float("nan")
        return cls(
            dataset=dataset,
            config=config,
            split=split,
            manifest_sha256=manifest_sha256,
            schema_version=schema_version,
            ids=split_rows["id"].cast(pl.String).rename("id"),
            repo_id=repo_id,
            repo_ids=repo_ids.astype(np.int64),
            cluster_ids=cluster_ids.astype(np.int64),
            cluster_by=cluster_by,
            cluster=cluster.astype(np.int64).reshape(-1),
            runner_os=split_rows["runner_os"].cast(pl.String).fill_null("unknown"),
            targets=targets,
            seen=np.isin(repo_id, train_repos),
            train_median=medians,
            content_revision=content_revision,
            source_kind=str(source["kind"]) if source and source.get("kind") else None,
            synthetic=_synthetic(source),
            group_seen=group_seen,
            train_values=train_values,
            train_rows=train_rows.height,
            recency=recency,
            reference={
                t: reference_rows[t].cast(pl.Float64).drop_nulls().to_numpy()
                for t in TARGETS
                if reference_rows is not None and t in reference_rows.columns
            },
        )

    def decile_edges(self) -> FloatArray:
        """Cut points of the primary target's deciles over this split (a copy; computed once:
        the breakdowns and the report both ask)."""
        return self._decile_edges.copy()

    @cached_property
    def _decile_edges(self) -> FloatArray:
        y = self.targets[PRIMARY_TARGET]
        y = y[np.isfinite(y)]
        if y.shape[0] == 0:
            return np.empty(0)
        return np.asarray(np.quantile(y, np.arange(1, 10) / 10.0), dtype=np.float64)


def _synthetic(source: dict[str, Any] | None) -> bool | None:
    """Whether the manifest's source says its data is synthetic (simulated and fixture data
    are, even when an older manifest lacks the flag)."""
    if not source:
        return None
    if isinstance(source.get("synthetic"), bool):
        return bool(source["synthetic"])
    kind = source.get("kind")
    return True if kind in ("simulated", "fixture") else None


def load_truth(dataset: LocalDataset, config: str, split: str) -> Truth:
    """The truth of one split of a local dataset folder, after checking that the split's files
    are the ones the manifest lists (so the manifest's hash names what was scored)."""
    if dataset.root is None:
        raise DatasetError(f"{dataset.id}: only local dataset folders can be read yet")
    root = dataset.root
    manifest = read_manifest(root)
    entries = {f["path"]: f for f in manifest.get("files", []) if isinstance(f, dict)}
    # the validation split is read when test is scored: where ranges were calibrated
    reads = (split, "train", *(("validation",) if split == "test" else ()))
    paths = {s: split_paths(root, config, s) for s in reads}
    if not paths[split]:
        raise DatasetError(f"{root}: the manifest lists no files for config {config} split {split}")
    for path in {p for s in reads for p in paths[s]}:
        rel = path.relative_to(root).as_posix()
        if not path.is_file():
            raise DatasetError(f"{path}: missing; run `gharuntime validate {root}`")
        if sha256_file(path) != entries.get(rel, {}).get("sha256"):
            raise DatasetError(
                f"{path}: does not match the sha256 in the manifest; the folder was changed "
                f"after it was built (run `gharuntime validate {root}`)"
            )
    try:
        split_rows = read_parquet(paths[split], columns=_TRUTH_COLUMNS)
        train_rows = (
            read_parquet(paths["train"], columns=[*GROUP, "created_at", *TARGETS])
            if paths["train"]
            else pl.DataFrame(
                schema={
                    "repo_id": pl.Int64,
                    "workflow_path": pl.String,
                    "job_name": pl.String,
                    "created_at": pl.Datetime("us", "UTC"),
                    **{t: pl.Float64 for t in TARGETS},
                }
            )
        )
        reference = paths.get("validation") if split == "test" else None
        reference_rows = read_parquet(reference, columns=list(TARGETS)) if reference else None
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise DatasetError(f"{root}: cannot read the {config}/{split} split: {exc}") from exc
    return Truth.from_frames(
        split_rows,
        train_rows,
        dataset=dataset,
        config=config,
        split=split,
        manifest_sha256=sha256_file(root / DATASET_LAYOUT.manifest),
        schema_version=str(manifest.get("schema_version")),
        content_revision=dataset_revision(manifest),
        source=manifest.get("source") if isinstance(manifest.get("source"), dict) else None,
        reference_rows=reference_rows,
    )
