"""`gharuntime learn` as a library call: a team's own repositories → a learned folder
(gharuntime.predict.learned) that `predict` uses with each job's own recent durations.

Steps, each recorded when it finishes (gharuntime.resume: every file it wrote, by its path in the
folder and its hash), so a rerun over the same folder after a kill keeps what is done, still
intact, and continues. The folder is learn's own: marked first (LEARN_MARKER, with its format;
a non-empty folder without the mark is never written into) and locked for the run
(gharuntime.folderlock: a second learn on it is refused, naming the first):

1. check: the token is accepted and can read every repository (nothing is written before);
2. crawl: the repositories' runs, jobs and workflow YAML into `raw/` (the crawler continues an
   interrupted crawl itself, storing nothing twice);
3. build: `dataset/`, through the same filters and history as every build;
4. fit: the history-track model (`history/`, the best default for a known repository: on real
   jobs the most accurate track) and the config-track model (`config/`, the fallback for a job
   that never ran), each scored on the repositories' latest runs (the temporal test split);
   then the multi-track model (`multi/`: every target the dataset holds, queue_s among them),
   whose queue_s is each job's wait for a runner in `predict` (the two models above still
   predict every duration: their behaviour is unchanged), scored likewise per target; a
   dataset that holds no queue_s gets none, and learn.json says why;
5. learn.json, last: the folder is finished. Its `models` name each model's track and the
   targets it predicts (`targets`) and is used for (`used_for`).

`--from-dataset DIR` (LearnRequest.from_dataset) starts from a dataset folder a team already
built (`gharuntime build`, e.g. from an archive of its runs) instead of a crawl: the folder is
validated against the contract first (nothing is written for one that fails), copied into
`dataset/` (step `dataset`), and fitted and finished as above; the learned folder is the same,
without `raw/`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

import polars as pl

from gharuntime.baselines.method import MethodError
from gharuntime.baselines.methods import METHODS, make_method
from gharuntime.baselines.run import run_baseline
from gharuntime.builder.build import BuildError, BuildOptions, build
from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir
from gharuntime.contract import SPLITS, RawStoreLayout
from gharuntime.crawler import endpoints as ep
from gharuntime.crawler.assembly import make_client
from gharuntime.crawler.client import (
    BadCredentials,
    CrawlError,
    GitHubClient,
    Token,
    api_url_problem,
    token_format_problem,
)
from gharuntime.crawler.crawl import CrawlOptions, crawl
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.dataset import DatasetError, load, read_manifest
from gharuntime.errors import GharuntimeError
from gharuntime.eval.api import evaluate_file
from gharuntime.eval.evaluate import InvalidSubmission
from gharuntime.eval.provenance import library_versions
from gharuntime.folderlock import LOCK_FILE, folder_lock
from gharuntime.paths import make_temp_dir, output_folder_problem, replace_folder, write_atomic
from gharuntime.predict.history import dataset_repos
from gharuntime.predict.learned import (
    LEARN_FOLDER_FORMAT,
    LEARN_MARKER,
    LEARNED_FILE,
    LEARNED_FORMAT,
    STEPS_DIR,
    is_learned_folder,
    relearn_command,
)
from gharuntime.progress import Progress, say
from gharuntime.readfile import InputFileError, read_json
from gharuntime.resume import (
    RECORD_SUFFIX,
    Rerun,
    StepRecord,
    check_step,
    code_fingerprint,
    files_under,
    write_record,
)
from gharuntime.source_kinds.raw import RawSource
from gharuntime.sources.raw import count_records
from gharuntime.targets import count_values
from gharuntime.validation import validate_folder
from gharuntime.version import __version__

__all__ = [
    "LEARN_CONFIG",
    "LEARN_PARAMS",
    "LEARN_TRACKS",
    "WAIT_TRACK",
    "LearnError",
    "LearnRequest",
    "LearnResult",
    "StepDone",
    "check_dataset",
    "check_repo_name",
    "fit_params",
    "run_learn",
    "token_from_env",
]

LEARN_CONFIG: Final = "temporal"
"""Fit on each repository's earlier runs, stop early on the next ones, score on the latest."""
LEARN_TRACKS: Final = ("history", "config")
"""The two duration models: each job from its own recent runs, else from its configuration."""
LEARN_PARAMS: Final = {"new_job_share": 0.05}
"""Defaults learn gives a method that takes them (the user's --param wins): a learned model is
asked most about jobs a workflow change renamed or added, so its trees practise on at least 5%
of rows whose job they have not seen (a validation period that knows every job gives 0)."""
WAIT_TRACK: Final = "multi"
"""The track of the third model, fitted for its queue_s: each job's wait for a runner."""
WAIT_TARGET: Final = "queue_s"
SCORE_RESAMPLES: Final = 200
MAX_STEP_FILE_BYTES: Final = 2**20
_RAW: Final = RawStoreLayout()
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")

