"""`leaderboard/index.html`: one self-contained page (no network: the data is embedded as JSON,
the plots are inline SVG, the script is inline) with a sortable, filterable table and a CSV
download whose text cells are spreadsheet-safe (no cell can be read as a formula)."""

from __future__ import annotations

import json
import re
from html import escape
from importlib import resources
from typing import Any, Final
from urllib.parse import quote

from gharuntime.leaderboard.plots import table_plots
from gharuntime.leaderboard.rank import GROUP_MEANING
from gharuntime.leaderboard.view import (
    INTERVAL_COLUMNS,
    METRIC_COLUMNS,
    SUMMARY_COLUMNS,
    Reproduced,
    TableView,
    fmt_metric,
)

__all__ = ["CSV_COLUMNS", "render_page", "spreadsheet_safe"]

CSV_COLUMNS: Final = (
    "dataset",
    "config",
    "track",
    "trained_on",
    "group",
    "method",
    "version",
    "target",
    *(f"{m}{s}" for m, _, _ in SUMMARY_COLUMNS for s in ("", "_low", "_high")),
    *(f"{m}{s}" for m, _, _ in METRIC_COLUMNS for s in ("", "_low", "_high")),
    *(f"{m}{s}" for m, _, _ in INTERVAL_COLUMNS for s in ("", "_low", "_high")),
    "records",
    "repositories",
    "missing",
    "fit_s_per_1k",
    "predict_s_per_1k",
    "revision",
    "synthetic",
    "gharuntime",
)

# (key, header, type, CSS class)
_HEAD: Final = (
    ("dataset", "dataset", "text"),
    ("config", "config", "text"),
    ("track", "track", "text"),
    ("trained_on", "trained on", "text"),
    ("group", "group", "number"),
    ("method", "method", "text"),
    ("version", "version", "text"),
    ("target", "target", "text"),
    *((m, f"multi {label} {'↑' if up else '↓'}", "number") for m, label, up in SUMMARY_COLUMNS),
    *((m, f"{label} {'↑' if up else '↓'}", "number") for m, label, up in METRIC_COLUMNS),
    *(
        (m, f"{label} {({True: '↑', False: '↓', None: '≈ 80%'})[up]}", "number")
        for m, label, up in INTERVAL_COLUMNS
    ),
    ("records", "n records", "number"),
    ("repositories", "repos", "number"),
    ("fit_s_per_1k", "fit s / 1k jobs", "number"),
    ("predict_s_per_1k", "predict s / 1k jobs", "number"),
    ("revision", "dataset revision", "text"),
    ("synthetic", "data", "text"),
    ("gharuntime", "scored by", "text"),
)


_MARKER: Final = re.compile(r"/\*[A-Z_]+\*/")


_FORMULA: Final = ("=", "+", "-", "@", "\t", "\r", "\n")


def spreadsheet_safe(value: Any) -> Any:
    """A CSV cell's value that no spreadsheet reads as a formula: text starting with `=`, `+`,
    `-`, `@`, a tab or a line break (after any spaces) gets a leading `'`, as OWASP's
    spreadsheet-safe CSV writers do; numbers and other values are kept. The page's CSV download
    writes the embedded rows as they are, so this is where `=HYPERLINK(...)` is defused."""
    if isinstance(value, str) and value.lstrip(" ").startswith(_FORMULA):
        return "'" + value
    return value


