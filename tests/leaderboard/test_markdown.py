"""gharuntime.leaderboard.markdown: the leaderboard's README.md, one table per (dataset, config,
track), with every text a result brings escaped."""

from __future__ import annotations

import copy
import html
import re
from pathlib import Path

import pytest
from leaderboard_support import leaderboard_cli as _run

from gharuntime.leaderboard import GROUP_MEANING, Entry, Table, load_result, scan
from gharuntime.leaderboard.markdown import md, render_markdown
from gharuntime.leaderboard.view import TableView, table_views


def test_markdown_has_one_table_per_dataset_config_track(
    results_master: Path, tmp_path: Path
) -> None:
    out = tmp_path / "board"
    # --no-summaries: the shared results folder stays as it is (no summary.md written into it)
    args = ("--results", str(results_master), "--out", str(out), "--no-summaries")
    assert _run(*args).exit_code == 0
    text = (out / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    # the headline (known jobs with history) before the partly-memorization table
    assert headings == [
        "gharuntime-fixture · temporal / history",
        "gharuntime-fixture · temporal / config",
    ]
    assert "Each repository's latest runs" in text and "synthetic data" in text
    # what each table tests, measured by eval on its rows: the fixture's jobs all ran in train
    seen = re.findall(r"measured: ([0-9.]+)% of its ([0-9,]+) rows \(([0-9,]+)\) belong", text)
    assert seen and all(s[0] == "100.0" and s[1] == s[2] for s in seen)
    assert "Rank group:" in text
    rows = [line for line in text.splitlines() if line.startswith("| 1 |")]
    assert any("| exact-ish | 1.0 | config |" in line for line in rows)
    # 15 columns: 9 before the interval ones, p10-p90 coverage and log width, then 4
    main = re.findall(r"^\| group \|.*?(?=\n\n)", text, flags=re.M | re.S)
    assert main and all(line.count("|") == 16 for t in main for line in t.splitlines())
    assert "| 1.5 | 0.02 |" in text  # fit and predict seconds per 1,000 jobs from the sidecar


# --- escaping: what a result's text must not bring into the Markdown --------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a|b", r"a\|b"),
        ("x`y`", r"x\`y\`"),
        ("*em* _em_ [link](u) ~~s~~", r"\*em\* \_em\_ \[link\](u) \~\~s\~\~"),
        ("back\\slash", r"back\\slash"),
        (r"evil\|", r"evil\\\|"),  # the backslash is escaped too, so it cannot eat the escape
        ("<b>&amp;</b>", "&lt;b&gt;&amp;amp;&lt;/b&gt;"),
        ("one\ntwo\r\n\tthree\u2028four", "one two three four"),
        ("plain-name.v2+x", "plain-name.v2+x"),
        (3, "3"),
    ],
)
def test_md_escapes_html_and_markdown_and_keeps_one_line(text: object, shown: str) -> None:
    assert md(text) == shown


def _cells(line: str) -> list[str]:
    """A table row's cells, split at the pipes no backslash escapes (as GFM splits them)."""
    cells, cell, i = [], "", 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            cell += line[i : i + 2]
            i += 2
            continue
        if line[i] == "|":
            cells.append(cell)
            cell = ""
        else:
            cell += line[i]
        i += 1
    cells.append(cell)
    return [c.strip() for c in cells[1:-1]]


HOSTILE = "pipe|tick`star*" + "\\"
"""A method name the registry would refuse (its schema allows [A-Za-z0-9._+-]); rendered from an
entry made here, it shows that the Markdown does not rely on that check."""


@pytest.fixture()
def hostile_views(scored_results: dict[str, Path]) -> list[TableView]:
    entries = []
    for method in ("double", "exact-ish"):  # the first entry's dataset block heads the table
        entry = load_result(scored_results[method])
        result = copy.deepcopy(entry.result)
        if method == "double":
            result["meta"]["method"] = HOSTILE
            result["meta"]["method_version"] = "v|1`<i>"
            result["dataset"]["revision"] = "`r|ev" + result["dataset"]["revision"]
            result["warnings"] = ["<script>alert(1)</script> | `tick` *bold*"]
        entries.append(Entry(entry.path, result))
    return table_views([Table("data_set*", "temporal", "config", tuple(entries))])


def test_a_hostile_method_name_stays_in_its_cell(hostile_views: list[TableView]) -> None:
    text = render_markdown(hostile_views, "results")
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| group |"))
    rows = [line for line in lines[start:] if line.startswith("| ")][:4]  # the main table
    header, _rule, *body = rows
    assert len(body) == 2
    # and in the coverage-by-recency table under it
    recency = [line for line in lines[start + 4 :] if line.startswith("| ")]
    assert any(line.startswith(f"| {md(HOSTILE)} |") for line in recency)
    assert all(len(_cells(line)) == len(_cells(recency[0])) for line in recency)
    width = len(_cells(header))
    assert width == 15 and all(len(_cells(line)) == width for line in rows)
    by_method = {_cells(line)[1]: _cells(line) for line in body}
    assert set(by_method) == {"exact-ish", md(HOSTILE)}
    cells = by_method[md(HOSTILE)]
    assert cells[1] == r"pipe\|tick\`star\*\\"
    assert cells[2] == r"v\|1\`&lt;i&gt;"
    assert "<i>" not in text and "<script>" not in text
    assert "> ⚠ &lt;script&gt;alert(1)&lt;/script&gt; \\| \\`tick\\` \\*bold\\*" in text
    # the dataset name in the heading, and the revision in its code span (no backtick to end it)
    assert "## data\\_set\\* · temporal / config" in text
    assert "Dataset revision `'r|ev" in text


