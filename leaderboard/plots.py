"""The page's plots as SVG strings, drawn here so the page needs no script library and the same
results give the same bytes: a forest plot per metric (point and interval of each method), within
2× by duration decile, the CDF of |ln(p'/y')|, the ranges' calibration and their coverage by
how recently the job group last ran in training, and predicted against actual on log axes."""

from __future__ import annotations

import math
from html import escape
from typing import Final

from gharuntime.leaderboard.view import METRIC_COLUMNS, TableView, fmt_metric

__all__ = [
    "PALETTE",
    "calibration_plot",
    "cdf_plot",
    "decile_plot",
    "forest_plot",
    "recency_plot",
    "scatter_plots",
    "table_plots",
]

PALETTE: Final = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
_FONT: Final = 'font-family="system-ui,sans-serif" font-size="11"'
_CDF_MAX_RATIO: Final = 16.0


def _f(x: float) -> str:
    return f"{x:.1f}"


def _svg(kind: str, width: int, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg class="plot" data-plot="{kind}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}" {_FONT}>'
        f'<title>{escape(title)}</title><text x="8" y="14" font-weight="600">{escape(title)}</text>'
        + "".join(body)
        + "</svg>"
    )


def _nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    if not math.isfinite(low) or not math.isfinite(high) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step) * step
    ticks = []
    t = first
    while t <= high + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    return ticks


class _Scale:
    def __init__(self, d0: float, d1: float, r0: float, r1: float, log: bool = False) -> None:
        self.log = log
        self.d0, self.d1 = (math.log10(d0), math.log10(d1)) if log else (d0, d1)
        self.r0, self.r1 = r0, r1

    def __call__(self, x: float) -> float:
        v = math.log10(x) if self.log else x
        span = self.d1 - self.d0 or 1.0
        return self.r0 + (v - self.d0) / span * (self.r1 - self.r0)


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _legend(names: list[str], x: float, y: float) -> list[str]:
    out = []
    for i, name in enumerate(names):
        yy = y + 14 * i
        out.append(
            f'<rect x="{_f(x)}" y="{_f(yy - 8)}" width="10" height="10" fill="{_color(i)}"/>'
            f'<text x="{_f(x + 14)}" y="{_f(yy + 1)}">{escape(name)}</text>'
        )
    return out


def forest_plot(view: TableView, metric: str) -> str:
    """Each method's value and 95% interval of `metric`, in rank order."""
    label, up = next((lab, up) for m, lab, up in METRIC_COLUMNS if m == metric)
    rows = view.rows
    values = [
        v
        for r in rows
        for v in (r[metric], r[f"{metric}_low"], r[f"{metric}_high"])
        if v is not None
    ]
    left, right, top, step = 130, 440, 34, 20
    height = top + step * len(rows) + 30
    title = f"{label} {'↑' if up else '↓'} with 95% intervals"
    if not values:
        empty = f'<text x="{left}" y="{top + 10}">no scored records</text>'
        return _svg("forest", right + 20, height, title, [empty])
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.1 or 1.0
    x = _Scale(lo - pad, hi + pad, left, right)
    body = []
    axis_y = top + step * len(rows) + 2
    for t in _nice_ticks(lo - pad, hi + pad):
        body.append(
            f'<line x1="{_f(x(t))}" y1="{top - 6}" x2="{_f(x(t))}" y2="{_f(axis_y)}" '
            f'stroke="#e3e3e3"/><text x="{_f(x(t))}" y="{_f(axis_y + 13)}" '
            f'text-anchor="middle">{escape(fmt_metric(metric, t))}</text>'
        )
    for i, r in enumerate(rows):
        cy = top + step * i + step / 2
        group = f"group {r['group']}" if r["group"] is not None else "no group"
        body.append(
            f'<text x="{left - 8}" y="{_f(cy + 4)}" text-anchor="end">{escape(r["method"])}</text>'
        )
        if r[f"{metric}_low"] is not None and r[f"{metric}_high"] is not None:
            body.append(
                f'<line class="mark ci" x1="{_f(x(r[f"{metric}_low"]))}" y1="{_f(cy)}" '
                f'x2="{_f(x(r[f"{metric}_high"]))}" y2="{_f(cy)}" stroke="{_color(i)}" '
                'stroke-width="2"/>'
            )
        if r[metric] is not None:
            body.append(
                f'<circle class="mark point" cx="{_f(x(r[metric]))}" cy="{_f(cy)}" r="4" '
                f'fill="{_color(i)}"><title>{escape(r["method"])}: '
                f"{escape(fmt_metric(metric, r[metric]))} ({group})</title></circle>"
            )
    return _svg("forest", right + 20, height, title, body)