def _json_for_script(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _sort_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return escape(str(value), quote=True)


def _cell(key: str, kind: str, row: dict[str, Any]) -> str:
    value = row[key]
    css = "text" if kind == "text" else "num"
    if key in {m for m, _, _ in (*METRIC_COLUMNS, *INTERVAL_COLUMNS, *SUMMARY_COLUMNS)}:
        text = escape(fmt_metric(key, value))
        if row[f"{key}_low"] is not None:
            low = fmt_metric(key, row[f"{key}_low"])
            high = fmt_metric(key, row[f"{key}_high"])
            text += f' <span class="ci">[{escape(low)}, {escape(high)}]</span>'
        if key == "coverage" and row.get("uncalibrated"):
            why = escape(f"not calibrated on held-out jobs: {row['uncalibrated']}", quote=True)
            text += f' <span class="uncalibrated" title="{why}">†</span>'
        if key == "coverage" and row.get("moved"):
            text += f' <span class="moved" title="{escape(row["moved"], quote=True)}">‡</span>'
    elif key in ("fit_s_per_1k", "predict_s_per_1k"):
        text = "—" if value is None else f"{value:.3g}"
    elif key in ("records", "repositories"):
        text = f"{value:,}"
    elif key == "group":
        text = "—" if value is None else str(value)
    elif key == "revision":
        text = f'<code title="{escape(value)}">{escape(value[:12])}</code>'
    elif key == "synthetic":
        text = {True: '<span class="synthetic">synthetic</span>', False: "real", None: "?"}[value]
        value = {True: "synthetic", False: "real", None: ""}[value]
    elif key == "trained_on" and row["transfer"]:
        text = f'{escape(value)} <span class="ci">({escape(row["transfer"])})</span>'
    elif key == "method" and row["missing"]:
        text = f"{escape(value)} (partial: {row['missing']:,} missing)"
    else:
        text = escape(str(value))
    return f'<td class="{css} {escape(key)}" data-v="{_sort_value(value)}">{text}</td>'


def _code(text: str) -> str:
    """Escaped text with `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


def _options(values: list[str]) -> str:
    return '<option value="">all</option>' + "".join(
        f'<option value="{escape(v)}">{escape(v)}</option>' for v in values
    )


def _trained(view: TableView) -> str:
    """The dataset the table's methods were trained on (its own for a plain table)."""
    return view.table.trained_on or view.table.dataset


def _attrs(view: TableView) -> str:
    t = view.table
    return (
        f'data-dataset="{escape(t.dataset)}" data-config="{escape(t.config)}" '
        f'data-track="{escape(t.track)}" data-trained="{escape(_trained(view))}"'
    )


def render_page(
    views: list[TableView], results_label: str, reproduced: list[Reproduced] | None = None
) -> str:
    """The page's HTML; the same views give the same bytes. `reproduced`: the tables
    `leaderboard reproduce --all` wrote beside the results, linked under the summary."""
    rows: list[dict[str, Any]] = []
    body: list[str] = []
    plots: list[str] = []
    for view in views:
        # a multi table: a row per method and target, each with the method's summary
        shown = [r for t in view.targets for r in view.target_rows[t]] or view.rows
        for row in shown:
            i = len(rows)
            rows.append({c: spreadsheet_safe(row[c]) for c in CSV_COLUMNS})
            group = f"g{row['group']}" if row["group"] is not None else "g-"
            body.append(
                f'<tr class="{group}" data-i="{i}" {_attrs(view)}>'
                + "".join(_cell(k, kind, row) for k, _, kind in _HEAD)
                + "</tr>"
            )
        note = f'<p class="note">{_code(view.note)}</p>' if view.note else ""
        note += f'<p class="note">{escape(view.intervals)}</p>'
        note += "".join(
            f'<p class="note">† {escape(row["method"])}'
            + (f" ({escape(row['target'])})" if view.multi else "")
            + f": ranges not calibrated on held-out jobs: {escape(row['uncalibrated'])}</p>"
            for row in shown
            if row["uncalibrated"]
        )
        note += "".join(
            f'<p class="note">‡ {_code(why)}.</p>'
            for why in dict.fromkeys(row["moved"] for row in shown if row["moved"])
        )
        warnings = "".join(f'<p class="note">⚠ {escape(w)}</p>' for w in view.warnings)
        plots.append(
            f'<section class="plots" {_attrs(view)}><h2>{escape(view.title)}</h2>{note}{warnings}'
            f'<div class="grid">{"".join(table_plots(view))}</div></section>'
        )
    head = "".join(
        f'<th class="{"text" if kind == "text" else "num"}" data-key="{key}" '
        f'data-type="{kind}" scope="col">{escape(label)}</th>'
        for key, label, kind in _HEAD
    )
    data = {"csv_columns": list(CSV_COLUMNS), "rows": rows, "group_meaning": GROUP_MEANING}
    summary = (
        f"{len(rows)} results in {len(views)} tables from <code>{escape(results_label)}</code>. "
        "Brackets hold 95% bootstrap intervals (repository resamples, or workflow-run "
        "resamples where a table says so); ↓ lower is better, ↑ higher is better. Click a "
        "column header to sort; filter by dataset, config, track and the dataset the methods "
        "were trained on (a transfer table's differs from its dataset)."
    )
    for r in reproduced or []:
        href = quote(r.link, safe="/._-~")
        summary += (
            f' <span class="reproduced">Reproduced ({escape(r.scope)}): {escape(r.summary)}; '
            f'<a href="{escape(href, quote=True)}">per result</a>.</span>'
        )
    replacements = {
        "/*SUMMARY*/": summary,
        "/*GROUP_MEANING*/": escape(GROUP_MEANING),
        "/*OPTIONS_DATASET*/": _options(sorted({v.table.dataset for v in views})),
        "/*OPTIONS_CONFIG*/": _options(sorted({v.table.config for v in views})),
        "/*OPTIONS_TRACK*/": _options(sorted({v.table.track for v in views})),
        "/*OPTIONS_TRAINED*/": _options(sorted({_trained(v) for v in views})),
        "/*HEAD*/": head,
        "/*BODY*/": "\n".join(body),
        "/*PLOTS*/": "\n".join(plots),
        "/*DATA*/": _json_for_script(data),
    }
    page = resources.files("gharuntime.leaderboard").joinpath("template.html").read_text()
    # one pass over the template: a marker inside a result's text (a version, a warning) is text,
    # not a place to fill (filled in turn, "/*DATA*/" in a version would pour the JSON into an
    # attribute, where its quotes could open new ones)
    return _MARKER.sub(lambda m: replacements.get(m[0], m[0]), page)
