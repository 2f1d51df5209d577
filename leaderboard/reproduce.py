"""Re-run a leaderboard result from its own record and say whether it reproduces.

A result names everything it was made from: the dataset revision, the method, its full
configuration and seed, the track, config and split, the bootstrap seed and resamples, and the
commit of the code (`provenance`). `reproduce` obtains that dataset revision (a folder or Hub id
given, the folder the result names, or the seeded simulated world rebuilt), refits the method
with the recorded parameters, scores it on the same resamples, and compares every metric's
value and interval with the recorded ones. A method states how exactly it reproduces
(`Method.reproduce_tolerance`): the trees and naive methods to 1e-9, LASER within its own.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from gharuntime.baselines.methods import METHODS
from gharuntime.dataset import DatasetError, open_dataset, read_manifest
from gharuntime.errors import GharuntimeError
from gharuntime.eval.provenance import library_versions
from gharuntime.progress import Progress, say
from gharuntime.version import __version__

__all__ = [
    "Comparison",
    "ReproduceError",
    "Reproduction",
    "allowed_difference",
    "reproduce_all",
    "reproduce_result",
    "status_of",
    "write_table",
]

Status = Literal["exact", "within", "differs"]
_SIM_LABEL: Final = re.compile(r"^gharuntime-sim-(tiny|small|medium|large)(?:-seed(\d+))?$")


class ReproduceError(GharuntimeError):
    """A result that cannot be re-run here: no provenance, or a dataset not at hand offline."""


@dataclass(frozen=True)
class Comparison:
    """One recorded number beside the reproduced one."""

    metric: str  # e.g. duration_s.rmsle.value
    committed: float | None
    reproduced: float | None

    @property
    def difference(self) -> float | None:
        if self.committed is None or self.reproduced is None:
            return None
        return self.reproduced - self.committed


@dataclass
class Reproduction:
    """What re-running one result gave."""

    result: Path
    method: str
    status: Status
    tolerance: float
    rows: list[Comparison] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    @property
    def reproduced(self) -> bool:
        return self.status != "differs"

    def verdict(self) -> str:
        """The one closing line."""
        if self.status == "exact":
            return "reproduced exactly"
        if self.status == "within":
            return f"reproduced within {self.method}'s stated tolerance ({self.tolerance:g})"
        why = "; ".join(self.reasons) or "no difference in commit, dataset or version recorded"
        return f"not reproduced: {why}"

    def to_json(self) -> dict[str, Any]:
        return {
            "result": str(self.result),
            "method": self.method,
            "status": self.status,
            "tolerance": self.tolerance,
            "verdict": self.verdict(),
            "reasons": self.reasons,
            "metrics": [
                {
                    "metric": row.metric,
                    "committed": row.committed,
                    "reproduced": row.reproduced,
                    "difference": row.difference,
                }
                for row in self.rows
            ],
        }


def _read(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ReproduceError(f"{path}: not a readable result JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise ReproduceError(f"{path}: not a result (a JSON object from `gharuntime eval`)")
    return doc


def _need(doc: dict[str, Any], path: Path, *keys: str) -> Any:
    value: Any = doc
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise ReproduceError(
                f"{path}: the result has no {'.'.join(keys)}, so it cannot be re-run",
                fix="reproduce results written by `gharuntime eval` (result_version 2) that "
                "carry their method's meta and provenance",
            )
        value = value[key]
    return value


MACHINE_LOCAL: Final = frozenset({"checkpoint_dir", "stop_after"})
"""Recorded parameters that name the recording machine's folders or interrupt a run: a re-run
neither reads nor writes another machine's checkpoint folder, and runs to the end."""


def _params(method: str, config: dict[str, Any]) -> dict[str, Any]:
    """The recorded configuration, restricted to what the method takes as parameters, less the
    machine-local ones."""
    defaults = getattr(METHODS[method], "defaults", {})
    return {k: v for k, v in config.items() if k in defaults and k not in MACHINE_LOCAL}


