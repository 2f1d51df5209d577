"""gharuntime.leaderboard.page: the self-contained index.html, its embedded data and its table."""

from __future__ import annotations

import json
import re
from pathlib import Path

from leaderboard_support import METHODS
from leaderboard_support import leaderboard_cli as _run


def test_page_embeds_its_data_and_loads_nothing(results_master: Path, tmp_path: Path) -> None:
    out = tmp_path / "board"
    assert _run("--results", str(results_master), "--out", str(out)).exit_code == 0
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
