"""Regenerate every committed result under leaderboard/results/ at HEAD, from nothing.

For each results folder: build its dataset with its documented command, fit and score every
reference method on both configs and both tracks (benchmarks/baselines.py), and write the
result JSONs plus a summary table (summary.md, by the leaderboard's renderer); at the end
every committed table is rendered again from the results (`gharuntime leaderboard --readme
README.md`: leaderboard/README.md, index.html, each summary.md, README.md's tables). reference-real scores the models trained on
gharuntime-sim-small on the real jobs under ../shared/reference/ (benchmarks/baselines_real.py).
gharuntime-real-apache needs its dataset built first from clones of its four sources
(`benchmarks/real_apache.py`, whose docstring says how); pass that folder as --real-dataset and
its baselines and transfer tables are rerun here. Each result names its dataset revision, the
gharuntime version, the git commit and the command that made it.

    python benchmarks/regenerate_results.py                      # every committed folder
    python benchmarks/regenerate_results.py --only gharuntime-sim-small   # the CI one (minutes)
    python benchmarks/regenerate_results.py --real-dataset work/gharuntime-real-apache

Every step runs in the work folder (--work, else a temporary one) and names its files relative
to it, so a result names no folder of the machine that made it (gharuntime.eval.provenance).
Results made before that rule are rewritten in place, no score changed, by

    python benchmarks/regenerate_results.py relativize     # leaderboard/ and benchmarks/ results

Committed results must be reproducible from a commit: the script refuses a tree with uncommitted
changes to tracked files (--allow-dirty for a trial run, whose results say git_dirty), and
stages every folder's results outside the tree, installing them only once all are made, so no
result is scored on a tree that earlier results already changed. Commit the results afterwards
(tests/project/test_committed_results.py checks every committed result's commit is clean and an ancestor
of HEAD). Old result files of a folder are removed before its new ones are written, so nothing
stale survives; gharuntime-real-apache's LASER results, which this script does not make (a GPU,
or benchmarks/laser_real.py), stay. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gharuntime.leaderboard.outputs import build_leaderboard
from gharuntime.leaderboard.registry import Entry
from gharuntime.leaderboard.summary import render_summary

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "leaderboard" / "results"
REFERENCE = ROOT / "leaderboard" / "reference"  # sanity checks, not leaderboard tables

# label -> the `gharuntime build` arguments of its dataset (the documented command).
DATASETS: dict[str, list[str]] = {
    "gharuntime-sim-small": ["build", "--source", "simulated", "--seed", "1", "--scale", "small"],
    "gharuntime-sim-medium": ["build", "--source", "simulated", "--seed", "1", "--scale", "medium"],
}
CONFIGS = ("temporal", "cross_repo")
REAL = "reference-real"
REAL_MODELS_FROM = "gharuntime-sim-small"
REAL_APACHE = "gharuntime-real-apache"
COMMITTED = ("gharuntime-sim-small", REAL)
"""The folders committed under leaderboard/results/ that this script owns (the default).
gharuntime-sim-medium is made on request (`--only gharuntime-sim-medium`: an hour or more on 2
cores); gharuntime-real-apache needs clones of its sources (benchmarks/real_apache.py)."""
RESAMPLES = 1000
RELATIVIZED = (RESULTS, REFERENCE, ROOT / "benchmarks" / "results")
"""The committed result folders `relativize` rewrites by default."""

_MACHINE_FOLDER = re.compile(r"(?<![\w-])/(?:(?:tmp|work|home|Users)/[^/\"\s]+|root)/")
"""A machine's folder at the start of an absolute path, where a run kept its files: a folder in
its scratch or work area (tmp, work), or a home folder (home/USER, Users/USER, root)."""


def gharuntime_cmd() -> list[str]:
    return [sys.executable, "-c", "from gharuntime.cli.main import main; main()"]


def build_dataset(label: str, work: Path) -> Path:
    run([*gharuntime_cmd(), *DATASETS[label], "--out", label], work)
    return work / label


def script(name: str) -> str:
    """benchmarks/NAME.py, run from the work folder."""
    return str(ROOT / "benchmarks" / name)


def run(cmd: list[str], work: Path) -> None:
    """`cmd` in the work folder, every path it names relative to it: the results it writes name
    their files relative to where they were scored, never a folder of this machine."""
    print("+", " ".join(cmd[3:] if cmd[1] == "-c" else cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, cwd=work)


def _summary(folder: Path, title: str) -> str:
    """The folder's summary.md, by the leaderboard's renderer (`gharuntime leaderboard` writes
    the same for each folder under leaderboard/results/; the reference folder is not a
    leaderboard folder, so its results are read as they are)."""
    entries = [
        Entry(path, json.loads(path.read_text(encoding="utf-8")))
        for path in sorted(folder.glob("*.json"))
    ]
    if title != REAL:
        return render_summary(title, entries)
    return render_summary(
        title,
        entries,
        made_by="`python benchmarks/regenerate_results.py --only reference-real`, with the "
        "leaderboard's renderer (tests/project/test_committed_results.py says when it is stale)",
        trained=f"Trained on {REAL_MODELS_FROM}'s temporal train split, scored on the pooled "
        "real jobs of ../shared/reference/",
    )


def render_tables() -> None:
    """Every committed table from the committed results: leaderboard/README.md, index.html,
    each results folder's summary.md and README.md's table regions (what
    tests/project/test_committed_results.py checks)."""
    build_leaderboard(RESULTS, ROOT / "leaderboard", readmes=[ROOT / "README.md"])


def regenerate(
    label: str, work: Path, configs: tuple[str, ...] = CONFIGS, tuned_tracks: str | None = None
) -> dict[str, Any]:
    t0 = time.perf_counter()
    dataset = build_dataset(label, work)
    staged = work / "results" / label
    shutil.rmtree(staged, ignore_errors=True)
    for config in configs:
        run(
            [
                *(sys.executable, script("baselines.py"), "--dataset", dataset.name),
                *("--config", config, "--work", f"{label}-bench"),
                *("--results-dir", "results", "--label", label),
                *("--resamples", str(RESAMPLES)),
                *(("--tuned-tracks", tuned_tracks) if tuned_tracks else ()),
            ],
            work,
        )
    (staged / "summary.md").write_text(_summary(staged, label), encoding="utf-8")
    return {
        "label": label,
        "seconds": round(time.perf_counter() - t0, 1),
        "_install": (staged, RESULTS / label, configs),
    }


def regenerate_real(work: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    source = work / REAL_MODELS_FROM
    models = work / f"{REAL_MODELS_FROM}-bench" / "temporal"
    if not models.is_dir():
        raise SystemExit(f"{REAL} needs the {REAL_MODELS_FROM} models: regenerate it first")
    staged = work / "results" / REAL
    shutil.rmtree(staged, ignore_errors=True)
    run(
        [
            *(sys.executable, script("baselines_real.py")),
            *("--models", models.relative_to(work).as_posix()),
            *("--dataset", source.name, "--results-dir", f"results/{REAL}"),
            *("--resamples", str(RESAMPLES)),
        ],
        work,
    )
    (staged / "summary.md").write_text(_summary(staged, REAL), encoding="utf-8")
    return {
        "label": REAL,
        "seconds": round(time.perf_counter() - t0, 1),
        "_install": (staged, REFERENCE / REAL),
    }


def regenerate_real_apache(work: Path, dataset: Path) -> dict[str, Any]:
    """The real tables from a built gharuntime-real-apache folder: every baseline on both
    configs and the transfer tables (trained on gharuntime-sim-small, built here first if this
    run has not built it: `--only gharuntime-real-apache` runs beside the simulated folders)."""
    t0 = time.perf_counter()
    if not (dataset / "manifest.json").is_file():
        raise SystemExit(f"--real-dataset {dataset}: not a dataset folder (no manifest.json)")
    out = work / f"{REAL_APACHE}-work"
    out.mkdir(parents=True, exist_ok=True)
    link = out / REAL_APACHE
    if not link.exists():
        link.symlink_to(dataset.resolve(), target_is_directory=True)
    staged = work / "results" / REAL_APACHE
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir(parents=True)
    if not (work / REAL_MODELS_FROM / "manifest.json").is_file():  # the transfer's training set
        build_dataset(REAL_MODELS_FROM, work)
    run(
        [
            *(sys.executable, script("real_apache.py"), "--out", out.name, "--skip-build"),
            *("--sim-dataset", REAL_MODELS_FROM, "--sim-label", REAL_MODELS_FROM),
            *("--results-dir", "results", "--resamples", str(RESAMPLES)),
        ],
        work,
    )
    (staged / "summary.md").write_text(_summary(staged, REAL_APACHE), encoding="utf-8")
    return {
        "label": REAL_APACHE,
        "seconds": round(time.perf_counter() - t0, 1),
        "_install": (staged, RESULTS / REAL_APACHE, CONFIGS, True),
    }


def _dirty() -> bool:
    status = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return bool(status.strip())


MADE_ELSEWHERE = re.compile(r"^(?:temporal|cross_repo)-(?:config|history|multi)-laser\b")
"""LASER's results of a real dataset are trained elsewhere (a GPU, or a long CPU run with
benchmarks/laser_real.py), not by this script: regenerating a folder keeps them."""


def made_elsewhere(path: Path) -> bool:
    """Whether `path` is a result this script does not make (MADE_ELSEWHERE), so keeps."""
    return MADE_ELSEWHERE.match(path.name) is not None


def _install(
    staged: Path, target: Path, configs: tuple[str, ...] = CONFIGS, keep_laser: bool = False
) -> None:
    """Replace the committed folder's result files of `configs` with the staged ones (other
    files, other configs' results and, with `keep_laser`, the LASER results trained elsewhere
    stay)."""
    target.mkdir(parents=True, exist_ok=True)
    olds = [
        p
        for p in target.glob("*.json")
        if (set(configs) >= set(CONFIGS) or p.name.split("-", 1)[0] in configs)
        and not (keep_laser and made_elsewhere(p))
    ]
    for old in [*olds, target / "summary.md"]:
        old.unlink(missing_ok=True)
    for new in sorted(staged.iterdir()):
        shutil.copy2(new, target / new.name)
    if set(configs) < set(CONFIGS):  # the summary covers every config's results in the folder
        (target / "summary.md").write_text(_summary(target, target.name), encoding="utf-8")


def relativize_text(text: str) -> str:
    """`text` with each absolute path of a machine's scratch, work or home folder named
    relative to that folder (the folder the run worked in, as `run` now has it), and each
    absolute local dataset `id` (a result's `dataset` or `trained_on`) by its folder's name,
    as gharuntime.dataset_ref.LocalDataset.id names it now."""
    text = re.sub(r'("id": ")/(?:[^"/]+/)+([^"/]+")', r"\1\2", text)
    return _MACHINE_FOLDER.sub("", text)


def _same_but_paths(old: Any, new: Any) -> bool:
    """Every key, number, flag and other string the same; a string differs only by the machine
    folder dropped from its paths, or is an absolute path's last part (a dataset id)."""
    if isinstance(old, dict):
        return (
            isinstance(new, dict)
            and list(old) == list(new)
            and all(_same_but_paths(old[k], new[k]) for k in old)
        )
    if isinstance(old, list):
        return (
            isinstance(new, list)
            and len(old) == len(new)
            and all(_same_but_paths(a, b) for a, b in zip(old, new, strict=True))
        )
    if isinstance(old, str) and isinstance(new, str) and old != new:
        return new == _MACHINE_FOLDER.sub("", old) or (
            old.startswith("/") and new == old.rsplit("/", 1)[-1]
        )
    return type(old) is type(new) and (old == new or (old != old and new != new))  # NaN


def relativize(targets: list[Path]) -> list[Path]:
    """Rewrite every result file (*.json, *.md) under `targets` by `relativize_text`, in place
    (a temporary name, then a rename), and return those that changed. A JSON file is checked
    first: still the same JSON but for its paths, or nothing is written."""
    files = sorted(
        p
        for t in targets
        for p in ([t] if t.is_file() else t.rglob("*"))
        if p.suffix in (".json", ".md") and p.is_file()
    )
    rewritten = []
    for path in files:  # every file checked before any is written
        old = path.read_text(encoding="utf-8")
        new = relativize_text(old)
        if new == old:
            continue
        if path.suffix == ".json" and not _same_but_paths(json.loads(old), json.loads(new)):
            raise SystemExit(
                f"{path}: the rewrite would change more than its paths; nothing written"
            )
        rewritten.append((path, new))
    for path, new in rewritten:
        tmp = path.with_name(f".{path.name}.relativize")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)
    return [path for path, _ in rewritten]