def _git(*args: str, cwd: Path | None = None) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, timeout=30, cwd=cwd, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _source_root() -> Path | None:
    """The git checkout the running code comes from, when it is one."""
    here = Path(__file__).resolve().parent
    top = _git("rev-parse", "--show-toplevel", cwd=here)
    return Path(top) if top else None


def _commit_reason(recorded: str | None, method: str) -> str | None:
    """Which commit the result was made at, against the running one, and what changed in the
    method's files between them."""
    root = _source_root()
    head = _git("rev-parse", "HEAD", cwd=root) if root else None
    if not recorded:
        return "the result records no commit"
    if head is None:
        return f"made at commit {recorded[:12]}; the running code is not a git checkout"
    if head == recorded:
        return None
    module = METHODS[method].__module__.rsplit(".", 1)[-1]
    files = [f"baselines/{module}.py", "baselines/method.py", "baselines/features.py"]
    if method == "laser":
        files = ["baselines/laser"]
    files += ["gharuntime/eval"]
    stat = _git("diff", "--shortstat", recorded, head, "--", *files, cwd=root)
    if stat is None:
        return (
            f"made at commit {recorded[:12]}, which this checkout does not have (now {head[:12]})"
        )
    changed = stat or "no change"
    return (
        f"made at commit {recorded[:12]}, re-run at {head[:12]}; the method's and eval's files "
        f"between them ({', '.join(files)}): {changed}"
    )


def _device_reason(method_config: dict[str, Any]) -> str | None:
    """Where the recorded training ran, against where the re-run trained, when they differ (a
    LASER result trained on a GPU and re-run on a CPU: float sums differ from the first step)."""
    training = method_config.get("training")
    then = training.get("device") if isinstance(training, dict) else None
    if not isinstance(then, str) or importlib.util.find_spec("torch") is None:
        return None
    from gharuntime.baselines.laser.train import device_kind

    now = device_kind()
    return None if now == then else f"trained on {then} then, on {now} now"


def _numbers(result: dict[str, Any]) -> dict[str, float | None]:
    """Every metric's value and interval bounds, by target.metric.field."""
    found: dict[str, float | None] = {}
    for target, metrics in (result.get("metrics") or {}).items():
        for name, block in (metrics or {}).items():
            if isinstance(block, dict):
                for key in ("value", "ci_low", "ci_high"):
                    if key in block:
                        found[f"{target}.{name}.{key}"] = block[key]
    return found


def _compare(committed: dict[str, Any], again: dict[str, Any]) -> list[Comparison]:
    old, new = _numbers(committed), _numbers(again)
    return [Comparison(k, old.get(k), new.get(k)) for k in sorted(set(old) | set(new))]


def allowed_difference(committed: float, tolerance: float) -> float:
    """The difference a value may show and still be the same result: the method's tolerance,
    absolute for values up to 1 (RMSLE, coverage, Spearman) and relative above (an MAE in
    seconds moves by seconds when a prediction moves by a digit)."""
    return tolerance * max(1.0, abs(committed))


def status_of(rows: list[Comparison], tolerance: float) -> Status:
    """exact (every number the same), within (each within `allowed_difference`) or differs
    (one past it, or a number present on one side only)."""
    exact = True
    for row in rows:
        if (row.committed is None) != (row.reproduced is None):
            return "differs"
        if row.difference is not None and row.committed is not None:
            if not math.isfinite(row.difference):
                return "differs"
            if abs(row.difference) > allowed_difference(row.committed, tolerance):
                return "differs"
            exact = exact and row.difference == 0.0
    return "exact" if exact else "within"


def _simulated(label: str, doc: dict[str, Any]) -> tuple[str, int] | None:
    """(scale, seed) of a result on a dataset built from the seeded simulated GitHub."""
    dataset = doc.get("dataset") or {}
    if dataset.get("source_kind") != "simulated":
        return None
    match = _SIM_LABEL.match(label)
    if match is None:
        return None
    seed = int(match.group(2)) if match.group(2) else 1  # the published sim datasets: seed 1
    return match.group(1), seed


