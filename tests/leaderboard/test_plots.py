"""gharuntime.leaderboard.plots: each plot is well-formed SVG with one mark per method's number,
placed by that number, in the method's colour; the same view draws the same bytes."""

from __future__ import annotations

import copy
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from gharuntime.leaderboard import Entry, Table, load_result, scan
from gharuntime.leaderboard.plots import (
    PALETTE,
    calibration_plot,
    cdf_plot,
    decile_plot,
    forest_plot,
    scatter_plots,
    table_plots,
)
from gharuntime.leaderboard.view import TableView, table_views

SVG = "{http://www.w3.org/2000/svg}"
METHODS = ("double", "exact-ish", "alternating")  # ranked: exact-ish, alternating, double


def _view(scored: dict[str, Path], edit: dict[str, Any] | None = None) -> TableView:
    """The temporal/config table of METHODS; `edit[method](result)` changes a result first."""
    entries = []
    for method in METHODS:
        entry = load_result(scored[method])
        result = copy.deepcopy(entry.result)
        if edit and method in edit:
            edit[method](result)
        entries.append(Entry(entry.path, result))
    (view,) = table_views([Table("gharuntime-fixture", "temporal", "config", tuple(entries))])
    return view


def _svg(text: str) -> ET.Element:
    root = ET.fromstring(text)  # well-formed XML, or this raises
    assert root.tag == f"{SVG}svg"
    return root


def _marks(root: ET.Element, tag: str, kind: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}{tag}") if e.get("class") == f"mark {kind}"]


def _title(element: ET.Element) -> str:
    title = element.find(f"{SVG}title")
    assert title is not None and title.text is not None
    return title.text


def _texts(root: ET.Element) -> list[str]:
    return [e.text or "" for e in root.iter(f"{SVG}text")]


def test_table_plots_are_seven_well_formed_svgs_and_the_same_bytes_each_time(
    results_master: Path,
) -> None:
    for view in table_views(scan(results_master)):
        plots = table_plots(view)
        kinds = [_svg(p).get("data-plot") for p in plots]
        assert kinds == [
            "forest",
            "forest",
            "deciles",
            "cdf",
            "calibration",
            "recency",
            "scatter",
        ]
        assert table_plots(view) == plots


def test_forest_points_sit_in_rank_order_of_their_values(scored_results: dict[str, Path]) -> None:
    view = _view(scored_results)
    root = _svg(forest_plot(view, "rmsle"))
    points = _marks(root, "circle", "point")
    assert [_title(p) for p in points] == [
        f"{row['method']}: {row['rmsle']:.3f} (group {row['group']})" for row in view.rows
    ]
    assert [p.get("fill") for p in points] == list(PALETTE[:3])
    xs = [float(p.get("cx") or "nan") for p in points]
    assert xs == sorted(xs) and xs[0] < xs[1] < xs[2]  # rmsle rises down the ranked rows
    # x is linear in the value: the middle point's share of the span is its value's share
    values = [row["rmsle"] for row in view.rows]
    share = (values[1] - values[0]) / (values[2] - values[0])
    assert (xs[1] - xs[0]) / (xs[2] - xs[0]) == pytest.approx(share, abs=0.01)
    for line, row in zip(_marks(root, "line", "ci"), view.rows, strict=True):
        x1, x2 = float(line.get("x1") or "nan"), float(line.get("x2") or "nan")
        assert x1 <= xs[view.rows.index(row)] <= x2  # the interval holds its point
    assert "RMSLE ↓ with 95% intervals" in _texts(root)
    assert "within 2× ↑ with 95% intervals" in _texts(_svg(forest_plot(view, "within_2x")))


def test_a_forest_of_undefined_values_says_so(scored_results: dict[str, Path]) -> None:
    def undefined(result: dict[str, Any]) -> None:
        result["metrics"]["duration_s"]["mae"].update(value=None, ci_low=None, ci_high=None)

    view = _view(scored_results, dict.fromkeys(METHODS, undefined))
    root = _svg(forest_plot(view, "mae"))
    assert "no scored records" in _texts(root) and not _marks(root, "circle", "point")
    view = _view(scored_results, {"double": undefined})
    assert len(_marks(_svg(forest_plot(view, "mae")), "circle", "point")) == 2


def test_decile_lines_have_a_point_per_decile_with_a_value(
    scored_results: dict[str, Path],
) -> None:
    def fewer(result: dict[str, Any]) -> None:
        deciles = result["breakdowns"]["duration_s"]["duration_decile"]
        for name in ("D9", "D10"):
            del deciles[name]

    def none(result: dict[str, Any]) -> None:
        result["breakdowns"]["duration_s"] = {}

    root = _svg(decile_plot(_view(scored_results, {"alternating": fewer, "double": none})))
    lines = _marks(root, "polyline", "line")
    assert [len((line.get("points") or "").split()) for line in lines] == [10, 8]
    assert [line.get("stroke") for line in lines] == [PALETTE[0], PALETTE[1]]
    # every method keeps its colour in the legend, with or without a line
    assert [t for t in _texts(root) if t in ("exact-ish", "alternating", "double")] == [
        "exact-ish",
        "alternating",
        "double",
    ]
    titles = [_title(p) for p in _marks(root, "circle", "point")]
    assert titles[0] == "exact-ish D1: 100.0%" and titles[-1] == "alternating D8: 100.0%"


