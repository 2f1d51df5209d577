"""How the pull-request review (`gharuntime predict FILE --base-ref BASE`, as
docs/ci/review-workflows.sh runs it) does on the real workflow changes of the repositories of a
built dataset (apache/ozone and apache/ratis in `gharuntime-real-apache`), against what their
runs did next.

    python benchmarks/predict_review_real.py --dataset DATASET --work WORK \\
        --repo apache/ozone=OZONE_GIT --repo apache/ratis=RATIS_GIT

OZONE_GIT and RATIS_GIT are clones or bare mirrors (`git clone --mirror
https://github.com/apache/ozone`); each is cloned into WORK/clones/ (only `.github/` checked out:
predict reads nothing else) and never written. WORK also keeps the cut datasets and the models,
so a rerun with the same inputs fits nothing again.

**Which commits.** Every commit of the default branch's first-parent line (the mirror's HEAD)
that changes `.github/workflows/` and was committed inside the repository's validation or test
period of the dataset's temporal config (from the first `created_at` of its validation rows to
the last of its test rows). Its pull request is taken as the commit against its first parent.
The files reviewed are those the PR script reviews (`git diff --no-renames` of the two, added or
changed, directly in `.github/workflows/`, `.yml`/`.yaml`), and of those only the ones the
recorded runs use: a workflow the dataset has runs of, or a local reusable workflow one of them
calls (followed through every level, at either side of the commit). A commit with none, or with
no run of its own in the dataset, is listed as skipped, with the reason.

**How each is predicted: the documented path, nothing after the commit.** Per repository and
period one model is fitted, once, on every row of the dataset (all repositories) created before
the period began (so before every commit in it), written as a dataset folder of its own (the
contract's 80/10/10 temporal split of those rows: the fit's early stopping never sees the
period): `gharuntime learn --from-dataset CUT --out MODEL` where this gharuntime has it (both
tracks: the history model, the config-track model for jobs without history), else
`gharuntime baseline METHOD --track history --dataset CUT --model-out MODEL` (the plain
history-track folder predict.md documents: a job without history has no fallback). Each file is
then reviewed in a checkout of the commit as the PR script does it, with `--format json`:

    gharuntime predict --model MODEL --history-from DATASET --repo OWNER/NAME \\
        --at COMMIT_TIME --base-ref PARENT --format json -- .github/workflows/FILE

`--history-from` the whole dataset with `--at` the commit's time (UTC): each job's history is
its runs completed strictly before the commit. The self-compare is the same command with
`--base-ref` the commit itself: its Δ must be exactly 0.

**What actually happened.** A run belongs to a commit's new workflows when its head commit is
the commit or a later one on the first-parent line, and to the old ones when it is an earlier
one (runs of commits off that line are left out). The runs *after* are the first 3 such runs of
the commit and later, before the next workflow change that the recorded runs use; the runs
*before* are the last 3 of the earlier commits, since the previous such change.

A changed reusable workflow is reviewed as predict reviews it by default: through the
workflows of the repository that call it, each review's `workflow` the caller shown (the one
the runs are recorded under is the one scored).

- **Job names matched**: the share of the after-runs' job rows (each run's latest attempt)
  whose name (GitHub's, e.g. `CI / compile (17)`) is a job on the after side of one of the
  commit's reviews; the review of the recorded workflow first, where a name is in several. A
  job the review shows as `moved` (renamed, same steps) is matched under its new name, a
  matrix expanded from history under each member's name.
- **Per basis** (each row's `basis` on its after side in the review's JSON, predict's words:
  history, config fallback, matrix siblings, from-history matrix, config only; any other
  value or none is unknown): over the matched rows, RMSLE = sqrt(mean((log1p(predicted) − log1p(actual))²)),
  the share inside the row's P10–P90 (rows with both), and the share within 2×
  (predicted/actual in [0.5, 2], both floored at 1 s). Each commit also lists, per basis, the
  3 rows furthest from what ran (`worst_rows`), and how many of its jobs run other steps now
  but are predicted from their runs before (`old_steps_jobs`: predict's `steps_changed` on a
  history or from-history matrix row).
- **Actual change** = Σ over job names of the median of the 3 runs after − the same over the
  3 runs before, each job's median over the runs that have it: the dataset holds successful
  jobs only, so a run without a job had it fail, get cancelled or skipped, not take 0 s. A job
  no run of a side has counts 0 s there when the review's jobs on that side do not hold it
  (added or removed by the change); when they do (it ran there, never successfully in these
  3 runs), its change is not measured and it is left out of both sides.
- **Noise** (the repository's run-to-run swing of that sum when no workflow changed): the same
  3-against-3 statistic over consecutive windows of the recorded workflows' last 60 runs
  before the commit, leaving out every window whose runs straddle a workflow change the
  recorded runs use (a job in one half only is left out: no workflow changed); noise = half
  the width between its 2.5th and 97.5th percentiles (none with fewer than 10 windows): a
  change over it is one those windows show about 1 time in 20, so its direction is the
  change's, not the noise's. Beside it, shown and not graded, half the P10–P90 width
  (`noise_p10_p90_s`: the band `predict` states for a review's noise, a reader's cue) and the
  sign over that band (a change over it is still one that 1 window in 5 shows with nothing
  changed), and how often those windows swing at least as much as the actual change
  (`as_often_unchanged`).
- **Predicted change**: the review's Δ of the sum of job time for the recorded workflow (one
  per workflow the runs are recorded under); where no review shows it, the sum of the Δs of
  the files reviewed (what a reader is shown). Beside it, predict's own P10–P90 of that Δ and
  its verdict (`beyond_noise` of the reviews scored), shown, not scored.
- **Sign**: counted on the commits with 3 runs before, 3 after and an actual change whose size
  is over the noise; right when the predicted Δ has the actual change's sign (0 is wrong).
  Shown beside it, not a goal: the same on every commit with 3 runs on each side, over
  predict's P10–P90 band, and on the commits predict itself calls beyond its noise.
- **Earlier changes** (`--earlier`, shown apart, not a goal): the workflow changes before the
  validation period whose sign can be graded (3 runs each side, 10 noise windows), each
  reviewed the same way with a model of its own fitted on every row created before it: more
  commits for the sign than the two periods hold.

Goals, per repository (printed pass/fail): the self-compare Δ is 0 on every commit reviewed;
job names matched ≥ 95%; history rows RMSLE ≤ 0.20 with P10–P90 coverage 70–90%;
config-fallback rows RMSLE ≤ 0.60, scored over the rows of both bases of jobs with no run of
their own, config fallback and matrix siblings (passed when there are none); the sign is right on every
commit whose change is over the noise (passed when there are none).

Output: Markdown tables (the summary and goals for docs/ci/predict.md, then each commit) and,
last, one JSON line with every figure (for benchmarks/results/predict_review_real.json). Bad
input (a --repo that is not a git repository, a dataset without the repository's validation or
test rows, a repository the dataset does not hold) exits 2 with what, where and the fix.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml

from gharuntime.contract import SPLITS
from gharuntime.dataset import DatasetError, load, read_manifest, split_paths, write_dataset
from gharuntime.version import __version__

CONFIG = "temporal"
RUNS_AROUND = 3
NOISE_RUNS = 60
NOISE_LEVELS = (0.025, 0.975)  # the goal's band: a change over it, 1 unchanged window in 20
SHOWN_LEVELS = (0.1, 0.9)  # predict's band for a review's noise: shown beside, not graded
MIN_NOISE_WINDOWS = 10
EARLIER = "earlier"  # --earlier: the workflow changes before the validation period
NO_RUN_OF_THEIR_OWN = ("config fallback", "matrix siblings")
"""The bases of jobs with no run of their own, predicted by the config-track model (scaled to
their matrix siblings' runs, for the second): the config-fallback goal is scored on both, so a
row moved from one to the other is still judged."""
BASES = (
    "history",
    "config fallback",
    "matrix siblings",
    "from-history matrix",
    "config only",
    "unknown",
)
WORST_ROWS = 3
GOAL_MATCHED = 0.95
GOAL_HISTORY_RMSLE = 0.20
GOAL_COVERAGE = (0.70, 0.90)
GOAL_FALLBACK_RMSLE = 0.60
WORKFLOWS = ".github/workflows"
_COLUMNS = [
    "repo",
    "run_id",
    "run_attempt",
    "head_sha",
    "workflow_path",
    "job_name",
    "created_at",
    "duration_s",
]


class Refusal(Exception):
    """Bad input: the message says what, where and the fix; main() exits 2 with it."""


# ---------------------------------------------------------------------------------------- git


def git(repo: Path, *args: str, binary: bool = False) -> Any:
    """`git -C repo ARGS`; its stdout (bytes when `binary`). Raises Refusal with git's message."""
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "core.quotePath=false", *args],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise Refusal(
            f"{repo}: git {' '.join(args[:3])} failed: {message[0] if message else done.returncode}"
        )
    return done.stdout if binary else done.stdout.decode("utf-8", "surrogateescape")


