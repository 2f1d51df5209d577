"""A learned folder (`gharuntime learn`'s --out): a team's own repositories crawled, built and
fitted, ready for `predict`.

    learn.json    what was learnt (format, repositories, crawl window, API, method, the
                  dataset's revision, each model's folder); written last, so a folder without
                  it is unfinished and `predict` refuses it
    raw/          the crawl's raw store (a rerun continues it)
    dataset/      the built dataset: the repositories' jobs, their history
    history/      the history-track model (each job's own recent durations and its config)
    config/       the config-track model: the fallback for a job with no earlier run
    steps/        one record per finished step (gharuntime.resume), so a rerun keeps them
    .gharuntime-learn   the mark that learn began the folder (written first, with its format)

Never a token: the API's address is recorded, the credential is not.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from gharuntime.baselines.method import Method, MethodError
from gharuntime.baselines.model_io import load_model
from gharuntime.errors import GharuntimeError
from gharuntime.predict.history import HistoryError, RepoHistory, dataset_repos, load_repo_history
from gharuntime.readfile import InputFileError, read_json

__all__ = [
    "LEARNED_FILE",
    "LEARNED_FORMAT",
    "LEARN_FOLDER_FORMAT",
    "LEARN_MARKER",
    "STEPS_DIR",
    "Learned",
    "LearnedError",
    "PredictModels",
    "is_learned_folder",
    "load_learned",
    "open_predict_models",
    "relearn_command",
]

LEARNED_FORMAT: Final = "gharuntime-learned/1"
LEARNED_FILE: Final = "learn.json"
STEPS_DIR: Final = "steps"
LEARN_MARKER: Final = ".gharuntime-learn"
"""The first file `learn` writes in its --out: the folder is learn's own (a rerun continues it;
a non-empty folder without it is never written into)."""
LEARN_FOLDER_FORMAT: Final = "gharuntime-learn-folder/1"
MAX_LEARNED_BYTES: Final = 2**20


class LearnedError(GharuntimeError):
    """A learned folder that cannot be used (unfinished, another format, a damaged model)."""


def is_learned_folder(folder: Path) -> bool:
    """Whether `folder` is (or was begun as) a learned folder rather than a plain model."""
    return (
        os.path.lexists(folder / LEARNED_FILE)
        or os.path.lexists(folder / LEARN_MARKER)
        or (folder / STEPS_DIR).is_dir()
    )


_REPO_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}")
"""A GitHub repository's OWNER/NAME, as `learn` takes it."""


def relearn_command(doc: dict[str, Any] | None, folder: Path) -> str:
    """The `gharuntime learn` command that (re)writes `folder`, as far as `doc` tells, safe to
    paste into a shell: `learn.json` is a file anyone can edit, so only its repositories that
    are OWNER/NAME are named (any other value gives the placeholder OWNER/NAME), and every
    word is quoted for the shell (a folder named `a; rm -rf ~` stays one argument). A folder
    learnt from a built dataset is relearnt from that dataset."""
    origin = doc.get("from_dataset") if isinstance(doc, dict) else None
    if isinstance(origin, dict) and isinstance(origin.get("path"), str) and origin["path"]:
        return shlex.join(
            ["gharuntime", "learn", "--from-dataset", origin["path"], "--out", str(folder)]
        )
    repos = doc.get("repos") if isinstance(doc, dict) else None
    names = (
        [r for r in repos if isinstance(r, str) and _REPO_NAME.fullmatch(r)]
        if isinstance(repos, list) and len(repos) <= 1_000
        else []
    )
    if not names or (isinstance(repos, list) and len(names) != len(repos)):
        names = ["OWNER/NAME"]
    words = ["gharuntime", "learn", *names, "--token-env", "GITHUB_TOKEN", "--out", str(folder)]
    return shlex.join(words)


@dataclass(frozen=True)
class Learned:
    """A learned folder, loaded: both models, the dataset and what was learnt."""

    folder: Path
    doc: dict[str, Any]
    history: Method
    config: Method
    dataset: Path

    @property
    def repos(self) -> list[str]:
        return [str(r) for r in self.doc.get("repos", [])]


