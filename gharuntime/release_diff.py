"""What changed between two releases of the dataset: contract and schema, rows per config and
split, repositories added and removed, jobs per repository, the targets' distributions with a
drift figure each, and the filter counts. Researchers cite one release and need to know what the
next one changed; `gharuntime diff` prints this and `build --previous` puts it into the card.

Two datasets of different contract major versions are compared as far as both hold the same
things (manifest counts, columns both have), and the result says so in its notes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import polars as pl

from gharuntime.contract import CONFIGS, SCHEMA_VERSION, SPLITS, TARGETS
from gharuntime.dataset import (
    DatasetError,
    LocalDataset,
    dataset_revision,
    manifest_files,
    open_dataset,
    read_manifest,
    sha256_file,
)
from gharuntime.markdown import md
from gharuntime.parquet import parquet_schema, read_parquet
from gharuntime.redact import redact

__all__ = [
    "DatasetSide",
    "check_side",
    "diff_datasets",
    "ks_statistic",
    "open_side",
    "render_markdown",
    "side_from_folder",
    "side_of",
]

HOUR_S = 3600.0
_SHOWN = 20  # rows of a long table the Markdown shows (the JSON holds all)


@dataclass(frozen=True)
class DatasetSide:
    """One side of the comparison: the opened dataset (the one reference type, `LocalDataset`)
    with what only a diff needs: how it is named in the diff, and the manifest as checked (the
    new side of `build --previous` is a folder whose manifest.json is not written yet)."""

    dataset: LocalDataset
    label: str
    manifest: Mapping[str, Any]

    @property
    def root(self) -> Path:
        """The dataset's folder."""
        return self.dataset.root


def side_of(dataset: LocalDataset, label: str | None = None) -> DatasetSide:
    """An opened dataset as one side (named `label`, else its `spec`); DatasetError when it is
    not a dataset, or when its manifest does not agree with itself and its files
    (`check_side`)."""
    side = DatasetSide(dataset, label or dataset.spec, read_manifest(dataset.root))
    check_side(side)
    return side


def side_from_folder(root: Path, label: str | None = None) -> DatasetSide:
    """A dataset folder as one side (`side_of`), named `label`, else the folder's path."""
    return side_of(LocalDataset(root), label)


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def check_side(side: DatasetSide) -> None:
    """What a diff (and the card `build --previous` writes) takes from a manifest must be what
    the build wrote: every file's sha256 as listed, the revision the digest of those entries
    (for a release of this contract major: an older rule may differ), each split's count the
    sum of its files' rows, `rows` one config's total, filter counts whole numbers. A manifest
    edited after the build is refused, naming the first disagreement, never rendered."""
    where = side.root / "manifest.json"
    use = f"use the release as published (`gharuntime validate {side.label}` lists every problem)"
    fix = f"; the manifest was edited after the build: {use}"
    files = _files(side)
    sums: dict[tuple[str, str], int] = {}
    for entry in files:
        path, rows = side.root / entry["path"], entry.get("rows")
        if not _count(rows):
            raise DatasetError(
                f"{where}: {entry['path'][:100]!a} rows {rows!r} is not a count{fix}"
            )
        sums[(entry["config"], entry["split"])] = (
            sums.get((entry["config"], entry["split"]), 0) + rows
        )
        try:
            digest = sha256_file(path)
        except OSError as exc:
            raise DatasetError(f"{path}: cannot be read ({exc}); {use}") from None
        if digest != entry.get("sha256"):
            raise DatasetError(
                f"{path}: sha256 {digest[:12]}… is not the {str(entry.get('sha256'))[:12]!a} "
                f"manifest.json lists; the file or the manifest changed after the build: {use}"
            )
    version = str(side.manifest.get("schema_version", ""))
    revision = side.manifest.get("revision")
    if _major(version) == _major(SCHEMA_VERSION) and revision != dataset_revision(side.manifest):
        raise DatasetError(f"{where}: revision {str(revision)[:16]!a}… is not its content's{fix}")
    splits = side.manifest.get("splits")
    if not isinstance(splits, Mapping):
        raise DatasetError(f"{where}: `splits` is not an object{fix}")
    for config, counts in splits.items():
        for split, n in _mapping(counts).items():
            if n != sums.get((str(config), str(split)), 0):
                raise DatasetError(
                    f"{where}: splits {str(config)[:40]}/{str(split)[:40]} says {str(n)[:40]!a}, "
                    f"its files hold {sums.get((str(config), str(split)), 0)} rows{fix}"
                )
    totals = {c: sum(n for (cc, _), n in sums.items() if cc == c) for c, _ in sums}
    if "rows" in side.manifest and totals and side.manifest["rows"] not in totals.values():
        raise DatasetError(
            f"{where}: rows {str(side.manifest['rows'])[:40]} is no config's total{fix}"
        )
    for name, n in _mapping(side.manifest.get("filters")).items():
        if not _count(n):
            raise DatasetError(f"{where}: filter {str(name)[:60]!a} count {str(n)[:40]!a}{fix}")