def check_git_repository(path: Path, repo: str) -> str:
    """The commit at `path`'s HEAD; Refusal when `path` is not the top of a git repository (a
    clone or a bare mirror) with commits."""
    fix = f"give a clone or bare mirror of {repo}: git clone --mirror https://github.com/{repo}"
    if not path.is_dir():
        raise Refusal(f"{path}: no such folder (--repo {repo}=...)\n  fix: {fix}")
    try:
        bare = str(git(path, "rev-parse", "--is-bare-repository")).strip() == "true"
        where = "--absolute-git-dir" if bare else "--show-toplevel"
        top = Path(str(git(path, "rev-parse", where)).strip())
    except Refusal:
        raise Refusal(f"{path}: not a git repository (--repo {repo}=...)\n  fix: {fix}") from None
    if top.resolve() != path.resolve():
        raise Refusal(
            f"{path}: not a git repository but a folder inside {top} (--repo {repo}=...)\n"
            f"  fix: {fix}"
        )
    try:
        return str(git(path, "rev-parse", "--verify", "HEAD^{commit}")).strip()
    except Refusal:
        raise Refusal(f"{path}: a git repository without commits\n  fix: {fix}") from None


def prepare_clone(mirror: Path, dest: Path) -> None:
    """A clone of `mirror` at `dest` with only `.github/` checked out; an earlier one is reused
    when it is a clone of the same mirror."""
    source = str(mirror.resolve())
    if dest.exists():
        try:
            origin = str(git(dest, "config", "--get", "remote.origin.url")).strip()
        except Refusal:
            origin = ""
        if origin != source:
            raise Refusal(
                f"{dest}: already there and not a clone of {mirror}\n"
                "  fix: remove it, or give another --work"
            )
        git(dest, "fetch", "--quiet", "origin")
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    git(dest.parent, "clone", "--quiet", "--no-checkout", source, tmp.name)
    git(tmp, "sparse-checkout", "set", WORKFLOWS.split("/")[0])
    tmp.rename(dest)


def checkout(clone: Path, sha: str) -> None:
    git(clone, "checkout", "--quiet", "--force", "--detach", sha)


def commit_time(text: str) -> datetime:
    return datetime.fromisoformat(text.strip()).astimezone(timezone.utc)


def changed_workflows(clone: Path, base: str, head: str) -> list[str]:
    """The files docs/ci/review-workflows.sh reviews: added or changed (`git diff -z
    --no-renames`), directly in .github/workflows/, named .yml or .yaml."""
    raw: bytes = git(
        clone,
        "diff",
        "-z",
        "--no-renames",
        "--name-status",
        base,
        head,
        "--",
        WORKFLOWS,
        binary=True,
    )
    parts = [os.fsdecode(p) for p in raw.split(b"\0") if p]
    files = []
    for status, path in zip(parts[0::2], parts[1::2], strict=True):
        inside = path.startswith(WORKFLOWS + "/") and "/" not in path[len(WORKFLOWS) + 1 :]
        if status != "D" and inside and path.endswith((".yml", ".yaml")):
            files.append(path)
    return files


def local_calls(clone: Path, rev: str, roots: Iterable[str]) -> set[str]:
    """`roots` and every local reusable workflow (`uses: ./.github/workflows/X.yml`) they call,
    through every level, as the files are at `rev`."""
    seen: set[str] = set()
    todo = [r for r in roots if r]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        try:
            text = str(git(clone, "show", f"{rev}:{path}"))
            doc = yaml.safe_load(text)
        except (Refusal, yaml.YAMLError):
            continue
        jobs = doc.get("jobs") if isinstance(doc, dict) else None
        for job in (jobs or {}).values() if isinstance(jobs, dict) else ():
            uses = job.get("uses") if isinstance(job, dict) else None
            if isinstance(uses, str) and uses.startswith("./"):
                todo.append(posixpath.normpath(uses[2:].split("@", 1)[0]))
    return seen


# ------------------------------------------------------------------------------------ dataset


@dataclass(frozen=True)
class Run:
    """One recorded run: when, its head commit's place on the first-parent line, its jobs
    (GitHub's name → seconds, its latest attempt)."""

    run_id: int
    created_at: datetime
    pos: int
    workflow_path: str
    jobs: dict[str, float]


def read_rows(dataset: Path) -> tuple[dict[str, Any], dict[str, pl.DataFrame]]:
    """The manifest and the temporal config's rows by split (the columns this script reads)."""
    try:
        manifest = read_manifest(dataset)
        return manifest, {s: load(dataset, CONFIG, s, columns=_COLUMNS) for s in SPLITS}
    except DatasetError as exc:
        raise Refusal(
            f"{dataset}: not a dataset this script can read: {exc}\n"
            "  fix: give a folder `gharuntime build` wrote (e.g. gharuntime-real-apache)"
        ) from None


