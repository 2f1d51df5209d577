"""Committed results still match the dataset their documented command builds.

leaderboard/results/gharuntime-sim-small/ is the results table CI can afford: the test builds
its dataset with the command benchmarks/regenerate_results.py documents for it, and checks every
committed result's dataset revision and row counts, and the metrics of the deterministic
methods (median, group-median), against a fresh run. It fails when the simulator, the build or
the eval changed the numbers without the results being regenerated
(`python benchmarks/regenerate_results.py`). The full-size folders are checked the same way by
running that script.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner

from gharuntime.baselines.run import run_baseline
from gharuntime.cli.main import cli
from gharuntime.dataset import read_manifest
from gharuntime.eval.api import evaluate_file
from gharuntime.leaderboard.outputs import build_leaderboard

ROOT = Path(__file__).resolve().parents[2]
LABEL = "gharuntime-sim-small"
FOLDER = ROOT / "leaderboard" / "results" / LABEL
DETERMINISTIC = ("median", "group-median")
REGENERATE = (
    "gharuntime leaderboard --results leaderboard/results --out leaderboard --readme README.md"
)


def _regenerate_module() -> ModuleType:
    path = ROOT / "benchmarks" / "regenerate_results.py"
    spec = importlib.util.spec_from_file_location("regenerate_results", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _committed() -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text()) for p in sorted(FOLDER.glob("*.json"))}


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    git = shutil.which("git")
    assert git is not None
    return subprocess.run([git, "-C", str(ROOT), *args], capture_output=True, text=True, timeout=60)


def test_every_committed_result_was_scored_at_a_clean_commit_of_this_history() -> None:
    """Anyone can check out the code that scored a committed result: its tree was clean and its
    commit is HEAD or an ancestor of it (regenerate from a clean tree, then commit the results)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the commits cannot be checked")
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone lacks the history to check the commits against")
    files = sorted((ROOT / "leaderboard").glob("results/*/*.json"))
    files += sorted((ROOT / "leaderboard").glob("reference/*/*.json"))
    assert files
    bad = []
    for path in files:
        prov = json.loads(path.read_text(encoding="utf-8")).get("provenance") or {}
        name = path.relative_to(ROOT)
        commit = prov.get("git_commit")
        if prov.get("git_dirty") is not False:
            bad.append(f"{name}: scored on a tree with uncommitted changes (git_dirty)")
        elif not isinstance(commit, str) or not commit:
            bad.append(f"{name}: names no commit")
        elif _git("merge-base", "--is-ancestor", commit, "HEAD").returncode != 0:
            bad.append(f"{name}: commit {commit[:12]} is not HEAD or an ancestor of it")
    assert not bad, "\n".join(
        [*bad, "regenerate them from a clean commit: python benchmarks/regenerate_results.py"]
    )


def test_the_ci_results_table_is_committed() -> None:
    results = _committed()
    assert results, f"{FOLDER} holds no results; run python benchmarks/regenerate_results.py"
    for name, r in results.items():
        assert {"gharuntime_version", "git_commit", "git_dirty", "command"} <= r[
            "provenance"
        ].keys()
        assert r["dataset"]["revision"], name
    configs = {(r["dataset"]["config"], r["track"], r["name"]) for r in results.values()}
    for config in ("temporal", "cross_repo"):
        for method in DETERMINISTIC:
            assert (config, "config", method) in configs


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    args = _regenerate_module().DATASETS[LABEL]
    out = tmp_path_factory.mktemp("regen") / LABEL
    result = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.slow
def test_committed_results_name_the_dataset_the_command_builds(rebuilt: Path) -> None:
    manifest = read_manifest(rebuilt)
    for name, r in _committed().items():
        d = r["dataset"]
        assert d["revision"] == manifest["revision"], (
            f"{name} was made on another dataset than `gharuntime {' '.join(_regenerate_module().DATASETS[LABEL])}` "
            "builds now; run python benchmarks/regenerate_results.py"
        )
        assert d["rows"] == manifest["splits"][d["config"]][d["split"]], name