@dataclass
class _Datasets:
    """Dataset revisions obtained so far (a simulated world is built once per run)."""

    given: tuple[str, ...]
    work: Path
    built: dict[str, Path] = field(default_factory=dict)

    def obtain(self, doc: dict[str, Any], path: Path, progress: Progress | None) -> Path:
        revision = _need(doc, path, "dataset", "revision")
        label = str((doc.get("meta") or {}).get("dataset") or "")
        tried: list[str] = []
        candidates = list(self.given)
        recorded = str((doc.get("dataset") or {}).get("id") or "")
        if recorded:
            candidates.append(recorded)
        for spec in candidates:
            try:
                folder = open_dataset(spec).root
                if read_manifest(folder).get("revision") == revision:
                    return folder
                tried.append(f"{spec} is another revision")
            except (DatasetError, OSError) as exc:
                tried.append(f"{spec}: {str(exc).splitlines()[0]}")
        if revision in self.built:
            return self.built[revision]
        sim = _simulated(label, doc)
        if sim is not None:
            from gharuntime.builder.build import BuildOptions, build
            from gharuntime.source_kinds.simulated import SimulatedConfig

            scale, seed = sim
            folder = self.work / f"{label}-{revision[:12]}"
            if not (folder / "manifest.json").is_file():
                say(progress, f"building {label} from the simulated GitHub (seed {seed})")
                build(
                    SimulatedConfig(self.work / f"{label}.raw", seed=seed, scale=scale).source(),
                    folder,
                    BuildOptions(progress=progress),
                )
            if read_manifest(folder).get("revision") == revision:
                self.built[revision] = folder
                return folder
            tried.append(f"the simulated world (scale {scale}, seed {seed}) built another revision")
        raise ReproduceError(
            f"{path}: its dataset revision {revision[:12]} is not at hand"
            + (f" ({'; '.join(tried)})" if tried else ""),
            fix="give the dataset with --dataset FOLDER or ORG/NAME@REVISION (a download needs "
            "the Hub; offline, a folder of that revision; repeat --dataset for several)",
        )


