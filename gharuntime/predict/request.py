"""`gharuntime predict` as one typed request and one call: `run_predict(PredictRequest(...))`
reads the repository's metadata, the prices, the workflow and the model, predicts each job and
prices it, and with a base (a file or a git revision) reviews the change. The command line
only turns its options into the request and renders the outcome; a caller from Python gets
the same."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from gharuntime.billing import (
    JobTime,
    PriceTable,
    WorkflowCost,
    default_prices,
    load_prices,
    price_jobs,
)
from gharuntime.errors import GharuntimeError
from gharuntime.predict.checkout import (
    CheckoutError,
    GitSide,
    Identity,
    Side,
    TreeSide,
    callers_of,
    identify,
    is_called,
    open_revision,
    runs_itself,
)
from gharuntime.predict.history_jobs import HistoryAlias, JobUnit
from gharuntime.predict.learned import PredictModels, open_predict_models
from gharuntime.predict.moves import move_aliases
from gharuntime.predict.review import ChangeReview, WorkflowReview, review_workflows
from gharuntime.predict.workflow import (
    RepoMeta,
    WorkflowPrediction,
    predict_workflow,
    repo_meta_from_json,
)
from gharuntime.readfile import InputFileError, read_json, read_text
from gharuntime.sources.gitstore import GitRepo
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
    path: str | None = None  # the workflow's identity; None: its place in its repository
    callers: bool = True  # a reusable workflow reviewed through the workflows calling it
    threshold: float = 1.0  # a Δ is beyond the noise over threshold × its half-width


@dataclass(frozen=True)
class PredictOutcome:
    """The workflow's prediction and its cost, the models that made it, and, when a base was
    given, the review of the change (`result` and `cost` are its new side)."""

    result: WorkflowPrediction
    cost: WorkflowCost
    models: PredictModels
    review: ChangeReview | None = None
    identity: Identity | None = None
    visibility_from: str = "assumed"
    callers: tuple[str, ...] = ()  # a reusable workflow: the workflows its runs are recorded under


def _read_workflow(path: Path) -> str:
    """The workflow file's text, refused (PredictError) when it is not a readable YAML file."""
    try:
        return read_text(path, MAX_YAML_BYTES)
    except InputFileError as exc:
        raise PredictError(f"{exc}; give the workflow's YAML file") from exc


def _visibility(data: dict[str, Any]) -> bool | None:
    """Public (True) or not from GitHub's repository object: `visibility` (public, private,
    internal), else `private`; None when it says neither."""
    seen = data.get("visibility")
    if isinstance(seen, str) and seen.lower() in ("public", "private", "internal"):
        return seen.lower() == "public"
    if isinstance(data.get("private"), bool):
        return not data["private"]
    return None


def _given_meta(
    request: PredictRequest,
) -> tuple[list[dict[str, Any]], RepoMeta, bool | None, str]:
    """What the user said of the repository, in order (the --repo-meta file, then the options),
    the metadata it makes, the visibility (--public/--private, else the file's `visibility` or
    `private`) and where that came from."""
    meta = RepoMeta(event=request.event, default_branch=request.default_branch)
    given: list[dict[str, Any]] = []
    public = request.public
    source = "--public" if public else "--private" if public is False else "assumed"
    path = request.repo_meta
    if path is not None:
        try:
            data: Any = read_json(path, 2**20)
            if not isinstance(data, dict):
                raise ValueError("the top level must be a JSON object")
            meta = repo_meta_from_json(data, meta)
            given.append(data)
            if public is None and _visibility(data) is not None:
                public = _visibility(data)
                source = "--repo-meta"
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
    return given, repo_meta_from_json(given[-1], meta), public, source


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


class _Run(Protocol):
    """Predict and price one side's workflow text at its identity `path`."""

    def __call__(
        self,
        source: str,
        path: str,
        side: Side,
        aliases: dict[JobUnit, HistoryAlias] | None = None,
    ) -> tuple[WorkflowPrediction, WorkflowCost]: ...


def _empty(path: str, model_info: dict[str, Any]) -> WorkflowPrediction:
    return WorkflowPrediction(path, [], 0.0, 0.0, model_info)