def _frame(x0: float, y0: float, x1: float, y1: float) -> str:
    return (
        f'<rect x="{_f(x0)}" y="{_f(y0)}" width="{_f(x1 - x0)}" height="{_f(y1 - y0)}" '
        'fill="none" stroke="#999"/>'
    )


def decile_plot(view: TableView) -> str:
    """Within 2× per decile of the true duration, one line per method."""
    left, right, top, bottom = 44, 330, 26, 200
    x = _Scale(1, 10, left + 10, right - 10)
    y = _Scale(0.0, 1.0, bottom, top)
    body = [_frame(left, top, right, bottom)]
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        body.append(
            f'<line x1="{left}" y1="{_f(y(t))}" x2="{right}" y2="{_f(y(t))}" stroke="#eee"/>'
            f'<text x="{left - 4}" y="{_f(y(t) + 4)}" text-anchor="end">{int(100 * t)}%</text>'
        )
    for d in range(1, 11):
        body.append(f'<text x="{_f(x(d))}" y="{bottom + 14}" text-anchor="middle">D{d}</text>')
    body.append(
        f'<text x="{(left + right) / 2}" y="{bottom + 28}" text-anchor="middle">'
        "decile of the true duration (D1 shortest)</text>"
    )
    for i, entry in enumerate(view.table.entries[j] for j in _entry_order(view)):
        deciles = entry.result["breakdowns"].get("duration_s", {}).get("duration_decile", {})
        points = []
        for d in range(1, 11):
            value = deciles.get(f"D{d}", {}).get("metrics", {}).get("within_2x", {}).get("value")
            if value is not None:
                points.append((x(d), y(value), d, value))
        if not points:
            continue
        path = " ".join(f"{_f(px)},{_f(py)}" for px, py, _, _ in points)
        body.append(
            f'<polyline class="mark line" points="{path}" fill="none" stroke="{_color(i)}" '
            'stroke-width="1.5"/>'
        )
        for px, py, d, value in points:
            body.append(
                f'<circle class="mark point" cx="{_f(px)}" cy="{_f(py)}" r="2.5" '
                f'fill="{_color(i)}"><title>{escape(entry.method)} D{d}: '
                f"{100 * value:.1f}%</title></circle>"
            )
    body += _legend([view.table.entries[j].method for j in _entry_order(view)], right + 12, top + 8)
    return _svg("deciles", right + 130, bottom + 36, "Within 2× by duration decile", body)


def recency_plot(view: TableView) -> str:
    """P10-P90 coverage by how recently the job's group last ran in training (eval's
    train_recency breakdown), one line per method with a quantile sidecar; nominal 80% dashed."""
    rows = [
        (i, r)
        for i, r in enumerate(view.rows)
        if any(c is not None for c, _ in r["recency_coverage"].values())
    ]
    buckets = list(dict.fromkeys(b for _, r in rows for b in r["recency_coverage"]))
    left, right, top, bottom = 44, 330, 26, 200
    x = _Scale(0, max(len(buckets) - 1, 1), left + 24, right - 24)
    y = _Scale(0.0, 1.0, bottom, top)
    body = [_frame(left, top, right, bottom)]
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        body.append(
            f'<line x1="{left}" y1="{_f(y(t))}" x2="{right}" y2="{_f(y(t))}" stroke="#eee"/>'
            f'<text x="{left - 4}" y="{_f(y(t) + 4)}" text-anchor="end">{int(100 * t)}%</text>'
        )
    body.append(
        f'<line x1="{left}" y1="{_f(y(0.8))}" x2="{right}" y2="{_f(y(0.8))}" stroke="#888" '
        'stroke-dasharray="3,3"/>'
    )
    for k, b in enumerate(buckets):
        body.append(
            f'<text x="{_f(x(k))}" y="{bottom + 14}" text-anchor="middle" font-size="9">'
            f"{escape(b)}</text>"
        )
    body.append(
        f'<text x="{(left + right) / 2}" y="{bottom + 28}" text-anchor="middle">'
        "job group last in training</text>"
    )
    for i, r in rows:
        points = [
            (x(k), y(c), b, c)
            for k, b in enumerate(buckets)
            if (c := r["recency_coverage"].get(b, (None, 0))[0]) is not None
        ]
        path = " ".join(f"{_f(px)},{_f(py)}" for px, py, _, _ in points)
        body.append(
            f'<polyline class="mark line" points="{path}" fill="none" stroke="{_color(i)}" '
            'stroke-width="1.5"/>'
        )
        for px, py, b, c in points:
            body.append(
                f'<circle class="mark point" cx="{_f(px)}" cy="{_f(py)}" r="2.5" '
                f'fill="{_color(i)}"><title>{escape(r["method"])} {escape(b)}: '
                f"{100 * c:.1f}% inside P10-P90</title></circle>"
            )
    if not rows:
        body.append(f'<text x="{left + 8}" y="{top + 18}">no coverage by recency here</text>')
    for k, (i, r) in enumerate(rows):
        yy = top + 8 + 14 * k
        body.append(
            f'<rect x="{right + 12}" y="{_f(yy - 8)}" width="10" height="10" fill="{_color(i)}"/>'
            f'<text x="{right + 26}" y="{_f(yy + 1)}">{escape(r["method"])}</text>'
        )
    title = "P10-P90 coverage by the job group's last training run"
    return _svg("recency", right + 130, bottom + 36, title, body)


