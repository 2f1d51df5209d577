"""`leaderboard/README.md`: one Markdown table per (dataset, config, track), and one per transfer
table (methods trained on another dataset), headed by the dataset they were trained on."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from gharuntime.leaderboard.rank import GROUP_MEANING
from gharuntime.leaderboard.view import (
    INTERVAL_COLUMNS,
    METRIC_COLUMNS,
    Reproduced,
    TableView,
    fmt_count,
    fmt_metric,
)
from gharuntime.markdown import md

__all__ = ["md", "render_markdown", "render_table"]


# What a result's text must not bring into the Markdown is escaped by the one helper,
# gharuntime.markdown.md (HTML as entities, Markdown's punctuation backslashed), so a name or
# warning shows as written and cannot open a tag, a comment, a link, emphasis, a heading or a
# code span, or end a table cell.
_BREAKS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def _code(text: object) -> str:
    """`text` in a code span: a backtick or line break could end or split it, so none stays."""
    return "`" + _BREAKS.sub(" ", str(text)).replace("`", "'") + "`"


_ARROW = {True: "↑", False: "↓", None: "(≈ 80%)"}


def _cell(text: str) -> str:
    """A cell of our own making (numbers, dashes, brackets) whose user parts are already `md`
    (which escaped their `|`)."""
    return _BREAKS.sub(" ", text)


def _with_ci(row: dict[str, Any], metric: str) -> str:
    value = fmt_metric(metric, row[metric])
    if row[f"{metric}_low"] is None:
        return value
    low = fmt_metric(metric, row[f"{metric}_low"])
    high = fmt_metric(metric, row[f"{metric}_high"])
    return f"{value} [{low}, {high}]"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _table(view: TableView, heading: bool = True) -> list[str]:
    first = view.first
    d = first["dataset"]
    synthetic = {
        True: " · **synthetic data**",
        False: " · real jobs",
        None: " · synthetic: not stated",
    }[d["synthetic"]]
    t = view.table
    title = f"{md(t.dataset)} · {t.config} / {t.track}" + (
        f" · trained on {md(t.trained_on)}" if t.trained_on else ""
    )
    lines = [f"## {title}", ""] if heading else []
    if view.note:
        lines += [f"*{view.note[0].upper()}{view.note[1:]}.*", ""]
    lines += [
        f"Dataset revision {_code(d['revision'][:16])} · split `{d['split']}` · "
        f"{d['rows']:,} records, "
        f"{fmt_count(int(d['repositories']), 'repository', 'repositories')}{synthetic} · "
        f"{view.intervals}",
        "",
    ]
    header = [
        "group",
        "method",
        "version",
        "track",
        *(f"{label} {'↑' if up else '↓'}" for _, label, up in METRIC_COLUMNS),
        *(f"{label} {_ARROW[up]}" for _, label, up in INTERVAL_COLUMNS),
        "n records",
        "repos",
        "fit s / 1k jobs",
        "predict s / 1k jobs",
    ]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("| " + " | ".join("---" if i < 4 else "---:" for i in range(len(header))) + " |")
    for row in view.rows:
        method = md(row["method"]) + (
            f" (partial: {row['missing']:,} missing)" if row["missing"] else ""
        )
        cells = [
            str(row["group"]) if row["group"] is not None else "—",
            method,
            md(row["version"]),
            row["track"] + (f" · {md(row['transfer'])}" if row["transfer"] else ""),
            *(_with_ci(row, m) for m, _, _ in METRIC_COLUMNS),
            *(_with_ci(row, m) for m, _, _ in INTERVAL_COLUMNS),
            f"{row['records']:,}",
            f"{row['repositories']:,}",
            _seconds(row["fit_s_per_1k"]),
            _seconds(row["predict_s_per_1k"]),
        ]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    versions = sorted({md(row["gharuntime"]) for row in view.rows})
    lines += ["", f"Scored by gharuntime {', '.join(versions)}."]
    for warning in view.warnings:
        lines.append(f"> ⚠ {md(warning)}")
    lines.append("")
    return lines


def _reproduced(reproduced: list[Reproduced]) -> list[str]:
    if not reproduced:
        return []
    lines = ["## Reproduced", ""]
    lines += [
        f"- {md(r.scope)}: {md(r.summary)}; per result: [{md(r.link)}](<{quote(r.link, safe='/._-~')}>)"
        for r in reproduced
    ]
    return [*lines, ""]


def render_table(view: TableView) -> str:
    """One table as `leaderboard/README.md` shows it, without its heading: what a marked region
    of another Markdown file holds (`gharuntime.leaderboard.regions`)."""
    return "\n".join(_table(view, heading=False)).rstrip("\n") + "\n"


def render_markdown(
    views: list[TableView], results_label: str, reproduced: list[Reproduced] | None = None
) -> str:
    """The whole leaderboard as Markdown; the same views give the same text. `reproduced`:
    the tables `leaderboard reproduce --all` wrote beside the results, linked at the end."""
    total = sum(len(v.rows) for v in views)
    lines = [
        "# GHARuntime leaderboard",
        "",
        f"Generated by `gharuntime leaderboard` from {total} results in {_code(results_label)}; "
        "do not edit by hand. The page `index.html` beside this file has the same tables "
        "(sortable, filterable, as CSV) and plots.",
        "",
        f"{GROUP_MEANING} Arrows: ↓ lower is better, ↑ higher is better; brackets hold 95% "
        "intervals. Fit and predict seconds per 1,000 jobs come from the method's own "
        "metadata (— when it does not say). The p10-p90 columns score the method's quantile "
        "sidecar: the share of jobs inside its P10–P90 range (80% when calibrated) and the "
        "range's mean width as a log ratio (narrower is better at the same coverage); — for a "
        "method without one.",
        "",
    ]
    for view in views:
        lines += _table(view)
    lines += _reproduced(reproduced or [])
    return "\n".join(lines).rstrip("\n") + "\n"