def run_predict(request: PredictRequest) -> PredictOutcome:
    """Predict and price `request.workflow` (and its base, reviewed). Raises PredictError, or
    the CheckoutError, PriceError, LearnedError, HistoryError or MethodError of a file it
    names."""
    given, meta, public, visibility_from = _given_meta(request)
    # a PriceError or MethodError is raised as it is: its message names the file and the fix
    prices: PriceTable = (
        load_prices(request.prices_file) if request.prices_file is not None else default_prices()
    )
    if request.base is not None and request.base_ref is not None:
        raise PredictError("give --base FILE or --base-ref REV, not both")
    reviewing = request.base is not None or request.base_ref is not None
    workflow = request.workflow
    text = _read_workflow(workflow)
    models = open_predict_models(
        request.model_dir, history_from=request.history_from, repo=request.repo
    )
    identity = identify(workflow, request.path, required=reviewing or models.history is not None)
    if models.history is not None:  # the repository's own metadata, under what the user gave
        meta = repo_meta_from_json(
            models.history.meta,
            RepoMeta(event=request.event, default_branch=request.default_branch),
        )
        for values in given:
            meta = repo_meta_from_json(values, meta)
    if public is None and models.visibility is not None:
        public, visibility_from = models.visibility
    model_info = _model_info(request, models)
    when = request.at.replace(tzinfo=timezone.utc) if request.at else None

    def run(
        source: str,
        path: str,
        side: Side,
        aliases: dict[JobUnit, HistoryAlias] | None = None,
    ) -> tuple[WorkflowPrediction, WorkflowCost]:
        try:
            predicted = predict_workflow(
                source,
                models.method,
                path=path,
                meta=meta,
                at=when,
                model_info=model_info,
                history=models.history,
                fallback=models.fallback,
                history_path=path,
                resolve_reusable=side.resolver(),
                aliases=aliases,
            )
        except WorkflowError as exc:
            line = f":{exc.line}" if exc.line else ""
            raise PredictError(
                f"{side.where(path)}{line}: {exc.message}\n  fix the YAML at that line; a "
                "workflow is a mapping with `on:` and `jobs:`"
            ) from exc
        return predicted, price_jobs(_job_times(predicted), prices, public=bool(public))

    new_side = TreeSide(
        "working tree", {identity.path: text}, {identity.path: str(workflow)}, root=identity.root
    )
    result, cost = run(text, identity.path, new_side)
    if not reviewing:
        called = is_called(new_side.workflow(identity.path))
        return PredictOutcome(
            result,
            cost,
            models,
            identity=identity,
            visibility_from=visibility_from,
            callers=tuple(callers_of([new_side], identity.path)) if called else (),
        )
    repo: GitRepo | None = None
    try:
        if request.base_ref is not None:
            if not identity.git or identity.root is None:
                raise CheckoutError(
                    "not inside a git repository, so --base-ref cannot read its base",
                    where=str(workflow),
                    fix="run it on the file in the repository's checkout, or give the old file "
                    "with --base FILE",
                )
            repo, commit = open_revision(identity.root, request.base_ref)
            base_side: Side = GitSide(request.base_ref, repo=repo, commit=commit)
            base: dict[str, Any] = {"ref": request.base_ref, "commit": commit, "file": None}
        else:
            assert request.base is not None
            base_text = _read_workflow(request.base)
            own = identify(request.base, None)
            root = own.root if own.root is not None else identity.root
            base_side = TreeSide(
                "base file",
                {identity.path: base_text},
                {identity.path: str(request.base)},
                root=root,
            )
            base = {"ref": None, "commit": None, "file": Path(request.base).resolve().name}
        review = _review(request, identity, new_side, base_side, base, run, models, when)
    finally:
        if repo is not None:
            repo.close()
    billing = {"repository": "public" if public else "private", "visibility_from": visibility_from}
    for shown in review.reviews:  # the file's own review: its new side, moved jobs' history kept
        if shown.new_there and shown.new.path == identity.path:
            result, cost = shown.new, shown.new_cost
    return PredictOutcome(
        result,
        cost,
        models,
        replace(review, billing=billing),
        identity=identity,
        visibility_from=visibility_from,
    )


def _review(
    request: PredictRequest,
    identity: Identity,
    new_side: Side,
    base_side: Side,
    base: dict[str, Any],
    run: _Run,
    models: PredictModels,
    when: datetime | None,
) -> ChangeReview:
    """The change reviewed on the workflows that show it: the file itself, or (a reusable
    workflow, unless request.callers is off) every workflow of the repository calling it."""
    target = identity.path
    mine = (new_side.workflow(target), base_side.workflow(target))
    shown, callers, targets = "itself", [], [target]
    if is_called(*mine):
        if not request.callers:
            shown = "--no-callers"
        else:
            callers = callers_of([new_side, base_side], target)
            shown = "callers" if callers else "no caller"
            if callers:
                targets = ([target] if runs_itself(*mine) else []) + callers
    reviews: list[WorkflowReview] = []
    for path in targets:
        new_text = new_side.read(path, strict=True)
        old_text = base_side.read(path, strict=True)
        sides = [
            run(text, path, side) if text is not None else None
            for text, side in ((old_text, base_side), (new_text, new_side))
        ]
        some = next((s for s in sides if s is not None), None)
        if some is None:
            continue
        nothing = (
            _empty(path, some[0].model),
            price_jobs([], some[1].prices, public=some[1].public),
        )
        (old, old_cost), (new, new_cost) = (s if s is not None else nothing for s in sides)
        aliases = move_aliases(old.jobs, new.jobs)
        if aliases and new_text is not None:  # a moved job keeps its history (its old name's
            # under this workflow's identity): the new side again, with the old names
            new, new_cost = run(new_text, path, new_side, aliases)
        noise = None
        if models.history is not None:
            noise = models.history.run_spread(
                path, when or datetime.now(timezone.utc), request.event
            )
        reviews.append(
            review_workflows(
                old,
                old_cost,
                new,
                new_cost,
                noise=noise,
                threshold=request.threshold,
                base_there=old_text is not None,
                new_there=new_text is not None,
            )
        )
    return ChangeReview(
        target, identity.source, base, shown, callers, reviews, threshold=request.threshold
    )
