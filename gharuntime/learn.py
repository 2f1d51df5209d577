"""`gharuntime learn` as a library call: a team's own repositories → a learned folder
(gharuntime.predict.learned) that `predict` uses with each job's own recent durations.

Steps, each recorded when it finishes (gharuntime.resume), so a rerun over the same folder after
a kill keeps what is done and continues:

1. check: the token is accepted and can read every repository (nothing is written before);
2. crawl: the repositories' runs, jobs and workflow YAML into `raw/` (the crawler continues an
   interrupted crawl itself, storing nothing twice);
3. build: `dataset/`, through the same filters and history as every build;
4. fit: the history-track model (`history/`, the best default for a known repository: on real
   jobs the most accurate track) and the config-track model (`config/`, the fallback for a job
   that never ran), each scored on the repositories' latest runs (the temporal test split);
5. learn.json, last: the folder is finished.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Final

from gharuntime.baselines.method import MethodError
from gharuntime.baselines.methods import make_method
from gharuntime.baselines.run import run_baseline
from gharuntime.builder.build import BuildError, BuildOptions, RawSource, build
from gharuntime.builder.crawl_dir import CrawlDirError, claim_crawl_dir
from gharuntime.crawler import endpoints as ep
from gharuntime.crawler.assembly import make_client
from gharuntime.crawler.client import (
    BadCredentials,
    CrawlError,
    GitHubClient,
    Token,
    api_url_problem,
    token_problem,
)
from gharuntime.crawler.crawl import CrawlOptions, crawl
from gharuntime.crawler.progress import CrawlEvent
from gharuntime.dataset import DatasetError, read_manifest
from gharuntime.errors import GharuntimeError
from gharuntime.eval.api import evaluate_file
from gharuntime.eval.evaluate import InvalidSubmission
from gharuntime.eval.provenance import library_versions
from gharuntime.leaderboard.registry import write_atomic
from gharuntime.predict.history import dataset_repos
from gharuntime.predict.learned import (
    LEARNED_FILE,
    LEARNED_FORMAT,
    STEPS_DIR,
    is_learned_folder,
    relearn_command,
)
from gharuntime.progress import Progress, say
from gharuntime.resume import RECORD_SUFFIX, code_fingerprint, kept_record, write_record
from gharuntime.sources.raw import count_records
from gharuntime.version import __version__

__all__ = [
    "LEARN_CONFIG",
    "LEARN_TRACKS",
    "LearnError",
    "LearnRequest",
    "LearnResult",
    "StepDone",
    "check_repo_name",
    "run_learn",
    "token_from_env",
]

LEARN_CONFIG: Final = "temporal"
"""Fit on each repository's earlier runs, stop early on the next ones, score on the latest."""
LEARN_TRACKS: Final = ("history", "config")
SCORE_RESAMPLES: Final = 200
_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")

StepDone = Callable[[str, str], None]
"""(step, one line saying how it went): a result to keep on screen, not progress."""


class LearnError(GharuntimeError):
    """Learning cannot start or go on (the message says what, where and the fix)."""


def token_from_env(env: str) -> Token:
    """The token in environment variable `env`, labelled by the variable's name (the only
    thing a message may show); refused when absent, empty or not sendable."""
    secret = os.environ.get(env, "").strip()
    if not secret:
        raise LearnError(
            f"the environment variable {env} is not set (or is empty): learning needs a token "
            "that can read the repositories",
            where="--token-env",
            fix=f"export {env}=<a GitHub token> (fine-grained: Actions read, Metadata read), "
            "or name another variable with --token-env",
        )
    problem = token_problem(secret)
    if problem:
        raise LearnError(f"the token in {env} {problem}", where="--token-env")
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


