"""Dataset folders: write them atomically, open them (a folder or a Hub id, the one resolver),
load their splits, and validate them against the contract (schema and roles, manifest hashes and
counts, id uniqueness, split disjointness)."""

from __future__ import annotations

import math
import os
import shutil
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from gharuntime.contract import (
    COLUMN_BY_NAME,
    COLUMNS,
    CONFIGS,
    DATASET_LAYOUT,
    SCHEMA_VERSION,
    SPLITS,
    job_table_schema,
    split_file_name,
)
from gharuntime.croissant import write_croissant
from gharuntime.dataset_ref import HUB_ID, LocalDataset, hub_opener
from gharuntime.errors import GharuntimeError
from gharuntime.folderfiles import folder_files, stays_inside, target_kind
from gharuntime.jsonout import strict_dumps
from gharuntime.parquet import read_parquet, write_parquet
from gharuntime.paths import contained, make_temp_dir, replace_folder
from gharuntime.progress import Progress
from gharuntime.readfile import InputFileError, read_json
from gharuntime.revision import REVISION_RULE, dataset_revision, sha256_file
from gharuntime.splits import assign_splits, composition
from gharuntime.validation import Problem, schema_version_problem, validate_folder
from gharuntime.version import __version__

__all__ = [
    "DatasetError",
    "LocalDataset",
    "Problem",
    "card_front_matter",
    "dataset_revision",
    "load",
    "manifest_files",
    "open_dataset",
    "read_manifest",
    "sha256_file",
    "split_paths",
    "validate",
    "write_dataset",
]

MAX_MANIFEST_BYTES = 64 * 2**20  # a manifest lists files; a million entries fit

DEFAULT_ROWS_PER_FILE = 250_000


class DatasetError(GharuntimeError):
    """A dataset folder that cannot be written or read as the contract says."""


def conform(jobs: pl.DataFrame) -> pl.DataFrame:
    """Columns in contract order and types; raises DatasetError naming what is missing or wrong."""
    missing = [c.name for c in COLUMNS if c.name not in jobs.columns]
    extra = [c for c in jobs.columns if c not in COLUMN_BY_NAME]
    if missing or extra:
        raise DatasetError(
            f"job table does not match the contract: missing {missing}, unexpected {extra}"
        )
    try:
        return jobs.select([pl.col(c.name).cast(c.dtype, strict=True) for c in COLUMNS])
    except pl.exceptions.PolarsError as exc:
        raise DatasetError(f"job table column of the wrong type: {exc}") from exc


