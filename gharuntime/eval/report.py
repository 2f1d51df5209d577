"""The result of an evaluation: a versioned JSON document (written atomically) and the tables a
person reads in the terminal."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any, Final

import numpy as np

from gharuntime.contract import PRIMARY_TARGET, TRACKS
from gharuntime.eval.bootstrap import (
    CONFIDENCE,
    SPEARMAN_EXACT,
    SPEARMAN_NOTE,
    CellResult,
    interval,
)
from gharuntime.eval.evaluate import Predictions, Scores, TargetScores
from gharuntime.eval.metrics import (
    HEADLINE_METRICS,
    INTERVAL_METRIC_BY_NAME,
    INTERVAL_METRICS,
    METRIC_BY_NAME,
    METRICS,
)
from gharuntime.eval.quantiles import QuantileLevels
from gharuntime.eval.shift import split_shift
from gharuntime.eval.truth import Truth
from gharuntime.paths import write_atomic
from gharuntime.version import __version__

__all__ = [
    "PER_RESAMPLE_METRICS",
    "RESULT_VERSION",
    "SAMPLE_SEED",
    "SAMPLE_SIZE",
    "SUMMARY_MEANING",
    "SUMMARY_METRICS",
    "render_tables",
    "result_json",
    "write_result",
]

RESULT_VERSION: Final = 2
"""Bump on any change a reader of result files could notice.