@pytest.mark.slow
def test_deterministic_methods_score_as_committed(rebuilt: Path, tmp_path: Path) -> None:
    committed = _committed()
    for config in ("temporal", "cross_repo"):
        for method in DETERMINISTIC:
            name = f"{config}-config-{method}.json"
            want = committed[name]
            sub = tmp_path / f"{config}-{method}.jsonl"
            run_baseline(method, rebuilt, config=config, track="config", out=sub, seed=0)
            got = evaluate_file(
                sub,
                rebuilt,
                resamples=want["bootstrap"]["resamples"],
                seed=want["bootstrap"]["seed"],
            )
            for target, metrics in want["metrics"].items():
                for metric, block in metrics.items():
                    for key in ("value", "ci_low", "ci_high"):
                        a, b = block[key], got["metrics"][target][metric][key]
                        assert (a is None) == (b is None), (name, target, metric, key)
                        if a is not None:
                            assert b == pytest.approx(a, rel=1e-9, abs=1e-12), (
                                name,
                                target,
                                metric,
                                key,
                            )


@pytest.mark.slow
def test_committed_tables_are_what_the_committed_results_give(tmp_path: Path) -> None:
    """leaderboard/README.md, leaderboard/index.html, every leaderboard/results/*/summary.md and
    the table regions of README.md, regenerated from a copy of the committed results into a
    temporary tree laid out as the repository is, equal the committed files byte for byte."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "leaderboard" / "results", copy / "leaderboard" / "results")
    shutil.copyfile(ROOT / "README.md", copy / "README.md")
    board = build_leaderboard(
        copy / "leaderboard" / "results", copy / "leaderboard", readmes=[copy / "README.md"]
    )
    written = [board.markdown, board.page, *board.summaries, *board.readmes]
    folders = {p.parent.name for p in (ROOT / "leaderboard" / "results").glob("*/*.json")}
    assert sorted(p.parent.name for p in board.summaries) == sorted(folders)
    stale = [
        str(path.relative_to(copy))
        for path in written
        if not (ROOT / path.relative_to(copy)).is_file()
        or (ROOT / path.relative_to(copy)).read_bytes() != path.read_bytes()
    ]
    assert not stale, (
        f"stale (committed file differs from what the committed results give): {stale}; "
        f"run `{REGENERATE}` and commit what it writes"
    )


def test_the_reference_summary_is_what_its_results_give() -> None:
    """leaderboard/reference/*/summary.md (results that are not leaderboard results: pooled
    real jobs) are rendered by the same renderer, from their files."""
    module = _regenerate_module()
    folders = sorted(p for p in (ROOT / "leaderboard" / "reference").iterdir() if p.is_dir())
    assert folders
    for folder in folders:
        committed = (folder / "summary.md").read_text(encoding="utf-8")
        assert committed == module._summary(folder, folder.name), (
            f"{folder / 'summary.md'} is stale; run python benchmarks/regenerate_results.py "
            "--only reference-real, or render it with its _summary"
        )


def test_regenerating_the_real_folder_keeps_the_laser_results_trained_elsewhere(
    tmp_path: Path,
) -> None:
    """regenerate_results makes the real folder's baselines, not its LASER rows (a GPU, or a
    long CPU run): installing a regeneration replaces every other result and keeps those."""
    from script_support import load_script

    regenerate = load_script("regenerate_results")
    target, staged = tmp_path / "committed", tmp_path / "staged"
    target.mkdir()
    staged.mkdir()
    for name in (
        "temporal-config-lightgbm.json",
        "temporal-config-laser.json",
        "cross_repo-config-laser-tiny-256.json",
        "temporal-multi-laser.json",
        "transfer-gharuntime-sim-small-temporal-config-lightgbm.json",
        "temporal-history-lightgbm-tuned.json",
    ):
        (target / name).write_text("old")
    (staged / "temporal-config-lightgbm.json").write_text("new")
    regenerate._install(staged, target, keep_laser=True)
    assert sorted(p.name for p in target.iterdir()) == [
        "cross_repo-config-laser-tiny-256.json",
        "temporal-config-laser.json",
        "temporal-config-lightgbm.json",
        "temporal-multi-laser.json",
    ]
    assert (target / "temporal-config-lightgbm.json").read_text() == "new"
    # a folder whose LASER rows the script makes (sim-small) replaces them like the others
    regenerate._install(staged, target)
    assert sorted(p.name for p in target.iterdir()) == ["temporal-config-lightgbm.json"]
