"""Re-run a leaderboard result from its own record and say whether it reproduces.

A result names everything it was made from: the dataset revision, the method, its full
configuration and seed, the track, config and split, the bootstrap seed and resamples, and the
commit of the code (`provenance`). `reproduce` obtains that dataset revision (a folder or Hub id
given, the folder the result names, or the seeded simulated world rebuilt), refits the method
with the recorded parameters, scores it on the same resamples, and compares every scored number
(`gharuntime.leaderboard.compare`: metrics, per-resample values, interval and calibration
numbers, breakdowns, counts) with the recorded one. A method states how exactly it reproduces
(`Method.reproduce_tolerance`): the trees and naive methods to 1e-9, LASER within its own.

A result is data from whoever contributed it. It is read and checked whole before any of it is
used (`check_result`): through the registry's bounded reader and schema (a FIFO, /dev/zero,
deep nesting, NaN or a field of the wrong type is refused), then what a schema cannot say (the
fields that must agree, the method's parameters by the method's own checks). Only then is
anything built, fitted or passed to git, and only from the checked values: the commit is 40 hex
digits and goes to git after `--end-of-options`; the dataset revision is 64 hex digits, and
every folder made from it is checked to stay inside the work folder.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from gharuntime.baselines.methods import METHODS
from gharuntime.dataset import DatasetError, open_dataset, read_manifest
from gharuntime.dataset_ref import HUB_ID
from gharuntime.errors import GharuntimeError
from gharuntime.eval.provenance import library_versions
from gharuntime.leaderboard.compare import (
    Comparison,
    allowed_difference,
    compare,
    identity_mismatches,
    status_of,
)
from gharuntime.leaderboard.registry import (
    REPRODUCED_TABLE,
    Entry,
    LeaderboardError,
    read_result,
)
from gharuntime.leaderboard.reproduce_table import AllRun, Reproduction, Skipped, write_table
from gharuntime.paths import contained
from gharuntime.progress import Progress, say
from gharuntime.redact import redact
from gharuntime.version import __version__

__all__ = [
    "AllRun",
    "Comparison",
    "Plan",
    "ReproduceError",
    "Reproduction",
    "ResultRefused",
    "allowed_difference",
    "check_result",
    "reproduce_all",
    "reproduce_result",
    "result_files",
    "status_of",
    "write_table",
]

_SIM_LABEL: Final = re.compile(r"^gharuntime-sim-(tiny|small|medium|large)(?:-seed(\d+))?$")
_SHOWN: Final = 5  # problems of a refused result named in its one message


class ReproduceError(GharuntimeError):
    """A result that cannot be re-run here: no provenance, a transfer result, a method this
    version lacks, or a dataset not at hand offline."""


class ResultRefused(ReproduceError):
    """A file that is not a valid result: not a regular file, too large, not JSON, a field of
    the wrong shape, type or range, fields that disagree, parameters its method refuses.
    Refused before anything of it is used."""


@dataclass(frozen=True)
class Plan:
    """A checked result and the values a re-run takes from it, each of its checked type."""

    path: Path
    sha256: str
    doc: dict[str, Any]
    method: str
    config: str
    track: str
    split: str
    seed: int
    params: dict[str, Any]
    method_config: dict[str, Any]
    bootstrap_seed: int
    resamples: int
    revision: str
    label: str
    dataset_id: str
    dataset_kind: str
    simulated: bool
    git_commit: str | None
    version: str | None
    libraries: dict[str, str] | None


MACHINE_LOCAL: Final = frozenset({"checkpoint_dir", "stop_after"})
"""Recorded parameters that name the recording machine's folders or interrupt a run: a re-run
neither reads nor writes another machine's checkpoint folder, and runs to the end."""

_RESULT_FIX: Final = (
    "a result is the JSON file `gharuntime eval --out` writes (result_version 2); give one, "
    "or score the submission again with `gharuntime eval --out`"
)


def _params(method: str, config: dict[str, Any]) -> dict[str, Any]:
    """The recorded configuration, restricted to what the method takes as parameters, less the
    machine-local ones."""
    defaults = getattr(METHODS[method], "defaults", {})
    return {k: v for k, v in config.items() if k in defaults and k not in MACHINE_LOCAL}


def _refused(where: str, problems: list[str]) -> ResultRefused:
    shown = "; ".join(problems[:_SHOWN])
    more = f" (and {len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
    return ResultRefused(
        f"not a result that can be used: {shown}{more}", where=where, fix=_RESULT_FIX
    )


_HINT: Final = "; a result is the file `gharuntime eval --out` writes"


def _strip(problem: str, where: str) -> str:
    """A registry problem without its leading `WHERE: ` (the message names the file once) and
    its hint (the fix says it)."""
    problem = problem.removesuffix(_HINT)
    return problem[len(where) + 2 :] if problem.startswith(f"{where}: ") else problem


