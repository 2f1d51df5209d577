"""The README opens with the two commands a new user runs, and CI runs both verbatim."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)[:2]


def test_readme_opens_with_two_one_line_commands() -> None:
    commands = _commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "pytest" in commands[1] and "[test" in commands[1]


def test_ci_runs_readme_commands_a_and_b_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    a, b = _commands()
    assert a in ci, "command (a) is not a line of .ci/run: copy it from README.md"
    assert b in ci, "command (b) is not a line of .ci/run: copy it from README.md"
    assert "gharuntime pipeline" in a and "[laser" in a  # the main job, LASER in it


def test_ci_fails_when_command_a_fails_or_its_page_lacks_laser() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'wait "$a_pid"' in ci and '[ "$a_rc" -ne 0 ]' in ci
    assert "| laser |" in ci
