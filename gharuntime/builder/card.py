"""Render the dataset card (README.md) from data_cards/template.md: Hugging Face front matter plus
the dataset's actual statistics, filters, problems and provenance, and a duration histogram.
What the card says of the source (its provenance paragraph, front matter, limitations and
citation) comes from the source, through one hook (`CardText`, see gharuntime.sources.base);
nothing here knows one kind from another."""

from __future__ import annotations

import importlib.resources
from collections.abc import Mapping
from pathlib import Path
from string import Template
from typing import Any

import numpy as np
import polars as pl
import yaml

from gharuntime.builder.filters import FILTERS, MAX_DURATION_S
from gharuntime.contract import COLUMNS, CONFIGS, DATASET_LAYOUT, SPLITS
from gharuntime.croissant import bibtex, release_licence
from gharuntime.dataset import card_front_matter
from gharuntime.sources.base import CardHook, CardText

__all__ = ["FIGURE", "generic_card", "load_template", "render_card", "table"]

FIGURE = "duration_hist.png"
_QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0)

_FILTER_EXTRA = {
    "duplicate_job_id": "the same job id seen more than once (e.g. in two raw stores); one row kept, "
    "the one that completed last",
}
_JOB_KEY_HOW = {
    "exact": "name matched a job key (with its matrix combination) by GitHub's naming rules",
    "callee": "name `caller / callee (matrix)` matched a job of a reusable workflow of the same "
    "repository, read at the run's commit (the row holds the callee job's own block and matrix)",
    "callee_pattern": "as `callee`, the callee job's name template matched with its expressions "
    "left open (a matrix given by an expression); matrix unknown",
    "caller": "name `caller / callee` matched a job that calls a reusable workflow that could "
    "not be read (another repository, a file missing at that commit, a cycle); the row holds "
    "the caller's block",
    "pattern": "name matched one job's name template with its expressions left open; "
    "matrix unknown",
    "unresolved": "the workflow YAML has no job that GitHub would give this name; job_key null",
    "bad_yaml": "the workflow YAML does not parse; job_key null",
    "no_yaml": "the source holds no workflow YAML for this run; job_key null",
}


def load_template() -> str:
    """The card template shipped as package data of gharuntime.data_cards."""
    return (
        importlib.resources.files("gharuntime.data_cards")
        .joinpath("template.md")
        .read_text(encoding="utf-8")
    )


def table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> str:
    """A Markdown table (the cells as given: escape what a source wrote)."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(out)


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.1f}%" if total else "-"


def _fmt(x: float) -> str:
    return f"{x:,.1f}"


def _histogram(durations: np.ndarray, path: Path) -> None:
    """Log-scale histogram of durations; a deterministic PNG (no timestamps in its metadata)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5), dpi=100)
    positive = durations[durations > 0]
    lo = max(float(positive.min()), 0.1) if positive.size else 1.0
    hi = max(float(positive.max()), lo * 10) if positive.size else 10.0
    bins = np.logspace(np.log10(lo), np.log10(hi), 50)
    ax.hist(positive, bins=list(bins), color="#4c72b0")
    ax.set_xscale("log")
    ax.set_xlabel("job duration (s, log scale)")
    ax.set_ylabel("jobs")
    ax.set_title(f"duration_s of {positive.size:,} jobs")
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)


def generic_card(provenance: Mapping[str, Any]) -> CardText:
    """What the card says of a source that says nothing of itself (no `card` hook)."""
    return CardText(
        f"Built by `gharuntime build` from a source of kind `{provenance.get('kind')}`; where "
        "its rows came from is in manifest.json under `source`."
    )


_MAX_COMPOSITION_ROWS = 40
"""Repositories listed per config in the card's composition table (all are in manifest.json)."""


