"""gharuntime.leaderboard.page: the self-contained index.html, its embedded data and its table."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from leaderboard_support import METHODS
from leaderboard_support import leaderboard_cli as _run

from gharuntime.leaderboard import GROUP_MEANING, Entry, Table, load_result, scan
from gharuntime.leaderboard.page import CSV_COLUMNS, render_page
from gharuntime.leaderboard.view import TableView, table_views


def test_page_embeds_its_data_and_loads_nothing(results_master: Path, tmp_path: Path) -> None:
    out = tmp_path / "board"
    # --no-summaries: the shared results folder stays as it is (no summary.md written into it)
    args = ("--results", str(results_master), "--out", str(out), "--no-summaries")
    assert _run(*args).exit_code == 0
    html = (out / "index.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "fetch(" not in html
    raw = re.search(
        r'<script type="application/json" id="leaderboard-data">(.*?)</script>', html, re.S
    )
    assert raw is not None
    data = json.loads(raw.group(1))
    assert sorted(r["method"] for r in data["rows"]) == sorted(METHODS)
    assert html.count("<tr class=") == len(METHODS)


# --- the page's parts, from views made here ---------------------------------------------------


class _Table(HTMLParser):
    """The page's <tbody> rows: each <tr>'s attributes and its cells' (attributes, text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[tuple[dict[str, str | None], list[tuple[dict[str, str | None], str]]]] = []
        self.options: list[tuple[str | None, str | None]] = []  # (select id, option value)
        self._select: str | None = None
        self._in_body = self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows.append((dict(attrs), []))
        elif tag == "td" and self._in_body:
            self.rows[-1][1].append((dict(attrs), ""))
            self._in_cell = True
        elif tag == "select":
            self._select = dict(attrs).get("id")
        elif tag == "option":
            self.options.append((self._select, dict(attrs).get("value")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in_body = False
        elif tag == "td":
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            attrs, text = self.rows[-1][1][-1]
            self.rows[-1][1][-1] = (attrs, text + data)


def _parse(page: str) -> _Table:
    parser = _Table()
    parser.feed(page)
    parser.close()
    return parser


def _data(page: str) -> dict[str, Any]:
    start = '<script type="application/json" id="leaderboard-data">'
    raw = page[page.index(start) + len(start) :]
    data: dict[str, Any] = json.loads(raw[: raw.index("</script>")])
    return data


def _views(scored: dict[str, Path], changes: dict[str, dict[str, Any]]) -> list[TableView]:
    entries = []
    for method in ("double", "exact-ish", "alternating"):
        entry = load_result(scored[method])
        result = copy.deepcopy(entry.result)
        for key, value in changes.get(method, {}).items():
            result["meta"][key] = value
        entries.append(Entry(entry.path, result))
    return table_views([Table("gharuntime-fixture", "temporal", "config", tuple(entries))])


def test_the_embedded_data_is_the_csv_columns_of_every_row(results_master: Path) -> None:
    views = table_views(scan(results_master))
    page = render_page(views, "../results")
    data = _data(page)
    assert data["csv_columns"] == list(CSV_COLUMNS)
    assert data["group_meaning"] == GROUP_MEANING
    rows = [row for view in views for row in view.rows]
    assert len(data["rows"]) == len(rows) == len(METHODS)
    for got, row in zip(data["rows"], rows, strict=True):
        assert list(got) == sorted(CSV_COLUMNS)  # keys sorted: the same bytes every time
        assert got == {c: row[c] for c in CSV_COLUMNS}
    assert render_page(views, "../results") == page
    assert "6 results in 2 tables from <code>../results</code>" in page


def test_each_table_row_has_every_column_and_its_sort_values(results_master: Path) -> None:
    views = table_views(scan(results_master))
    page = render_page(views, "r")
    table = _parse(page)
    rows = [row for view in views for row in view.rows]
    assert len(table.rows) == len(rows)
    columns = page.count('scope="col"')  # one header cell per column
    for i, ((tr, cells), row) in enumerate(zip(table.rows, rows, strict=True)):
        assert tr["data-i"] == str(i) and tr["class"] == f"g{row['group']}"
        assert (tr["data-dataset"], tr["data-config"]) == ("gharuntime-fixture", "temporal")
        assert tr["data-track"] == row["track"] and tr["data-trained"] == "gharuntime-fixture"
        by_key = {str(a["class"]).split()[1]: (a, text) for a, text in cells}
        assert len(cells) == len(by_key) == columns == 24  # with target and the multi summary
        assert by_key["method"][1] == row["method"]
        assert by_key["group"][0]["data-v"] == str(row["group"])
        assert by_key["rmsle"][0]["data-v"] == str(row["rmsle"])  # the number sorts, not the text
        assert by_key["rmsle"][1].startswith(f"{row['rmsle']:.3f} [")
        synthetic = ({"class": "text synthetic", "data-v": "synthetic"}, "synthetic")
        assert by_key["synthetic"] == synthetic
        assert by_key["revision"][1] == row["revision"][:12]
        assert by_key["records"][1] == f"{row['records']:,}"
    assert {v for s, v in table.options if s == "filter-track"} == {"", "config", "history"}
    assert {v for s, v in table.options if s == "filter-dataset"} == {"", "gharuntime-fixture"}


def test_hostile_text_is_escaped_in_the_table_and_cannot_end_the_data_script(
    scored_results: dict[str, Path],
) -> None:
    evil = '</script><script>alert(1)</script><img src=x onerror="alert(2)">&amp;'
    views = _views(scored_results, {"double": {"method": evil, "method_version": '"><b>v'}})
    page = render_page(views, "results")
    assert "<script>alert(1)" not in page and "<img" not in page and "<b>v" not in page
    data = _data(page)  # the JSON ends at the page's own </script>, not at the name's
    assert [r["method"] for r in data["rows"]] == ["exact-ish", "alternating", evil]
    assert data["rows"][2]["version"] == '"><b>v'
    table = _parse(page)
    cells = {str(a["class"]).split()[1]: (a, text) for a, text in table.rows[2][1]}
    assert cells["method"] == ({"class": "text method", "data-v": evil}, evil)
    assert cells["version"] == ({"class": "text version", "data-v": '"><b>v'}, '"><b>v')


def test_a_template_marker_in_a_results_text_is_shown_as_written(
    scored_results: dict[str, Path],
) -> None:
    views = _views(
        scored_results,
        {"double": {"method_version": "/*DATA*/"}, "exact-ish": {"method_version": "/*PLOTS*/"}},
    )
    page = render_page(views, "/*BODY*/")
    table = _parse(page)
    versions = [
        text for _, cells in table.rows for a, text in cells if "version" in str(a["class"])
    ]
    assert versions == ["/*PLOTS*/", "1.0", "/*DATA*/"]
    assert page.count('"csv_columns"') == 1 and page.count("<tr class=") == 3
    assert "from <code>/*BODY*/</code>" in page


def test_an_undefined_group_and_a_partial_method_are_shown(
    scored_results: dict[str, Path],
) -> None:
    entry = load_result(scored_results["double"])
    result = copy.deepcopy(entry.result)
    result["metrics"]["duration_s"]["rmsle"].update(value=None, ci_low=None, ci_high=None)
    result["submission"]["missing"] = 3
    result["dataset"]["synthetic"] = None
    views = table_views([Table("ds", "cross_repo", "config", (Entry(entry.path, result),))])
    table = _parse(render_page(views, "r"))
    ((tr, cells),) = table.rows
    by_key = {str(a["class"]).split()[1]: (a, text) for a, text in cells}
    assert tr["class"] == "g-"
    assert by_key["group"] == ({"class": "num group", "data-v": ""}, "—")
    assert by_key["rmsle"] == ({"class": "num rmsle", "data-v": ""}, "—")
    assert by_key["method"][1] == "double (partial: 3 missing)"
    assert by_key["synthetic"] == ({"class": "text synthetic", "data-v": ""}, "?")