def check_result(path: Path) -> Plan:
    """Read and check the result at `path` whole, before anything uses it: the registry's
    bounded read, schema and value checks (`read_result`), then what the schema cannot say.
    ResultRefused for a file that is not a valid result; ReproduceError for a valid one that
    cannot be re-run (no provenance, a transfer result, a method this version lacks)."""
    return _plan(_read_checked(path))


def _read_checked(path: Path) -> Entry:
    """The registry's bounded read and whole check; ResultRefused naming every problem."""
    where = str(path)
    try:
        return read_result(path)[0]
    except LeaderboardError as exc:
        raise _refused(where, [_strip(p, where) for p in exc.problems]) from None


def _plan(entry: Entry) -> Plan:
    """What `check_result` says beyond the registry's checks."""
    path, doc = entry.path, entry.result
    where = str(path)
    provenance = doc.get("provenance")
    if provenance is None:
        raise ReproduceError(
            "the result has no provenance, so it cannot be re-run",
            where=where,
            fix="reproduce results written by `gharuntime eval` (result_version 2) that carry "
            "their method's meta and provenance",
        )
    if "trained_on" in doc:
        raise ReproduceError(
            f"a transfer result (trained on {entry.trained_on}); reproduce only plain results",
            where=where,
            fix="re-run benchmarks/real_apache.py's transfer step",
        )
    meta, dataset, bootstrap = doc["meta"], doc["dataset"], doc["bootstrap"]
    method = str(meta["method"])
    if method not in METHODS:
        raise ReproduceError(
            f"method {method!r} is not one of this version's ({', '.join(METHODS)})",
            where=where,
            fix="reproduce it with the gharuntime version that has it",
        )
    if meta.get("config") is None:
        raise ReproduceError(
            "the result has no meta.config, so it cannot be re-run",
            where=where,
            fix="reproduce results written by `gharuntime eval` (result_version 2) that carry "
            "their method's meta and provenance",
        )
    problems = []
    for key in ("config", "split"):
        if meta.get(key) not in (None, dataset[key]):
            problems.append(
                f"meta/{key} {meta[key]!r} is not dataset/{key} {dataset[key]!r}, the one scored"
            )
    if meta.get("dataset_revision") not in (None, dataset["revision"]):
        problems.append("meta/dataset_revision is not dataset/revision, the one scored")
    extra = meta.get("extra") or {}
    method_config = extra.get("method_config") or {}
    seed = int(meta.get("seed") or 0)
    params = _params(method, method_config)
    problems += _param_problems(method, doc["track"], seed, params)
    if problems:
        raise _refused(where, problems)
    libraries = provenance.get("libraries")
    return Plan(
        path=path,
        sha256=entry.sha256,
        doc=doc,
        method=method,
        config=str(dataset["config"]),
        track=str(doc["track"]),
        split=str(dataset["split"]),
        seed=seed,
        params=params,
        method_config=method_config,
        bootstrap_seed=int(bootstrap["seed"]),
        resamples=int(bootstrap["resamples"]),
        revision=str(dataset["revision"]),
        label=str(meta.get("dataset") or ""),
        dataset_id=str(dataset["id"]),
        dataset_kind=str(dataset["kind"]),
        simulated=dataset.get("source_kind") == "simulated",
        git_commit=provenance.get("git_commit"),
        version=provenance.get("gharuntime_version"),
        libraries=dict(libraries) if isinstance(libraries, dict) else None,
    )


def _param_problems(method: str, track: str, seed: int, params: dict[str, Any]) -> list[str]:
    """The recorded parameters checked by the method itself (types and bounds, as `--param`
    is), and a LASER model named by a folder or Hub id: the recording machine's, not data a
    re-run may load."""
    from gharuntime.baselines.methods import make_method

    try:
        make_method(method, track, seed=seed, params=params or None)
    except GharuntimeError as exc:
        return [f"meta/extra/method_config: {exc.what}"]
    if method == "laser":
        from gharuntime.baselines.laser.models import TINY_SIZES

        model = params.get("model", "tiny")
        if model not in (*TINY_SIZES, "smollm2-135m"):
            return [
                f"meta/extra/method_config/model {model!r} is a folder or Hub id of the machine "
                f"that made it; a re-run builds only a named model ({', '.join(TINY_SIZES)}, "
                "smollm2-135m)"
            ]
    return []


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