def load_learned(folder: Path) -> Learned:
    """The learned folder's models and dataset. Raises LearnedError (what, where, the fix) for an
    unfinished folder, one of another format, or a model this gharuntime cannot load."""
    path = folder / LEARNED_FILE
    if not os.path.lexists(path):
        raise LearnedError(
            "learning did not finish here (no learn.json): the folder holds only its first steps",
            where=str(folder),
            fix="run the same `gharuntime learn` command again: it keeps the finished steps",
        )
    try:
        doc = read_json(path, MAX_LEARNED_BYTES)
    except InputFileError as exc:
        raise LearnedError(
            f"unreadable: {exc}", where=str(path), fix=relearn_command(None, folder)
        ) from None
    if not isinstance(doc, dict) or doc.get("format") != LEARNED_FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else None
        raise LearnedError(
            f"written in format {ascii(got)[:60]} (by gharuntime "
            f"{ascii(doc.get('gharuntime_version') if isinstance(doc, dict) else None)[:40]}); "
            f"this gharuntime reads {LEARNED_FORMAT}",
            where=str(path),
            fix=f"learn again with this version: {relearn_command(doc, folder)}",
        )
    models: dict[str, Method] = {}
    for track in ("history", "config"):
        try:
            models[track], meta = load_model(folder / track)
        except MethodError as exc:
            raise LearnedError(
                str(exc).split("\n", 1)[0],
                where=str(folder / track),
                fix=f"learn again with this version: {relearn_command(doc, folder)}",
            ) from None
        if meta.get("track") != track:
            raise LearnedError(
                f"holds a {ascii(meta.get('track'))[:40]}-track model, not a {track}-track one",
                where=str(folder / track),
                fix=relearn_command(doc, folder),
            )
    return Learned(folder, doc, models["history"], models["config"], folder / "dataset")


def _visibility(doc: dict[str, Any], repo: str) -> tuple[bool, str] | None:
    """(public, "learn.json") for `repo` when the learned folder recorded its visibility."""
    seen = doc.get("visibility")
    if not isinstance(seen, dict):
        return None
    value = next((v for k, v in seen.items() if str(k).lower() == repo.lower()), None)
    if value not in ("public", "private", "internal"):
        return None
    return value == "public", "learn.json"


@dataclass(frozen=True)
class PredictModels:
    """What `predict` runs: the model, the fallback for jobs without history, the repository's
    history (None: predict from configuration alone), and what to say about them."""

    method: Method
    meta: dict[str, Any]
    fallback: Method | None
    history: RepoHistory | None
    visibility: tuple[bool, str] | None = None  # (public, where it was read), when known


def _pick_repo(repo: str | None, held: list[str], where: str, fix: str) -> str:
    if repo is not None:
        return repo
    if len(held) == 1:
        return held[0]
    raise LearnedError(
        f"holds {len(held)} repositories ({', '.join(held[:10])}): which one is the workflow's?",
        where=where,
        fix=fix,
    )


def open_predict_models(
    model_dir: Path, *, history_from: Path | None = None, repo: str | None = None
) -> PredictModels:
    """The models and history `predict --model DIR [--history-from DATASET] [--repo NAME]`
    uses. A learned folder gives both tracks and its dataset's history (or `history_from`'s); a
    plain model folder gives its one model, with history only from `history_from` and only on
    the history track. Raises LearnedError, HistoryError or MethodError with the fix."""
    if is_learned_folder(model_dir):
        learned = load_learned(model_dir)
        dataset = history_from or learned.dataset
        name = _pick_repo(
            repo,
            learned.repos,
            str(model_dir),
            "give --repo OWNER/NAME: the repository the workflow belongs to",
        )
        if history_from is None and name.lower() not in {r.lower() for r in learned.repos}:
            raise HistoryError(
                f"{name} was never crawled into this learned model (it learnt "
                f"{', '.join(learned.repos)})",
                where=str(model_dir),
                fix=f"learn it: gharuntime learn {name} --token-env GITHUB_TOKEN --out DIR, or "
                "give --history-from a dataset built from a crawl of it",
            )
        meta = {
            "method": learned.doc.get("method"),
            "track": "history",
            "fallback": "config",
            "dataset": {"id": str(dataset)},
        }
        history = load_repo_history(dataset, name)
        return PredictModels(
            learned.history, meta, learned.config, history, _visibility(learned.doc, history.repo)
        )
    method, meta = load_model(model_dir)
    if history_from is None:
        if repo is not None:
            raise LearnedError(
                "--repo picks a repository's history: give a folder `gharuntime learn` wrote, "
                "or --history-from DATASET",
                where=str(model_dir),
                fix="drop --repo, or add --history-from DATASET",
            )
        return PredictModels(method, meta, None, None)
    if meta.get("track") != "history":
        raise LearnedError(
            f"holds a {ascii(meta.get('track'))[:40]}-track model, which reads no history",
            where=str(model_dir),
            fix="give --history-from with a history-track model (`gharuntime learn`, or "
            "`gharuntime baseline NAME --track history --model-out DIR`)",
        )
    name = _pick_repo(
        repo,
        dataset_repos(history_from),
        str(history_from),
        "give --repo OWNER/NAME: the repository the workflow belongs to",
    )
    return PredictModels(method, meta, None, load_repo_history(history_from, name))