def _identity_note(manifest: Mapping[str, Any]) -> str:
    """How many test jobs of each config belong to a job group (repository, workflow path, job
    name) that the train split already holds, as the manifest's `composition` measured: on such
    rows a per-group median is a lookup of the job's own history."""
    comp = manifest.get("composition") or {}

    def share(config: str) -> tuple[int, int, int, int]:
        s = (comp.get(config) or {}).get("test_seen_in_train") or {}
        return (
            int(s.get("test_rows_seen", 0)),
            int(s.get("test_rows", 0)),
            int(s.get("test_groups_seen", 0)),
            int(s.get("test_groups", 0)),
        )

    t_seen, t_all, tg_seen, tg_all = share("temporal")
    c_seen, c_all, _, _ = share("cross_repo")
    return (
        f"On `temporal`, {_pct(t_seen, t_all)} of the test jobs ({t_seen:,} of {t_all:,}; "
        f"{tg_seen:,} of {tg_all:,} job groups) belong to a job group (repository, workflow path, "
        "job name) that the train split already holds, and that identity is an input: on those "
        "rows a per-group median such as the `group-median` baseline is effectively a lookup of "
        "the job's own history, not a prediction from its configuration. Results on `temporal` "
        "measure forecasting each repository's next runs: known jobs where their group is in "
        "train, and jobs of a renamed or restructured workflow where it is not. On `cross_repo` "
        f"{_pct(c_seen, c_all)} of the test jobs "
        f"({c_seen:,} of {c_all:,}) have a group seen in training (every repository sits in one "
        "split): the generalization tables, to jobs and repositories never seen, are the "
        "`cross_repo` ones."
    )


def _composition_table(manifest: Mapping[str, Any]) -> str:
    """Rows, runs and time range of each repository in each split of each config."""
    comp = manifest.get("composition") or {}
    rows: list[tuple[Any, ...]] = []
    left_out = 0
    for config in CONFIGS:
        block = comp.get(config) or {}
        for split in SPLITS:
            for r in block.get(split) or []:
                if len(rows) >= _MAX_COMPOSITION_ROWS:
                    left_out += 1
                    continue
                first, last = (str(r.get(k) or "-")[:10] for k in ("first", "last"))
                rows.append(
                    (
                        config,
                        split,
                        f"`{r.get('repo') or r.get('repo_id')}`",
                        f"{int(r.get('rows', 0)):,}",
                        f"{int(r.get('runs', 0)):,}",
                        f"{first} to {last}",
                    )
                )
    if not rows:
        return "(no rows)"
    text = table(("config", "split", "repository", "rows", "runs", "created"), rows)
    if left_out:
        text += (
            f"\n\n{left_out:,} more (repository, split) entries are listed in manifest.json under "
            "`composition`."
        )
    return text


