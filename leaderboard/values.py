"""Every value a result holds, checked before it is filed or ranked: the schema says which
fields exist and their types; this says what JSON Schema cannot, for every number and string in
the whole document. Numbers are finite and bounded (a 1e999, NaN or 1.7e308 would crash the
plots and tables later), strings are short single lines of printable text (a newline, CR or
control character could forge a Markdown row or hide a table), and what is drawn together has
equal lengths."""

from __future__ import annotations

import math
from typing import Any, Final

from gharuntime.eval.metrics import INTERVAL_METRIC_BY_NAME, METRIC_BY_NAME, Metric

__all__ = ["MAX_FLOAT", "MAX_STRING", "range_problems", "shape_problems", "value_problems"]

MAX_FLOAT: Final = 1e15
"""No metric, duration, byte count or timing a result holds comes near it."""
MAX_INT: Final = 2**64
MAX_STRING: Final = 10_000
_SHOWN: Final = 20  # problems listed before "and N more"


def _text_problem(text: str) -> str | None:
    if len(text) > MAX_STRING:
        return f"a string of {len(text):,} characters (at most {MAX_STRING:,})"
    for ch in text:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code <= 0xDFFF or ch in "\u2028\u2029":
            return f"a string holding the control character {ch!r}"
    return None


def value_problems(doc: Any, where: str) -> list[str]:
    """Every number that is not finite and bounded, and every string (value or key) that is
    not printable single-line text, each with its JSON path."""
    problems: list[str] = []
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        at, item = stack.pop()
        problem = None
        if isinstance(item, dict):
            for key, value in item.items():
                key_problem = _text_problem(str(key))
                if key_problem:
                    problems.append(f"{where}: {at or '(top level)'}: a key is {key_problem}")
                    continue
                stack.append((f"{at}/{key}" if at else str(key), value))
        elif isinstance(item, list):
            stack.extend((f"{at}/{i}", v) for i, v in enumerate(item))
        elif isinstance(item, bool) or item is None:
            pass
        elif isinstance(item, int):
            if abs(item) > MAX_INT:
                problem = f"the integer {str(item)[:30]}… is beyond ±2**64"
        elif isinstance(item, float):
            if not math.isfinite(item) or abs(item) > MAX_FLOAT:
                problem = f"the number {item!r} is not finite or beyond ±{MAX_FLOAT:g}"
        elif isinstance(item, str):
            problem = _text_problem(item)
            if problem:
                problem = f"{problem}; results hold single lines of printable text"
        if problem:
            problems.append(f"{where}: {at or '(top level)'}: {problem}")
    problems.sort()
    if len(problems) > _SHOWN:
        problems = [*problems[:_SHOWN], f"{where}: … and {len(problems) - _SHOWN:,} more"]
    return problems


def _negative_counts(value: Any, at: str) -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _negative_counts(v, f"{at}/{k}")]
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return []
    return [f"{at}: {value!r} is not a count (a whole number, 0 or more)"]


def _out_of_range(metric: Metric, block: Any, at: str) -> list[str]:
    """A metric's value and interval bounds within what the metric can take, low ≤ high."""
    if not isinstance(block, dict):
        return []
    low, high = metric.bounds
    found = []
    for key in ("value", "ci_low", "ci_high"):
        value = block.get(key)
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and not (low <= value <= high)
        ):
            found.append(
                f"{at}/{key}: {value!r} is outside what {metric.label} can be [{low:g}, {high:g}]"
            )
    a, b = block.get("ci_low"), block.get("ci_high")
    if isinstance(a, int | float) and isinstance(b, int | float) and a > b:
        found.append(f"{at}: its interval's low end {a!r} is above its high end {b!r}")
    return found


def _interval_ranges(node: Any, at: str) -> list[str]:
    """Every interval metric block under `node` (intervals/metrics/TARGET/...), by its name."""
    if not isinstance(node, dict):
        return []
    found = []
    for key, child in node.items():
        metric = INTERVAL_METRIC_BY_NAME.get(key)
        if metric is not None and isinstance(child, dict) and "value" in child:
            found += _out_of_range(metric, child, f"{at}/{key}")
        else:
            found += _interval_ranges(child, f"{at}/{key}")
    return found


def range_problems(doc: dict[str, Any]) -> list[str]:
    """Values no metric can take: a coverage of 500%, an RMSLE of -1, a Spearman ρ of 7, an
    interval whose low end is above its high end, a negative width, a resample out of range.
    Each metric declares its range once (`Metric.bounds`)."""
    found: list[str] = []
    for target, metrics in (doc.get("metrics") or {}).items():
        for name, block in (metrics or {}).items():
            metric = METRIC_BY_NAME.get(name)
            if metric is not None:
                found += _out_of_range(metric, block, f"metrics/{target}/{name}")
    per_resample = (doc.get("bootstrap") or {}).get("per_resample") or {}
    for target, metrics in per_resample.items():
        for name, values in (metrics or {}).items():
            metric = METRIC_BY_NAME.get(name)
            if metric is None or not isinstance(values, list):
                continue
            low, high = metric.bounds
            bad = [v for v in values if isinstance(v, int | float) and not low <= v <= high]
            if bad:
                found.append(
                    f"bootstrap/per_resample/{target}/{name}: {len(bad)} value(s) outside "
                    f"[{low:g}, {high:g}], e.g. {bad[0]!r}"
                )
    intervals = (doc.get("intervals") or {}).get("metrics")
    found += _interval_ranges(intervals, "intervals/metrics")
    # each breakdown group's interval coverage and width (its point metrics hold no interval
    # metric's name, so only those are read here)
    found += _interval_ranges(doc.get("breakdowns"), "breakdowns")
    return found


def shape_problems(doc: dict[str, Any], where: str) -> list[str]:
    """What must agree inside a schema-valid result: every scored target counted (counts are
    whole numbers, not negative), timings not negative, plot series of equal lengths, and
    every metric within the values it can take (`range_problems`)."""
    problems = [f"{where}: {p}" for p in _negative_counts(doc["counts"], "counts")]
    problems += [f"{where}: {p}" for p in range_problems(doc)]
    scored = doc["counts"]["scored"]
    for target in doc["metrics"]:
        if target not in scored:
            problems.append(f"{where}: counts/scored has no count for the target {target!r}")
    extra = doc["meta"].get("extra")
    timing = extra.get("timing") if isinstance(extra, dict) else None
    if isinstance(timing, dict):
        for key, value in timing.items():
            if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
                problems.append(f"{where}: meta/extra/timing/{key}: {value!r} is negative")
    sample = doc["plot_data"]["sample"]
    if len(sample["actual"]) != len(sample["predicted"]):
        problems.append(
            f"{where}: plot_data/sample has {len(sample['actual'])} actual and "
            f"{len(sample['predicted'])} predicted values; they come in pairs"
        )
    quantiles = doc["plot_data"]["abs_log_ratio_quantiles"]
    if len(quantiles["q"]) != len(quantiles["value"]):
        problems.append(
            f"{where}: plot_data/abs_log_ratio_quantiles has {len(quantiles['q'])} q and "
            f"{len(quantiles['value'])} values; they come in pairs"
        )
    return problems