def repo_periods(
    splits: dict[str, pl.DataFrame], repo: str, dataset: Path
) -> dict[str, tuple[datetime, datetime]]:
    """The repository's validation and test periods: first and last created_at of its rows."""
    periods = {}
    held = sorted(pl.concat(list(splits.values()))["repo"].unique().to_list())
    if repo not in held:
        raise Refusal(
            f"{dataset}: holds no rows of {repo} (it holds {', '.join(held) or 'none'})\n"
            "  fix: give --repo with a repository of the dataset"
        )
    for split in ("validation", "test"):
        mine = splits[split].filter(pl.col("repo") == repo)
        if mine.height == 0:
            raise Refusal(
                f"{dataset}: no {repo} rows in the {CONFIG} {split} split, so it has no {split} "
                "period to replay\n  fix: give a dataset built with the temporal split (contract "
                "1.2.0: each repository with at least 3 runs is in every split)"
            )
        periods[split] = (mine["created_at"].min(), mine["created_at"].max())
    return periods  # type: ignore[return-value]


def repo_runs(rows: pl.DataFrame, pos: dict[str, int]) -> list[Run]:
    """The repository's runs whose head commit is on the first-parent line, by created_at; each
    run's jobs from its latest attempt, a name twice in it summed."""
    rows = rows.filter(pl.col("head_sha").is_in(list(pos)) & (pl.col("workflow_path") != ""))
    latest = rows.group_by("run_id").agg(pl.col("run_attempt").max().alias("last"))
    rows = rows.join(latest, on="run_id").filter(pl.col("run_attempt") == pl.col("last"))
    runs = []
    for (run_id,), part in rows.group_by(["run_id"]):
        jobs: dict[str, float] = {}
        for name, seconds in zip(part["job_name"], part["duration_s"], strict=True):
            jobs[name] = jobs.get(name, 0.0) + float(seconds)
        first = part.row(0, named=True)
        runs.append(
            Run(
                int(run_id),
                part["created_at"].min(),  # type: ignore[arg-type]
                pos[first["head_sha"]],
                first["workflow_path"],
                jobs,
            )
        )
    return sorted(runs, key=lambda r: (r.created_at, r.run_id))


def job_medians(runs: Sequence[Run]) -> dict[str, float]:
    """Each job name's median over the runs that have it (the dataset keeps successful jobs
    only: a run without the job had it fail, get cancelled or skipped, not take 0 s)."""
    names = sorted({n for r in runs for n in r.jobs})
    return {n: float(np.median([r.jobs[n] for r in runs if n in r.jobs])) for n in names}


def three_vs_three(
    before: Sequence[Run],
    after: Sequence[Run],
    defined: tuple[Iterable[str], Iterable[str]] | None = None,
) -> float:
    """Σ per-job medians of the runs after − the same of the runs before. A job no run of one
    side has counts 0 s there (added or removed), unless `defined` (the job names the
    workflow has before and after; default: every name the runs show) has it on that side:
    then it ran there without success in these runs, and its change is not measured (left out
    of both sides)."""
    was, now = job_medians(before), job_medians(after)
    if defined is None:
        seen = set(was) | set(now)
        defined = (seen, seen)
    unmeasured = (set(defined[0]) - set(was)) | (set(defined[1]) - set(now))
    return sum(v for n, v in now.items() if n not in unmeasured) - sum(
        v for n, v in was.items() if n not in unmeasured
    )


def swings_of(history: Sequence[Run], straddles: Callable[[int, int], bool]) -> list[float]:
    """three_vs_three over consecutive windows of `history` (oldest first) that no workflow
    change straddles (`straddles(lo, hi)`: a change at a position in (lo, hi])."""
    swings = []
    k = RUNS_AROUND
    for i in range(k, len(history) - k + 1):
        window = history[i - k : i + k]
        positions = [r.pos for r in window]
        if straddles(min(positions), max(positions)):
            continue
        swings.append(three_vs_three(window[:k], window[k:]))
    return swings


def as_often(swings: Sequence[float], actual: float | None) -> float | None:
    """The share of windows with no workflow change whose swing is at least as large as
    `actual` in size: how often the change measured would be seen with nothing changed (None
    with fewer than MIN_NOISE_WINDOWS windows, or no actual change)."""
    if actual is None or len(swings) < MIN_NOISE_WINDOWS:
        return None
    return round(sum(abs(x) >= abs(actual) for x in swings) / len(swings), 3)


def noise_from(swings: Sequence[float], levels: tuple[float, float] = NOISE_LEVELS) -> float | None:
    """Half the width between the `levels` percentiles of the swings of windows with no
    workflow change; None with fewer than MIN_NOISE_WINDOWS windows."""
    if len(swings) < MIN_NOISE_WINDOWS:
        return None
    low, high = np.quantile(swings, levels)
    return float(high - low) / 2


# ------------------------------------------------------------------------------------- models


def gharuntime_cmd() -> list[str]:
    """The `gharuntime` a user runs: the one installed beside this Python."""
    beside = Path(sys.executable).parent / "gharuntime"
    if beside.exists():
        return [str(beside)]
    return [sys.executable, "-m", "gharuntime.cli.main"]


def fit_kind(gh: list[str], wanted: str) -> str:
    """`learn` (learn --from-dataset: both tracks) or `baseline` (a history-track folder)."""
    if wanted != "auto":
        return wanted
    done = subprocess.run([*gh, "learn", "--help"], capture_output=True, text=True, check=False)
    return "learn" if "--from-dataset" in done.stdout else "baseline"