def _entry_order(view: TableView) -> list[int]:
    """Indexes of the table's entries in the ranked order (the colour of each method)."""
    index = {e.method: i for i, e in enumerate(view.table.entries)}
    return [index[r.entry.method] for r in view.ranked]


def cdf_plot(view: TableView) -> str:
    """Share of records with |ln(p'/y')| at most x, one curve per method (x as a factor)."""
    left, right, top, bottom = 44, 330, 26, 200
    xmax = math.log(_CDF_MAX_RATIO)
    x = _Scale(0.0, xmax, left, right)
    y = _Scale(0.0, 1.0, bottom, top)
    body = [_frame(left, top, right, bottom)]
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        body.append(
            f'<line x1="{left}" y1="{_f(y(t))}" x2="{right}" y2="{_f(y(t))}" stroke="#eee"/>'
            f'<text x="{left - 4}" y="{_f(y(t) + 4)}" text-anchor="end">{int(100 * t)}%</text>'
        )
    for factor in (1, 1.5, 2, 4, 8, 16):
        xx = x(math.log(factor))
        stroke = ' stroke="#888" stroke-dasharray="3,3"' if factor == 2 else ' stroke="#eee"'
        body.append(
            f'<line x1="{_f(xx)}" y1="{top}" x2="{_f(xx)}" y2="{bottom}"{stroke}/>'
            f'<text x="{_f(xx)}" y="{bottom + 14}" text-anchor="middle">{factor:g}×</text>'
        )
    body.append(
        f'<text x="{(left + right) / 2}" y="{bottom + 28}" text-anchor="middle">'
        "prediction within this factor of the truth</text>"
    )
    order = _entry_order(view)
    for i, j in enumerate(order):
        entry = view.table.entries[j]
        quant = entry.result["plot_data"]["abs_log_ratio_quantiles"]
        points = []
        for q, v in zip(quant["q"], quant["value"], strict=True):
            if v is None:
                break  # failures: infinitely far, the curve stops below 100%
            points.append((x(min(v, xmax)), y(q)))
        if not points:
            continue
        path = " ".join(f"{_f(px)},{_f(py)}" for px, py in points)
        body.append(
            f'<polyline class="mark line" points="{path}" fill="none" stroke="{_color(i)}" '
            f'stroke-width="1.5"><title>{escape(entry.method)}</title></polyline>'
        )
    body += _legend([view.table.entries[j].method for j in order], right + 12, top + 8)
    return _svg("cdf", right + 130, bottom + 36, "Error CDF: |ln(predicted / actual)|", body)


def calibration_plot(view: TableView) -> str:
    """Observed share of jobs at or below each predicted quantile against its nominal level,
    one line per method with a quantile sidecar; calibrated methods lie on the diagonal."""
    left, right, top, bottom = 44, 250, 26, 232
    x = _Scale(0.0, 1.0, left, right)
    y = _Scale(0.0, 1.0, bottom, top)
    body = [_frame(left, top, right, bottom)]
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        body.append(
            f'<line x1="{left}" y1="{_f(y(t))}" x2="{right}" y2="{_f(y(t))}" stroke="#eee"/>'
            f'<text x="{left - 4}" y="{_f(y(t) + 4)}" text-anchor="end">{int(100 * t)}%</text>'
            f'<text x="{_f(x(t))}" y="{bottom + 14}" text-anchor="middle">{int(100 * t)}%</text>'
        )
    body.append(
        f'<line x1="{_f(x(0))}" y1="{_f(y(0))}" x2="{_f(x(1))}" y2="{_f(y(1))}" '
        'stroke="#888" stroke-dasharray="3,3"/>'
        f'<text x="{(left + right) / 2}" y="{bottom + 28}" text-anchor="middle">'
        "nominal level of the quantile</text>"
    )
    names = []
    for i, r in enumerate(view.rows):
        points = sorted(r["calibration"])
        if not points:
            continue
        names.append((i, r["method"]))
        path = " ".join(f"{_f(x(a))},{_f(y(b))}" for a, b in points)
        body.append(
            f'<polyline class="mark line" points="{path}" fill="none" stroke="{_color(i)}" '
            f'stroke-width="1.5"><title>{escape(r["method"])}</title></polyline>'
        )
        for a, b in points:
            body.append(
                f'<circle class="mark point" cx="{_f(x(a))}" cy="{_f(y(b))}" r="2.5" '
                f'fill="{_color(i)}"><title>{escape(r["method"])} p{100 * a:g}: '
                f"{100 * b:.1f}% at or below</title></circle>"
            )
    if not names:
        body.append(f'<text x="{left + 8}" y="{top + 18}">no method here gave quantiles</text>')
    for k, (i, name) in enumerate(names):
        yy = top + 8 + 14 * k
        body.append(
            f'<rect x="{right + 12}" y="{_f(yy - 8)}" width="10" height="10" fill="{_color(i)}"/>'
            f'<text x="{right + 26}" y="{_f(yy + 1)}">{escape(name)}</text>'
        )
    title = "Calibration: share of jobs at or below each quantile"
    return _svg("calibration", right + 130, bottom + 36, title, body)


