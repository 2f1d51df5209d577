"""What the Markdown and the page show: tables in reading order, one row per method, with the
numbers formatted once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from gharuntime.leaderboard.rank import RANK_TARGET, Ranked, rank_table
from gharuntime.leaderboard.registry import Table

__all__ = [
    "COLUMNS",
    "METRIC_COLUMNS",
    "TableView",
    "fmt_metric",
    "table_order",
    "table_views",
]

METRIC_COLUMNS: Final = (
    ("rmsle", "RMSLE", False),
    ("mae", "MAE (s)", False),
    ("median_ape", "median APE", False),
    ("within_2x", "within 2×", True),
    ("spearman", "Spearman ρ", True),
)
"""(metric, label, higher is better) in column order."""

COLUMNS: Final = (
    "group",
    "method",
    "version",
    "track",
    *(m for m, _, _ in METRIC_COLUMNS),
    "records",
    "repositories",
    "fit_s_per_1k",
    "predict_s_per_1k",
    "revision",
    "synthetic",
)

_HEADLINE: Final = {
    ("cross_repo", "config"): (
        0,
        "jobs of repositories never seen in training: what `gharuntime predict` serves",
    ),
    ("temporal", "history"): (1, "known jobs, with their earlier durations"),
    ("temporal", "config"): (
        2,
        "partly memorization: a job's identity (repository, workflow, job name) is an input "
        "and the same jobs appear in training",
    ),
    ("cross_repo", "history"): (3, "repositories never seen in training, with job history"),
}


def table_order(table: Table) -> tuple[int, str, str, str]:
    """Headline tables first (cross_repo/config, temporal/history, then temporal/config)."""
    rank, _ = _HEADLINE.get((table.config, table.track), (9, ""))
    return (rank, table.dataset, table.config, table.track)


def fmt_metric(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    if metric == "mae":
        return f"{value:,.1f}"
    if metric in ("median_ape", "within_2x"):
        return f"{100 * value:.1f}%"
    return f"{value:.3f}"


def _timing(extra: dict[str, Any], key: str) -> float | None:
    timing = extra.get("timing")
    value = timing.get(key) if isinstance(timing, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _provenance(result: dict[str, Any]) -> str:
    version = str(result.get("gharuntime_version", "?"))
    prov = result.get("provenance")
    if isinstance(prov, dict):
        version = str(prov.get("gharuntime_version") or version)
        commit = prov.get("git_commit")
        if isinstance(commit, str) and commit:
            dirty = "+dirty" if prov.get("git_dirty") else ""
            return f"{version} @ {commit[:10]}{dirty}"
    return version


def _row(r: Ranked) -> dict[str, Any]:
    res = r.entry.result
    metrics = res["metrics"][RANK_TARGET]
    extra = res["meta"].get("extra") or {}
    row: dict[str, Any] = {
        "dataset": r.entry.dataset,
        "config": r.entry.config,
        "track": r.entry.track,
        "group": r.group,
        "method": r.entry.method,
        "version": res["meta"].get("method_version") or "",
        "records": int(res["counts"]["scored"][RANK_TARGET]),
        "repositories": int(res["dataset"]["repositories"]),
        "missing": int(res["submission"]["missing"]),
        "fit_s_per_1k": _timing(extra, "fit_seconds_per_1000_jobs"),
        "predict_s_per_1k": _timing(extra, "predict_seconds_per_1000_jobs"),
        "revision": res["dataset"]["revision"],
        "synthetic": res["dataset"]["synthetic"],
        "gharuntime": _provenance(res),
        "vs_leader": list(r.vs_leader) if r.vs_leader else None,
    }
    for metric, _, _ in METRIC_COLUMNS:
        block = metrics[metric]
        row[metric] = block["value"]
        row[f"{metric}_low"] = block["ci_low"]
        row[f"{metric}_high"] = block["ci_high"]
    return row


@dataclass(frozen=True)
class TableView:
    """One (dataset, config, track) table, ranked."""

    table: Table
    ranked: list[Ranked]
    rows: list[dict[str, Any]]

    @property
    def key(self) -> str:
        return f"{self.table.dataset}/{self.table.config}/{self.table.track}"

    @property
    def note(self) -> str:
        return _HEADLINE.get((self.table.config, self.table.track), (9, ""))[1]

    @property
    def first(self) -> dict[str, Any]:
        return self.table.entries[0].result

    @property
    def warnings(self) -> list[str]:
        out: list[str] = []
        for e in self.table.entries:
            for w in e.result.get("warnings") or []:
                if str(w) not in out:
                    out.append(str(w))
        return out


def table_views(tables: list[Table]) -> list[TableView]:
    """Every table, ranked, in reading order."""
    views = []
    for table in sorted(tables, key=table_order):
        ranked = rank_table(table)
        views.append(TableView(table, ranked, [_row(r) for r in ranked]))
    return views
