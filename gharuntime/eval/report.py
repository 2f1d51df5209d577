"""The result of an evaluation: a versioned JSON document (written atomically) and the tables a
person reads in the terminal."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Final

import numpy as np

from gharuntime.contract import PRIMARY_TARGET
from gharuntime.eval.bootstrap import CONFIDENCE, SPEARMAN_NOTE, CellResult, interval
from gharuntime.eval.evaluate import Method, Scores, TargetScores
from gharuntime.eval.metrics import METRICS
from gharuntime.paths import make_temp_file
from gharuntime.version import __version__

__all__ = ["RESULT_VERSION", "render_tables", "result_json", "write_result"]

RESULT_VERSION: Final = 1
"""Bump on any change a reader of result files could notice."""

_FAILURE: Final = (
    "A record with no prediction (scored only with --allow-partial) is a failure: it is scored "
    "as the prediction 0 for MAE, APE, RMSLE, R² and Spearman, and always counts outside 2×."
)


def _num(x: float) -> float | None:
    return None if not math.isfinite(x) else float(x)


def _metric_block(cell: CellResult) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in METRICS:
        ci = interval(cell.resamples[m.name])
        out[m.name] = {
            "value": _num(cell.point[m.name]),
            "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None,
            "higher_is_better": m.higher_is_better,
        }
    return out


def _difference(a: CellResult, b: CellResult) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in METRICS:
        ci = interval(a.resamples[m.name] - b.resamples[m.name])
        out[m.name] = {
            "value": _num(a.point[m.name] - b.point[m.name]),
            "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None,
            "higher_is_better": m.higher_is_better,
        }
    return out


def _group(cell: CellResult) -> dict[str, Any]:
    return {"rows": cell.rows, "repositories": cell.repositories, "metrics": _metric_block(cell)}


def _method_json(method: Method, targets: dict[str, TargetScores]) -> dict[str, Any]:
    return {
        "name": method.name,
        "meta": method.meta.to_json(),
        "submission": dict(method.source),
        "counts": {
            "missing": int(np.count_nonzero(~method.present)),
            "scored": {t: s.overall.rows for t, s in targets.items()},
            "without_truth": {t: s.without_truth for t, s in targets.items()},
        },
        "metrics": {t: _metric_block(s.overall) for t, s in targets.items()},
        "breakdowns": {
            t: {name: {g: _group(c) for g, c in gs.items()} for name, gs in s.breakdowns.items()}
            for t, s in targets.items()
        },
    }


def result_json(scores: Scores) -> dict[str, Any]:
    """The result document: the first method is the submission, a second one (--vs, or the
    constant median of --gold) is compared with it, A minus B, on the same resamples."""
    truth = scores.truth
    first = _method_json(scores.methods[0], scores.targets[0])
    result: dict[str, Any] = {
        "result_version": RESULT_VERSION,
        "gharuntime_version": __version__,
        "dataset": {
            "id": truth.dataset.id,
            "kind": truth.dataset.kind,
            "revision": truth.revision,
            "manifest_sha256": truth.manifest_sha256,
            "schema_version": truth.schema_version,
            "config": truth.config,
            "split": truth.split,
            "rows": truth.rows,
            "repositories": int(truth.repo_ids.shape[0]),
            "duration_decile_edges": [float(e) for e in truth.decile_edges()],
        },
        "track": scores.track,
        "bootstrap": {
            "seed": scores.bootstrap.seed,
            "resamples": scores.bootstrap.resamples,
            "cluster": "repo_id",
            "clusters": scores.bootstrap.clusters,
            "confidence": CONFIDENCE,
            "interval": "percentile",
            "spearman": SPEARMAN_NOTE,
        },
        "metric_definitions": {
            m.name: {
                "label": m.label,
                "unit": m.unit,
                "higher_is_better": m.higher_is_better,
                "meaning": m.meaning,
            }
            for m in METRICS
        },
        "failure": _FAILURE,
        **{k: first[k] for k in ("name", "meta", "submission", "counts", "metrics", "breakdowns")},
        "comparison": None,
    }
    if len(scores.methods) > 1:
        second = _method_json(scores.methods[1], scores.targets[1])
        second["difference"] = {
            t: _difference(scores.targets[0][t].overall, scores.targets[1][t].overall)
            for t in scores.targets[0]
        }
        result["comparison"] = second
    return result


def write_result(result: dict[str, Any], out: Path) -> None:
    """Write the result JSON atomically: a temporary file beside `out`, then a rename."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = make_temp_file(out)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2, allow_nan=False)
            f.write("\n")
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fmt(metric: str, value: float | None, unit: str = "s") -> str:
    if value is None:
        return "—"
    if metric == "mae":
        return f"{value:,.1f} {unit}" if abs(value) < 1e6 else f"{value:.3g} {unit}"
    if metric in ("median_ape", "within_2x"):
        return f"{100 * value:.1f}%"
    return f"{value:.3f}"