def test_the_cdf_stops_at_the_first_failure_and_clips_at_16x(
    scored_results: dict[str, Path],
) -> None:
    def far(result: dict[str, Any]) -> None:
        quant = result["plot_data"]["abs_log_ratio_quantiles"]
        quant["value"] = [0.1 * i for i in range(len(quant["q"]))]  # up to e^10: beyond 16×
        quant["value"][50:] = [None] * (len(quant["q"]) - 50)

    root = _svg(cdf_plot(_view(scored_results, {"double": far})))
    lines = {_title(line): line for line in _marks(root, "polyline", "line")}
    assert list(lines) == ["exact-ish", "alternating", "double"]
    points = [
        tuple(map(float, p.split(","))) for p in (lines["double"].get("points") or "").split()
    ]
    assert len(points) == 50  # the curve stops below 100%
    x_of = {round(0.1 * i, 6): x for i, (x, _) in enumerate(points)}
    assert x_of[0.0] == 44.0  # the frame's left edge
    cap = math.log(16)
    assert all(x == 330.0 for v, x in x_of.items() if v >= cap)  # clipped at the right edge
    assert x_of[2.7] < 330.0 and x_of[2.8] == 330.0  # ln 16 ≈ 2.77


def test_calibration_draws_only_methods_with_a_quantile_sidecar(
    scored_results: dict[str, Path],
) -> None:
    view = _view(scored_results)
    root = _svg(calibration_plot(view))
    lines = _marks(root, "polyline", "line")
    assert [_title(line) for line in lines] == ["exact-ish", "double"]
    # colours follow the method's row, as in every other plot: double is the third row
    assert [line.get("stroke") for line in lines] == [PALETTE[0], PALETTE[2]]
    assert [_title(p) for p in _marks(root, "circle", "point")][:3] == [
        "exact-ish p10: 0.0% at or below",
        "exact-ish p50: 50.0% at or below",
        "exact-ish p90: 100.0% at or below",
    ]

    def no_sidecar(result: dict[str, Any]) -> None:
        result.pop("intervals", None)

    root = _svg(calibration_plot(_view(scored_results, dict.fromkeys(METHODS, no_sidecar))))
    assert not _marks(root, "polyline", "line")
    assert "no method here gave quantiles" in _texts(root)


def test_scatter_has_a_panel_per_method_and_a_dot_per_pair(
    scored_results: dict[str, Path],
) -> None:
    def gaps(result: dict[str, Any]) -> None:
        sample = result["plot_data"]["sample"]
        sample["predicted"][0] = None  # a failure: no dot
        sample["actual"][1] = 0.2  # under a second: drawn at 1 s, not off the axis
        sample["predicted"][1] = 0.5

    view = _view(scored_results, {"alternating": gaps})
    root = _svg(scatter_plots(view))
    groups = list(root.iter(f"{SVG}g"))
    assert [g.get("fill") for g in groups] == list(PALETTE[:3])
    n = len(load_result(scored_results["alternating"]).result["plot_data"]["sample"]["actual"])
    counts = [len(list(g.iter(f"{SVG}circle"))) for g in groups]
    assert counts == [n, n - 1, n]
    assert {"exact-ish", "alternating", "double"} <= set(_texts(root))
    # the record under a second (the first dot: the one before it had no prediction) sits at
    # the lower-left corner of its panel's frame, where the log axes start at 1 s
    dot = next(iter(groups[1].iter(f"{SVG}circle")))
    frames = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "none"]
    assert len(frames) == 3
    left, top, height = (float(frames[1].get(k) or "nan") for k in ("x", "y", "height"))
    assert (float(dot.get("cx") or "nan"), float(dot.get("cy") or "nan")) == (left, top + height)

    def empty(result: dict[str, Any]) -> None:
        result["plot_data"]["sample"].update(actual=[], predicted=[])

    root = _svg(scatter_plots(_view(scored_results, dict.fromkeys(METHODS, empty))))
    assert "no scored records" in _texts(root)


def test_a_hostile_method_name_stays_text_in_every_plot(scored_results: dict[str, Path]) -> None:
    evil = '<script>alert(1)</script>&"quoted"'

    def rename(result: dict[str, Any]) -> None:
        result["meta"]["method"] = evil

    for plot in table_plots(_view(scored_results, {"double": rename})):
        root = _svg(plot)  # still well-formed
        assert not list(root.iter(f"{SVG}script")) and not list(root.iter("script"))
        assert evil in _texts(root) or any(evil in (t.text or "") for t in root.iter(f"{SVG}title"))


def test_recency_plot_draws_each_methods_coverage_by_bucket(results_master: Path) -> None:
    """One point per method with ranges and recency bucket, at its coverage, titled with it."""
    from gharuntime.leaderboard.plots import recency_plot

    drawn = []
    for view in table_views(scan(results_master)):
        root = _svg(recency_plot(view))
        titles = [_title(p) for p in _marks(root, "circle", "point")]
        want = [
            f"{row['method']} {bucket}: {100 * cov:.1f}% inside P10-P90"
            for row in view.rows
            for bucket, (cov, _) in row["recency_coverage"].items()
            if cov is not None
        ]
        assert titles == want
        drawn += titles
    # the fixture's methods with ranges: exact-ish covers every job, double none
    assert any(t.startswith("exact-ish") and "100.0%" in t for t in drawn)
    assert any(t.startswith("double") and ": 0.0%" in t for t in drawn)
