"""The README opens with the two commands a new user runs, and CI runs command (b) verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)[:2]


def test_readme_opens_with_two_one_line_commands() -> None:
    commands = _commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "pytest" in commands[1] and "[test" in commands[1]


def test_ci_runs_readme_command_b_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _commands()[1] in ci.splitlines()