def _with_ci(metric: str, block: dict[str, Any], unit: str) -> str:
    value = _fmt(metric, block["value"], unit)
    if block["ci_low"] is None:
        return value
    low = _fmt(metric, block["ci_low"], "").strip()
    high = _fmt(metric, block["ci_high"], "").strip()
    return f"{value} [dim]\\[{low}, {high}][/dim]"


_BREAKDOWN_LABELS: Final = {
    "runner_os": "OS",
    "duration_decile": "decile",
    "repo_seen_in_training": "repo in train",
}


def render_tables(result: dict[str, Any]) -> list[Any]:
    """Rich renderables for a result document: one table per target (value and interval, and
    with a comparison the other method and the difference), then the primary target's
    breakdowns."""
    from rich.table import Table

    units = {"duration_s": "s", "queue_s": "s", "log_bytes": "B"}
    comparison = result.get("comparison")
    pct = int(100 * result["bootstrap"]["confidence"])
    tables: list[Any] = []
    for target, metrics in result["metrics"].items():
        unit = units.get(target, "")
        title = (
            f"{target} · {result['dataset']['config']}/{result['dataset']['split']} · "
            f"{result['counts']['scored'][target]:,} records, "
            f"{result['dataset']['repositories']:,} repositories · {pct}% intervals"
        )
        table = Table(title=title, title_justify="left")
        table.add_column("metric")
        table.add_column(f"A: {result['name']}" if comparison else result["name"], justify="right")
        if comparison:
            table.add_column(f"B: {comparison['name']}", justify="right")
            table.add_column("A − B", justify="right")
        for m in METRICS:
            block = metrics[m.name]
            arrow = "↑" if m.higher_is_better else "↓"
            row = [f"{m.label} {arrow}", _with_ci(m.name, block, unit)]
            if comparison:
                row += [
                    _fmt(m.name, comparison["metrics"][target][m.name]["value"], unit),
                    _with_ci(m.name, comparison["difference"][target][m.name], unit),
                ]
            table.add_row(*row)
        tables.append(table)
    breakdowns = result["breakdowns"].get(PRIMARY_TARGET)
    if breakdowns:
        table = Table(title=f"{PRIMARY_TARGET} by group · {result['name']}", title_justify="left")
        shown = ("mae", "median_ape", "within_2x", "spearman")
        table.add_column("group")
        table.add_column("records", justify="right")
        table.add_column("repos", justify="right")
        for name in shown:
            table.add_column(next(m.label for m in METRICS if m.name == name), justify="right")
        for breakdown, groups in breakdowns.items():
            label = _BREAKDOWN_LABELS.get(breakdown, breakdown)
            for i, (group, entry) in enumerate(groups.items()):
                table.add_row(
                    f"{label}: {group}",
                    f"{entry['rows']:,}",
                    f"{entry['repositories']:,}",
                    *(_fmt(n, entry["metrics"][n]["value"]) for n in shown),
                    end_section=i == len(groups) - 1,
                )
        tables.append(table)
    return tables
