"""`gharuntime predict` as one typed request and one call: `run_predict(PredictRequest(...))`
reads the repository's metadata, the prices, the workflow and the model, predicts each job and
prices it, and with a base (a file or a git revision) reviews the change. The command line
only turns its options into the request and renders the outcome; a caller from Python gets
the same."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gharuntime.billing import (
    JobTime,
    PriceTable,
    WorkflowCost,
    default_prices,
    load_prices,
    price_jobs,
)
from gharuntime.errors import GharuntimeError
from gharuntime.predict.history_jobs import HistoryAlias, JobUnit
from gharuntime.predict.learned import PredictModels, open_predict_models
from gharuntime.predict.moves import move_aliases
from gharuntime.predict.review import WorkflowReview, read_at_revision, review_workflows
from gharuntime.predict.workflow import (
    RepoMeta,
    WorkflowPrediction,
    predict_workflow,
    repo_meta_from_json,
    repo_workflow_path,
)
from gharuntime.readfile import InputFileError, read_json, read_text
from gharuntime.workflow import MAX_YAML_BYTES, WorkflowError

__all__ = ["PredictError", "PredictOutcome", "PredictRequest", "run_predict"]


class PredictError(GharuntimeError):
    """An input `predict` cannot use (repository metadata, the workflow file, a base given
    twice); the message names the file and what to give instead."""


@dataclass(frozen=True)
class PredictRequest:
    """Predict `workflow` with the model folder `model_dir`. `history_from` and `repo` choose
    the repository's own history (a learned model's by default); `repo_meta` (a JSON file) and
    `language`, `stars`, `size_kb` (which win) describe the repository; `public` None: the
    metadata's `private`, else private. `base` (a file) or `base_ref` (a git revision of
    `workflow`), not both: review the change from it."""

    workflow: Path
    model_dir: Path
    history_from: Path | None = None
    repo: str | None = None
    repo_meta: Path | None = None
    language: str | None = None
    stars: int | None = None
    size_kb: int | None = None
    event: str = "push"
    default_branch: bool = True
    at: datetime | None = None  # when the run is queued, UTC; None: now
    prices_file: Path | None = None  # None: GitHub's published rates
    public: bool | None = None
    base: Path | None = None
    base_ref: str | None = None


@dataclass(frozen=True)
class PredictOutcome:
    """The workflow's prediction and its cost, the models that made it, and, when a base was
    given, the review of the change (`result` and `cost` are its new side)."""

    result: WorkflowPrediction
    cost: WorkflowCost
    models: PredictModels
    review: WorkflowReview | None = None


def _read_workflow(path: Path) -> str:
    """The workflow file's text, refused (PredictError) when it is not a readable YAML file."""
    try:
        return read_text(path, MAX_YAML_BYTES)
    except InputFileError as exc:
        raise PredictError(f"{exc}; give the workflow's YAML file") from exc


def _given_meta(request: PredictRequest) -> tuple[list[dict[str, Any]], RepoMeta, bool | None]:
    """What the user said of the repository, in order (the --repo-meta file, then the options),
    the metadata it makes, and the visibility: --public/--private, else the file's `private`."""
    meta = RepoMeta(event=request.event, default_branch=request.default_branch)
    given: list[dict[str, Any]] = []
    public = request.public
    path = request.repo_meta
    if path is not None:
        try:
            data: Any = read_json(path, 2**20)
            if not isinstance(data, dict):
                raise ValueError("the top level must be a JSON object")
            meta = repo_meta_from_json(data, meta)
            given.append(data)
            if public is None and isinstance(data.get("private"), bool):
                public = not data["private"]
        except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
            raise PredictError(f"{path}: not usable repository metadata: {exc}") from exc
        except RecursionError:
            raise PredictError(
                f"{path}: not usable repository metadata: nested too deeply"
            ) from None
    given.append(
        {
            "repo_language": request.language,
            "repo_stars": request.stars,
            "repo_size_kb": request.size_kb,
        }
    )
    return given, repo_meta_from_json(given[-1], meta), public