2: `bootstrap.per_resample` (the submission's value of the primary metrics in every resample,
so two results on the same resamples can be compared pairwise), `bootstrap.repo_ids_sha256` and
`dataset.record_ids_sha256` (to prove two results share resamples and records),
`dataset.source_kind` and `dataset.synthetic`, and `plot_data` (a fixed-seed sample of
(actual, predicted) pairs and the quantiles of |ln(p'/y')|). Optional, without a bump:
`dataset.rows_group_in_train` (scored rows whose job group, repository + workflow path + job
name, the train split holds; null where the rows do not say), which the leaderboard captions
quote. Optional, without a bump: `targets` (the track's targets scored, those the dataset
holds, and those left out with the reason: gharuntime.targets) and, on a track of several
targets (multi), `summary` (SUMMARY_MEANING: the mean over the scored targets of each one's
RMSLE and within-2x, with its per-resample values; a comparison's `summary` and
`summary_difference` likewise), which the leaderboard ranks a multi table by."""

SUMMARY_METRICS: Final = ("rmsle", "within_2x")
"""The metrics a multi result summarises over its targets (their mean); RMSLE ranks."""
SUMMARY_MEANING: Final = (
    "the mean over the scored targets of each target's metric (RMSLE, within 2×), every "
    "target weighing the same; its 95% interval from the same repository resamples (the mean "
    "in each resample), so two methods' summaries compare pairwise"
)

PER_RESAMPLE_METRICS: Final = tuple(m.name for m in HEADLINE_METRICS)
"""The metrics whose per-resample values a result stores (the leaderboard's columns)."""
SAMPLE_SEED: Final = 0
SAMPLE_SIZE: Final = 500
"""The (actual, predicted) sample: the same records for every method scored on a split."""
_QUANTILES: Final = 101  # 0%, 1%, ..., 100%
_PER_RESAMPLE_DIGITS: Final = 7  # significant digits kept of each per-resample value
_NUMBER_LIST: Final = re.compile(
    r"\[\n\s+((?:-?\d[\d.eE+-]*|null)(?:,\n\s+(?:-?\d[\d.eE+-]*|null))*)\n\s*\]"
)
"""A list of numbers as json.dumps(indent=2) writes it, one per line. A newline never occurs
inside a JSON string (it is escaped), so this matches only real lists."""

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


def _sig(x: float) -> float | None:
    """`x` to 7 significant digits (null when undefined): exact enough for any interval shown
    with 3 digits, and half the bytes."""
    return float(f"{x:.{_PER_RESAMPLE_DIGITS}g}") if math.isfinite(x) else None


def _per_resample(targets: dict[str, TargetScores]) -> dict[str, dict[str, list[float | None]]]:
    """Every resample's value of the primary metrics (7 significant digits; null where
    undefined), per target."""
    return {
        t: {m: [_sig(v) for v in s.overall.resamples[m].tolist()] for m in PER_RESAMPLE_METRICS}
        for t, s in targets.items()
    }


def _sha256_ids(truth: Truth) -> str:
    """sha256 of the ids joined by newlines (joined by polars: a million Python strings cost
    more than the hash)."""
    joined = truth.ids.str.join("\n").item() if truth.ids.len() else ""
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def _plot_data(truth: Truth, method: Predictions) -> dict[str, Any]:
    """A fixed-seed sample of (actual, predicted) pairs of the primary target (the same records
    for every method on this split; a failure's prediction is null), and the quantiles of
    |ln(p'/y')| over every scored record (p' = max(p, 1), y' = max(y, 1), as within 2×; a
    failure counts as infinitely far, shown as null)."""
    y = truth.targets[PRIMARY_TARGET]
    p = method.predictions[PRIMARY_TARGET]
    scored = np.flatnonzero(np.isfinite(y))
    rng = np.random.default_rng(SAMPLE_SEED)
    size = min(SAMPLE_SIZE, scored.shape[0])
    rows = np.sort(rng.choice(scored, size=size, replace=False)) if size else scored[:0]
    failed = ~method.present[scored] | ~np.isfinite(p[scored])
    ratio = np.full(scored.shape[0], np.inf)
    ok = ~failed
    ratio[ok] = np.abs(
        np.log(np.maximum(p[scored][ok], 1.0)) - np.log(np.maximum(y[scored][ok], 1.0))
    )
    qs = np.linspace(0.0, 1.0, _QUANTILES)
    values = np.quantile(ratio, qs, method="inverted_cdf") if scored.shape[0] else qs * np.nan
    return {
        "target": PRIMARY_TARGET,
        "sample": {
            "seed": SAMPLE_SEED,
            "size": int(size),
            "actual": [_num(v) for v in y[rows].tolist()],
            "predicted": [
                _num(v) if method.present[r] else None
                for r, v in zip(rows.tolist(), p[rows].tolist(), strict=True)
            ],
        },
        "abs_log_ratio_quantiles": {
            "q": [round(float(q), 2) for q in qs],
            "value": [_num(v) for v in values.tolist()],
        },
    }


def _summary_series(targets: dict[str, TargetScores]) -> dict[str, tuple[float, Any]]:
    """Per summary metric: the mean over the targets of its point, and of its resamples
    (resample by resample: the same resamples for every target)."""
    out: dict[str, tuple[float, Any]] = {}
    for m in SUMMARY_METRICS:
        point = float(np.mean([s.overall.point[m] for s in targets.values()]))
        values = np.mean(np.stack([s.overall.resamples[m] for s in targets.values()]), axis=0)
        out[m] = (point, values)
    return out


def _summary_block(series: dict[str, tuple[float, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m, (point, values) in series.items():
        ci = interval(values)
        out[m] = {
            "value": _num(point),
            "ci_low": ci[0] if ci else None,
            "ci_high": ci[1] if ci else None,
            "higher_is_better": METRIC_BY_NAME[m].higher_is_better,
        }
    return out


def _summary_json(targets: dict[str, TargetScores]) -> dict[str, Any]:
    """The multi summary of one method: its estimates and per-resample values."""
    series = _summary_series(targets)
    return {
        "meaning": SUMMARY_MEANING,
        "targets": list(targets),
        "metrics": _summary_block(series),
        "per_resample": {
            m: [_sig(v) for v in values.tolist()] for m, (_, values) in series.items()
        },
    }


def _summary_difference(a: dict[str, TargetScores], b: dict[str, TargetScores]) -> dict[str, Any]:
    sa, sb = _summary_series(a), _summary_series(b)
    return _summary_block({m: (sa[m][0] - sb[m][0], sa[m][1] - sb[m][1]) for m in sa})


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


HEADLINE_INTERVAL: Final = "p10-p90"
"""The central interval the leaderboard shows and every result stores per resample."""

Series = dict[str, tuple[float, Any]]  # term -> (point, per-resample values)


def _interval_series(cell: CellResult, levels: QuantileLevels) -> Series:
    """Every interval term's point and resamples, with |coverage - nominal| added."""
    out: Series = {n: (cell.point[n], cell.resamples[n]) for n in cell.point}
    for pair in levels.central:
        name = levels.interval_name(pair)
        nominal = levels.nominal(pair)
        point, values = out[f"coverage:{name}"]
        out[f"coverage_error:{name}"] = (abs(point - nominal), np.abs(values - nominal))
    return out


def _estimate(point: float, values: Any, metric: str) -> dict[str, Any]:
    ci = interval(values)
    return {
        "value": _num(point),
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "higher_is_better": INTERVAL_METRIC_BY_NAME[metric].higher_is_better,
    }


def _interval_block(series: Series, levels: QuantileLevels) -> dict[str, Any]:
    """Coverage, its error and the log width of each central interval; the share at or
    below and the pinball loss of each level; the mean pinball loss."""

    def est(metric: str, suffix: str = "") -> dict[str, Any]:
        key = f"{metric}:{suffix}" if suffix else metric
        return _estimate(*series[key], metric)

    return {
        "central": {
            levels.interval_name(pair): {
                "nominal": levels.nominal(pair),
                **{
                    m: est(m, levels.interval_name(pair))
                    for m in ("coverage", "coverage_error", "log_width")
                },
            }
            for pair in levels.central
        },
        "levels": {
            name: {
                "nominal": frac,
                "calibration": est("calibration", name),
                "pinball": est("pinball", name),
            }
            for name, frac in zip(levels.names, levels.fractions, strict=True)
        },
        "mean_pinball": est("mean_pinball"),
    }


def _common_levels(a: QuantileLevels, b: QuantileLevels) -> tuple[str, ...]:
    """The levels both sidecars give, ascending: what A − B compares."""
    theirs = set(b.names)
    return tuple(n for n in a.names if n in theirs)


def _mean_pinball(series: Series, names: tuple[str, ...]) -> tuple[float, Any]:
    """The mean pinball loss over `names` only: the mean of those levels' means, which is the
    mean of the per-row means over them (the same rows weigh the same in every resample)."""
    point = float(np.mean([series[f"pinball:{n}"][0] for n in names]))
    values = np.mean(np.stack([series[f"pinball:{n}"][1] for n in names]), axis=0)
    return point, values


def _interval_difference(
    a: Series, b: Series, la: QuantileLevels, lb: QuantileLevels
) -> dict[str, Any]:
    """A − B of every interval term both sidecars have (same resamples, so paired). The mean
    pinball loss averages each side's own levels, so with different level sets it is compared
    over the levels both give (`_common_levels`), never over two different sets."""
    out = {
        key: _estimate(a[key][0] - b[key][0], a[key][1] - b[key][1], key.split(":")[0])
        for key in a
        if key in b
    }
    if la.names != lb.names:
        (pa, va), (pb, vb) = (_mean_pinball(s, _common_levels(la, lb)) for s in (a, b))
        out["mean_pinball"] = _estimate(pa - pb, va - vb, "mean_pinball")
    return out


def _intervals_json(method: Predictions, targets: dict[str, TargetScores]) -> dict[str, Any] | None:
    q = method.quantiles
    if q is None:
        return None
    series = {
        t: _interval_series(s.intervals, q.levels)
        for t, s in targets.items()
        if s.intervals is not None
    }
    stored = [f"coverage:{HEADLINE_INTERVAL}", f"log_width:{HEADLINE_INTERVAL}", "mean_pinball"]
    return {
        "sidecar": q.to_json(),
        "levels": list(q.levels.names),
        "headline": HEADLINE_INTERVAL,
        "metrics": {t: _interval_block(ser, q.levels) for t, ser in series.items()},
        "per_resample": {
            t: {k: [_sig(v) for v in ser[k][1].tolist()] for k in stored if k in ser}
            for t, ser in series.items()
        },
    }


def _group(
    cell: CellResult, intervals: CellResult | None, levels: QuantileLevels | None
) -> dict[str, Any]:
    out = {"rows": cell.rows, "repositories": cell.repositories, "metrics": _metric_block(cell)}
    if intervals is not None and levels is not None:
        out["intervals"] = {
            levels.interval_name(pair): {
                "nominal": levels.nominal(pair),
                **{
                    m: _estimate(
                        intervals.point[f"{m}:{levels.interval_name(pair)}"],
                        intervals.resamples[f"{m}:{levels.interval_name(pair)}"],
                        m,
                    )
                    for m in ("coverage", "log_width")
                },
            }
            for pair in levels.central
        }
    return out


def _method_json(method: Predictions, targets: dict[str, TargetScores]) -> dict[str, Any]:
    levels = method.quantiles.levels if method.quantiles is not None else None
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
            t: {
                name: {
                    g: _group(c, s.interval_breakdowns.get(name, {}).get(g), levels)
                    for g, c in gs.items()
                }
                for name, gs in s.breakdowns.items()
            }
            for t, s in targets.items()
        },
        "intervals": _intervals_json(method, targets),
    }


def _split_shift(scores: Scores) -> dict[str, Any]:
    """The scored targets' move from the validation split (gharuntime.eval.shift), where a
    test split is scored and the dataset has one."""
    truth = scores.truth
    scored = {t: truth.targets[t] for t in scores.targets[0]}
    reference = {t: v for t, v in truth.reference.items() if t in scored}
    return split_shift(reference, scored, "validation")


def result_json(scores: Scores) -> dict[str, Any]:
    """The result document: the first method is the submission, a second one (--vs, or the
    constant median of --gold) is compared with it, A minus B, on the same resamples."""
    truth = scores.truth
    first = _method_json(scores.methods[0], scores.targets[0])
    several = len(TRACKS[scores.track].targets) > 1  # multi: its targets, and their summary
    summarised = several and bool(scores.targets[0])
    result: dict[str, Any] = {
        "result_version": RESULT_VERSION,
        "gharuntime_version": __version__,
        "dataset": {
            "id": truth.dataset.id,
            "kind": truth.dataset.kind,
            "revision": truth.revision,
            "commit": truth.dataset.commit,
            "manifest_sha256": truth.manifest_sha256,
            "schema_version": truth.schema_version,
            "config": truth.config,
            "split": truth.split,
            "rows": truth.rows,
            "record_ids_sha256": _sha256_ids(truth),
            "repositories": int(truth.repo_ids.shape[0]),
            "rows_group_in_train": truth.group_seen,
            "source_kind": truth.source_kind,
            "synthetic": truth.synthetic,
            "duration_decile_edges": [float(e) for e in truth.decile_edges()],
            **({"split_shift": shift} if (shift := _split_shift(scores)) else {}),
        },
        "track": scores.track,
        **({"targets": scores.held.to_json()} if several else {}),
        "bootstrap": {
            "seed": scores.bootstrap.seed,
            "resamples": scores.bootstrap.resamples,
            "cluster": truth.cluster_by,
            "clusters": scores.bootstrap.clusters,
            "repo_ids_sha256": hashlib.sha256(
                scores.bootstrap.repo_ids.astype("<i8").tobytes()
            ).hexdigest(),
            "confidence": CONFIDENCE,
            "interval": "percentile",
            "spearman": SPEARMAN_EXACT
            if all(s.overall.spearman_exact for s in scores.targets[0].values())
            else SPEARMAN_NOTE,
            "per_resample": _per_resample(scores.targets[0]),
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
        "intervals": first["intervals"],
        **({"summary": _summary_json(scores.targets[0])} if summarised else {}),
        "plot_data": _plot_data(truth, scores.methods[0]),
        "comparison": None,
    }
    if len(scores.methods) > 1:
        second = _method_json(scores.methods[1], scores.targets[1])
        second["difference"] = {
            t: _difference(scores.targets[0][t].overall, scores.targets[1][t].overall)
            for t in scores.targets[0]
        }
        if summarised:
            second["summary"] = _summary_json(scores.targets[1])
            second["summary_difference"] = _summary_difference(scores.targets[0], scores.targets[1])
        a, b = scores.methods[0].quantiles, scores.methods[1].quantiles
        if a is not None and b is not None:
            second["intervals_difference"] = {
                t: _interval_difference(
                    _interval_series(sa.intervals, a.levels),
                    _interval_series(sb.intervals, b.levels),
                    a.levels,
                    b.levels,
                )
                for t, sa in scores.targets[0].items()
                if (sb := scores.targets[1][t]).intervals is not None and sa.intervals is not None
            }
            if a.levels.names != b.levels.names:
                common = _common_levels(a.levels, b.levels)
                second["intervals_levels_compared"] = list(common)
                result["warnings"] = [
                    f"the two quantile sidecars give different levels (A: "
                    f"{', '.join(a.levels.names)}; B: {', '.join(b.levels.names)}): A − B is "
                    f"shown only for the levels both give, and the mean pinball loss A − B "
                    f"averages those levels alone ({', '.join(common)})"
                ]
        result["comparison"] = second
    if any(m.quantiles is not None for m in scores.methods):
        result["interval_metric_definitions"] = {
            m.name: {
                "label": m.label,
                "unit": m.unit,
                "higher_is_better": m.higher_is_better,
                "per": m.per,
                "meaning": m.meaning,
            }
            for m in INTERVAL_METRICS
        }
    return result


def write_result(result: dict[str, Any], out: Path) -> None:
    """Write the result JSON atomically: a temporary file beside `out`, then a rename."""
    text = json.dumps(result, indent=2, allow_nan=False)
    # lists of numbers (per-resample values, samples) on one line each, not one per line
    text = _NUMBER_LIST.sub(lambda m: "[" + re.sub(r",\n\s+", ", ", m[1]) + "]", text)
    write_atomic(out.resolve(), text + "\n")


def _fmt(metric: str, value: float | None, unit: str = "s") -> str:
    return METRIC_BY_NAME[metric].format(value, unit)


def _value_ci(value: str, low: str | None = None, high: str | None = None) -> Any:
    """A table cell: the value, then its interval dimmed (a rich Text: the consoles read no
    markup, so a `[dim]` written in the string would show as it is)."""
    from rich.text import Text

    if low is None:
        return Text(value)
    return Text.assemble(value, (f" [{low}, {high}]", "dim"))


def _with_ci(metric: str, block: dict[str, Any], unit: str) -> Any:
    value = _fmt(metric, block["value"], unit)
    if block["ci_low"] is None:
        return _value_ci(value)
    low = _fmt(metric, block["ci_low"], "").strip()
    high = _fmt(metric, block["ci_high"], "").strip()
    return _value_ci(value, low, high)


_BREAKDOWN_LABELS: Final = {
    "runner_os": "OS",
    "duration_decile": "decile",
    "repo_seen_in_training": "repo in train",
    "train_recency": "group last in train",
}


def _interval_tables(result: dict[str, Any], intervals: dict[str, Any], pct: int) -> list[Any]:
    """Per target: coverage and log width of each central interval, then the calibration
    table (nominal share at or below each level against the observed one) and pinball loss;
    with a comparison, B's values and A − B."""
    from rich.markup import escape
    from rich.table import Table

    comparison = result.get("comparison") or {}
    other = (comparison.get("intervals") or {}).get("metrics", {})
    diff = comparison.get("intervals_difference") or {}
    m = INTERVAL_METRIC_BY_NAME
    tables = []
    for target, block in intervals["metrics"].items():
        table = Table(
            title=f"{target} intervals · {result['name']} · levels "
            f"{', '.join(intervals['levels'])} · {pct}% intervals",
            title_justify="left",
        )
        table.add_column("metric")
        table.add_column("nominal", justify="right")
        table.add_column(f"A: {result['name']}" if other else "observed", justify="right")
        if other:
            table.add_column(f"B: {comparison['name']}", justify="right")
            table.add_column("A − B", justify="right")
        rows: list[
            tuple[str, str, str, dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]
        ] = []
        for name, c in block["central"].items():
            o = other.get(target, {}).get("central", {}).get(name)
            for metric in ("coverage", "coverage_error", "log_width"):
                nominal = f"{100 * c['nominal']:.0f}%" if metric == "coverage" else ""
                rows.append(
                    (
                        f"{name} {m[metric].label}",
                        metric,
                        nominal,
                        c[metric],
                        o[metric] if o else None,
                        diff.get(target, {}).get(f"{metric}:{name}"),
                    )
                )
        for name, lv in block["levels"].items():
            o = other.get(target, {}).get("levels", {}).get(name)
            for metric in ("calibration", "pinball"):
                nominal = f"{100 * lv['nominal']:g}%" if metric == "calibration" else ""
                rows.append(
                    (
                        f"{name} {m[metric].label}",
                        metric,
                        nominal,
                        lv[metric],
                        o[metric] if o else None,
                        diff.get(target, {}).get(f"{metric}:{name}"),
                    )
                )
        o_mean = other.get(target, {}).get("mean_pinball")
        rows.append(
            (
                m["mean_pinball"].label,
                "mean_pinball",
                "",
                block["mean_pinball"],
                o_mean,
                diff.get(target, {}).get("mean_pinball"),
            )
        )
        for label, metric, nominal, a, b, d in rows:
            row = [label, nominal, _interval_with_ci(metric, a)]
            if other:
                row += [
                    m[metric].format(b["value"]) if b else "—",
                    _interval_with_ci(metric, d) if d else "—",
                ]
            table.add_row(*row)
        shift = ((result.get("dataset") or {}).get("split_shift") or {}).get(target)
        if shift:  # how far the target itself moved from where ranges are calibrated
            table.caption = escape(
                f"the {shift['reference_split']} split's own p10-p90 of {target} holds "
                f"{100 * shift['inside']:.1f}% of these jobs ({100 * shift['below']:.1f}% below, "
                f"{100 * shift['above']:.1f}% above; 80% when the target did not move)"
            )
            table.caption_justify = "left"
        tables.append(table)
    return tables


def _interval_with_ci(metric: str, block: dict[str, Any]) -> Any:
    spec = INTERVAL_METRIC_BY_NAME[metric]
    value = spec.format(block["value"])
    if block["ci_low"] is None:
        return _value_ci(value)
    return _value_ci(value, spec.format(block["ci_low"]), spec.format(block["ci_high"]))


def _summary_tables(result: dict[str, Any], pct: int) -> list[Any]:
    """A multi result's summary over its targets (with a comparison: B's and A − B), and a
    line per target left out, saying why."""
    from rich.table import Table
    from rich.text import Text

    out: list[Any] = []
    summary = result.get("summary")
    if summary:
        comparison = result.get("comparison") or {}
        other = (comparison.get("summary") or {}).get("metrics")
        diff = comparison.get("summary_difference")
        table = Table(
            title=f"multi summary · mean over {', '.join(summary['targets'])} · {pct}% intervals",
            title_justify="left",
        )
        table.add_column("metric")
        table.add_column(f"A: {result['name']}" if other else result["name"], justify="right")
        if other and diff:
            table.add_column(f"B: {comparison['name']}", justify="right")
            table.add_column("A − B", justify="right")
        for name, block in summary["metrics"].items():
            m = METRIC_BY_NAME[name]
            row = [
                f"mean {m.label} {'↑' if m.higher_is_better else '↓'}",
                _with_ci(name, block, ""),
            ]
            if other and diff:
                row += [_fmt(name, other[name]["value"], ""), _with_ci(name, diff[name], "")]
            table.add_row(*row)
        out.append(table)
    for target, why in ((result.get("targets") or {}).get("left_out") or {}).items():
        out.append(Text(f"{target}: left out, not scored: {why}"))
    return out


def render_tables(result: dict[str, Any]) -> list[Any]:
    """Rich renderables for a result document: one table per target (value and interval, and
    with a comparison the other method and the difference), on multi the summary over the
    targets and a line per target left out, the interval tables, then the primary target's
    breakdowns."""
    from rich.table import Table

    units = {"duration_s": "s", "queue_s": "s", "log_bytes": "B"}
    comparison = result.get("comparison")
    pct = int(100 * result["bootstrap"]["confidence"])
    tables: list[Any] = []
    by_run = result["bootstrap"].get("cluster") == "run_id"
    for target, metrics in result["metrics"].items():
        unit = units.get(target, "")
        title = (
            f"{target} · {result['dataset']['config']}/{result['dataset']['split']} · "
            f"{result['counts']['scored'][target]:,} records, "
            f"{result['dataset']['repositories']:,} repositories · {pct}% intervals"
            + (" (resampling runs: under 5 repositories)" if by_run else "")
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
    tables += _summary_tables(result, pct)
    intervals = result.get("intervals")
    if intervals:
        tables += _interval_tables(result, intervals, pct)
    breakdowns = result["breakdowns"].get(PRIMARY_TARGET)
    if breakdowns:
        table = Table(title=f"{PRIMARY_TARGET} by group · {result['name']}", title_justify="left")
        shown = ("mae", "median_ape", "within_2x", "spearman")
        table.add_column("group")
        table.add_column("records", justify="right")
        table.add_column("repos", justify="right")
        for name in shown:
            table.add_column(METRIC_BY_NAME[name].label, justify="right")
        headline = HEADLINE_INTERVAL if intervals else None
        if headline:
            table.add_column(f"{headline} coverage", justify="right")
        for breakdown, groups in breakdowns.items():
            label = _BREAKDOWN_LABELS.get(breakdown, breakdown)
            for i, (group, entry) in enumerate(groups.items()):
                coverage = ((entry.get("intervals") or {}).get(headline or "") or {}).get(
                    "coverage"
                )
                table.add_row(
                    f"{label}: {group}",
                    f"{entry['rows']:,}",
                    f"{entry['repositories']:,}",
                    *(_fmt(n, entry["metrics"][n]["value"]) for n in shown),
                    *(
                        [INTERVAL_METRIC_BY_NAME["coverage"].format(coverage["value"])]
                        if coverage
                        else ["—"]
                        if headline
                        else []
                    ),
                    end_section=i == len(groups) - 1,
                )
        tables.append(table)
    return tables