def scatter_plots(view: TableView) -> str:
    """Predicted against actual duration on log axes, one panel per method, for the same
    fixed-seed sample of records."""
    order = _entry_order(view)
    entries = [view.table.entries[j] for j in order]
    values = [
        max(v, 1.0)
        for e in entries
        for key in ("actual", "predicted")
        for v in e.result["plot_data"]["sample"][key]
        if v is not None
    ]
    size, pad, cols = 170, 36, min(len(entries), 5)
    rows_n = math.ceil(len(entries) / cols) if entries else 1
    width = cols * (size + pad) + pad
    height = rows_n * (size + pad + 14) + 30
    title = "Predicted vs actual duration (s), log axes, fixed-seed sample"
    if not values:
        empty = '<text x="36" y="44">no scored records</text>'
        return _svg("scatter", width, height, title, [empty])
    lo = 10 ** math.floor(math.log10(min(values)))
    hi = 10 ** math.ceil(math.log10(max(values)))
    hi = max(hi, lo * 10)
    body = []
    for k, entry in enumerate(entries):
        ox = pad + (k % cols) * (size + pad)
        oy = 34 + (k // cols) * (size + pad + 14)
        x = _Scale(lo, hi, ox, ox + size, log=True)
        y = _Scale(lo, hi, oy + size, oy, log=True)
        body.append(_frame(ox, oy, ox + size, oy + size))
        body.append(
            f'<text x="{_f(ox + size / 2)}" y="{_f(oy - 4)}" text-anchor="middle" '
            f'font-weight="600">{escape(entry.method)}</text>'
        )
        p = lo
        while p <= hi * 1.0001:
            body.append(
                f'<text x="{_f(x(p))}" y="{_f(oy + size + 12)}" text-anchor="middle" '
                f'font-size="9">{p:g}</text><text x="{_f(ox - 3)}" y="{_f(y(p) + 3)}" '
                f'text-anchor="end" font-size="9">{p:g}</text>'
            )
            p *= 10
        for factor in (1.0, 2.0, 0.5):  # y = x, and the edges of the 2× band
            a0, a1 = (lo, hi / factor) if factor >= 1 else (lo / factor, hi)
            dash = "" if factor == 1.0 else ' stroke-dasharray="3,3"'
            body.append(
                f'<line x1="{_f(x(a0))}" y1="{_f(y(a0 * factor))}" x2="{_f(x(a1))}" '
                f'y2="{_f(y(a1 * factor))}" stroke="#999"{dash}/>'
            )
        sample = entry.result["plot_data"]["sample"]
        color = _color(k)
        dots = []
        for a, pr in zip(sample["actual"], sample["predicted"], strict=True):
            if a is None or pr is None:
                continue
            dots.append(
                f'<circle class="mark point" cx="{_f(x(min(max(a, 1.0), hi)))}" '
                f'cy="{_f(y(min(max(pr, 1.0), hi)))}" r="1.8"/>'
            )
        body.append(f'<g fill="{color}" fill-opacity="0.55">{"".join(dots)}</g>')
    return _svg("scatter", width, height, title, body)


def table_plots(view: TableView) -> list[str]:
    """Every plot of one table, in page order."""
    return [
        forest_plot(view, "rmsle"),
        forest_plot(view, "within_2x"),
        decile_plot(view),
        cdf_plot(view),
        calibration_plot(view),
        recency_plot(view),
        scatter_plots(view),
    ]