def main_relativize(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="regenerate_results.py relativize",
        description="Name the files and folders in committed results relative to the folder "
        "each run worked in, and a local dataset by its folder's name; no score changes.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="result files or folders [leaderboard/results, leaderboard/reference, "
        "benchmarks/results]",
    )
    args = parser.parse_args(argv)
    changed = relativize(args.paths or list(RELATIVIZED))
    for path in changed:
        print(f"rewrote {path}", file=sys.stderr)
    print(json.dumps({"benchmark": "regenerate_results relativize", "rewritten": len(changed)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["relativize"]:
        return main_relativize(argv[1:])
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="python benchmarks/regenerate_results.py relativize [PATH ...]: name the paths "
        "in committed results relative to where they were made (no score changes)",
    )
    parser.add_argument("--only", action="append", choices=[*DATASETS, REAL, REAL_APACHE])
    parser.add_argument("--work", type=Path, help="keep datasets, models and logs here [tmp]")
    parser.add_argument(
        "--real-dataset",
        type=Path,
        help=f"a built {REAL_APACHE} folder (benchmarks/real_apache.py): regenerate its tables too",
    )
    parser.add_argument(
        "--configs",
        default=",".join(CONFIGS),
        help="the simulated folders' configs to rerun [both]; the others' committed results stay",
    )
    parser.add_argument(
        "--tuned-tracks",
        help="tracks the *-tuned trees run on (benchmarks/baselines.py) [every track]",
    )
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="run on a tree with uncommitted changes (a trial: such results must not be committed)",
    )
    args = parser.parse_args(argv)
    if _dirty() and not args.allow_dirty:
        raise SystemExit(
            "the tree has uncommitted changes: committed results must come from a clean commit; "
            "commit (or stash) first, or pass --allow-dirty for a trial run"
        )
    wanted = args.only or [*COMMITTED, *([REAL_APACHE] if args.real_dataset else [])]
    if REAL_APACHE in wanted and args.real_dataset is None:
        parser.error(f"{REAL_APACHE} needs --real-dataset (built by benchmarks/real_apache.py)")
    if REAL in wanted and REAL_MODELS_FROM not in wanted:  # scores that folder's models
        wanted.insert(0, REAL_MODELS_FROM)
    work = (args.work or Path(tempfile.mkdtemp(prefix="gharuntime-regen-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    done = []
    t0 = time.perf_counter()
    try:
        for label in wanted:
            if label == REAL:
                done.append(regenerate_real(work))
            elif label == REAL_APACHE:
                done.append(regenerate_real_apache(work, args.real_dataset))
            else:
                configs = tuple(c for c in args.configs.split(",") if c)
                done.append(regenerate(label, work, configs, args.tuned_tracks))
            print(f"{done[-1]['label']}: {done[-1]['seconds']} s", file=sys.stderr, flush=True)
        for item in done:  # only now, so every folder was scored on the same clean tree
            _install(*item.pop("_install"))
        render_tables()
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    load = os.getloadavg()[0]
    print(
        json.dumps(
            {
                "benchmark": "regenerate_results",
                "regenerated": done,
                "seconds": round(time.perf_counter() - t0, 1),
                "loadavg_1m": round(load, 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
