"""The leaderboard page in a real browser: Debian's chromium, driven by Playwright."""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from leaderboard_support import METHODS

from gharuntime.cli.main import cli

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

if not CHROMIUM.is_file():
    pytest.skip(
        f"{CHROMIUM} is absent: install Debian's chromium and chromium-driver "
        "(`apt-get install -y chromium chromium-driver`; .ci/run does it in CI)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")


@pytest.fixture(scope="module")
def page_file(results_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("board")
    r = CliRunner().invoke(
        cli,
        ["leaderboard", "--results", str(results_master), "--out", str(out), "--no-summaries"],
    )
    assert r.exit_code == 0, r.output
    return out / "index.html"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    profile = tmp_path_factory.mktemp("chromium-profile")  # a fresh user-data dir
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=ARGS,
            viewport={"width": 1400, "height": 900},
            accept_downloads=True,
        )
        yield context
        context.close()


class Loaded:
    def __init__(self, page: Any, console: list[str], requests: list[str]) -> None:
        self.page, self.console, self.requests = page, console, requests


@pytest.fixture()
def loaded(browser: Any, page_file: Path) -> Iterator[Loaded]:
    page = browser.new_page()
    console: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_file.as_uri())
    page.wait_for_load_state("load")
    yield Loaded(page, console, requests)
    page.close()


def _visible_methods(page: Any) -> list[str]:
    return list(
        page.eval_on_selector_all(
            "#board tbody tr:not([hidden]) td.method", "cells => cells.map(c => c.dataset.v)"
        )
    )


def test_page_loads_without_console_errors_or_network(loaded: Loaded, page_file: Path) -> None:
    errors = [c for c in loaded.console if c.startswith(("error", "pageerror", "warning"))]
    assert errors == []
    assert loaded.requests == [page_file.as_uri()]  # the page itself, nothing else


def test_one_row_per_method(loaded: Loaded) -> None:
    assert sorted(_visible_methods(loaded.page)) == sorted(METHODS)
    shown = loaded.page.text_content("#shown")
    assert shown == f"{len(METHODS)} of {len(METHODS)} methods shown"


def test_clicking_a_header_reorders_rows(loaded: Loaded) -> None:
    page = loaded.page

    def rmsle() -> list[float]:
        return [
            float(v)
            for v in page.eval_on_selector_all(
                "#board tbody tr td.rmsle", "cells => cells.map(c => c.dataset.v)"
            )
        ]

    before = _visible_methods(page)
    page.click('#board th[data-key="rmsle"]')
    ascending = rmsle()
    assert ascending == sorted(ascending)
    page.click('#board th[data-key="rmsle"]')
    descending = rmsle()
    assert descending == sorted(descending, reverse=True)
    assert _visible_methods(page) != before
    page.click('#board th[data-key="method"]')
    assert _visible_methods(page) == sorted(METHODS)


def test_a_filter_hides_rows_and_plots(loaded: Loaded) -> None:
    page = loaded.page
    page.select_option("#filter-track", "history")
    history = sorted(m for m, (_, t, _) in METHODS.items() if t == "history")
    assert sorted(_visible_methods(page)) == history
    assert page.locator("section.plots:not([hidden])").count() == 1
    assert page.locator('section.plots[data-track="config"]').is_hidden()
    page.select_option("#filter-track", "")
    assert len(_visible_methods(page)) == len(METHODS)


def test_svg_plots_have_their_marks(loaded: Loaded) -> None:
    page = loaded.page
    config = 'section.plots[data-track="config"] '
    n = sum(1 for _, t, _ in METHODS.values() if t == "config")
    assert page.locator(config + 'svg[data-plot="forest"] circle.mark').count() == 2 * n
    assert page.locator(config + 'svg[data-plot="forest"] line.mark.ci').count() == 2 * n
    assert page.locator(config + 'svg[data-plot="deciles"] polyline.mark').count() == n
    assert page.locator(config + 'svg[data-plot="cdf"] polyline.mark').count() == n
    points = page.locator(config + 'svg[data-plot="scatter"] circle.mark').count()
    assert points >= n * 50  # the fixture's test split has 62 records, all in the sample
    box = page.locator(config + 'svg[data-plot="forest"]').first.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50


def test_csv_download_holds_the_visible_rows(loaded: Loaded) -> None:
    page = loaded.page
    page.select_option("#filter-track", "config")
    with page.expect_download() as info:
        page.click("#download-csv")
    download = info.value
    text = Path(download.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert sorted(r["method"] for r in rows) == sorted(
        m for m, (_, t, _) in METHODS.items() if t == "config"
    )
    assert all(r["track"] == "config" and float(r["rmsle_low"]) <= float(r["rmsle"]) for r in rows)
    assert download.suggested_filename == "gharuntime-leaderboard.csv"
    assert loaded.requests[1:] == [] or all(u.startswith("blob:") for u in loaded.requests[1:])


def test_screenshot_is_not_blank(loaded: Loaded, tmp_path: Path) -> None:
    from PIL import Image  # matplotlib's own dependency

    shot = tmp_path / "page.png"
    loaded.page.screenshot(path=str(shot), full_page=True)
    image = Image.open(shot).convert("RGB")
    assert image.width >= 1000 and image.height >= 900
    colors = image.getcolors(maxcolors=1 << 20) or []
    assert len(colors) > 50  # text, table rules, plot colours
    white = sum(c for c, rgb in colors if rgb == (255, 255, 255))
    assert white < 0.97 * image.width * image.height
    keep = Path(__file__).resolve().parents[2] / "out" / "leaderboard-test-screenshot.png"
    if keep.parent.is_dir():  # for a person to look at, when a checkout has out/
        shutil.copy(shot, keep)


def test_calibration_plot_and_interval_columns(loaded: Loaded) -> None:
    """Methods with a quantile sidecar get a calibration line and coverage / width cells; the
    others show — (leaderboard_support.QUANTILE_SPREAD: exact-ish covers every job, double
    none)."""
    from leaderboard_support import QUANTILE_SPREAD

    page = loaded.page
    config = 'section.plots[data-track="config"] '
    plot = page.locator(config + 'svg[data-plot="calibration"]')
    assert plot.locator("polyline.mark").count() == len(QUANTILE_SPREAD)
    assert plot.locator("circle.mark").count() == 3 * len(QUANTILE_SPREAD)  # p10, p50, p90
    box = plot.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 100
    history = 'section.plots[data-track="history"] svg[data-plot="calibration"]'
    assert "no method here gave quantiles" in (page.text_content(history) or "")

    def cell(method: str, key: str) -> str:
        row = page.locator(f'#board tbody tr:has(td.method[data-v="{method}"])')
        return row.locator(f"td.{key}").inner_text()

    assert cell("exact-ish", "coverage").startswith("100.0%")
    assert cell("double", "coverage").startswith("0.0%")
    assert cell("alternating", "coverage") == "—"
    assert cell("exact-ish", "log_width").startswith("0.5")  # log1p width of e^±0.3 ≈ 0.6
    page.click('#board th[data-key="coverage"]')
    order = _visible_methods(page)
    assert order.index("double") < order.index("exact-ish")
