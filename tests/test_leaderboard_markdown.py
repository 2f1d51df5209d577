"""gharuntime.leaderboard.markdown: the leaderboard's README.md, one table per (dataset, config,
track), with every text a result brings escaped."""

from __future__ import annotations

import re
from pathlib import Path

from leaderboard_support import leaderboard_cli as _run


def test_markdown_has_one_table_per_dataset_config_track(
    results_master: Path, tmp_path: Path
) -> None:
    out = tmp_path / "board"
    assert _run("--results", str(results_master), "--out", str(out)).exit_code == 0
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
    assert all(line.count("|") == 16 for line in text.splitlines() if line.startswith("| "))
    assert "| 1.5 | 0.02 |" in text  # fit and predict seconds per 1,000 jobs from the sidecar