StepDone = Callable[[str, str], None]
"""(step, one line saying how it went): a result to keep on screen, not progress."""


class LearnError(GharuntimeError):
    """Learning cannot start or go on (the message says what, where and the fix)."""


def token_from_env(env: str) -> Token:
    """The token in environment variable `env`, labelled by the variable's name (the only
    thing a message may show); refused when absent, empty, or not a GitHub token by its form
    (a variable named by mistake, such as PATH, is never sent)."""
    secret = os.environ.get(env, "").strip()
    if not secret:
        raise LearnError(
            f"the environment variable {env} is not set (or is empty): learning needs a token "
            "that can read the repositories",
            where="--token-env",
            fix=f"export {env}=<a GitHub token> (fine-grained: Actions read, Metadata read), "
            "or name another variable with --token-env",
        )
    problem = token_format_problem(secret)
    if problem:
        raise LearnError(
            f"the environment variable {env} does not hold a GitHub token: its value {problem}; "
            "it was not sent",
            where="--token-env",
            fix="name the variable that holds your token, e.g. --token-env GITHUB_TOKEN with "
            "GITHUB_TOKEN=<a GitHub token> (fine-grained: Actions read, Metadata read)",
        )
    return Token(secret, f"${env}")


def check_repo_name(name: str) -> str | None:
    """Why `name` is not a GitHub owner/name (None when it is)."""
    if not _NAME.fullmatch(name) or name.split("/", 1)[1] in (".", ".."):
        return f"{name[:100]!a} is not OWNER/NAME (e.g. octo-org/octo-repo)"
    return None


@dataclass(frozen=True)
class LearnRequest:
    """What to learn from and where to write it. `tokens` are used, never stored."""

    repos: tuple[str, ...]
    out: Path
    tokens: tuple[Token, ...]
    api_url: str = "https://api.github.com"
    since: str | None = None  # "YYYY-MM-DDTHH:MM:SSZ"; None: the crawler's default window
    until: str | None = None
    method: str = "lightgbm"
    params: dict[str, Any] = field(default_factory=dict)
    max_retries: int = 6
    fresh: bool = False
    from_dataset: Path | None = None  # learn from this built dataset, not a crawl (no repos)


@dataclass(frozen=True)
class LearnResult:
    out: Path
    doc: dict[str, Any]
    kept: list[str]
    ran: list[str]