def card_front_matter(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The Hugging Face card's YAML front matter: one `configs` entry per dataset config."""
    configs = []
    for i, config in enumerate(CONFIGS):
        files = manifest["files"]
        data_files = [
            {
                "split": split,
                "path": sorted(
                    f["path"] for f in files if f["config"] == config and f["split"] == split
                ),
            }
            for split in SPLITS
        ]
        entry: dict[str, Any] = {"config_name": config, "data_files": data_files}
        if i == 0:
            entry["default"] = True
        configs.append(entry)
    rows = manifest["rows"]
    size = next(
        (
            label
            for limit, label in (
                (1_000, "n<1K"),
                (10_000, "1K<n<10K"),
                (100_000, "10K<n<100K"),
                (1_000_000, "100K<n<1M"),
                (10_000_000, "1M<n<10M"),
            )
            if rows < limit
        ),
        "10M<n<100M",
    )
    return {
        "license": manifest.get("license", "other"),
        "pretty_name": manifest.get("pretty_name", "GHARuntime"),
        "task_categories": ["tabular-regression"],
        "size_categories": [size],
        "tags": ["github-actions", "ci", "runtime-prediction", "gharuntime"],
        "configs": configs,
    }


def _minimal_card(manifest: Mapping[str, Any]) -> str:
    front = yaml.safe_dump(card_front_matter(manifest), sort_keys=False)
    lines = [
        f"---\n{front}---\n",
        f"# {manifest.get('pretty_name', 'GHARuntime')}\n",
        f"Schema {manifest['schema_version']}, source `{manifest['source'].get('kind')}`.\n",
        f"Croissant metadata: [{DATASET_LAYOUT.croissant}]({DATASET_LAYOUT.croissant}).\n",
    ]
    return "\n".join(lines)


def _provenance(
    provenance: Mapping[str, Any] | None, source: Mapping[str, Any] | None
) -> Mapping[str, Any]:
    """`provenance`, or the deprecated `source=` it replaced (with a DeprecationWarning)."""
    if source is not None:
        if provenance is not None:
            raise DatasetError("write_dataset: give provenance= only (source= is its old name)")
        warnings.warn(
            "write_dataset(source=...) is deprecated; pass provenance=... (still stored as the "
            "manifest's `source` section)",
            DeprecationWarning,
            stacklevel=3,
        )
        return source
    if provenance is None:
        raise DatasetError("write_dataset needs provenance=: where the rows came from")
    return provenance


def write_dataset(
    jobs: pl.DataFrame,
    out: Path,
    *,
    provenance: Mapping[str, Any] | None = None,
    build: Mapping[str, Any] | None = None,
    filters: Mapping[str, int] | None = None,
    extra: Mapping[str, Any] | None = None,
    render_card: Callable[[Mapping[str, Any], pl.DataFrame, Path], str] | None = None,
    rows_per_file: int = DEFAULT_ROWS_PER_FILE,
    cross_repo: Mapping[int, str] | None = None,
    source: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write a dataset folder at `out` and return its manifest.

    `provenance` says where the rows came from (kind, synthetic, stores, ...); it is stored as
    the manifest's `source` section, whose name the stored format keeps (dataset revisions hash
    the manifest). `source=` is its deprecated former name.

    Everything is written into a temporary sibling folder and renamed over `out` only once it is
    complete and validates, so a failure leaves any earlier dataset at `out` untouched. The same
    rows give byte-identical files. `render_card(manifest, jobs, folder)` may write figures into
    folder/figures and returns the README text. `cross_repo` ({repo_id: split}) fixes those
    repositories' cross_repo split (recorded in the manifest as `split_rules`).
    """
    provenance = _provenance(provenance, source)
    jobs = conform(jobs).sort("created_at", "id")
    if jobs["id"].is_duplicated().any():
        dup = jobs.filter(pl.col("id").is_duplicated())["id"].head(5).to_list()
        raise DatasetError(f"duplicate ids in job table, e.g. {dup}")
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_temp_dir(out)
    try:
        files: list[dict[str, Any]] = []
        counts: dict[str, dict[str, int]] = {}
        assignments = assign_splits(jobs, cross_repo)
        for config, assignment in assignments.items():
            counts[config] = {}
            for split in SPLITS:
                part = jobs.filter(assignment == split)
                counts[config][split] = part.height
                n_files = max(1, math.ceil(part.height / rows_per_file))
                for i in range(n_files):
                    chunk = part.slice(i * rows_per_file, rows_per_file)
                    rel = f"{DATASET_LAYOUT.data}/{config}/{split_file_name(split, i, n_files)}"
                    path = tmp / rel
                    path.parent.mkdir(parents=True, exist_ok=True)
                    write_parquet(chunk, path)
                    files.append(
                        {
                            "path": rel,
                            "config": config,
                            "split": split,
                            "rows": chunk.height,
                            "sha256": sha256_file(path),
                            "bytes": path.stat().st_size,
                        }
                    )
        (tmp / DATASET_LAYOUT.figures).mkdir(exist_ok=True)
        manifest: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "revision": None,  # filled in below, from the files and the build parameters
            "revision_rule": REVISION_RULE,
            "gharuntime_version": __version__,
            **dict(extra or {}),
            "source": dict(provenance),
            "build": dict(build or {}),
            "rows": jobs.height,
            "repositories": jobs["repo_id"].n_unique(),
            "runs": jobs.select("repo_id", "run_id").n_unique(),
            "splits": counts,
            "composition": composition(jobs, assignments),
            "filters": dict(filters or {}),
            "files": files,
        }
        if cross_repo:
            manifest["split_rules"] = {
                "cross_repo": {str(k): v for k, v in sorted(cross_repo.items())}
            }
        manifest["croissant"] = DATASET_LAYOUT.croissant
        manifest["revision"] = dataset_revision(manifest)
        first: Any = jobs["created_at"].min()
        last: Any = jobs["created_at"].max()
        window = (
            (f"{first:%Y-%m-%dT%H:%M:%SZ}", f"{last:%Y-%m-%dT%H:%M:%SZ}") if jobs.height else None
        )
        card = render_card(manifest, jobs, tmp) if render_card else _minimal_card(manifest)
        (tmp / DATASET_LAYOUT.card).write_text(card, encoding="utf-8")
        # after the card: a renderer may add files (provenance.parquet) and their manifest entries
        write_croissant(tmp, manifest, time_window=window)
        (tmp / DATASET_LAYOUT.manifest).write_text(
            strict_dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8"
        )
        problems = validate(tmp)
        if problems:
            raise DatasetError(
                "the dataset just written does not validate:\n" + "\n".join(map(str, problems[:20]))
            )
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def _replace_dir(new: Path, out: Path) -> None:
    """Put `new` at `out` (paths.replace_folder), refusing to replace a folder that is not a
    dataset."""
    if out.exists() and not (out / DATASET_LAYOUT.manifest).is_file() and any(out.iterdir()):
        raise DatasetError(
            f"{out} exists and is not a dataset folder; refusing to replace it (choose another --out)"
        )
    replace_folder(new, out)


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest of a dataset folder."""
    path = root / DATASET_LAYOUT.manifest
    if not os.path.lexists(path):
        raise DatasetError(f"{root}: not a dataset folder (no {DATASET_LAYOUT.manifest})")
    try:
        data = read_json(path, MAX_MANIFEST_BYTES)
    except InputFileError as exc:
        raise DatasetError(f"unreadable manifest: {exc}") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{path}: manifest is not a JSON object")
    manifest_files(data, root)  # raises DatasetError naming the first bad entry
    return data


def manifest_files(manifest: Mapping[str, Any], root: Path) -> list[dict[str, Any]]:
    """The manifest's `files` entries, checked: a list of objects whose `path`, `config` and
    `split` are strings and whose path stays inside the dataset folder."""
    where = root / DATASET_LAYOUT.manifest
    files = manifest.get("files")
    if not isinstance(files, list):
        raise DatasetError(f"{where}: `files` is missing or not a list; rebuild the dataset")
    for i, f in enumerate(files):
        if not isinstance(f, dict) or not all(
            isinstance(f.get(k), str) for k in ("path", "config", "split")
        ):
            raise DatasetError(
                f"{where}: files[{i}] is not an object with string path, config and split"
            )
        if contained(root, f["path"], follow_links=False) is None:
            raise DatasetError(
                f"{where}: files[{i}] path {f['path'][:100]!a} leaves the dataset folder"
            )
    return files


def split_paths(root: Path, config: str, split: str) -> list[Path]:
    """Files of one split of one config, per the manifest; DatasetError for a dataset of
    another data contract (its schema_version's major), which every reader of the data
    (baseline, eval, predict --history-from, learn) refuses here."""
    if config not in CONFIGS:
        raise DatasetError(f"unknown config {config!r}; choose one of {', '.join(CONFIGS)}")
    if split not in SPLITS:
        raise DatasetError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    manifest = read_manifest(root)
    problem = schema_version_problem(manifest)
    if problem:  # its columns and splits may mean something else: never read as this contract's
        raise DatasetError(
            f"{root / DATASET_LAYOUT.manifest}: {problem}; rebuild the dataset with this "
            f"gharuntime, or read it with one of its contract (`gharuntime validate {root}` "
            "lists every problem)"
        )
    paths = [
        root / f["path"]
        for f in manifest_files(manifest, root)
        if f["config"] == config and f["split"] == split
    ]
    for path in paths:
        if not stays_inside(root, path):
            raise DatasetError(
                f"{path}: a symlink to {target_kind(path)} outside the dataset folder {root}, "
                "and nothing outside a dataset folder is read; put the file itself there "
                f"(`gharuntime validate {root}` lists every such link)"
            )
    return paths


def open_dataset(
    spec: str | Path,
    *,
    endpoint: str | None = None,
    token: str | None = None,
    progress: Progress | None = None,
    refuse_links: bool = True,
) -> LocalDataset:
    """The one resolver: a dataset folder, or a Hub id ORG/NAME[@REVISION] downloaded and
    checked against its manifest first (by the Hub client, `gharuntime.hub.download`). A
    folder holding a symlink that leads outside it is refused (DatasetError), so nothing
    outside a dataset folder is read; `validate` passes refuse_links=False to report each."""
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise DatasetError(f"{spec}: not a folder; give a dataset folder or ORG/NAME[@REV]")
        leaving = folder_files(path).leaving if refuse_links else []
        if leaving:
            raise DatasetError(
                f"{spec}: {leaving[0]} is a symlink to {target_kind(path / leaving[0])} "
                "outside the dataset folder, and nothing outside a dataset folder is read; "
                "put the file itself there "
                f"(`gharuntime validate {spec}` lists every such link)"
            )
        return LocalDataset(root=path.resolve())
    if not HUB_ID.match(str(spec)):
        raise DatasetError(
            f"{spec}: no such folder, and not a Hub id (ORG/NAME[@REVISION]); give a dataset "
            "folder or a Hub dataset id"
        )
    opener = hub_opener()
    if opener is None:  # `import gharuntime` registers it; only a broken install lacks it
        raise DatasetError(f"{spec}: a Hub id, and the Hub client is not loaded; reinstall")
    return opener(str(spec), endpoint=endpoint, token=token, progress=progress)


def load(
    dataset: LocalDataset | Path | str,
    config: str = "temporal",
    split: str = "train",
    columns: list[str] | None = None,
) -> pl.DataFrame:
    """One split as a polars DataFrame, from an opened dataset, a dataset folder, or a Hub
    dataset id ORG/NAME[@REVISION] (downloaded and checked against its manifest on first use).
    `gharuntime.load` is this function."""
    if isinstance(dataset, LocalDataset):
        root = dataset.root
    elif not Path(dataset).exists() and HUB_ID.match(str(dataset)):
        root = open_dataset(str(dataset)).root
    else:
        root = Path(dataset)
    paths = split_paths(root, config, split)
    if not paths:
        return pl.DataFrame(schema=job_table_schema()).select(columns or pl.all())
    try:
        return read_parquet(paths, columns=columns)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise DatasetError(
            f"{root}: cannot read the {config}/{split} files: {str(exc).splitlines()[0][:300]}; "
            "run `gharuntime validate` on the folder"
        ) from None


def validate(root: Path | str) -> list[Problem]:
    """Every way the folder breaks the contract; empty when it is valid."""
    return validate_folder(Path(root))