def test_a_markdown_parser_reads_the_hostile_cells_back_as_written(
    hostile_views: list[TableView],
) -> None:
    markdown_it = pytest.importorskip("markdown_it")  # a GFM-style table parser (rich's)
    parser = markdown_it.MarkdownIt("commonmark").enable("table")
    html_text = parser.render(render_markdown(hostile_views, "results"))
    table = html_text[html_text.index("<table>") : html_text.index("</table>")]
    rows = re.findall(r"<tr>\s*(.*?)\s*</tr>", table, flags=re.S)
    cells = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, flags=re.S) for row in rows]
    assert len(cells) == 3 and {len(c) for c in cells} == {15}
    methods = [html.unescape(c[1]) for c in cells[1:]]
    assert methods == ["exact-ish", HOSTILE]  # no emphasis, no code span: the name as written
    assert html.unescape(cells[2][2]) == "v|1`<i>"
    assert "<em>" not in table and "<code>" not in table
    assert "<script>" not in html_text and "Dataset revision <code>'r|ev" in html_text


def test_the_results_label_and_the_table_notes(results_master: Path) -> None:
    views = table_views(scan(results_master))
    text = render_markdown(views, "../res`ults")
    lines = text.splitlines()
    assert lines[0] == "# GHARuntime leaderboard"
    assert "from 6 results in `../res'ults`; do not edit by hand" in text
    assert GROUP_MEANING in text
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert text.count("Scored by gharuntime ") == len(views)
    assert "*Known jobs, with their earlier durations; measured:" in text  # the note, capitalized
    assert "95% intervals from 200 repository resamples (seed 0)" in text
    assert render_markdown(views, "../res`ults") == text


def test_an_undefined_group_and_a_partial_submission_are_marked(
    scored_results: dict[str, Path],
) -> None:
    entry = load_result(scored_results["double"])
    result = copy.deepcopy(entry.result)
    result["metrics"]["duration_s"]["rmsle"].update(value=None, ci_low=None, ci_high=None)
    result["submission"]["missing"] = 1234
    result["meta"]["extra"]["timing"] = {}
    table = Table("ds", "temporal", "config", (Entry(entry.path, result),))
    rows = [line for line in render_markdown(table_views([table]), "r").splitlines()]
    (row,) = [  # the main table's row (the coverage-by-recency table under it has one too)
        _cells(line)
        for line in rows
        if line.startswith("| ") and "double" in line and len(_cells(line)) == 15
    ]
    assert row[0] == "—" and row[1] == "double (partial: 1,234 missing)"
    assert row[4] == "—"  # the undefined RMSLE, with no interval
    assert row[-2:] == ["—", "—"]  # no fit or predict timing


def test_coverage_by_recency_and_why_a_range_is_not_calibrated(
    results_dir: Path, tmp_path: Path
) -> None:
    """Under each table: the P10-P90 coverage of every method with ranges by how recently the
    job group last ran in training; a † beside a coverage whose ranges the method could not
    calibrate on held-out jobs, with its reason (in the Markdown and on the page)."""
    import json

    result = next(p for p in sorted(results_dir.rglob("*-exact-ish.json")))
    doc = json.loads(result.read_text())
    assert doc["intervals"], result  # the methods of QUANTILE_SPREAD give ranges
    doc["meta"].setdefault("extra", {})["calibration"] = {
        "duration_s": {"method": "none", "why": "no validation split *here*"}
    }
    result.write_text(json.dumps(doc))
    out = tmp_path / "board"
    assert _run("--results", str(results_dir), "--out", str(out)).exit_code == 0
    text = (out / "README.md").read_text()
    assert "p10-p90 coverage (nominal 80%) by how recently the job's group" in text
    header = next(line for line in text.splitlines() if line.startswith("| method | 0-7 days"))
    assert "jobs)" in header
    method = doc["meta"]["method"]
    flagged = [line for line in text.splitlines() if "†" in line and line.startswith("| ")]
    assert flagged and all(f"| {method} |" in line for line in flagged)
    assert (
        f"† ranges not calibrated on held-out jobs ({method}): no validation split \\*here\\*."
        in text
    )
    page = (out / "index.html").read_text()
    assert (
        'class="uncalibrated" title="not calibrated on held-out jobs: no validation split' in page
    )
    assert 'data-plot="recency"' in page
