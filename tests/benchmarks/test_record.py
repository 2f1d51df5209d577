"""benchmarks/record.py: a benchmark's last JSON line kept as a file the docs can cite, with the
commit, the command and the load average, and no path of the machine it ran on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from script_support import load_script

ROOT = Path(__file__).resolve().parents[2]


def test_the_figures_are_kept_with_where_and_when_they_were_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "real-dataset"
    monkeypatch.setenv("GHARUNTIME_REAL_DATASET", str(real))
    figures = {"ratio": 2.5, "dataset": str(real), "script": str(ROOT / "benchmarks" / "x.py")}
    code = f"import json; print('warming up'); print(json.dumps({figures!r}))"
    out = tmp_path / "x.json"
    assert load_script("record").main([str(out), "--", sys.executable, "-c", code]) == 0
    assert "warming up" in capsys.readouterr().out  # what the benchmark printed is shown
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["figures"] == {
        "ratio": 2.5,
        "dataset": "$GHARUNTIME_REAL_DATASET",
        "script": "benchmarks/x.py",
    }
    assert str(tmp_path) not in out.read_text(encoding="utf-8")
    assert record["command"].startswith("python")  # the interpreter's name, not its path
    assert len(record["git_commit"]) == 40 and isinstance(record["git_dirty"], bool)
    assert len(record["load_average_before"]) == 3 and record["wall_s"] >= 0


@pytest.mark.parametrize("code", ["raise SystemExit(3)", "print('no json here')"])
def test_nothing_is_written_unless_the_benchmark_ends_with_its_figures(
    tmp_path: Path, code: str
) -> None:
    out = tmp_path / "x.json"
    rc = load_script("record").main([str(out), "--", sys.executable, "-c", code])
    assert rc != 0 and not out.exists()