_COMMIT: Final = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _commit_reason(recorded: str | None, method: str) -> str | None:
    """Which commit the result was made at, against the running one, and what changed in the
    method's files between them. `recorded` is checked (40 or 64 hex digits) and given to git
    after `--end-of-options`: a result's text is never an option."""
    if not recorded:
        return "the result records no commit"
    if not _COMMIT.fullmatch(recorded):  # check_result refuses it first; never reaches git
        return "the result records a commit that is not one (40 hex digits)"
    root = _source_root()
    head = _git("rev-parse", "HEAD", cwd=root) if root else None
    if head is None:
        return f"made at commit {recorded[:12]}; the running code is not a git checkout"
    if head == recorded:
        return None
    module = METHODS[method].__module__.rsplit(".", 1)[-1]
    files = [f"baselines/{module}.py", "baselines/method.py", "baselines/features.py"]
    if method == "laser":
        files = ["baselines/laser"]
    files += ["gharuntime/eval"]
    stat = _git("diff", "--shortstat", "--end-of-options", recorded, head, "--", *files, cwd=root)
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


def _library_reason(recorded: dict[str, str] | None) -> str | None:
    if recorded is None:
        return "the result records no library versions, so they cannot be compared"
    now = library_versions()
    moved = [
        f"{name} {recorded.get(name, 'absent')} then, {now.get(name, 'absent')} now"
        for name in sorted(set(recorded) | set(now))
        if recorded.get(name) != now.get(name)
    ]
    return "library versions differ: " + ", ".join(moved) if moved else None


def _reasons(plan: Plan, mismatched: list[str], past: list[Comparison], rows: int) -> list[str]:
    """Why a re-run may differ (other records, another commit, device, version, libraries),
    then which numbers differ."""
    reasons = []
    if mismatched:
        reasons.append(
            f"the re-run scored other records or resamples ({', '.join(mismatched)} differ)"
        )
    for why in (
        _commit_reason(plan.git_commit, plan.method),
        _device_reason(plan.method_config),
    ):
        if why:
            reasons.append(why)
    if plan.version not in (None, __version__):
        reasons.append(f"gharuntime {plan.version} then, {__version__} now")
    libraries = _library_reason(plan.libraries)
    if libraries:
        reasons.append(libraries)
    if not reasons:
        reasons.append("no difference in commit, dataset, device, version or libraries recorded")
    if past:
        reasons.append(
            f"{len(past):,} of {rows:,} numbers past the tolerance (first: {past[0].metric})"
        )
    return reasons


def _simulated(plan: Plan) -> tuple[str, int] | None:
    """(scale, seed) of a result on a dataset built from the seeded simulated GitHub."""
    if not plan.simulated:
        return None
    match = _SIM_LABEL.match(plan.label)
    if match is None:
        return None
    seed = int(match.group(2)) if match.group(2) else 1  # the published sim datasets: seed 1
    return match.group(1), seed


def _recorded_candidate(plan: Plan) -> str | None:
    """The dataset the result names, when it can be fetched: a Hub id. A local dataset's `id`
    is a name, not a folder of this machine: nothing a result names is opened as a path."""
    if plan.dataset_kind == "hub":
        return plan.dataset_id if HUB_ID.match(plan.dataset_id) else None
    return None


@dataclass
class _Datasets:
    """Dataset revisions obtained so far (a simulated world is built once per run)."""

    given: tuple[str, ...]
    work: Path
    built: dict[str, Path] = field(default_factory=dict)

    def _inside(self, name: str, plan: Plan) -> Path:
        """`work/name`, refused unless it stays inside the work folder (links followed)."""
        folder = contained(self.work, name)
        if folder is None:
            raise ResultRefused(
                f"the dataset folder {name!r} made from it would lie outside the work folder "
                f"{self.work}",
                where=str(plan.path),
                fix=_RESULT_FIX,
            )
        return folder

    def obtain(self, plan: Plan, progress: Progress | None) -> Path:
        revision = plan.revision
        tried: list[str] = []
        candidates = list(self.given)
        recorded = _recorded_candidate(plan)
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
        sim = _simulated(plan)
        if sim is not None:
            from gharuntime.builder.build import BuildOptions, build
            from gharuntime.source_kinds.simulated import SimulatedConfig

            scale, seed = sim
            folder = self._inside(f"{plan.label}-{revision[:12]}", plan)
            raw = self._inside(f"{plan.label}.raw", plan)
            if not (folder / "manifest.json").is_file():
                say(progress, f"building {plan.label} from the simulated GitHub (seed {seed})")
                build(
                    SimulatedConfig(raw, seed=seed, scale=scale).source(),
                    folder,
                    BuildOptions(progress=progress),
                )
            if read_manifest(folder).get("revision") == revision:
                self.built[revision] = folder
                return folder
            tried.append(f"the simulated world (scale {scale}, seed {seed}) built another revision")
        raise ReproduceError(
            f"its dataset revision {revision[:12]} is not at hand"
            + (f" ({'; '.join(tried)})" if tried else ""),
            where=str(plan.path),
            fix="give the dataset with --dataset FOLDER or ORG/NAME@REVISION (a download needs "
            "the Hub; offline, a folder of that revision; repeat --dataset for several)",
        )