def reproduce_result(
    result: Path,
    *,
    datasets: tuple[str, ...] = (),
    work: Path | None = None,
    progress: Progress | None = None,
    _datasets: _Datasets | None = None,
) -> Reproduction:
    """Re-run `result` and compare. Raises ReproduceError when it cannot be re-run here."""
    from gharuntime.baselines.run import run_baseline
    from gharuntime.eval.api import evaluate_file

    doc = _read(result)
    provenance = _need(doc, result, "provenance")
    meta = _need(doc, result, "meta")
    method = str(_need(doc, result, "meta", "method"))
    if method not in METHODS:
        raise ReproduceError(
            f"{result}: method {method!r} is not one of this version's ({', '.join(METHODS)})",
            fix="reproduce it with the gharuntime version that has it",
        )
    if doc.get("trained_on"):
        raise ReproduceError(
            f"{result}: a transfer result (trained on {doc['trained_on'].get('dataset')}); "
            "reproduce only plain results",
            fix="re-run benchmarks/real_apache.py's transfer step",
        )
    method_config = (meta.get("extra") or {}).get("method_config") or {}
    bootstrap = _need(doc, result, "bootstrap")
    scratch = Path(tempfile.mkdtemp(prefix="gharuntime-reproduce-"))
    at_hand = _datasets or _Datasets(datasets, work or scratch)
    try:
        folder = at_hand.obtain(doc, result, progress)
        say(progress, f"refitting {method} on {meta.get('config')}/{meta.get('track')}")
        submission = scratch / "submission.jsonl"
        run_baseline(
            method,
            folder,
            config=str(_need(doc, result, "meta", "config")),
            track=str(_need(doc, result, "meta", "track")),
            split=str(meta.get("split") or "test"),
            out=submission,
            seed=int(meta.get("seed") or 0),
            params=_params(method, method_config) or None,
            progress=progress,
        )
        say(progress, "scoring on the same resamples")
        again = evaluate_file(
            submission,
            folder,
            seed=int(bootstrap.get("seed") or 0),
            resamples=int(bootstrap.get("resamples") or 1000),
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    tolerance = float(getattr(METHODS[method], "reproduce_tolerance", 1e-9))
    rows = _compare(doc, again)
    status = status_of(rows, tolerance)
    reasons: list[str] = []
    if status == "differs":
        why = _commit_reason(provenance.get("git_commit"), method)
        if why:
            reasons.append(why)
        device = _device_reason(method_config)
        if device:
            reasons.append(device)
        if provenance.get("gharuntime_version") not in (None, __version__):
            reasons.append(
                f"gharuntime {provenance.get('gharuntime_version')} then, {__version__} now"
            )
        recorded = provenance.get("libraries")
        if isinstance(recorded, dict):
            now = library_versions()
            moved = [
                f"{name} {recorded.get(name, 'absent')} then, {now.get(name, 'absent')} now"
                for name in sorted(set(recorded) | set(now))
                if recorded.get(name) != now.get(name)
            ]
            if moved:
                reasons.append("library versions differ: " + ", ".join(moved))
        else:
            reasons.append("the result records no library versions, so they cannot be compared")
    return Reproduction(result, method, status, tolerance, rows, reasons)


def _results(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*.json")):
        if path.is_file() and not path.name.startswith("transfer-") and path.stem != "reproduced":
            yield path


def reproduce_all(
    folder: Path,
    *,
    datasets: tuple[str, ...] = (),
    work: Path | None = None,
    progress: Progress | None = None,
) -> tuple[list[Reproduction], list[tuple[Path, str]]]:
    """Reproduce every plain result under `folder` whose dataset is at hand; the others are
    returned with the reason they were left out."""
    done: list[Reproduction] = []
    left_out: list[tuple[Path, str]] = []
    # a scratch folder only when the caller gives none (one made and unused was left behind)
    scratch: Path | None = None
    if work is None:
        scratch = work = Path(tempfile.mkdtemp(prefix="gharuntime-reproduce-data-"))
    at_hand = _Datasets(datasets, work)
    paths = list(_results(folder))
    try:
        for i, path in enumerate(paths):
            if progress is not None:
                progress(f"reproducing {path.parent.name}/{path.name}", i, len(paths))
            try:
                done.append(reproduce_result(path, progress=None, _datasets=at_hand))
            except ReproduceError as exc:
                left_out.append((path, str(exc).splitlines()[0]))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return done, left_out


def write_table(
    done: list[Reproduction], left_out: list[tuple[Path, str]], out: Path
) -> tuple[Path, Path]:
    """OUT.md and OUT.json: one row per result, for the leaderboard page to link."""
    from gharuntime.markdown import md as escape
    from gharuntime.paths import write_atomic

    lines = [
        "# Reproduced results",
        "",
        f"Re-run by `gharuntime leaderboard reproduce --all` with gharuntime {__version__}.",
        "",
        "| result | method | verdict | largest difference |",
        "| --- | --- | --- | ---: |",
    ]
    for item in done:
        worst = max((abs(r.difference) for r in item.rows if r.difference is not None), default=0)
        lines.append(
            f"| {escape(item.result.name)} | {escape(item.method)} | {escape(item.verdict())} "
            f"| {worst:.3g} |"
        )
    for path, why in left_out:
        lines.append(f"| {escape(path.name)} | | not run: {escape(why)} | |")
    md, js = out.with_suffix(".md"), out.with_suffix(".json")
    write_atomic(md, "\n".join(lines) + "\n", mode=0o644)
    doc = {
        "gharuntime_version": __version__,
        "reproduced": [item.to_json() for item in done],
        "not_run": [{"result": str(p), "reason": why} for p, why in left_out],
    }
    write_atomic(js, json.dumps(doc, indent=2, allow_nan=False) + "\n", mode=0o644)
    return md, js