def _job_times(result: WorkflowPrediction) -> list[JobTime]:
    """What billing sees of each job: its runner labels, predicted run time and, where the
    model gives one, its P10–P90 (the billed ranges)."""
    return [
        JobTime(
            j.runner_labels,
            j.predicted.get("duration_s", 0.0),
            j.quantiles.get("p10"),
            j.quantiles.get("p90"),
        )
        for j in result.jobs
    ]


def _model_info(request: PredictRequest, models: PredictModels) -> dict[str, Any]:
    """The model as the output names it: method, track, dataset id, folder (and fallback)."""
    model_meta = models.meta
    dataset = model_meta.get("dataset") or {}
    info: dict[str, Any] = {
        "method": model_meta["method"],
        "track": model_meta["track"],
        "dataset": dataset.get("id") if isinstance(dataset, dict) else None,
        "folder": str(request.model_dir),
    }
    if models.fallback is not None:
        info["fallback"] = models.fallback.track
    return info


def run_predict(request: PredictRequest) -> PredictOutcome:
    """Predict and price `request.workflow` (and its base, reviewed). Raises PredictError, or
    the PriceError, LearnedError, HistoryError or MethodError of a file it names."""
    given, meta, public = _given_meta(request)
    # a PriceError or MethodError is raised as it is: its message names the file and the fix
    prices: PriceTable = (
        load_prices(request.prices_file) if request.prices_file is not None else default_prices()
    )
    if request.base is not None and request.base_ref is not None:
        raise PredictError("give --base FILE or --base-ref REV, not both")
    workflow = request.workflow
    text = _read_workflow(workflow)
    models = open_predict_models(
        request.model_dir, history_from=request.history_from, repo=request.repo
    )
    if models.history is not None:  # the repository's own metadata, under what the user gave
        meta = repo_meta_from_json(
            models.history.meta,
            RepoMeta(event=request.event, default_branch=request.default_branch),
        )
        for values in given:
            meta = repo_meta_from_json(values, meta)
    model_info = _model_info(request, models)
    when = request.at.replace(tzinfo=timezone.utc) if request.at else None

    def run(
        source: str,
        path: str,
        local: Path | None,
        aliases: dict[JobUnit, HistoryAlias] | None = None,
    ) -> tuple[WorkflowPrediction, WorkflowCost]:
        try:
            predicted = predict_workflow(
                source,
                models.method,
                path=path,
                meta=meta,
                at=when,
                local_file=local,
                model_info=model_info,
                history=models.history,
                fallback=models.fallback,
                history_path=repo_workflow_path(workflow, str(workflow)),
                aliases=aliases,
            )
        except WorkflowError as exc:
            raise PredictError(
                f"{path}: {exc}\n  fix the YAML at that line; a workflow is a mapping with `on:` "
                "and `jobs:`"
            ) from exc
        return predicted, price_jobs(_job_times(predicted), prices, public=bool(public))

    result, cost = run(text, str(workflow), workflow)
    if request.base is None and request.base_ref is None:
        return PredictOutcome(result, cost, models)
    if request.base is not None:
        old_text: str | None = _read_workflow(request.base)
        old_path = str(request.base)
    else:
        assert request.base_ref is not None
        old_text = read_at_revision(workflow, request.base_ref, MAX_YAML_BYTES)
        old_path = f"{workflow} at {request.base_ref}"
    if old_text is None:  # a new workflow: no job before, every job added
        old = WorkflowPrediction(f"{old_path} (not there)", [], 0.0, 0.0, model_info)
        old_cost = price_jobs([], prices, public=bool(public))
    else:
        old, old_cost = run(
            old_text, old_path, request.base if request.base is not None else workflow
        )
        aliases = move_aliases(old.jobs, result.jobs)
        if aliases:  # a moved job keeps its history: the new side again, with the old names'
            result, cost = run(text, str(workflow), workflow, aliases)
    return PredictOutcome(result, cost, models, review_workflows(old, old_cost, result, cost))
