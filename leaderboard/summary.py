"""`RESULTS/<dataset>/summary.md`: the folder's results at a glance, one row per result (RMSLE,
within 2× and P10–P90 coverage on duration_s, † where the ranges were not calibrated on held-out
jobs, ‡ where the target moved between the validation and test splits), rendered from the result files alone, so that it can be rebuilt, and checked, at any
time: no date, no machine path, a stable order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from gharuntime.eval.report import HEADLINE_INTERVAL
from gharuntime.leaderboard.rank import RANK_TARGET
from gharuntime.leaderboard.registry import Entry, Table
from gharuntime.leaderboard.view import (
    fmt_count,
    fmt_metric,
    moved,
    table_order,
    transfer_label,
    uncalibrated,
)
from gharuntime.markdown import md

__all__ = ["SUMMARY", "render_summary"]

SUMMARY: Final = "summary.md"
"""The file name, in each dataset folder of a results folder."""

_HEAD: Final = "| RMSLE ↓ | within 2× ↑ | P10–P90 coverage (≈ 80%) | rows scored | repositories |"


def _block(result: dict[str, Any], *path: str) -> dict[str, Any]:
    """The nested object at `path` ({} where any step is missing: an older result's shape)."""
    node: Any = result
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else {}


def _metric(block: dict[str, Any], metric: str, ci: bool) -> str:
    value = block.get("value")
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "—"
    text = fmt_metric(metric, value)
    low, high = block.get("ci_low"), block.get("ci_high")
    if ci and isinstance(low, int | float) and isinstance(high, int | float):
        text += f" [{fmt_metric(metric, low)}, {fmt_metric(metric, high)}]"
    return text


def _cells(entry: Entry) -> list[str]:
    r = entry.result
    metrics = _block(r, "metrics", RANK_TARGET)
    coverage = _block(r, "intervals", "metrics", RANK_TARGET, "central", HEADLINE_INTERVAL)
    scored = _block(r, "counts", "scored").get(RANK_TARGET, r["dataset"].get("rows"))
    return [
        _metric(_block(metrics, "rmsle"), "rmsle", ci=True),
        _metric(_block(metrics, "within_2x"), "within_2x", ci=False),
        _metric(_block(coverage, "coverage"), "coverage", ci=False)
        + (" †" if uncalibrated(r) else "")
        + (" ‡" if moved(r) else ""),
        f"{scored:,}" if isinstance(scored, int) else "—",
        f"{r['dataset'].get('repositories', '—')}",
    ]


def _daggers(entries: Sequence[Entry]) -> list[str]:
    """Why the coverages marked † come from ranges not calibrated on held-out jobs (the
    reason each method recorded; `gharuntime.leaderboard.view.uncalibrated`)."""
    whys: dict[str, list[str]] = {}
    for e in entries:
        why = uncalibrated(e.result)
        if why and md(e.method) not in whys.setdefault(why, []):
            whys[why].append(md(e.method))
    moves = list(dict.fromkeys(why for e in entries if (why := moved(e.result))))
    return [
        *(
            f"† ranges not calibrated on held-out jobs ({', '.join(methods)}): {md(why)}."
            for why, methods in whys.items()
        ),
        *(f"‡ {md(why)}." for why in moves),
    ]


def _order(entry: Entry) -> tuple[Any, ...]:
    """The leaderboard's table order (plain tables by headline, then transfer tables), and
    within a table by RMSLE, then method name."""
    value = _block(entry.result, "metrics", RANK_TARGET, "rmsle").get("value")
    rmsle = value if isinstance(value, int | float) else float("inf")
    return (_table_key(entry), rmsle, entry.method, str(entry.path.name))


def _table_key(entry: Entry) -> tuple[Any, ...]:
    table = Table(entry.dataset, entry.config, entry.track, (entry,), entry.trained_on)
    return table_order(table)


def _bootstrap(result: dict[str, Any]) -> str:
    b = _block(result, "bootstrap")
    confidence = b.get("confidence")
    pct = f"{round(100 * confidence)}%" if isinstance(confidence, int | float) else "?"
    what = "workflow runs" if b.get("cluster") == "run_id" else "repositories"
    return (
        f"{pct} intervals from {b.get('resamples', 0):,} resamples of {what}, seed {b.get('seed')}"
    )


def _scored_by(result: dict[str, Any]) -> str:
    prov = _block(result, "provenance")
    version = prov.get("gharuntime_version") or result.get("gharuntime_version") or "?"
    commit = prov.get("git_commit")
    text = f"gharuntime {md(str(version))}"
    if isinstance(commit, str) and commit:
        text += f" at commit {_code(commit)}"
        if prov.get("git_dirty"):
            text += " (a tree with uncommitted changes)"
    return text


def _code(text: object) -> str:
    """`text` in a code span, with nothing in it that could end or split the span."""
    return "`" + "".join(" " if ord(c) < 0x20 or c == "`" else c for c in str(text)) + "`"


def _bare(text: str) -> str:
    """A config or track name (a word the schema allows) as a table cell: nothing in it can end
    the cell or the row."""
    return "".join(" " if ord(c) < 0x20 else c for c in text).replace("|", "\\|")


def _counted(items: Sequence[str]) -> str:
    counts = Counter(items)
    if len(counts) == 1:
        n = len(items)
        return f"{next(iter(counts))} ({'the one result' if n == 1 else f'all {n:,} results'})"
    return "; ".join(
        f"{text} ({fmt_count(n, 'result', 'results')})"
        for text, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


_MADE_BY: Final = (
    "`gharuntime leaderboard`; do not edit by hand (`gharuntime leaderboard --check` says "
    "when it is stale)"
)


def render_summary(
    title: str,
    entries: Sequence[Entry],
    *,
    made_by: str = _MADE_BY,
    trained: str | None = None,
) -> str:
    """The summary of one folder's results (`title`: its name); the same results give the same
    text, whatever order they come in. Transfer results (trained on another dataset) come in a
    table of their own, each row saying what it was trained and scored on. `made_by`: what
    writes it (Markdown); `trained`: the heading of the plain results' table, where they were
    not trained on the folder's own train split."""
    ordered = sorted(entries, key=_order)
    plain = [e for e in ordered if not e.trained_on]
    transfer = [e for e in ordered if e.trained_on]
    revisions = [
        _code(rev) if (rev := e.result["dataset"].get("revision")) else "not stated"
        for e in ordered
    ]
    lines = [
        f"# {md(title)}",
        "",
        f"Generated from the {len(ordered)} results in this folder by {made_by}. "
        f"RMSLE, within 2× and the P10–P90 range's coverage on `{RANK_TARGET}`; brackets hold "
        "the result's bootstrap interval; — where a result has no such figure. The "
        "leaderboard ranks the same results with every metric.",
        "",
        f"- Dataset revision: {_counted(revisions)}.",
        f"- Scored by {_counted([_scored_by(e.result) for e in ordered])}.",
        f"- Intervals: {_counted([_bootstrap(e.result) for e in ordered])}.",
        "",
    ]
    if plain:
        lines += [
            "## " + (trained or f"Trained on {md(title)}'s own train split"),
            "",
            "| config | track | method " + _HEAD,
            "| --- | --- | --- " + "| ---: " * 5 + "|",
        ]
        for e in plain:
            row = [_bare(e.config), _bare(e.track), md(e.method), *_cells(e)]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
        daggers = _daggers(plain)
        lines += [*daggers, ""] if daggers else []
    if transfer:
        lines += [
            "## Transfer: trained on another dataset",
            "",
            "| what | track | method " + _HEAD,
            "| --- | --- | --- " + "| ---: " * 5 + "|",
        ]
        for e in transfer:
            row = [md(transfer_label(e)), _bare(e.track), md(e.method), *_cells(e)]
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
        daggers = _daggers(transfer)
        lines += [*daggers, ""] if daggers else []
    return "\n".join(lines).rstrip("\n") + "\n"