def check_out(out: Path) -> None:
    """Refuse an --out that is neither new, empty, nor a learned folder: never write into
    someone's data. Raises LearnError."""
    if out.exists() and not out.is_dir():
        raise LearnError("is a file", where=str(out), fix="give a new folder for the learned model")
    if out.is_dir() and any(out.iterdir()) and not is_learned_folder(out):
        raise LearnError(
            "is not empty and is not a folder `gharuntime learn` wrote (no learn.json, no steps/)",
            where=str(out),
            fix="give a new or empty folder: the learned folder holds a crawl, a dataset and "
            "two models",
        )
    doc_path = out / LEARNED_FILE
    if doc_path.is_file():
        try:
            doc = json.loads(doc_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = None
        if not isinstance(doc, dict) or doc.get("format") != LEARNED_FORMAT:
            raise LearnError(
                f"was learnt by another gharuntime (not format {LEARNED_FORMAT}); its crawl "
                "and models cannot be continued",
                where=str(out),
                fix="give another --out, or delete that folder to learn afresh",
            )


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
        self.dir = out / STEPS_DIR
        self.fresh = fresh
        self.step_done = step_done
        self.kept: list[str] = []
        self.ran: list[str] = []

    def run(self, name: str, inputs: dict[str, Any], work: Callable[[], tuple[Path, str]]) -> Path:
        """`work()` does the step and returns (its result file, a summary); skipped when a
        record of the same inputs is there and its result unchanged."""
        record_path = self.dir / f"{name}{RECORD_SUFFIX}"
        record = None if self.fresh else kept_record(record_path, inputs)
        if record is not None:
            self.kept.append(name)
            if self.step_done:
                self.step_done(name, f"kept (finished earlier) {record.summary}")
            return record.result
        record_path.unlink(missing_ok=True)
        result, summary = work()
        write_record(record_path, inputs, result, summary)  # last: a step killed before reruns
        self.ran.append(name)
        if self.step_done:
            self.step_done(name, summary)
        return result


def _score(submission: Path, dataset: Path) -> dict[str, float | None]:
    """RMSLE and P10–P90 coverage on the repositories' latest runs (the test split)."""
    try:
        result = evaluate_file(submission, dataset, resamples=SCORE_RESAMPLES)
    except (DatasetError, InvalidSubmission):  # an empty test split: too few runs to score
        return {"rmsle": None, "coverage_p10_p90": None}
    rmsle = result["metrics"]["duration_s"]["rmsle"]["value"]
    central = (
        ((result.get("intervals") or {}).get("metrics") or {}).get("duration_s", {}).get("central")
    )
    cover = (central or {}).get("p10-p90", {}).get("coverage", {}).get("value")
    return {"rmsle": rmsle, "coverage_p10_p90": cover}


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def run_learn(
    request: LearnRequest,
    *,
    progress: Progress | None = None,
    step_done: StepDone | None = None,
) -> LearnResult:
    """Crawl, build and fit `request.repos` into `request.out` (see the module's steps).

    Raises LearnError (or a BuildError, MethodError) with what, where and the fix. Before the
    repositories are known to be readable nothing is written; after, a refusal leaves the
    finished steps for a rerun and never a learn.json."""
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
        for track in LEARN_TRACKS:
            make_method(request.method, track, params=request.params or None)
    except MethodError as exc:
        raise LearnError(str(exc), fix="choose a method and parameters both tracks take") from None
    check_out(out)
    client = make_client(request.api_url, list(request.tokens), max_retries=request.max_retries)
    say(progress, "checking the token and the repositories")
    names, visibility = _check_access(client, repos)
    # Readable: from here on the folder is written, step by step.
    out.mkdir(parents=True, exist_ok=True)
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

    def do_crawl() -> tuple[Path, str]:
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
        write_atomic(path, json.dumps(summary, indent=2) + "\n")
        lost = f", {len(result.failures)} thing(s) not fetched" if result.failures else ""
        return (
            path,
            f"runs created {result.since} .. {result.until}, {summary['records']} records{lost}",
        )

    crawled = steps.run(
        "crawl",
        _inputs("crawl", repos=names, api_url=request.api_url, **window),
        do_crawl,
    )
    crawl_doc = json.loads(crawled.read_text(encoding="utf-8"))

    def do_build() -> tuple[Path, str]:
        provenance = {
            "kind": "github",
            "synthetic": False,
            "since": crawl_doc["since"],
            "until": crawl_doc["until"],
            "crawl_failures": crawl_doc["failures"],
        }
        try:
            built = build(
                RawSource([raw], provenance=provenance), dataset, BuildOptions(progress=progress)
            )
        except BuildError as exc:
            raise LearnError(
                str(exc),
                where=str(dataset),
                fix="widen the window (--since) so the repositories have completed jobs, or "
                "check that they run GitHub Actions",
            ) from None
        return dataset / "manifest.json", f"{built.rows} jobs"

    manifest_path = steps.run("build", _inputs("build", crawl_sha256=_sha256(crawled)), do_build)
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
    models: dict[str, Any] = {}
    for track in LEARN_TRACKS:

        def do_fit(track: str = track) -> tuple[Path, str]:
            submission = out / STEPS_DIR / f"{track}.jsonl"
            run = run_baseline(
                request.method,
                dataset,
                config=LEARN_CONFIG,
                track=track,
                out=submission,
                model_dir=out / track,
                params=request.params or None,
                progress=progress,
            )
            say(progress, f"scoring the {track}-track model on the latest runs")
            scores = _score(submission, dataset)
            path = out / STEPS_DIR / f"{track}.score.json"
            write_atomic(
                path,
                json.dumps(
                    {"model_sha256": _sha256(out / track / "model.json"), **scores}, indent=2
                )
                + "\n",
            )
            return path, (
                f"{request.method}, {track} track, fitted on {run.meta['timing']['fit_rows']} jobs; "
                f"latest runs: RMSLE {_num(scores['rmsle'])}, P10–P90 coverage "
                f"{_num(scores['coverage_p10_p90'])}"
            )

        scored = steps.run(
            f"fit-{track}",
            _inputs(
                f"fit-{track}",
                method=request.method,
                params=request.params,
                dataset_sha256=_sha256(manifest_path),
            ),
            do_fit,
        )
        score = json.loads(scored.read_text(encoding="utf-8"))
        models[track] = {
            "folder": track,
            "rmsle_latest_runs": score.get("rmsle"),
            "coverage_p10_p90_latest_runs": score.get("coverage_p10_p90"),
        }
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
        "learnt_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "relearn": relearn_command({"repos": names}, out),
    }
    write_atomic(out / LEARNED_FILE, json.dumps(doc, indent=2) + "\n")
    return LearnResult(out, doc, steps.kept, steps.ran)
