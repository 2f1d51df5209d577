"""Issue 37 class 7, injection: text a manifest or the data brings shows as written in the
Markdown `diff` prints and `build --previous` puts in the card (gharuntime.markdown, one
helper); the leaderboard's CSV rows are spreadsheet-safe; and no control character a value, a
job name or a path holds reaches the terminal raw (gharuntime.cli.output.terminal_safe)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import check, invoke
from hostile_support import build_world, sandbox, text_options

from gharuntime.leaderboard.page import spreadsheet_safe


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> dict[str, Any]:
    return build_world(tmp_path_factory.mktemp("inject"), fixture_dataset_master)


MARKDOWN_PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "# Heading",
    "x\n# Heading\n<b>bold</b>",
    "- item",
    "1. item",
    "===",
    "a | b | c",
    "`code` *b* _i_ [l](http://x) ![i](http://x/i.png) ~~s~~ \\",
    "<!-- hide",
    "x --> y",
    "\x1b[31mred\u202e",
]

# headings the diff writes itself; any other line starting with # came from a value
OUR_HEADINGS = re.compile(
    r"^#{2,4} (Changes (from .* to .*|since the previous release)|Columns|Rows per config and "
    r"split|Repositories|Targets|Filters \(rows removed\))$"
)


def _hostile_dataset(folder: Path, payload: str) -> Path:
    """A copy of ds whose manifest carries `payload` in every text the diff shows."""
    ds = folder / "hostile"
    shutil.copytree(folder / "ds", ds)
    manifest = json.loads((ds / "manifest.json").read_text())
    manifest["gharuntime_version"] = payload
    manifest["schema_version"] = "9." + payload  # another major: a note quotes it
    manifest["source"] = {"kind": payload, "synthetic": True}
    manifest["filters"] = {payload: 3, "ok": 1}
    first = manifest["files"][0]
    manifest["files"].append({**first, "config": payload, "split": payload})
    (ds / "manifest.json").write_text(json.dumps(manifest))
    return ds


def _assert_markdown_holds(text: str, payload: str) -> None:
    for line in text.splitlines():
        assert not line.startswith("#") or OUR_HEADINGS.match(line), line
        assert not re.match(r"^\s*(?:[-+*]|\d+[.)])\s+(?:[-+*#]|\d+[.)]|\\?=)", line), line
        assert not re.match(r"^\s*=+\s*$", line), line
        cells = re.sub(r"\\.", "", line)
        if line.startswith("|"):
            assert cells.count("|") == text.splitlines()[_header(text, line)].count("|"), line
        assert cells.count("`") % 2 == 0, line
    assert "<" not in text and ">" not in text.replace("→", ""), text
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", text)


def _header(text: str, row: str) -> int:
    """Index of the header line of the table holding `row`."""
    lines = text.splitlines()
    i = lines.index(row)
    while i > 0 and lines[i - 1].startswith("|"):
        i -= 1
    return i


@pytest.mark.parametrize("payload", MARKDOWN_PAYLOADS, ids=range(len(MARKDOWN_PAYLOADS)))
def test_diff_markdown_shows_a_manifests_text_as_written(
    world: dict[str, Any], tmp_path: Path, payload: str
) -> None:
    folder = sandbox(world, tmp_path)
    _hostile_dataset(folder, payload)
    for args in (["diff", "hostile", "ds"], ["diff", "ds", "hostile"]):
        out = invoke(args, folder)
        check(out, payload)
        assert out.code == 0, out.output[-2000:]
        markdown = out.output[out.output.index("## Changes") :]
        markdown = markdown[: markdown.find("\nnote:")] if "\nnote:" in markdown else markdown
        _assert_markdown_holds(markdown, payload)


@pytest.mark.slow
@pytest.mark.parametrize("payload", MARKDOWN_PAYLOADS[:4], ids=range(4))
def test_the_card_section_of_build_previous_shows_it_as_written(
    world: dict[str, Any], tmp_path: Path, payload: str
) -> None:
    folder = sandbox(world, tmp_path)
    _hostile_dataset(folder, payload)
    out = invoke(["build", "--raw", "raw", "--previous", "hostile", "--out", "out/new"], folder)
    check(out, payload)
    assert out.code in (0, 1), out.output[-2000:]
    card = (folder / "out/new/README.md").read_text(encoding="utf-8")
    start = card.index("## Changes since the previous release")
    end = card.find("\n## ", start + 5)
    _assert_markdown_holds(card[start : end if end > 0 else None], payload)


# ---------------------------------------------------------- the leaderboard's CSV

FORMULAS = [
    '=HYPERLINK("http://evil.example","click")',
    "=1+1",
    "+1+1",
    "-1+1",
    "@SUM(A1:A2)",
    " =1+1",
]


@pytest.mark.parametrize("formula", FORMULAS, ids=range(len(FORMULAS)))
def test_the_csv_rows_are_spreadsheet_safe(
    world: dict[str, Any], tmp_path: Path, formula: str
) -> None:
    folder = sandbox(world, tmp_path)
    args = ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3", "--out", "r.json"]
    out = invoke([*args, f"--method-version={formula}"], folder)
    assert out.code == 0, out.output[-2000:]
    assert invoke(["leaderboard", "add", "r.json", "--results", "res"], folder).code == 0
    out = invoke(["leaderboard", "--results", "res", "--out", "board"], folder)
    check(out, formula)
    assert out.code == 0, out.output[-2000:]
    page = (folder / "board" / "index.html").read_text(encoding="utf-8")
    data = json.loads(
        re.search(
            r'<script type="application/json" id="leaderboard-data">(.*?)</script>', page, re.S
        )[1]  # type: ignore[index]
    )
    texts = [v for row in data["rows"] for v in row.values() if isinstance(v, str)]
    assert any(formula in t for t in texts)
    for text in texts:
        assert not text.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r")), text
    numbers = [v for row in data["rows"] for v in row.values() if isinstance(v, float)]
    assert numbers  # numbers stay numbers


def test_spreadsheet_safe_keeps_numbers_and_plain_text() -> None:
    assert spreadsheet_safe(-1.5) == -1.5 and spreadsheet_safe(None) is None
    assert spreadsheet_safe("lightgbm") == "lightgbm"
    assert spreadsheet_safe("=1") == "'=1" and spreadsheet_safe("\t=1") == "'\t=1"


# ------------------------------------------------------ nothing raw reaches the terminal

ESCAPES = "a\x1b[2J\x1b]0;title\x07b\x9b31mc\u202ed\x08e"
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("base", "option"),
    [(base, option) for _, base, option in text_options()],
    ids=[f"{c} {o}" for c, _, o in text_options()],
)
def test_escapes_in_any_text_option_never_reach_the_terminal(
    world: dict[str, Any], tmp_path: Path, base: list[str], option: str
) -> None:
    sandbox(world, tmp_path)
    out = invoke([*base, option, ESCAPES], tmp_path)
    check(out, (base, option))
    assert not RAW.search(out.output), repr(out.output[-2000:])


def test_escapes_in_job_names_and_paths_never_reach_the_terminal(
    world: dict[str, Any], tmp_path: Path
) -> None:
    folder = sandbox(world, tmp_path)
    (folder / "wf.yml").write_text(
        "on: push\njobs:\n  t:\n    name: " + json.dumps("build " + ESCAPES) + "\n"
        "    runs-on: ubuntu-latest\n    steps: [{run: pytest}]\n"
    )
    odd = "sub" + ESCAPES.replace("/", "")
    shutil.copy(folder / "m.jsonl", folder / odd)
    (folder / "ds odd").mkdir()
    (folder / f"ds odd/{odd}").symlink_to(folder)  # a link out, named with escapes
    meta = json.loads((folder / "m.meta.json").read_text())
    (folder / "m.meta.json").write_text(json.dumps({**meta, "method": "m" + ESCAPES}))
    runs = [
        ["predict", "wf.yml", "--model", "m.model"],
        ["predict", "wf.yml", "--model", "m.model", "--json"],
        ["eval", odd, "--dataset", "ds", "--resamples", "3"],
        ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3"],
        ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3", "--json"],
        ["validate", "ds odd"],
        ["validate", odd],
    ]
    for args in runs:
        out = invoke(args, folder)
        check(out, args)
        assert not RAW.search(out.output), (args, repr(out.output[-2000:]))
    out = invoke(runs[0], folder)
    assert "\\x1b[2J" in out.output  # shown, as its escape


def test_build_previous_refuses_a_manifest_edited_after_its_build(
    world: dict[str, Any], tmp_path: Path
) -> None:
    """Counts the card would show (splits, filters) that its files do not hold: exit 2, no
    new release written (same major, so the revision must match too)."""
    folder = sandbox(world, tmp_path)
    ds = folder / "edited"
    shutil.copytree(folder / "ds", ds)
    manifest = json.loads((ds / "manifest.json").read_text())
    manifest["splits"]["temporal"]["train"] = 10**9
    (ds / "manifest.json").write_text(json.dumps(manifest))
    out = invoke(["build", "--raw", "raw", "--previous", "edited", "--out", "out/new"], folder)
    check(out, "edited")
    assert out.code == 2, out.output[-2000:]
    assert "manifest.json" in out.output and "1000000000" in out.output.replace(",", "")
    assert not (folder / "out/new").exists()