def _inputs(step: str, **fields: Any) -> dict[str, Any]:
    """Everything a step's result depends on (gharuntime.resume fingerprints it)."""
    return {
        "step": step,
        **fields,
        "code_sha256": code_fingerprint(),
        "libraries": library_versions(),
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _entries(out: Path) -> list[str]:
    """The names in `out`, its lock file aside (a run that stopped leaves it; it holds nothing)."""
    return [p.name for p in out.iterdir() if p.name != LOCK_FILE]


def check_out(out: Path) -> None:
    """Refuse an --out that is neither new, empty, nor a folder `gharuntime learn` began (its
    marker, LEARN_MARKER, says so): never write into someone's data. Raises LearnError."""
    if out.exists() and not out.is_dir():
        raise LearnError("is a file", where=str(out), fix="give a new folder for the learned model")
    if not out.is_dir() or not _entries(out):
        return
    marker = out / LEARN_MARKER
    fresh_folder = (
        "give a new or empty folder: the learned folder holds a crawl, a dataset and two models"
    )
    if not os.path.lexists(marker):
        hint = (
            f"; it holds {LEARNED_FILE} or {STEPS_DIR}/, so an older gharuntime may have written "
            "it, or it was copied without its hidden files"
            if is_learned_folder(out)
            else ""
        )
        raise LearnError(
            f"is not empty and is not a folder `gharuntime learn` began (no {LEARN_MARKER}, "
            f"the mark it leaves first in a folder it writes){hint}",
            where=str(out),
            fix=fresh_folder,
        )
    try:
        doc = read_json(marker, MAX_STEP_FILE_BYTES)
    except InputFileError as exc:
        raise LearnError(
            f"its mark {LEARN_MARKER} cannot be read ({exc})", where=str(out), fix=fresh_folder
        ) from None
    got = doc.get("format") if isinstance(doc, dict) else None
    if got != LEARN_FOLDER_FORMAT:
        raise LearnError(
            f"was begun by a `gharuntime learn` of another format ({ascii(got)[:60]}, this one "
            f"writes {LEARN_FOLDER_FORMAT}); its crawl and models cannot be continued",
            where=str(out),
            fix="give another --out, or delete that folder to learn afresh",
        )
    doc_path = out / LEARNED_FILE
    if os.path.lexists(doc_path):
        try:
            learned = read_json(doc_path, MAX_STEP_FILE_BYTES)
        except InputFileError:
            learned = None
        if not isinstance(learned, dict) or learned.get("format") != LEARNED_FORMAT:
            raise LearnError(
                f"was learnt by another gharuntime (not format {LEARNED_FORMAT}); its crawl "
                "and models cannot be continued",
                where=str(out),
                fix="give another --out, or delete that folder to learn afresh",
            )


def claim_folder(out: Path) -> None:
    """Mark `out` (checked by check_out: new, empty or already marked) as learn's own, first of
    anything written there; call it holding the folder's lock."""
    if not os.path.lexists(out / LEARN_MARKER):
        mark = {
            "format": LEARN_FOLDER_FORMAT,
            "gharuntime_version": __version__,
            "note": "written by `gharuntime learn`: a rerun continues this folder",
        }
        write_atomic(out / LEARN_MARKER, json.dumps(mark, indent=2) + "\n", mode=0o644)


def _check_access(client: GitHubClient, repos: tuple[str, ...]) -> tuple[list[str], dict[str, str]]:
    """Each repository's full name as GitHub gives it (a renamed one: its new name), and its
    visibility where GitHub says it (`public`, `private`, `internal`: what predict bills by).
    Raises LearnError for a token GitHub refuses or a repository it cannot read."""
    try:
        client.identify()
        names = []
        visibility: dict[str, str] = {}
        for repo in repos:
            r = client.get(ep.repository(repo), ok_statuses=(403, 404))
            if r.status != 200 or not isinstance(r.body, dict) or "full_name" not in r.body:
                raise LearnError(
                    f"{repo}: GitHub answered HTTP {r.status}: no such repository, or the token "
                    "cannot read it",
                    where=client.scrub(client.url(ep.repository(repo))),
                    fix="check OWNER/NAME, and that the token can read the repository and its "
                    "Actions (a fine-grained token: Actions read and Metadata read)",
                )
            names.append(str(r.body["full_name"]))
            seen = r.body.get("visibility")
            if seen not in ("public", "private", "internal") and isinstance(
                r.body.get("private"), bool
            ):
                seen = "private" if r.body["private"] else "public"
            if seen in ("public", "private", "internal"):
                visibility[names[-1]] = str(seen)
        return names, visibility
    except BadCredentials as exc:
        raise LearnError(
            client.scrub(str(exc)),
            where=client.api_url,
            fix="give a token GitHub accepts (--token-env names the variable holding it)",
        ) from None
    except CrawlError as exc:
        raise LearnError(
            client.scrub(str(exc)),
            where=client.api_url,
            fix="is --api-url right, and is the server up? Nothing was written",
        ) from None


def _crawl_events(progress: Progress | None) -> Callable[[CrawlEvent], None]:
    """Crawl events → progress("crawling", repositories done, planned)."""
    state = {"done": 0, "total": 0}

    def on_event(event: CrawlEvent) -> None:
        if progress is None:
            return
        if event.kind == "plan":
            state["total"] = int(event.data["repositories"])
        elif event.kind == "repository" and event.data.get("state") in ("done", "skipped"):
            state["done"] += 1
        else:
            return
        progress("crawling", state["done"], state["total"] or None)

    return on_event


class _Steps:
    """Runs the steps of one learn in order, keeping those an earlier run finished."""

    def __init__(self, out: Path, fresh: bool, step_done: StepDone | None) -> None:
        self.out = out
        self.dir = out / STEPS_DIR
        self.fresh = fresh
        self.step_done = step_done
        self.kept: list[str] = []
        self.ran: list[str] = []

    def run(
        self,
        name: str,
        inputs: dict[str, Any],
        work: Callable[[], list[Path]],
        describe: Callable[[Path], str],
    ) -> Path:
        """`work()` does the step and returns the files it wrote (its result first);
        `describe(result)` says how it went, read from the result. Skipped when a record of the
        same inputs is there and every file it names is unchanged; run again, saying why,
        when one is missing or changed (gharuntime.resume)."""
        record_path = self.dir / f"{name}{RECORD_SUFFIX}"
        checked = None if self.fresh else check_step(record_path, inputs, self.out)
        if isinstance(checked, StepRecord):
            try:
                summary = describe(checked.result)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                checked = Rerun(f"its result cannot be read ({str(exc)[:200]})")
            else:
                self.kept.append(name)
                if self.step_done:
                    self.step_done(name, f"kept (finished earlier) {summary}")
                return checked.result
        record_path.unlink(missing_ok=True)
        outputs = work()
        write_record(record_path, inputs, self.out, outputs)  # last: a step killed before reruns
        self.ran.append(name)
        if self.step_done:
            again = f"; ran again: {checked.reason}" if isinstance(checked, Rerun) else ""
            self.step_done(name, describe(outputs[0]) + again)
        return outputs[0]


def _read_doc(path: Path) -> dict[str, Any]:
    """A JSON object a step wrote (ValueError for anything else)."""
    doc = read_json(path, MAX_STEP_FILE_BYTES)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a JSON object")
    return doc


def _describe_crawl(path: Path) -> str:
    doc = _read_doc(path)
    failures = int(doc["failures"])
    lost = f", {failures} thing(s) not fetched" if failures else ""
    return f"runs created {doc['since']} .. {doc['until']}, {int(doc['records'])} records{lost}"


def _describe_build(manifest: Path) -> str:
    return f"{int(_read_doc(manifest)['rows'])} jobs"


def _describe_fit(path: Path) -> str:
    doc = _read_doc(path)
    used = str(doc.get("used_for") or "duration_s")
    targets = doc.get("targets") or ["duration_s"]
    scored = f"{used} " if list(targets) != ["duration_s"] else ""
    return (
        f"{doc['method']}, {doc['track']} track ({', '.join(map(str, targets))}), fitted on "
        f"{int(doc['fit_rows'])} jobs; latest runs: {scored}RMSLE {_num(doc['rmsle'])}, P10–P90 "
        f"coverage {_num(doc['coverage_p10_p90'])}"
    )


def _score(
    submission: Path, dataset: Path, targets: tuple[str, ...] = ("duration_s",)
) -> dict[str, dict[str, float | None]]:
    """Per target, RMSLE and P10–P90 coverage on the repositories' latest runs (the test
    split)."""
    empty: dict[str, float | None] = {"rmsle": None, "coverage_p10_p90": None}
    try:
        result = evaluate_file(submission, dataset, resamples=SCORE_RESAMPLES)
    except (DatasetError, InvalidSubmission):  # an empty test split: too few runs to score
        return {t: dict(empty) for t in targets}
    out: dict[str, dict[str, float | None]] = {}
    for target in targets:
        metrics = result["metrics"].get(target)
        if not isinstance(metrics, dict):
            out[target] = dict(empty)
            continue
        central = (
            ((result.get("intervals") or {}).get("metrics") or {}).get(target, {}).get("central")
        )
        cover = (central or {}).get("p10-p90", {}).get("coverage", {}).get("value")
        out[target] = {"rmsle": metrics["rmsle"]["value"], "coverage_p10_p90": cover}
    return out


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def run_learn(
    request: LearnRequest,
    *,
    progress: Progress | None = None,
    step_done: StepDone | None = None,
) -> LearnResult:
    """Crawl, build and fit `request.repos` into `request.out` (see the module's steps).

    Raises LearnError (or a BuildError, MethodError; FolderInUse while another run writes the
    folder) with what, where and the fix. Before the repositories are known to be readable
    nothing is written; after, a refusal leaves the finished steps for a rerun and never a
    learn.json."""
    if request.from_dataset is not None:
        return _learn_from_dataset(request, request.from_dataset, progress, step_done)
    out, repos = request.out, request.repos
    for repo in repos:
        problem = check_repo_name(repo)
        if problem:
            raise LearnError(problem, fix="name each repository as OWNER/NAME")
    if not repos:
        raise LearnError("no repository to learn from", fix="name one: OWNER/NAME")
    problem = api_url_problem(request.api_url)
    if problem:
        raise LearnError(problem, where="--api-url", fix="e.g. https://api.github.com")
    try:
        for track in (*LEARN_TRACKS, WAIT_TRACK):
            make_method(request.method, track, params=request.params or None)
    except MethodError as exc:
        raise LearnError(str(exc), fix="choose a method and parameters both tracks take") from None
    check_out(out)
    client = make_client(request.api_url, list(request.tokens), max_retries=request.max_retries)
    say(progress, "checking the token and the repositories")
    names, visibility = _check_access(client, repos)
    # Readable: from here on the folder is written, step by step, by one run at a time.
    with folder_lock(
        out,
        command="gharuntime learn",
        fix="or give another --out (a rerun over this one keeps its finished steps)",
    ):
        check_out(out)  # again, now that no other run can be writing it
        claim_folder(out)
        return _learn_steps(request, names, visibility, client, progress, step_done)


def _learn_steps(
    request: LearnRequest,
    names: list[str],
    visibility: dict[str, str],
    client: GitHubClient,
    progress: Progress | None,
    step_done: StepDone | None,
) -> LearnResult:
    """The steps after the check, in the claimed and locked folder `request.out`."""
    out = request.out
    (out / STEPS_DIR).mkdir(exist_ok=True)
    raw, dataset = out / "raw", out / "dataset"
    try:
        claim_crawl_dir(
            raw,
            f"the API at {request.api_url}",
            {"learn_repos": ",".join(sorted(n.lower() for n in names))},
        )
    except CrawlDirError as exc:
        raise LearnError(
            str(exc), fix=f"give another --out for these repositories: {', '.join(names)}"
        ) from None
    steps = _Steps(out, request.fresh, step_done)
    window = {"since": request.since, "until": request.until}

    def do_crawl() -> list[Path]:
        opts = CrawlOptions(repos=list(names), since=request.since, until=request.until)
        try:
            result = crawl(raw, opts, client, on_event=_crawl_events(progress))
        except CrawlError as exc:
            raise LearnError(
                f"the crawl stopped: {client.scrub(str(exc))}",
                where=str(raw),
                fix="run the same command again: it continues the crawl",
            ) from None
        summary = {
            "crawl_id": result.crawl_id,
            "since": result.since,
            "until": result.until,
            "records": count_records([raw]),
            "failures": len(result.failures),
        }
        path = out / STEPS_DIR / "crawl.json"
        write_atomic(path, json.dumps(summary, indent=2) + "\n", mode=0o644)
        return [path, *files_under(raw / _RAW.shards)]

    crawled = steps.run(
        "crawl",
        _inputs("crawl", repos=names, api_url=request.api_url, **window),
        do_crawl,
        _describe_crawl,
    )
    crawl_doc = _read_doc(crawled)

    def do_build() -> list[Path]:
        provenance = {
            "kind": "github",
            "synthetic": False,
            "since": crawl_doc["since"],
            "until": crawl_doc["until"],
            "crawl_failures": crawl_doc["failures"],
        }
        try:
            build(RawSource([raw], provenance=provenance), dataset, BuildOptions(progress=progress))
        except BuildError as exc:
            raise LearnError(
                str(exc),
                where=str(dataset),
                fix="widen the window (--since) so the repositories have completed jobs, or "
                "check that they run GitHub Actions",
            ) from None
        manifest = dataset / "manifest.json"
        return [manifest, *(p for p in files_under(dataset) if p != manifest)]

    manifest_path = steps.run(
        "build", _inputs("build", crawl_sha256=_sha256(crawled)), do_build, _describe_build
    )
    manifest = read_manifest(dataset)
    held = {r.lower() for r in dataset_repos(dataset)}
    missing = [n for n in names if n.lower() not in held]
    if missing:
        raise LearnError(
            f"no job of {', '.join(missing)} was left after the build's filters (completed, "
            f"successful jobs created {crawl_doc['since']} .. {crawl_doc['until']})",
            where=str(dataset),
            fix="give an earlier --since, or leave that repository out",
        )
    models, no_wait = _fit_tracks(request, steps, dataset, manifest_path, progress)
    doc = {
        "format": LEARNED_FORMAT,
        "gharuntime_version": __version__,
        "repos": names,
        "visibility": visibility,
        "api_url": request.api_url,
        "window": {"since": crawl_doc["since"], "until": crawl_doc["until"]},
        "method": request.method,
        "params": request.params,
        "dataset": {"folder": "dataset", "revision": manifest.get("revision")},
        "config": LEARN_CONFIG,
        "models": models,
        **({"wait": no_wait} if no_wait else {}),
        "learnt_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "relearn": relearn_command({"repos": names}, out),
    }
    write_atomic(out / LEARNED_FILE, json.dumps(doc, indent=2) + "\n", mode=0o644)
    return LearnResult(out, doc, steps.kept, steps.ran)


def fit_params(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The parameters learn fits `method` with: LEARN_PARAMS the method declares, under the
    user's own."""
    cls = METHODS.get(method)
    declared = set(cls.param_specs) if cls is not None else set()
    return {**{k: v for k, v in LEARN_PARAMS.items() if k in declared}, **params}


def _fit_tracks(
    request: LearnRequest,
    steps: _Steps,
    dataset: Path,
    manifest_path: Path,
    progress: Progress | None,
) -> tuple[dict[str, Any], str | None]:
    """Fit and score the two duration models (steps fit-history, fit-config) and, where the
    dataset holds queue_s, the multi-track model for the wait (step fit-multi): learn.json's
    `models`, and why there is no wait model (None when there is one)."""
    out = request.out
    params = fit_params(request.method, request.params)
    models: dict[str, Any] = {}
    why_not = _no_wait(dataset)
    tracks = (*LEARN_TRACKS, WAIT_TRACK) if why_not is None else LEARN_TRACKS
    for track in tracks:
        used_for = WAIT_TARGET if track == WAIT_TRACK else "duration_s"

        def do_fit(track: str = track, used_for: str = used_for) -> list[Path]:
            submission = out / STEPS_DIR / f"{track}.jsonl"
            run = run_baseline(
                request.method,
                dataset,
                config=LEARN_CONFIG,
                track=track,
                out=submission,
                model_dir=out / track,
                params=params or None,
                progress=progress,
            )
            say(progress, f"scoring the {track}-track model on the latest runs")
            targets = tuple(str(t) for t in run.meta.get("targets") or ("duration_s",))
            scores = _score(submission, dataset, targets)
            path = out / STEPS_DIR / f"{track}.score.json"
            doc = {
                "method": request.method,
                "track": track,
                "targets": list(targets),
                "used_for": used_for,
                "fit_rows": run.meta["timing"]["fit_rows"],
                "model_sha256": _sha256(out / track / "model.json"),
                **scores.get(used_for, {"rmsle": None, "coverage_p10_p90": None}),
                "scores": scores,
            }
            write_atomic(path, json.dumps(doc, indent=2) + "\n", mode=0o644)
            return [path, *files_under(out / track)]  # the model too: kept only while intact

        scored = steps.run(
            f"fit-{track}",
            _inputs(
                f"fit-{track}",
                method=request.method,
                params=params,
                dataset_sha256=_sha256(manifest_path),
            ),
            do_fit,
            _describe_fit,
        )
        score = _read_doc(scored)
        models[track] = {
            "folder": track,
            "track": track,
            "targets": score.get("targets") or ["duration_s"],
            "used_for": score.get("used_for") or used_for,
            "rmsle_latest_runs": score.get("rmsle"),
            "coverage_p10_p90_latest_runs": score.get("coverage_p10_p90"),
            **({"scores": score["scores"]} if isinstance(score.get("scores"), dict) else {}),
        }
    return models, why_not


def _no_wait(dataset: Path) -> str | None:
    """Why `dataset` gives no wait model (its temporal train split holds no queue_s), or None."""
    train = load(dataset, LEARN_CONFIG, "train", columns=[WAIT_TARGET])
    if count_values(train, (WAIT_TARGET,))[WAIT_TARGET] > 0:
        return None
    return (
        f"no wait model: none of the {train.height:,} jobs of the dataset's {LEARN_CONFIG} "
        f"train split has a {WAIT_TARGET} (created and started times)"
    )


MAX_PROBLEMS_SHOWN: Final = 5


def check_dataset(
    source: Path, progress: Progress | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The manifest and repositories of a dataset folder to learn from, once it is found valid
    against the contract (gharuntime.validation) with jobs to fit on. Raises LearnError with
    what, where and the fix; reads only."""
    fix = (
        "give a dataset folder written by `gharuntime build` (manifest.json and data/); "
        f"`gharuntime validate {source}` lists what is wrong"
    )
    if not source.is_dir():
        raise LearnError("not a folder", where=str(source), fix=fix)
    say(progress, f"validating the dataset {source}")
    problems = validate_folder(source, progress)
    if problems:
        shown = "; ".join(str(p) for p in problems[:MAX_PROBLEMS_SHOWN])
        more = (
            f"; and {len(problems) - MAX_PROBLEMS_SHOWN} more"
            if len(problems) > MAX_PROBLEMS_SHOWN
            else ""
        )
        raise LearnError(
            f"not a valid dataset ({len(problems)} problem(s)): {shown}{more}",
            where=str(source),
            fix=fix + "; rebuild it with `gharuntime build`",
        )
    try:
        manifest = read_manifest(source)
    except DatasetError as exc:
        raise LearnError(str(exc), where=str(source), fix=fix) from None
    train = sum(
        int(f.get("rows") or 0)
        for f in manifest.get("files", [])
        if f.get("config") == LEARN_CONFIG and f.get("split") == "train"
    )
    if train == 0:
        raise LearnError(
            f"no job in its {LEARN_CONFIG} train split: nothing to fit on",
            where=str(source),
            fix="build it from more runs (a repository needs enough runs for the temporal "
            "split to keep some for training)",
        )
    return manifest, dataset_repos(source)


def _data_window(dataset: Path) -> dict[str, str | None]:
    """When the dataset's first and last jobs were created (UTC)."""
    times = pl.concat(
        [load(dataset, LEARN_CONFIG, split, columns=["created_at"]) for split in SPLITS]
    )["created_at"]
    if times.len() == 0:
        return {"since": None, "until": None}
    return {
        "since": times.min().strftime("%Y-%m-%dT%H:%M:%SZ"),  # type: ignore[union-attr]
        "until": times.max().strftime("%Y-%m-%dT%H:%M:%SZ"),  # type: ignore[union-attr]
    }


def _learn_from_dataset(
    request: LearnRequest,
    source: Path,
    progress: Progress | None,
    step_done: StepDone | None,
) -> LearnResult:
    """`learn --from-dataset`: validate, copy into OUT/dataset, fit both tracks, finish."""
    out = request.out
    if request.repos:
        raise LearnError(
            "repositories named with --from-dataset: the dataset's own repositories are learnt",
            fix="drop the repository names, or learn them from a crawl without --from-dataset",
        )
    try:
        for track in (*LEARN_TRACKS, WAIT_TRACK):
            make_method(request.method, track, params=request.params or None)
    except MethodError as exc:
        raise LearnError(str(exc), fix="choose a method and parameters both tracks take") from None
    check_out(out)
    target = out / "dataset"
    in_place = source.resolve() == target.resolve()
    problem = None if in_place else output_folder_problem(out, [source])
    if problem is None and not in_place and out.resolve().is_relative_to(source.resolve()):
        problem = f"{out} is inside the dataset folder {source}, which must stay as it was built"
    if problem is not None:
        raise LearnError(problem, where="--out", fix="give a new folder outside the dataset")
    if (out / "raw").exists():
        raise LearnError(
            "holds a learned folder crawled from GitHub (raw/): learning it from a dataset "
            "would mix the two",
            where=str(out),
            fix="give another --out for the dataset's model",
        )
    manifest, repos = check_dataset(source, progress)
    # Valid: from here on the folder is written, step by step, by one run at a time.
    with folder_lock(
        out,
        command="gharuntime learn --from-dataset",
        fix="or give another --out (a rerun over this one keeps its finished steps)",
    ):
        check_out(out)  # again, now that no other run can be writing it
        claim_folder(out)
        return _dataset_steps(request, source, manifest, repos, progress, step_done)


def _dataset_steps(
    request: LearnRequest,
    source: Path,
    manifest: dict[str, Any],
    repos: list[str],
    progress: Progress | None,
    step_done: StepDone | None,
) -> LearnResult:
    """The steps of `learn --from-dataset` after the checks, in the claimed and locked folder."""
    out = request.out
    target = out / "dataset"
    in_place = source.resolve() == target.resolve()
    (out / STEPS_DIR).mkdir(exist_ok=True)
    steps = _Steps(out, request.fresh, step_done)
    rows = int(manifest.get("rows") or 0)
    summary = f"{rows} jobs of {len(repos)} repositories ({', '.join(repos[:5])})"

    def do_copy() -> list[Path]:
        if not in_place:
            say(progress, f"copying the dataset into {target}")
            tmp = make_temp_dir(target)
            try:
                shutil.copytree(source, tmp, dirs_exist_ok=True)
                changed = validate_folder(tmp)
                if changed:  # the copy is what predict reads: it must be what was checked
                    raise LearnError(
                        f"changed while it was copied: {changed[0]}",
                        where=str(source),
                        fix="run the same command again once nothing writes to the dataset",
                    )
                replace_folder(tmp, target)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        manifest_file = target / "manifest.json"
        return [manifest_file, *(f for f in files_under(target) if f != manifest_file)]

    def describe_copy(_manifest: Path) -> str:
        return f"{summary}, in place" if in_place else f"{summary} from {source}"

    manifest_path = steps.run(
        "dataset",
        _inputs("dataset", manifest_sha256=_sha256(source / "manifest.json")),
        do_copy,
        describe_copy,
    )
    models, no_wait = _fit_tracks(request, steps, target, manifest_path, progress)
    origin = {
        "path": str(source),
        "revision": manifest.get("revision"),
        "kind": (manifest.get("source") or {}).get("kind"),
        "synthetic": (manifest.get("source") or {}).get("synthetic"),
    }
    doc = {
        "format": LEARNED_FORMAT,
        "gharuntime_version": __version__,
        "repos": repos,
        "from_dataset": origin,
        "api_url": None,
        "window": _data_window(target),
        "method": request.method,
        "params": request.params,
        "dataset": {"folder": "dataset", "revision": read_manifest(target).get("revision")},
        "config": LEARN_CONFIG,
        "models": models,
        **({"wait": no_wait} if no_wait else {}),
        "learnt_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "relearn": relearn_command({"from_dataset": origin}, out),
    }
    write_atomic(out / LEARNED_FILE, json.dumps(doc, indent=2) + "\n", mode=0o644)
    return LearnResult(out, doc, steps.kept, steps.ran)