def _rerun(plan: Plan, at_hand: _Datasets, progress: Progress | None) -> Reproduction:
    """Refit, score and compare a checked result."""
    from gharuntime.baselines.run import run_baseline
    from gharuntime.eval.api import evaluate_file

    scratch = Path(tempfile.mkdtemp(prefix="gharuntime-reproduce-"))
    try:
        folder = at_hand.obtain(plan, progress)
        say(progress, f"refitting {plan.method} on {plan.config}/{plan.track}")
        submission = scratch / "submission.jsonl"
        run_baseline(
            plan.method,
            folder,
            config=plan.config,
            track=plan.track,
            split=plan.split,
            out=submission,
            seed=plan.seed,
            params=plan.params or None,
            progress=progress,
        )
        say(progress, "scoring on the same resamples")
        again = evaluate_file(
            submission, folder, seed=plan.bootstrap_seed, resamples=plan.resamples
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    tolerance = float(getattr(METHODS[plan.method], "reproduce_tolerance", 1e-9))
    rows = compare(plan.doc, again)
    mismatched = identity_mismatches(plan.doc, again)
    status = "differs" if mismatched else status_of(rows, tolerance)
    item = Reproduction(plan.path, plan.method, status, tolerance, rows, sha256=plan.sha256)
    if status == "differs":
        item.reasons = _reasons(plan, mismatched, item.beyond, len(rows))
    return item


def reproduce_result(
    result: Path,
    *,
    datasets: tuple[str, ...] = (),
    work: Path | None = None,
    progress: Progress | None = None,
) -> Reproduction:
    """Check `result` whole, re-run it and compare. Raises ResultRefused (a ReproduceError)
    for a file that is not a valid result, before anything is built or fitted, and
    ReproduceError when it cannot be re-run here."""
    plan = check_result(result)
    scratch: Path | None = None
    if work is None:
        scratch = work = Path(tempfile.mkdtemp(prefix="gharuntime-reproduce-data-"))
    try:
        return _rerun(plan, _Datasets(datasets, work), progress)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def result_files(folder: Path) -> Iterator[Path]:
    """Every `*.json` under `folder` that `--all` takes as a plain result (a FIFO or a link to
    a device too, so that it is refused by name, never skipped): not a transfer result, not a
    reproduce table."""
    for path in sorted(folder.rglob("*.json")):
        if path.is_dir() or path.name.startswith("transfer-"):
            continue
        if path.name == REPRODUCED_TABLE:
            continue
        yield path


def _first_line(exc: BaseException) -> str:
    """What went wrong, on one line, without the file (the table's row names it) or the fix."""
    text = redact(exc.what) if isinstance(exc, GharuntimeError) and exc.where else str(exc)
    return text.splitlines()[0] if text.strip() else type(exc).__name__


def reproduce_all(
    folder: Path,
    *,
    datasets: tuple[str, ...] = (),
    work: Path | None = None,
    progress: Progress | None = None,
) -> AllRun:
    """Reproduce every plain result under `folder` whose dataset is at hand. Each result is
    checked and run on its own: one that is not a valid result, or whose re-run fails, is
    `refused` with why and the run goes on; one that cannot be re-run here is `not_run`."""
    run = AllRun(folder)
    # a scratch folder only when the caller gives none (one made and unused was left behind)
    scratch: Path | None = None
    if work is None:
        scratch = work = Path(tempfile.mkdtemp(prefix="gharuntime-reproduce-data-"))
    at_hand = _Datasets(datasets, work)
    paths = list(result_files(folder))
    try:
        for i, path in enumerate(paths):
            if progress is not None:
                progress(f"reproducing {path.parent.name}/{path.name}", i, len(paths))
            try:
                entry = _read_checked(path)
            except ResultRefused as exc:
                run.refused.append(Skipped(path, _first_line(exc)))
                continue
            try:
                plan = _plan(entry)
            except ResultRefused as exc:
                run.refused.append(Skipped(path, _first_line(exc), entry.sha256))
                continue
            except ReproduceError as exc:
                run.not_run.append(Skipped(path, _first_line(exc), entry.sha256))
                continue
            try:
                run.done.append(_rerun(plan, at_hand, None))
            except ResultRefused as exc:
                run.refused.append(Skipped(path, _first_line(exc), plan.sha256))
            except ReproduceError as exc:
                run.not_run.append(Skipped(path, _first_line(exc), plan.sha256))
            except (GharuntimeError, OSError) as exc:
                why = f"the re-run failed: {_first_line(exc)}"
                run.refused.append(Skipped(path, why, plan.sha256))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return run
