"""Nothing the project ships names a folder of one machine: not the code, the tests, the docs,
nor the committed results (leaderboard/results, leaderboard/reference, benchmarks/results).

A result names its files relative to where it was scored and a local dataset by its folder's
name (gharuntime.eval.provenance); a real dataset comes from `$GHARUNTIME_REAL_DATASET` or
`--dataset`. `python benchmarks/regenerate_results.py relativize` rewrites results made
before that rule without changing a score."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Final

from script_support import load_script

ROOT: Final = Path(__file__).resolve().parents[2]

SCANNED: Final = (
    "README.md",
    "mkdocs.yml",
    "pyproject.toml",
    "setup.py",
    ".github",
    "docs",
    "gharuntime",
    "baselines",
    "crawler",
    "leaderboard",
    "benchmarks",
    "data_cards",
    "tests",
    "constraints",
)
"""Every folder and top-level file the project commits, but tests/data (recorded third-party
data: GitHub's own payloads may name a runner's home folder)."""

SUFFIXES: Final = (".py", ".md", ".json", ".jsonl", ".html", ".yml", ".yaml", ".toml", ".txt")

# a machine's scratch, work or home folder: an absolute path (or `..` steps up to one), not a
# folder of that name inside another (`out/work/`, `{name}/work/`)
MACHINE: Final = re.compile(
    r"(?<![\w})-])/(?:" + "|".join(("work", "tmp", "root", "home", "Users")) + r")/"
)

# (file, line) pairs a scan may pass over: none today (hostile inputs build their absolute
# paths from the test's own temporary folder)
ALLOWED: Final[set[tuple[str, str]]] = set()


def _files() -> list[Path]:
    found = []
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [
                p
                for p in path.rglob("*")
                if p.suffix in SUFFIXES
                and p.is_file()
                and "__pycache__" not in p.parts
                and not p.relative_to(ROOT).as_posix().startswith("tests/data/")
            ]
    return sorted(found)


def test_no_file_names_a_folder_of_one_machine() -> None:
    files = _files()
    results = [p for p in files if p.is_relative_to(ROOT / "leaderboard" / "results")]
    assert len(results) > 50, "the committed results were not scanned"
    found = []
    for path in files:
        if path == Path(__file__).resolve():
            continue  # its own pattern and allowed lines
        where = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if MACHINE.search(line) and (where, line.strip()) not in ALLOWED:
                found.append(f"{where}:{number}: {line.strip()[:160]}")
    assert not found, f"{len(found)} line(s) name a folder of one machine:\n" + "\n".join(
        found[:40]
    )


def test_relativize_names_paths_as_a_regeneration_does_and_changes_nothing_else(
    tmp_path: Path,
) -> None:
    """A committed result as it was written before the rule (absolute paths under the run's
    scratch folder, the dataset's path as its id) comes back byte for byte as committed."""
    regenerate = load_script("regenerate_results")
    committed = ROOT / "leaderboard/results/gharuntime-sim-small/temporal-config-catboost.json"
    text = committed.read_text(encoding="utf-8")
    doc = json.loads(text)
    assert doc["dataset"]["id"] == "gharuntime-sim-small"
    scratch = "/tmp/regen-work7/"
    old = text.replace('"id": "gharuntime-sim-small"', f'"id": "{scratch}gharuntime-sim-small"')
    for path in (doc["submission"]["path"], doc["intervals"]["sidecar"]["path"], "results"):
        old = old.replace(f'"{path}"', f'"{scratch}{path}"')
    old = old.replace('"--dataset",\n      "', f'"--dataset",\n      "{scratch}')
    assert old.count(scratch) == 5
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "a.json").write_text(old, encoding="utf-8")
    (tmp_path / "r" / "summary.md").write_text(f"made in {scratch}gharuntime-sim-small\n")
    (tmp_path / "r" / "clean.json").write_text(text, encoding="utf-8")
    assert regenerate.relativize([tmp_path / "r"]) == [
        tmp_path / "r" / "a.json",
        tmp_path / "r" / "summary.md",
    ]
    assert (tmp_path / "r" / "a.json").read_text(encoding="utf-8") == text
    assert (tmp_path / "r" / "summary.md").read_text() == "made in gharuntime-sim-small\n"
    assert regenerate.relativize([tmp_path / "r"]) == []  # nothing left to rewrite
    home = json.dumps({"id": "org/name", "out": "/home/ana/runs/x", "n": 1.5, "m": "/root/y"})
    assert json.loads(regenerate.relativize_text(home)) == {
        "id": "org/name",  # a Hub id stays
        "out": "runs/x",
        "n": 1.5,
        "m": "y",
    }