@dataclass
class Models:
    """The model of each (repository, period), fitted on first use and kept in WORK/models."""

    gh: list[str]
    dataset: Path
    manifest: dict[str, Any]
    work: Path
    kind: str
    method: str
    fitted: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0

    def rows_before(self, cut: datetime) -> pl.DataFrame:
        """Every row of the dataset created before `cut` (each file read filtered: the YAML
        columns make the whole table about 1 GB in memory)."""
        paths = [p for s in SPLITS for p in split_paths(self.dataset, CONFIG, s)]
        scan = pl.scan_parquet(paths, glob=False).filter(pl.col("created_at") < cut)
        return scan.collect()

    def get(self, key: str, cut: datetime) -> Path:
        if key in self.fitted:
            return self.fitted[key]
        folder = self.work / "models" / key
        stamp = {
            "dataset_revision": self.manifest.get("revision"),
            "before": cut.isoformat(),
            "fit": self.kind,
            "method": self.method,
            "gharuntime": __version__,
        }
        marker = self.work / "models" / f"{key}.fitted.json"
        if marker.exists() and json.loads(marker.read_text(encoding="utf-8")) == stamp:
            self.fitted[key] = folder
            return folder
        started = time.monotonic()
        cut_dir = self.work / "cuts" / key
        rows = self.rows_before(cut)
        print(
            f"fitting {key}: {rows.height} rows created before {cut:%Y-%m-%dT%H:%M:%SZ}",
            file=sys.stderr,
        )
        provenance = dict(self.manifest.get("source") or {"kind": "dataset"})
        provenance["cut_before"] = cut.isoformat()
        write_dataset(rows, cut_dir, provenance=provenance)
        shutil.rmtree(folder, ignore_errors=True)
        marker.unlink(missing_ok=True)
        if self.kind == "learn":
            cmd = [*self.gh, "learn", "--from-dataset", str(cut_dir), "--out", str(folder)]
            cmd += ["--method", self.method]
        else:
            cmd = [*self.gh, "baseline", self.method, "--dataset", str(cut_dir)]
            predictions = self.work / "predictions" / f"{key}.jsonl"
            cmd += ["--track", "history", "--out", str(predictions), "--model-out", str(folder)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise Refusal(
                f"fitting {key} failed ({shlex.join(cmd[len(self.gh) :][:2])}, exit "
                f"{done.returncode}): {done.stderr.strip()[-600:]}"
            )
        marker.write_text(json.dumps(stamp), encoding="utf-8")
        self.seconds += time.monotonic() - started
        self.fitted[key] = folder
        return folder


# ------------------------------------------------------------------------------------ reviews


@dataclass(frozen=True)
class Predicted:
    duration_s: float
    p10: float | None
    p90: float | None
    basis: str
    name: str = ""
    status: str = ""
    old_name: str | None = None


def basis_bucket(basis: Any) -> str:
    """A row's basis as one of BASES, predict's own words (`basis` of a review's row or side);
    any other value, or none, is unknown."""
    return basis if isinstance(basis, str) and basis in BASES else "unknown"


def reviews_of(doc: Any) -> list[dict[str, Any]]:
    """The workflow reviews of predict's JSON: `reviews` (one per workflow shown) or the
    document itself (one review)."""
    if isinstance(doc, dict) and isinstance(doc.get("reviews"), list):
        return [r for r in doc["reviews"] if isinstance(r, dict)]
    return [doc] if isinstance(doc, dict) else []


def review_path(review: dict[str, Any], clone: Path) -> str:
    """The workflow a review shows, as its path in the repository."""
    text = str(review.get("workflow") or "").split(" at ", 1)[0]
    path = Path(text)
    if path.is_absolute():
        try:
            return path.resolve().relative_to(clone.resolve()).as_posix()
        except ValueError:
            return text
    return posixpath.normpath(text) if text else text


def review_delta(review: dict[str, Any]) -> float:
    total = review.get("total_job_s")
    if isinstance(total, dict):
        if isinstance(total.get("delta"), int | float):
            return float(total["delta"])
        if isinstance(total.get("after"), int | float) and isinstance(
            total.get("before"), int | float
        ):
            return float(total["after"]) - float(total["before"])
    return 0.0


def review_measure(review: dict[str, Any]) -> dict[str, Any]:
    """The review's Δ of the sum of job time as predict judges it: its P10–P90, the
    repository's run-to-run noise band and whether the Δ is beyond it."""
    total = review.get("total_job_s")
    keys = ("delta", "delta_p10", "delta_p90", "noise", "beyond_noise")
    return {k: total.get(k) for k in keys} if isinstance(total, dict) else {}


def old_steps_jobs(review: dict[str, Any]) -> int:
    """The review's jobs whose steps changed while their new side rests on their runs before
    the change (`steps_changed` with basis history or from-history matrix)."""
    return sum(
        isinstance(j, dict)
        and j.get("steps_changed") is True
        and j.get("basis") in ("history", "from-history matrix")
        for j in review.get("jobs") or []
    )


def review_changed(review: dict[str, Any]) -> int:
    jobs = review.get("jobs")
    if not isinstance(jobs, list):
        return 0
    return sum(1 for j in jobs if isinstance(j, dict) and j.get("status") != "unchanged")


def side_names(reviews: Sequence[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """The job names the reviews show before the change and after it (a moved job under its
    old name before, its new one after)."""
    was: set[str] = set()
    now: set[str] = set()
    for review in reviews:
        for job in review.get("jobs") or []:
            if not isinstance(job, dict):
                continue
            if isinstance(job.get("before"), dict):
                was.add(str(job.get("old_name") or job.get("name")))
            if isinstance(job.get("after"), dict):
                now.add(str(job.get("name")))
    return was, now


def predicted_jobs(reviews: Sequence[dict[str, Any]]) -> dict[str, Predicted]:
    """Job name → the after side's prediction, the first review holding the name first."""
    out: dict[str, Predicted] = {}
    for review in reviews:
        for job in review.get("jobs") or []:
            after = job.get("after") if isinstance(job, dict) else None
            if not isinstance(after, dict) or not isinstance(after.get("duration_s"), int | float):
                continue
            name = str(job.get("name"))
            if name in out:
                continue

            def level(key: str, side: dict[str, Any] = after) -> float | None:
                value = side.get(key)
                return float(value) if isinstance(value, int | float) else None

            old = job.get("old_name")
            out[name] = Predicted(
                float(after["duration_s"]),
                level("p10"),
                level("p90"),
                basis_bucket(after.get("basis") or job.get("basis")),
                name,
                str(job.get("status") or ""),
                old if isinstance(old, str) else None,
            )
    return out


def run_predict(cmd: list[str], cwd: Path) -> tuple[Any, str | None]:
    """predict's JSON, or None and its message (exit status and its last words)."""
    done = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    if done.returncode != 0:
        return None, f"exit {done.returncode}: {' '.join(done.stderr.split())[-300:]}"
    try:
        return json.loads(done.stdout), None
    except ValueError:
        return None, "not JSON on stdout"


# ------------------------------------------------------------------------------------ scoring


def score(rows: Sequence[tuple[float, Predicted]]) -> dict[str, Any]:
    """RMSLE, P10–P90 coverage and within 2× of (actual, predicted) rows."""
    if not rows:
        return {"rows": 0, "rmsle": None, "coverage": None, "coverage_rows": 0, "within_2x": None}
    y = np.array([a for a, _ in rows])
    p = np.array([b.duration_s for _, b in rows])
    rmsle = float(np.sqrt(np.mean((np.log1p(p) - np.log1p(y)) ** 2)))
    ranged = [(a, b) for a, b in rows if b.p10 is not None and b.p90 is not None]
    inside = [b.p10 <= a <= b.p90 for a, b in ranged]  # type: ignore[operator]
    ratio = np.maximum(p, 1.0) / np.maximum(y, 1.0)
    return {
        "rows": len(rows),
        "rmsle": round(rmsle, 4),
        "coverage": round(float(np.mean(inside)), 4) if inside else None,
        "coverage_rows": len(ranged),
        "within_2x": round(float(np.mean((ratio >= 0.5) & (ratio <= 2.0))), 4),
    }


def worst_rows(rows: Sequence[tuple[float, Predicted]]) -> dict[str, list[dict[str, Any]]]:
    """Per basis, the WORST_ROWS matched rows furthest from what ran (|log1p ratio|): for a
    reader looking for why a figure is what it is."""
    ranked = sorted(rows, key=lambda r: -abs(np.log1p(r[1].duration_s) - np.log1p(r[0])))
    out: dict[str, list[dict[str, Any]]] = {}
    for a, p in ranked:
        mine = out.setdefault(p.basis, [])
        if len(mine) < WORST_ROWS:
            mine.append(
                {
                    "name": p.name,
                    "actual_s": round(a, 1),
                    "predicted_s": round(p.duration_s, 1),
                    "p10": p.p10,
                    "p90": p.p90,
                }
            )
    return out


def goals(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's goals on one repository's summary: name, pass, what was measured."""
    basis = summary["by_basis"]
    hist, fallback = basis["history"], summary["no_run_of_their_own"]
    self_cmp, sign, jobs = summary["self_compare"], summary["sign"], summary["jobs"]
    lo, hi = GOAL_COVERAGE
    cov = hist["coverage"]
    return [
        {
            "goal": "self-compare Δ is 0 on every commit",
            "pass": self_cmp["commits"] > 0
            and self_cmp["nonzero"] == 0
            and self_cmp["failed"] == 0,
            "measured": f"{self_cmp['nonzero']} of {self_cmp['commits']} commits not 0"
            f" (max abs Δ {self_cmp['max_abs_delta_s']:g} s)"
            + (f", {self_cmp['failed']} refused" if self_cmp["failed"] else ""),
        },
        {
            "goal": f"job names matched ≥ {GOAL_MATCHED:.0%}",
            "pass": jobs["matched_share"] is not None and jobs["matched_share"] >= GOAL_MATCHED,
            "measured": _share(jobs["matched_share"]),
        },
        {
            "goal": f"history rows RMSLE ≤ {GOAL_HISTORY_RMSLE:.2f}, P10–P90 coverage "
            f"{lo:.0%}–{hi:.0%}",
            "pass": hist["rows"] > 0
            and hist["rmsle"] <= GOAL_HISTORY_RMSLE
            and cov is not None
            and lo <= cov <= hi,
            "measured": f"RMSLE {_num(hist['rmsle'])}, coverage {_share(cov)}"
            f" ({hist['rows']} rows)",
        },
        {
            "goal": f"config-fallback rows RMSLE ≤ {GOAL_FALLBACK_RMSLE:.2f} (with the matrix "
            "siblings: every row with no run of its own)",
            "pass": fallback["rows"] == 0 or fallback["rmsle"] <= GOAL_FALLBACK_RMSLE,
            "measured": f"RMSLE {_num(fallback['rmsle'])} ({fallback['rows']} rows)",
        },
        {
            "goal": "sign right on every commit whose change is over the noise (the 95% band: "
            "a swing 1 window in 20 with no workflow change shows)",
            "pass": sign["right"] == sign["beyond_noise"],
            "measured": f"{sign['right']} of {sign['beyond_noise']}",
        },
    ]


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _share(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:+,.0f} s"


# ----------------------------------------------------------------------------------- replay


@dataclass
class Repo:
    """One repository replayed: its clone, first-parent line, recorded runs and periods."""

    name: str
    clone: Path
    line: list[str]
    pos: dict[str, int]
    runs: list[Run]
    recorded: set[str]
    periods: dict[str, tuple[datetime, datetime]]
    workflow_commits: list[tuple[str, datetime]]  # newest first, up to the last recorded run
    _files: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def relevant_files(self, sha: str) -> tuple[list[str], list[str]]:
        """(files the PR script reviews, those of them the recorded runs use)."""
        if sha not in self._files:
            p = self.pos[sha]
            if p == 0:
                self._files[sha] = ([], [])
            else:
                parent = self.line[p - 1]
                files = changed_workflows(self.clone, parent, sha)
                used = local_calls(self.clone, sha, self.recorded) if files else set()
                used |= local_calls(self.clone, parent, self.recorded) if files else set()
                self._files[sha] = (files, [f for f in files if f in used])
        return self._files[sha]

    def changes_between(self, lo: int, hi: int) -> bool:
        """Whether a workflow change the recorded runs use sits at a position in (lo, hi]."""
        return any(
            lo < self.pos[sha] <= hi and self.relevant_files(sha)[1]
            for sha, _ in self.workflow_commits
        )

    def neighbours(self, p: int) -> tuple[int, int]:
        """Positions of the previous and the next workflow change the recorded runs use around
        position p (-1 and the line's length where there is none)."""
        changes = sorted(self.pos[sha] for sha, _ in self.workflow_commits)
        prev = next(
            (q for q in reversed(changes) if q < p and self.relevant_files(self.line[q])[1]), -1
        )
        nxt = next(
            (q for q in changes if q > p and self.relevant_files(self.line[q])[1]), len(self.line)
        )
        return prev, nxt


def load_repo(
    name: str, mirror: Path, work: Path, splits: dict[str, pl.DataFrame], dataset: Path
) -> Repo:
    periods = repo_periods(splits, name, dataset)
    tip = check_git_repository(mirror, name)
    clone = work / "clones" / name.replace("/", "+")
    prepare_clone(mirror, clone)
    line = str(git(clone, "rev-list", "--first-parent", "--reverse", tip)).split()
    pos = {sha: i for i, sha in enumerate(line)}
    log = str(git(clone, "log", "--first-parent", "--format=%H%x09%cI", tip, "--", WORKFLOWS))
    commits = [
        (sha, commit_time(when))
        for sha, when in (row.split("\t") for row in log.splitlines() if row)
    ]
    rows = pl.concat(list(splits.values())).filter(pl.col("repo") == name)
    runs = repo_runs(rows, pos)
    if not runs:
        raise Refusal(
            f"{dataset}: no run of {name} has its head commit on the first-parent line of "
            f"{mirror}'s HEAD\n  fix: give a mirror of {name} whose HEAD is its default branch"
        )
    last = max(r.pos for r in runs)
    commits = [(sha, when) for sha, when in commits if pos[sha] <= last + 1]
    recorded = {r.workflow_path for r in runs}
    return Repo(name, clone, line, pos, runs, recorded, periods, commits)


def period_of(repo: Repo, when: datetime, earlier: bool = False) -> str | None:
    """validation, test, EARLIER (before the validation period, with `earlier`) or None."""
    (v0, _), (t0, t1) = repo.periods["validation"], repo.periods["test"]
    if earlier and when < v0:
        return EARLIER
    if v0 <= when < t0:
        return "validation"
    if t0 <= when <= t1:
        return "test"
    return None


def replay_commit(
    repo: Repo,
    sha: str,
    when: datetime,
    period: str,
    models: Models,
    gh: list[str],
    extra: list[str],
) -> dict[str, Any]:
    """One commit: its reviews, the self-compare, the runs before and after, the figures. An
    `earlier` commit (before the validation period, replayed for the sign alone) is skipped
    unless its sign can be graded, and has a model of its own, fitted on the rows before it."""
    p = repo.pos[sha]
    base = repo.line[p - 1]
    files, relevant = repo.relevant_files(sha)
    subject = str(git(repo.clone, "log", "-1", "--format=%s", sha)).strip()
    out: dict[str, Any] = {
        "commit": sha,
        "subject": subject[:80],
        "committed": f"{when:%Y-%m-%dT%H:%M:%SZ}",
        "period": period,
        "base": base,
        "files_changed": files,
        "files_reviewed": relevant,
    }
    prev, nxt = repo.neighbours(p)
    after = [r for r in repo.runs if p <= r.pos < nxt][:RUNS_AROUND]
    before = [r for r in repo.runs if prev <= r.pos < p and r.created_at < when][-RUNS_AROUND:]
    if not relevant:
        return {**out, "skipped": "no file it changes is a workflow the recorded runs use"}
    if not after:
        return {**out, "skipped": "no run of it (before the next workflow change) in the dataset"}
    history = [r for r in repo.runs if r.pos < p and r.created_at < when][-NOISE_RUNS:]
    swings = swings_of(history, repo.changes_between)
    noise, shown_noise = noise_from(swings), noise_from(swings, SHOWN_LEVELS)
    graded = len(before) == len(after) == RUNS_AROUND
    key = repo.name.replace("/", "+")
    if period == EARLIER:
        if not graded or noise is None:
            return {
                **out,
                "skipped": f"replayed for the sign only, which needs {RUNS_AROUND} runs each "
                f"side ({len(before)} before, {len(after)} after) and {MIN_NOISE_WINDOWS} "
                f"windows for the noise ({len(swings)})",
            }
        model = models.get(f"{key}-{EARLIER}-{sha[:12]}", when)
    else:
        model = models.get(f"{key}-{period}", repo.periods[period][0])
    checkout(repo.clone, sha)
    at = f"{when:%Y-%m-%dT%H:%M:%S}"
    common = ["--model", str(model), "--history-from", str(models.dataset), "--repo", repo.name]
    common += ["--at", at, "--format", "json", *extra]
    reviews: list[dict[str, Any]] = []
    errors: list[str] = []
    self_deltas: list[float] = []
    self_changed = 0
    self_failed = False
    for path in relevant:
        doc, error = run_predict(
            [*gh, "predict", *common, "--base-ref", base, "--", path], repo.clone
        )
        if error:
            errors.append(f"{path}: {error}")
        reviews += reviews_of(doc)
        doc, error = run_predict(
            [*gh, "predict", *common, "--base-ref", sha, "--", path], repo.clone
        )
        if error:
            errors.append(f"{path} against itself: {error}")
            self_failed = True
        for review in reviews_of(doc):
            self_deltas.append(review_delta(review))
            self_changed += review_changed(review)
    recorded_paths = {r.workflow_path for r in after}
    shown = {review_path(r, repo.clone): r for r in reversed(reviews)}  # first review per path
    of_recorded = [shown[w] for w in sorted(recorded_paths) if w in shown]
    ordered = of_recorded + [r for r in reviews if r not in of_recorded]
    predicted = predicted_jobs(ordered)
    used = of_recorded or reviews
    delta = sum(review_delta(r) for r in used)
    actual_rows = [(name, s) for run in after for name, s in sorted(run.jobs.items())]
    matched = [(s, predicted[name]) for name, s in actual_rows if name in predicted]
    moved = sorted({f"{j.old_name} → {j.name}" for _, j in matched if j.status == "moved"})
    actual = three_vs_three(before, after, side_names(used)) if before else None
    right = None  # the predicted Δ's sign against the actual change's, with 3 runs each side
    if actual is not None and graded:
        right = delta != 0 and (delta > 0) == (actual > 0)
    counted = right is not None and noise is not None and abs(actual or 0.0) > noise
    counted_shown = (
        right is not None and shown_noise is not None and abs(actual or 0.0) > shown_noise
    )
    says_beyond = any(review_measure(r).get("beyond_noise") is True for r in used)
    return {
        **out,
        "model": model.name,
        "at": at + "Z",
        "shown": sorted(shown),
        "errors": errors,
        "runs_before": [r.run_id for r in before],
        "runs_after": [r.run_id for r in after],
        "recorded_workflows": sorted(recorded_paths),
        "actual_rows": len(actual_rows),
        "matched_rows": len(matched),
        "unmatched_names": sorted({n for n, _ in actual_rows if n not in predicted})[:20],
        "rows": [(s, pred.__dict__) for s, pred in matched],
        "by_basis": {b: score([r for r in matched if r[1].basis == b]) for b in BASES},
        "worst_rows": worst_rows(matched),
        "moved_jobs": moved,
        "old_steps_jobs": sum(old_steps_jobs(r) for r in used),
        "predicted_delta_s": round(delta, 1),
        "predicted_range": [
            review_measure(r) | {"workflow": review_path(r, repo.clone)} for r in used
        ],
        "predict_beyond_noise": says_beyond,
        "actual_delta_s": None if actual is None else round(actual, 1),
        "noise_s": None if noise is None else round(noise, 1),
        "noise_windows": len(swings),
        "as_often_unchanged": as_often(swings, actual),
        "beyond_noise": counted,
        "sign_right": right if counted else None,
        "sign_agrees": right,
        "noise_p10_p90_s": None if shown_noise is None else round(shown_noise, 1),
        "beyond_noise_p10_p90": counted_shown,
        "sign_right_p10_p90": right if counted_shown else None,
        "self_delta_s": None if self_failed else max((abs(d) for d in self_deltas), default=0.0),
        "self_changed_jobs": self_changed,
    }


def summarise(commits: list[dict[str, Any]]) -> dict[str, Any]:
    """A repository's figures over its replayed commits."""
    done = [c for c in commits if "skipped" not in c]
    rows = [(s, Predicted(**d)) for c in done for s, d in c["rows"]]
    actual = sum(c["actual_rows"] for c in done)
    matched = sum(c["matched_rows"] for c in done)
    failed = [c for c in done if c["self_delta_s"] is None]
    nonzero = [c for c in done if c["self_delta_s"] not in (None, 0)]
    worst = max((c["self_delta_s"] or 0.0 for c in done), default=0.0)
    return {
        "commits_in_periods": len(commits),
        "commits_reviewed": len(done),
        "predict_errors": sum(len(c["errors"]) for c in done),
        "jobs": {
            "actual_rows": actual,
            "matched_rows": matched,
            "matched_share": round(matched / actual, 4) if actual else None,
        },
        "by_basis": {b: score([r for r in rows if r[1].basis == b]) for b in BASES},
        "no_run_of_their_own": score([r for r in rows if r[1].basis in NO_RUN_OF_THEIR_OWN]),
        "all": score(rows),
        "self_compare": {
            "commits": len(done),
            "nonzero": len(nonzero),
            "failed": len(failed),
            "max_abs_delta_s": round(worst, 1),
            "changed_jobs": sum(c["self_changed_jobs"] for c in done),
        },
        "sign": {
            "with_3_and_3": sum(
                len(c["runs_before"]) == RUNS_AROUND and len(c["runs_after"]) == RUNS_AROUND
                for c in done
            ),
            "beyond_noise": sum(bool(c["beyond_noise"]) for c in done),
            "as_often_unchanged": sorted(
                c["as_often_unchanged"] for c in done if c["beyond_noise"]
            ),
            "right": sum(bool(c["sign_right"]) for c in done),
            "agrees_with_3_and_3": sum(bool(c["sign_agrees"]) for c in done),
            "predict_beyond_noise": sum(bool(c["predict_beyond_noise"]) for c in done),
            "predict_beyond_noise_graded": sum(
                c["sign_agrees"] is not None for c in done if c["predict_beyond_noise"]
            ),
            "predict_beyond_noise_agrees": sum(
                bool(c["sign_agrees"]) for c in done if c["predict_beyond_noise"]
            ),
            "beyond_noise_p10_p90": sum(bool(c["beyond_noise_p10_p90"]) for c in done),
            "right_p10_p90": sum(bool(c["sign_right_p10_p90"]) for c in done),
            "as_often_unchanged_p10_p90": sorted(
                c["as_often_unchanged"] for c in done if c["beyond_noise_p10_p90"]
            ),
        },
        "moved_jobs": sum(len(c["moved_jobs"]) for c in done),
        "old_steps_jobs": sum(c["old_steps_jobs"] for c in done),
    }


# ------------------------------------------------------------------------------------- output


def _code(name: str) -> str:
    """A file name as a code span inside a Markdown table cell."""
    return "`" + name.replace("`", "'").replace("|", "\\|") + "`"


def _figures(f: dict[str, Any]) -> str:
    """`RMSLE / coverage / within 2× (rows)` of a score()."""
    if not f["rows"]:
        return "—"
    return (
        f"{_num(f['rmsle'])} / {_share(f['coverage'])} / {_share(f['within_2x'])} ({f['rows']:,})"
    )


def _sign_rows(s: dict[str, dict[str, Any]], names: list[str]) -> list[tuple[str, list[str]]]:
    """The sign's rows of a summary table: graded (95% band), as predict's band would grade
    it, and where predict itself called the Δ beyond its noise."""
    sign = {n: s[n]["sign"] for n in names}

    def often(key: str) -> list[str]:
        return [", ".join(_share(x) for x in sign[n][key]) or "—" for n in names]

    return [
        (
            "Δ sign right: commits over the noise, 95% band (all with 3 runs each side)",
            [
                f"{sign[n]['right']} of {sign[n]['beyond_noise']} "
                f"({sign[n]['agrees_with_3_and_3']} of {sign[n]['with_3_and_3']})"
                for n in names
            ],
        ),
        (
            "those commits' change: share of unchanged windows swinging as much",
            often("as_often_unchanged"),
        ),
        (
            "shown: Δ sign right over the P10–P90 band (predict's)",
            [f"{sign[n]['right_p10_p90']} of {sign[n]['beyond_noise_p10_p90']}" for n in names],
        ),
        (
            "those commits' change: share of unchanged windows swinging as much (P10–P90)",
            often("as_often_unchanged_p10_p90"),
        ),
        (
            "commits predict calls beyond the noise (its sign as the runs', of those graded)",
            [
                f"{sign[n]['predict_beyond_noise']} of {s[n]['commits_reviewed']} "
                f"({sign[n]['predict_beyond_noise_agrees']} of "
                f"{sign[n]['predict_beyond_noise_graded']})"
                for n in names
            ],
        ),
    ]


def markdown(result: dict[str, Any]) -> str:
    """The summary and goals per repository (for docs/ci/predict.md), then each commit."""
    repos = result["repos"]
    names = list(repos)

    def table(first: str, rows: list[tuple[str, list[str]]]) -> str:
        lines = [f"| {first} | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
        lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]
        return "\n".join(lines) + "\n"

    s = {n: repos[n]["summary"] for n in names}
    rows = [
        (
            "workflow changes in the periods / reviewed",
            [f"{s[n]['commits_in_periods']} / {s[n]['commits_reviewed']}" for n in names],
        ),
        (
            "job names matched",
            [
                f"{_share(s[n]['jobs']['matched_share'])} ({s[n]['jobs']['matched_rows']:,} of "
                f"{s[n]['jobs']['actual_rows']:,})"
                for n in names
            ],
        ),
    ]
    for b in BASES:
        rows.append(
            (
                f"{b}: RMSLE / P10–P90 / within 2× (rows)",
                [_figures(s[n]["by_basis"][b]) for n in names],
            )
        )
    rows.append(("all matched rows", [_figures(s[n]["all"]) for n in names]))
    rows.append(
        ("jobs shown as moved (renamed, same steps)", [str(s[n]["moved_jobs"]) for n in names])
    )
    rows.append(
        (
            "jobs whose steps changed, predicted from runs of the old steps",
            [str(s[n]["old_steps_jobs"]) for n in names],
        )
    )
    rows.append(
        (
            "self-compare: commits with Δ ≠ 0 (max abs Δ)",
            [
                f"{s[n]['self_compare']['nonzero']} of {s[n]['self_compare']['commits']} "
                f"({s[n]['self_compare']['max_abs_delta_s']:g} s)"
                for n in names
            ],
        )
    )
    rows += _sign_rows(s, names)
    text = table("review of real workflow changes", rows) + "\n"
    goal_rows = []
    for i, g in enumerate(repos[names[0]]["goals"] if names else []):
        cells = [
            f"{'pass' if repos[n]['goals'][i]['pass'] else 'FAIL'}: {repos[n]['goals'][i]['measured']}"
            for n in names
        ]
        goal_rows.append((g["goal"], cells))
    text += table("goal", goal_rows) + "\n"
    if all(EARLIER in repos[n] for n in names) and names:
        e = {n: repos[n][EARLIER]["summary"] for n in names}
        earlier_rows = [
            (
                "workflow changes before the validation period / graded",
                [
                    f"{e[n]['commits_before_validation']} / {e[n]['commits_reviewed']}"
                    for n in names
                ],
            ),
            ("their matched rows", [_figures(e[n]["all"]) for n in names]),
            *_sign_rows(e, names),
        ]
        text += table("earlier workflow changes (--earlier; shown, not a goal)", earlier_rows)
        text += "\n"
    lines = [
        "| repository | commit | period | files reviewed | predicted Δ (P10–P90) | predict's "
        "verdict | actual Δ | noise: 95% band (P10–P90) | unchanged windows as large | sign | "
        "self Δ | names matched |",
        "|---|---|---|---|---:|---|---:|---:|---:|---|---:|---:|",
    ]
    for n in names:
        for c in repos[n]["commits"] + repos[n].get(EARLIER, {}).get("commits", []):
            files = ", ".join(_code(Path(f).name) for f in c["files_reviewed"]) or "—"
            first = f"| {n} | {c['commit'][:9]} | {c['period']} | {files} |"
            if "skipped" in c:
                lines.append(f"{first} skipped: {c['skipped']} | | | | | | | |")
                continue
            sign = {True: "right", False: "wrong", None: "—"}[c["sign_agrees"]]
            if c["beyond_noise"] or not c["noise_s"]:
                pass
            elif c["beyond_noise_p10_p90"]:
                sign += " (over the P10–P90 band only)"
            else:
                sign += " (inside the noise)"
            matched = c["matched_rows"] / c["actual_rows"] if c["actual_rows"] else None
            noise = "—" if c["noise_s"] is None else f"{c['noise_s']:,.0f} s"
            if c["noise_p10_p90_s"] is not None:
                noise += f" ({c['noise_p10_p90_s']:,.0f} s)"
            own = "refused" if c["self_delta_s"] is None else f"{c['self_delta_s']:g} s"
            ranges = [r for r in c["predicted_range"] if r.get("delta_p10") is not None]
            span = (
                f" ({_seconds(ranges[0]['delta_p10'])} to {_seconds(ranges[0]['delta_p90'])})"
                if len(ranges) == 1
                else ""
            )
            verdict = "beyond the noise" if c["predict_beyond_noise"] else "inside the noise"
            lines.append(
                f"{first} {_seconds(c['predicted_delta_s'])}{span} | {verdict} | "
                f"{_seconds(c['actual_delta_s'])} | {noise} | "
                f"{_share(c.get('as_often_unchanged'))} | {sign} | {own} | {_share(matched)} |"
            )
    return text + "\n".join(lines) + "\n"


def parse_repo(text: str) -> tuple[str, Path]:
    name, sep, path = text.partition("=")
    if not sep or name.count("/") != 1 or not all(name.split("/")) or not path:
        raise argparse.ArgumentTypeError(f"{text!r}: give OWNER/NAME=PATH (a clone or mirror)")
    return name, Path(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset",
        type=Path,
        default=os.environ.get("GHARUNTIME_REAL_DATASET"),
        help="the built dataset [default: $GHARUNTIME_REAL_DATASET]",
    )
    parser.add_argument(
        "--repo",
        type=parse_repo,
        action="append",
        required=True,
        metavar="OWNER/NAME=GIT",
        help="a repository of the dataset and its clone or bare mirror (repeat for each)",
    )
    parser.add_argument("--work", type=Path, required=True, help="clones, cut datasets, models")
    parser.add_argument("--method", default="lightgbm", help="the method fitted [lightgbm]")
    parser.add_argument(
        "--fit",
        choices=("auto", "learn", "baseline"),
        default="auto",
        help="learn --from-dataset, or baseline --track history [auto: learn where it has it]",
    )
    parser.add_argument(
        "--predict-args", default="", help="more predict options, split as a shell would"
    )
    parser.add_argument("--limit", type=int, help="replay at most N commits per repository")
    parser.add_argument(
        "--earlier",
        action="store_true",
        help="also replay the workflow changes before the validation period whose sign can be "
        "graded, each with a model fitted on the rows before it (shown apart, not a goal)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    # predict runs inside the clones: a path typed relative to here must not reach it as typed
    args.work = args.work.absolute()
    try:
        if args.dataset is None:
            raise Refusal(
                "no dataset: give --dataset DIR or set GHARUNTIME_REAL_DATASET\n"
                "  fix: build it (benchmarks/real_apache.py) or download it"
            )
        args.dataset = args.dataset.absolute()
        manifest, splits = read_rows(args.dataset)
        names = [n for n, _ in args.repo]
        if len(set(names)) != len(names):
            raise Refusal("--repo: a repository given twice\n  fix: give each once")
        repos = [load_repo(n, m, args.work, splits, args.dataset) for n, m in args.repo]
        gh = gharuntime_cmd()
        kind = fit_kind(gh, args.fit)
        models = Models(gh, args.dataset, manifest, args.work, kind, args.method)
        extra = shlex.split(args.predict_args)
        result: dict[str, Any] = {
            "benchmark": "predict_review_real",
            "dataset": {
                "name": args.dataset.resolve().name,
                "revision": manifest.get("revision"),
                "config": CONFIG,
            },
            "fit": "learn --from-dataset" if kind == "learn" else "baseline --track history",
            "method": args.method,
            "gharuntime_version": __version__,
            "rules": {
                "runs_around": RUNS_AROUND,
                "noise": "half the P2.5-P97.5 width of the 3-vs-3 Δ over windows of the "
                f"last {NOISE_RUNS} runs before the commit not straddling a workflow change "
                f"(at least {MIN_NOISE_WINDOWS} windows); beside it, half the P10-P90 width "
                "(predict's band for a review's noise), shown, not graded",
                "model": "fitted on every row created before the period began (an earlier "
                "commit: before the commit)",
                "history": "--history-from the dataset, --at the commit's time",
            },
            "repos": {},
        }
        for repo in repos:
            in_period = [
                (sha, when, period)
                for sha, when in reversed(repo.workflow_commits)
                if (period := period_of(repo, when, args.earlier)) is not None
            ]
            in_period = [c for c in in_period if c[2] == EARLIER][: args.limit] + [
                c for c in in_period if c[2] != EARLIER
            ][: args.limit]
            commits, earlier = [], []
            for i, (sha, when, period) in enumerate(in_period, 1):
                print(f"{repo.name} {i}/{len(in_period)}: {sha[:9]} ({period})", file=sys.stderr)
                done = replay_commit(repo, sha, when, period, models, gh, extra)
                (earlier if period == EARLIER else commits).append(done)
            summary, before = summarise(commits), summarise(earlier)
            for c in commits + earlier:
                c.pop("rows", None)
            v, t = repo.periods["validation"], repo.periods["test"]
            result["repos"][repo.name] = {
                "periods": {
                    "validation": [f"{v[0]:%Y-%m-%dT%H:%M:%SZ}", f"{v[1]:%Y-%m-%dT%H:%M:%SZ}"],
                    "test": [f"{t[0]:%Y-%m-%dT%H:%M:%SZ}", f"{t[1]:%Y-%m-%dT%H:%M:%SZ}"],
                },
                "summary": summary,
                "goals": goals(summary),
                "commits": commits,
            }
            if args.earlier:
                result["repos"][repo.name][EARLIER] = {
                    "summary": {
                        "commits_before_validation": before["commits_in_periods"],
                        "commits_reviewed": before["commits_reviewed"],
                        "predict_errors": before["predict_errors"],
                        "all": before["all"],
                        "sign": before["sign"],
                    },
                    "commits": earlier,
                }
    except Refusal as exc:
        print(f"predict_review_real: {exc}", file=sys.stderr)
        return 2
    result["goals_pass"] = all(g["pass"] for r in result["repos"].values() for g in r["goals"])
    result["fit_s"] = round(models.seconds, 1)
    result["seconds"] = round(time.monotonic() - started, 1)
    print(markdown(result))
    print(json.dumps(result, ensure_ascii=False, allow_nan=False, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
