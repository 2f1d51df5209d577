"""`leaderboard/README.md`: one Markdown table per (dataset, config, track), and one per transfer
table (methods trained on another dataset), headed by the dataset they were trained on."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from gharuntime.eval.report import HEADLINE_INTERVAL
from gharuntime.leaderboard.rank import GROUP_MEANING
from gharuntime.leaderboard.view import (
    INTERVAL_COLUMNS,
    METRIC_COLUMNS,
    SUMMARY_COLUMNS,
    Reproduced,
    TableView,
    fmt_count,
    fmt_metric,
    metric_label,
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
    if view.multi:
        lines += _multi_tables(view)
    else:
        lines += _metric_table(view.rows, "duration_s")
    versions = sorted({md(row["gharuntime"]) for row in view.rows})
    lines += ["", f"Scored by gharuntime {', '.join(versions)}."]
    if not view.multi:  # a multi table says these under each target's table
        lines += _uncalibrated(view.rows)
        lines += _moved(view.rows)
        lines += _recency_table(view.rows)
    for warning in view.warnings:
        lines.append(f"> ⚠ {md(warning)}")
    lines.append("")
    return lines


def _method(row: dict[str, Any]) -> str:
    return md(row["method"]) + (f" (partial: {row['missing']:,} missing)" if row["missing"] else "")


def _lines(header: list[str], rows: list[list[str]], text_columns: int) -> list[str]:
    out = ["| " + " | ".join(header) + " |"]
    out.append(
        "| " + " | ".join("---" if i < text_columns else "---:" for i in range(len(header))) + " |"
    )
    out += ["| " + " | ".join(_cell(c) for c in cells) + " |" for cells in rows]
    return out


def _metric_table(rows: list[dict[str, Any]], target: str) -> list[str]:
    """The rows' metrics on `target`, the P10–P90 columns, counts and timings."""
    header = [
        "group",
        "method",
        "version",
        "track",
        *(f"{metric_label(label, target)} {'↑' if up else '↓'}" for _, label, up in METRIC_COLUMNS),
        *(f"{label} {_ARROW[up]}" for _, label, up in INTERVAL_COLUMNS),
        "n records",
        "repos",
        "fit s / 1k jobs",
        "predict s / 1k jobs",
    ]
    body = [
        [
            str(row["group"]) if row["group"] is not None else "—",
            _method(row),
            md(row["version"]),
            row["track"] + (f" · {md(row['transfer'])}" if row["transfer"] else ""),
            *(_with_ci(row, m) for m, _, _ in METRIC_COLUMNS),
            *(
                _with_ci(row, m) + (_marks(row) if m == "coverage" else "")
                for m, _, _ in INTERVAL_COLUMNS
            ),
            f"{row['records']:,}",
            f"{row['repositories']:,}",
            _seconds(row["fit_s_per_1k"]),
            _seconds(row["predict_s_per_1k"]),
        ]
        for row in rows
    ]
    return _lines(header, body, 4)


def _multi_tables(view: TableView) -> list[str]:
    """A multi table: the summary over the targets the dataset holds (what ranks it), each
    target's RMSLE beside it, the targets left out and why, then one table per target."""
    targets = view.targets
    lines = [
        f"Targets scored: {', '.join(f'`{t}`' for t in targets)}; the summary is the mean over "
        "them of each target's metric, with its interval from the same resamples, and ranks "
        "the table.",
        "",
    ]
    lines += [f"- `{t}` left out, not scored: {md(why)}." for t, why in view.left_out.items()]
    lines += [""] if view.left_out else []
    header = [
        "group",
        "method",
        "version",
        *(f"{label} {'↑' if up else '↓'}" for _, label, up in SUMMARY_COLUMNS),
        *(f"{t} RMSLE ↓" for t in targets),
        "n records",
        "fit s / 1k jobs",
        "predict s / 1k jobs",
    ]
    per = view.target_rows
    body = [
        [
            str(row["group"]) if row["group"] is not None else "—",
            _method(row),
            md(row["version"]),
            *(_with_ci(row, m) for m, _, _ in SUMMARY_COLUMNS),
            *(_with_ci(per[t][i], "rmsle") for t in targets),
            f"{row['records']:,}",
            _seconds(row["fit_s_per_1k"]),
            _seconds(row["predict_s_per_1k"]),
        ]
        for i, row in enumerate(view.rows)
    ]
    lines += ["### Multi summary", "", *_lines(header, body, 3)]
    for t in targets:
        lines += ["", f"### `{t}`", "", *_metric_table(per[t], t)]
        notes = [*_uncalibrated(per[t]), *_moved(per[t])]
        lines += ["", *notes] if notes else []
        lines += _recency_table(per[t])
    return lines


def _marks(row: dict[str, Any]) -> str:
    """The signs beside a coverage: † not calibrated on held-out jobs, ‡ the target moved."""
    return (" †" if row["uncalibrated"] else "") + (" ‡" if row["moved"] else "")


def _moved(rows: list[dict[str, Any]]) -> list[str]:
    """The ‡ beside a coverage: the target moved between the calibration and scored splits
    (one sentence per table: it is the dataset's, not a method's)."""
    whys = list(dict.fromkeys(row["moved"] for row in rows if row["moved"]))
    return [f"‡ {md(why)}." for why in whys]


def _uncalibrated(rows: list[dict[str, Any]]) -> list[str]:
    """The † beside a coverage: why those methods' ranges are not calibrated on held-out jobs."""
    whys: dict[str, list[str]] = {}
    for row in rows:
        if row["uncalibrated"]:
            whys.setdefault(row["uncalibrated"], []).append(md(row["method"]))
    return [
        f"† ranges not calibrated on held-out jobs ({', '.join(methods)}): {md(why)}."
        for why, methods in whys.items()
    ]


def _recency_table(table_rows: list[dict[str, Any]]) -> list[str]:
    """The P10-P90 coverage of each method by how recently the job group last ran in training
    (eval's train_recency breakdown), where coverage falls under a regime change."""
    rows = [r for r in table_rows if any(c is not None for c, _ in r["recency_coverage"].values())]
    if not rows:
        return []
    buckets = list(dict.fromkeys(b for r in rows for b in r["recency_coverage"]))
    counts = {b: max(r["recency_coverage"].get(b, (None, 0))[1] for r in rows) for b in buckets}
    lines = [
        "",
        f"{HEADLINE_INTERVAL} coverage (nominal 80%) by how recently the job's group (repository, "
        "workflow, job name) last ran in the training split:",
        "",
        "| method | " + " | ".join(f"{md(b)} ({counts[b]:,} jobs)" for b in buckets) + " |",
        "| --- | " + " | ".join("---:" for _ in buckets) + " |",
    ]
    for r in rows:
        cells = []
        for b in buckets:
            value = r["recency_coverage"].get(b, (None, 0))[0]
            cells.append("—" if value is None else f"{100 * value:.1f}%")
        lines.append(f"| {md(r['method'])} | " + " | ".join(cells) + " |")
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