def render_card(
    manifest: Mapping[str, Any], jobs: pl.DataFrame, folder: Path, card: CardHook | None = None
) -> str:
    """The README.md text; writes figures/duration_hist.png into `folder`. `card` (the
    source's hook) says what the card tells of the source."""
    figures = folder / DATASET_LAYOUT.figures
    figures.mkdir(parents=True, exist_ok=True)
    durations = jobs["duration_s"].to_numpy()
    _histogram(durations, figures / FIGURE)

    provenance = manifest.get("source", {})
    build = manifest.get("build", {})
    rows = int(manifest["rows"])
    splits = manifest["splits"]
    split_table = table(
        ("config", *SPLITS),
        [(c, *(f"{splits[c][s]:,}" for s in SPLITS)) for c in CONFIGS if c in splits],
    )
    os_counts = (
        jobs.group_by("runner_os").len().sort(["len", "runner_os"], descending=[True, False])
    )
    os_table = table(
        ("runner_os", "jobs", "share"),
        [(o or "unknown", f"{n:,}", _pct(n, rows)) for o, n in os_counts.iter_rows()],
    )
    qs = np.quantile(durations, _QUANTILES) if rows else np.zeros(len(_QUANTILES))
    duration_table = (
        table(("quantile", *(f"{q:g}" for q in _QUANTILES)), [("seconds", *(_fmt(x) for x in qs))])
        + f"\n\nMean {_fmt(float(durations.mean()))} s."
        if rows
        else "(no rows)"
    )
    how = build.get("job_keys", {})
    job_key_table = table(
        ("resolution", "jobs", "share", "meaning"),
        [(k, f"{n:,}", _pct(n, rows), _JOB_KEY_HOW.get(k, "")) for k, n in how.items()],
    )
    meanings = {f.name: f.meaning for f in FILTERS} | _FILTER_EXTRA
    filters = manifest.get("filters", {})
    filter_rows = []
    for name, n in filters.items():
        if name.startswith("conclusion_"):
            meaning = (
                f"conclusion `{name.removeprefix('conclusion_')}`: outside the conclusion policy"
            )
        else:
            meaning = meanings.get(name, "")
        filter_rows.append((f"`{name}`", f"{n:,}", meaning))
    conclusions = build.get("conclusions", ["success"])
    policy = (
        "all conclusions are kept; filter on `conclusion` yourself."
        if conclusions == "all"
        else f"only jobs with conclusion {', '.join(f'`{c}`' for c in conclusions)} are kept; the "
        "main task is the runtime of successful jobs. Jobs with any other conclusion (failure, "
        "cancelled, timed_out, ...) are dropped and counted above per conclusion; rebuild with "
        "`--conclusions all` to keep them."
    )
    problems = build.get("problems", {}).get("counts", {})
    problem_text = (
        table(("problem", "count"), [(f"`{k}`", f"{v:,}") for k, v in problems.items()])
        + "\n\nExamples of each are listed in manifest.json under `build.problems`."
        if problems
        else "None: every input record was read and placed."
    )
    errors = build.get("fetch_errors") or {}
    if errors:
        problem_text += (
            "\n\nThe crawler recorded things it could not fetch: "
            + ", ".join(f"{k} {v:,}" for k, v in errors.items())
            + "."
        )
    column_table = table(
        ("column", "type", "role", "meaning"),
        [(f"`{c.name}`", str(c.dtype), c.role.value, c.meaning) for c in COLUMNS],
    )
    t_min: Any = jobs["created_at"].min()
    t_max: Any = jobs["created_at"].max()
    told = (card or generic_card)(provenance)
    front = card_front_matter(manifest)
    front["source_datasets"] = list(told.source_datasets)
    if told.tags:
        front["tags"] = [*front["tags"], *told.tags]
    if told.pretty_name is not None:
        front["pretty_name"] = told.pretty_name
    front["license"] = release_licence(manifest)
    values = {
        "front_matter": yaml.safe_dump(front, sort_keys=False, allow_unicode=True),
        "pretty_name": front["pretty_name"],
        "gharuntime_version": manifest.get("gharuntime_version", ""),
        "schema_version": manifest.get("schema_version", ""),
        "provenance": told.provenance,
        "rows": f"{rows:,}",
        "runs": f"{manifest.get('runs', 0):,}",
        "repositories": f"{manifest.get('repositories', 0):,}",
        "time_window": f"{t_min:%Y-%m-%d %H:%M} to {t_max:%Y-%m-%d %H:%M}" if rows else "-",
        "split_table": split_table,
        "temporal_rule": CONFIGS["temporal"],
        "cross_repo_rule": CONFIGS["cross_repo"]
        + (
            " In this dataset the build fixed: "
            + ", ".join(f"`{k}` → {v}" for k, v in provenance["cross_repo_fixed"].items())
            + "."
            if provenance.get("cross_repo_fixed")
            else ""
        ),
        "os_table": os_table,
        "duration_table": duration_table,
        "job_key_table": job_key_table,
        "filter_table": table(("filter", "removed", "what it removes"), filter_rows),
        "conclusion_policy": policy,
        "problems": problem_text,
        "column_table": column_table,
        "limitations": "\n".join(told.limitations),
        "identity_note": _identity_note(manifest),
        "composition_table": _composition_table(manifest),
        "source_citation": told.citation,
        "citation": bibtex(manifest),
        "max_duration_days": f"{MAX_DURATION_S / 86400:.0f}",
    }
    return Template(load_template()).substitute(values)
