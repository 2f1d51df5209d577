"""What `gharuntime baseline` is asked, as one typed request, and the one call that answers it.

The rules that were the command's own live here: where the model folder goes when none is
given, which outputs may not be written (into the dataset, over its manifest, a method's
folder parameter inside the model folder, which is replaced whole), and the order of the work
(every parameter checked before the dataset is opened or downloaded)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gharuntime.baselines.journal import journal_path
from gharuntime.baselines.method import Resumable
from gharuntime.baselines.methods import METHODS, make_method
from gharuntime.baselines.run import BaselineRun, run_baseline
from gharuntime.dataset import open_dataset
from gharuntime.eval.submission_files import SubmissionFiles
from gharuntime.paths import is_within, output_file_problem
from gharuntime.progress import Progress

__all__ = ["BaselineRequest", "run_request"]


@dataclass(frozen=True)
class BaselineRequest:
    """Fit method `name` on `dataset` (a folder or a Hub id) and write its submission to
    `out`, the model to `model_out` (default: `model_dir`); a resumable method's journal to
    `journal` (`fresh`: started over)."""

    name: str
    dataset: str
    out: Path
    config: str = "temporal"
    track: str = "config"
    split: str = "test"
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)
    model_out: Path | None = None
    fresh: bool = False

    @property
    def journal(self) -> Path | None:
        """Where a resumable method (the tuned trees) keeps its finished trials: OUT without its
        suffix plus `.tuning.sqlite3` (runs/a.jsonl → runs/a.tuning.sqlite3); None for others."""
        cls = METHODS.get(self.name)
        if cls is None or not issubclass(cls, Resumable):
            return None
        return journal_path(self.out)

    @property
    def model_dir(self) -> Path:
        """`model_out`, else OUT without its suffix plus `.model` (runs/a.jsonl → runs/a.model)."""
        if self.model_out is not None:
            return self.model_out
        out = self.out
        return out.with_name((out.stem if out.suffix else out.name) + ".model")

    def output_problems(self) -> list[tuple[str, str]]:
        """(option, why) for each output that may not be written, empty when all may: the
        submission or its metadata over the dataset's manifest; a model folder that overlaps
        the dataset folder or is not a folder; a folder parameter (`*_dir`, e.g. LASER's
        checkpoint_dir) that overlaps the dataset folder or lies in the model folder. A Hub id
        names no local path, so these checks pass it."""
        given = Path(self.dataset)
        is_dataset = (given / "manifest.json").is_file()
        model_dir = self.model_dir
        out: list[tuple[str, str]] = []
        files = SubmissionFiles(self.out)
        for path in (files.predictions, files.meta, self.journal):
            if path is None:
                continue
            problem = output_file_problem(path, [given / "manifest.json"])
            if problem:
                out.append(("--out", problem))
        if is_within(given, model_dir) or (is_dataset and is_within(model_dir, given)):
            out.append(
                (
                    "--model-out",
                    f"{model_dir} overlaps the dataset folder {self.dataset}; put the model "
                    "elsewhere",
                )
            )
        try:
            not_folder = model_dir.exists() and not model_dir.is_dir()
        except OSError as exc:  # a name too long for the file system, a path through a file
            out.append(
                (
                    "--model-out",
                    f"{model_dir}: {exc.strerror or exc}; give a shorter --out, or --model-out",
                )
            )
        else:
            if not_folder:
                out.append(("--model-out", f"{model_dir} is not a folder"))
        for key, value in self.params.items():
            if not key.endswith("_dir") or not isinstance(value, str) or not value:
                continue
            folder = Path(value)
            if is_dataset and (is_within(folder, given) or is_within(given, folder)):
                out.append(
                    (
                        "--param",
                        f"{key}={value} overlaps the dataset folder {given}; write it elsewhere",
                    )
                )
            elif is_within(folder, model_dir):
                out.append(
                    (
                        "--param",
                        f"{key}={value} is inside the model folder {model_dir}, which is "
                        "replaced when the model is written; write it elsewhere",
                    )
                )
        return out


def run_request(request: BaselineRequest, progress: Progress | None = None) -> BaselineRun:
    """Check every parameter (MethodError, ForbiddenInputError) before the dataset is opened
    or downloaded, then fit, predict and write (`run_baseline`). The caller has refused what
    `request.output_problems()` names."""
    params = dict(request.params)
    make_method(request.name, request.track, seed=request.seed, params=params or None)
    root = open_dataset(request.dataset).root
    return run_baseline(
        request.name,
        root,
        config=request.config,
        track=request.track,
        out=request.out,
        model_dir=request.model_dir,
        split=request.split,
        seed=request.seed,
        params=params,
        progress=progress,
        journal=request.journal,
        fresh=request.fresh,
    )