def open_side(spec: str, *, endpoint: str | None = None) -> DatasetSide:
    """A folder or ORG/NAME[@REVISION] (downloaded and checked, `open_dataset`) as one side of
    a diff (DatasetError when it cannot be opened)."""
    try:
        # the label is shown, and kept in a card: redacted
        return side_of(open_dataset(spec, endpoint=endpoint), label=redact(spec))
    except OSError as exc:  # a name the OS refuses (too long, unreadable)
        raise DatasetError(
            f"{spec[:100]!a}: cannot be opened ({exc.strerror or exc}); give a dataset folder "
            "or ORG/NAME[@REVISION]"
        ) from None


def _mapping(value: Any) -> Mapping[str, Any]:
    """`value` when it is a mapping, else empty: a hand-edited manifest compares, never crashes."""
    return value if isinstance(value, Mapping) else {}


def _major(version: str) -> str:
    return version.split(".")[0]


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float | None:
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap between the two empirical
    cumulative distributions (0 the same, 1 disjoint); None when either side is empty."""
    if a.size == 0 or b.size == 0:
        return None
    a, b = np.sort(a), np.sort(b)
    points = np.concatenate([a, b])
    gap = np.abs(
        np.searchsorted(a, points, side="right") / a.size
        - np.searchsorted(b, points, side="right") / b.size
    )
    return float(gap.max())


def _files(side: DatasetSide) -> list[dict[str, Any]]:
    return manifest_files(side.manifest, side.root)


def _rows_config(side: DatasetSide) -> str | None:
    """The config whose splits together hold every row (each config holds them all)."""
    configs = [f["config"] for f in _files(side)]
    for config in CONFIGS:
        if config in configs:
            return config
    return configs[0] if configs else None


def _schema(side: DatasetSide) -> dict[str, str]:
    for entry in _files(side):
        path = side.root / entry["path"]
        try:
            return {k: str(v) for k, v in parquet_schema(path).items()}
        except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
            raise DatasetError(
                f"{path}: cannot read its schema ({str(exc).splitlines()[0][:200]}); run "
                "`gharuntime validate` on the folder"
            ) from None
    return {}


def _rows(side: DatasetSide, columns: list[str]) -> pl.DataFrame:
    config = _rows_config(side)
    paths = [side.root / f["path"] for f in _files(side) if f["config"] == config]
    if not paths or not columns:
        return pl.DataFrame()
    try:
        return pl.concat([read_parquet(p, columns=columns) for p in paths], how="vertical")
    except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
        raise DatasetError(
            f"{side.label}: cannot read its {config} files ({str(exc).splitlines()[0][:200]}); "
            "run `gharuntime validate` on it"
        ) from None


def _change(old: Any, new: Any) -> int | None:
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in (old, new)):
        return None
    return int(new) - int(old)


def _split_order(split: str) -> tuple[int, str]:
    return (SPLITS.index(split) if split in SPLITS else len(SPLITS), split)


def _splits(old: DatasetSide, new: DatasetSide) -> list[dict[str, Any]]:
    a = _mapping(old.manifest.get("splits"))
    b = _mapping(new.manifest.get("splits"))
    out = []
    order = list(CONFIGS)
    for config in sorted({*a, *b}, key=lambda c: (order.index(c) if c in order else len(order), c)):
        ca, cb = _mapping(a.get(config)), _mapping(b.get(config))
        for split in sorted({*ca, *cb}, key=_split_order):
            o, n = ca.get(split), cb.get(split)
            out.append(
                {"config": config, "split": split, "old": o, "new": n, "change": _change(o, n)}
            )
    return out


def _finite(column: pl.Series) -> np.ndarray:
    """The column's finite values: a NaN or infinite target (a hand-edited file) is no value;
    kept, it would make every statistic NaN, which strict JSON cannot carry."""
    values = column.drop_nulls().cast(pl.Float64).to_numpy()
    finite_values: np.ndarray = values[np.isfinite(values)]
    return finite_values


def _target_stats(values: np.ndarray, seconds: bool) -> dict[str, Any]:
    if values.size == 0:
        return {"n": 0, "median": None, "p90": None, "mean": None, "share_over_hour": None}
    return {
        "n": int(values.size),
        "median": float(np.quantile(values, 0.5)),
        "p90": float(np.quantile(values, 0.9)),
        "mean": float(values.mean()),
        "share_over_hour": float((values > HOUR_S).mean()) if seconds else None,
    }


def _repositories(a: pl.DataFrame, b: pl.DataFrame, notes: list[str]) -> dict[str, Any]:
    key = next((k for k in ("repo_id", "repo") if k in a.columns and k in b.columns), None)
    if key is None:
        notes.append("Repositories not compared: the two datasets share no repository column.")
        return {}

    def per_repo(frame: pl.DataFrame) -> dict[Any, tuple[str, int]]:
        name = "repo" if "repo" in frame.columns else key
        grouped = frame.group_by(key).agg(pl.col(name).last().alias("name"), pl.len())
        return {r[0]: (str(r[1]), int(r[2])) for r in grouped.iter_rows()}

    old, new = per_repo(a), per_repo(b)

    def entry(k: Any, name: str, jobs: int) -> dict[str, Any]:
        return {"repo_id" if key == "repo_id" else "repo_key": k, "repo": name, "jobs": jobs}

    added = sorted((entry(k, *new[k]) for k in new.keys() - old.keys()), key=lambda e: e["repo"])
    removed = sorted((entry(k, *old[k]) for k in old.keys() - new.keys()), key=lambda e: e["repo"])
    both: list[dict[str, Any]] = [
        {"repo": new[k][0], "old": old[k][1], "new": new[k][1], "change": new[k][1] - old[k][1]}
        for k in old.keys() & new.keys()
    ]
    both.sort(key=lambda e: (-abs(e["change"]), e["repo"]))
    return {
        "key": key,
        "old": len(old),
        "new": len(new),
        "added": added,
        "removed": removed,
        "jobs": both,
    }


def diff_datasets(old: DatasetSide, new: DatasetSide) -> dict[str, Any]:
    """The changes from `old` to `new` as a JSON-ready dict (see the module docstring)."""
    notes: list[str] = []
    va = str(old.manifest.get("schema_version", "") or "unknown")
    vb = str(new.manifest.get("schema_version", "") or "unknown")
    compatible = _major(va) == _major(vb)
    if not compatible:
        notes.append(
            f"Different data contract major versions ({va} and {vb}): columns, splits or their "
            "meaning may differ, so only what both datasets hold is compared (manifest counts, "
            "the columns both have). This gharuntime reads contract "
            f"{SCHEMA_VERSION}."
        )
    sa, sb = _schema(old), _schema(new)
    columns = {
        "added": [c for c in sb if c not in sa],
        "removed": [c for c in sa if c not in sb],
        "retyped": [
            {"column": c, "old": sa[c], "new": sb[c]} for c in sa if c in sb and sa[c] != sb[c]
        ],
    }
    wanted = [c for c in ("repo_id", "repo", *TARGETS) if c in sa and c in sb]
    for c in TARGETS:
        if c not in wanted:
            notes.append(f"Target {c} not compared: only one of the datasets has it.")
    numeric = [c for c in TARGETS if c in wanted]
    a = _rows(old, wanted)
    b = _rows(new, wanted)
    targets = []
    for c in numeric:
        if c not in a.columns or c not in b.columns:
            continue
        try:
            xa, xb = (_finite(f[c]) for f in (a, b))
        except pl.exceptions.PolarsError:
            notes.append(f"Target {c} not compared: it is not numeric in both datasets.")
            continue
        seconds = c.endswith("_s")
        targets.append(
            {
                "target": c,
                "old": _target_stats(xa, seconds),
                "new": _target_stats(xb, seconds),
                "drift_ks": ks_statistic(xa, xb),
            }
        )
    fa = _mapping(old.manifest.get("filters"))
    fb = _mapping(new.manifest.get("filters"))
    filters = [
        {"filter": k, "old": fa.get(k), "new": fb.get(k), "change": _change(fa.get(k), fb.get(k))}
        for k in [*fa, *(k for k in fb if k not in fa)]
    ]
    for config in sorted({f["config"] for f in _files(old)} ^ {f["config"] for f in _files(new)}):
        notes.append(f"Config {config} is in only one of the datasets.")

    def about(side: DatasetSide, version: str) -> dict[str, Any]:
        provenance = _mapping(side.manifest.get("source"))
        return {
            "dataset": side.label,
            "schema_version": version,
            "revision": side.manifest.get("revision"),
            "gharuntime_version": side.manifest.get("gharuntime_version"),
            "source_kind": provenance.get("kind"),
            "synthetic": bool(provenance.get("synthetic")),
            "rows": side.manifest.get("rows"),
        }

    return {
        "old": about(old, va),
        "new": about(new, vb),
        "same_contract_major": compatible,
        "same_revision": old.manifest.get("revision") == new.manifest.get("revision"),
        "notes": notes,
        "columns": columns,
        "splits": _splits(old, new),
        "repositories": _repositories(a, b, notes),
        "targets": targets,
        "filters": filters,
    }


def _cell(x: Any) -> str:
    """A table cell: None as -, anything else (a manifest's or a dataset's text, a number)
    escaped by the one Markdown helper."""
    return "-" if x is None else md(x)


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_cell(x) for x in row) + " |" for row in rows]
    return "\n".join(out)


def _num(x: Any, pct: bool = False) -> str | None:
    if x is None:
        return None
    if pct:
        return f"{100 * x:.1f}%"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)[:100]
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.1f}"


def _signed(x: int | None) -> str | None:
    return None if x is None else f"{x:+,}"


def render_markdown(diff: Mapping[str, Any], *, heading: str = "##") -> str:
    """The diff as Markdown (the CLI's default output and the card's section). Every text a
    manifest or the data brings (labels, versions, notes, column, repository and filter names,
    configs and splits) passes gharuntime.markdown, so none can add a heading, a tag or a
    cell."""
    o, n = diff["old"], diff["new"]
    sub = heading + "#"
    lines = [
        f"{heading} Changes from {md(o['dataset'])} to {md(n['dataset'])}",
        "",
        _table(
            ("", "old", "new"),
            [
                ("data contract", o["schema_version"], n["schema_version"]),
                ("dataset revision", str(o["revision"])[:12], str(n["revision"])[:12]),
                ("gharuntime", o["gharuntime_version"], n["gharuntime_version"]),
                ("source", o["source_kind"], n["source_kind"]),
                ("synthetic", o["synthetic"], n["synthetic"]),
                ("jobs", _num(o["rows"]), _num(n["rows"])),
            ],
        ),
        "",
    ]
    if diff["same_revision"]:
        lines += ["The two datasets have the same revision: the same rows in the same files.", ""]
    lines += [f"- {md(note)}" for note in diff["notes"]]
    if diff["notes"]:
        lines.append("")
    cols = diff["columns"]
    lines += [f"{sub} Columns", ""]
    if cols["added"] or cols["removed"] or cols["retyped"]:
        lines += [f"- added: {', '.join(map(md, cols['added']))}"] if cols["added"] else []
        lines += [f"- removed: {', '.join(map(md, cols['removed']))}"] if cols["removed"] else []
        lines += [f"- {md(r['column'])}: {md(r['old'])} → {md(r['new'])}" for r in cols["retyped"]]
    else:
        lines.append("Same columns with the same types.")
    lines += [
        "",
        f"{sub} Rows per config and split",
        "",
        _table(
            ("config", "split", "old", "new", "change"),
            [
                (s["config"], s["split"], _num(s["old"]), _num(s["new"]), _signed(s["change"]))
                for s in diff["splits"]
            ],
        ),
        "",
    ]
    repos = diff["repositories"]
    if repos:
        lines += [
            f"{sub} Repositories",
            "",
            f"{repos['old']:,} → {repos['new']:,} repositories: {len(repos['added']):,} added, "
            f"{len(repos['removed']):,} removed.",
            "",
        ]
        for what in ("added", "removed"):
            items = repos[what]
            if items:
                shown = ", ".join(f"{md(r['repo'])} ({r['jobs']:,} jobs)" for r in items[:_SHOWN])
                more = f", and {len(items) - _SHOWN:,} more" if len(items) > _SHOWN else ""
                lines += [f"- {what}: {shown}{more}", ""]
        changed = [r for r in repos["jobs"] if r["change"]]
        lines += [
            f"Jobs per repository: {len(changed):,} of the {len(repos['jobs']):,} repositories "
            "in both changed"
            + (f"; the {min(_SHOWN, len(changed))} largest changes:" if changed else "."),
            "",
        ]
        if changed:
            lines += [
                _table(
                    ("repository", "old", "new", "change"),
                    [
                        (r["repo"], _num(r["old"]), _num(r["new"]), _signed(r["change"]))
                        for r in changed[:_SHOWN]
                    ],
                ),
                "",
            ]
    if diff["targets"]:
        lines += [
            f"{sub} Targets",
            "",
            "Drift is the two-sample Kolmogorov-Smirnov statistic: the largest gap between the "
            "two cumulative distributions (0 the same, 1 disjoint).",
            "",
            _table(
                (
                    "target",
                    "median old",
                    "median new",
                    "p90 old",
                    "p90 new",
                    "over 1 h old",
                    "over 1 h new",
                    "drift",
                ),
                [
                    (
                        t["target"],
                        _num(t["old"]["median"]),
                        _num(t["new"]["median"]),
                        _num(t["old"]["p90"]),
                        _num(t["new"]["p90"]),
                        _num(t["old"]["share_over_hour"], pct=True),
                        _num(t["new"]["share_over_hour"], pct=True),
                        None if t["drift_ks"] is None else f"{t['drift_ks']:.3f}",
                    )
                    for t in diff["targets"]
                ],
            ),
            "",
        ]
    if diff["filters"]:
        lines += [
            f"{sub} Filters (rows removed)",
            "",
            _table(
                ("filter", "old", "new", "change"),
                [
                    (f["filter"], _num(f["old"]), _num(f["new"]), _signed(f["change"]))
                    for f in diff["filters"]
                ],
            ),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"
