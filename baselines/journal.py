"""The tuned trees' journal: their Optuna studies in one SQLite file beside the submission, so a
killed `gharuntime baseline lightgbm-tuned` run, run again, keeps the trials it finished.

Optuna's RDB storage writes each trial as it starts (RUNNING) and when it ends (COMPLETE, its
validation score): SQLite's own journal makes each write whole, so the file is the run's record
of finished work. One study per target, named by the target, carries the run's inputs
(gharuntime.resume.fit_inputs: dataset revision, method, parameters, seed, code, libraries)
and their fingerprint as user attributes. A study is kept only under the same fingerprint; one
of other inputs is deleted, never mixed in. A trial that was RUNNING when the run was killed
(and a WAITING one) is marked FAIL and never counted. The journal holds what was done; the
sampling is replayed (gharuntime.baselines.tuned), so a resumed search asks the same trials as
an uninterrupted one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Final

from gharuntime.baselines.method import MethodError
from gharuntime.folderlock import exclusive_lock
from gharuntime.progress import Progress, say
from gharuntime.resume import changed_inputs, fingerprint

__all__ = ["JOURNAL_SUFFIX", "TuningJournal", "journal_lock", "journal_path"]

JOURNAL_SUFFIX: Final = ".tuning.sqlite3"
_SQLITE_SIDE_FILES: Final = ("-journal", "-wal", "-shm")


def journal_path(out: Path) -> Path:
    """The journal of the run writing submission `out`: runs/lgb.jsonl → runs/lgb.tuning.sqlite3
    (the model folder's rule: OUT without its suffix)."""
    return out.with_name((out.stem if out.suffix else out.name) + JOURNAL_SUFFIX)


def journal_lock(path: Path) -> AbstractContextManager[None]:
    """Hold the journal `path` for one run (its lock file, `path` + `.lock`): a second run of
    the same fit would mark the first's running trials cut short and write the same studies.
    Raises gharuntime.folderlock.FolderInUse while another run holds it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return exclusive_lock(
        path.with_name(path.name + ".lock"),
        command="gharuntime baseline (tuning journal)",
        what=f"the tuning journal {path.name}",
        fix="or give another --out (the journal sits beside the submission)",
    )


class TuningJournal:
    """The studies of one fit's targets in `path`, under `inputs`; `fresh` removes the file
    first. What it kept, dropped or started is said through `progress` and kept in `notes`."""

    def __init__(
        self,
        path: Path,
        inputs: dict[str, Any],
        *,
        fresh: bool = False,
        progress: Progress | None = None,
    ) -> None:
        self.path = path
        self.inputs = inputs
        self.fingerprint = fingerprint(inputs)
        self.fresh = fresh
        self.progress = progress
        self.notes: list[str] = []
        self._storage: Any = None

    def say(self, line: str) -> None:
        """Say `line` now and keep it in `notes`."""
        self.notes.append(line)
        say(self.progress, line)

    @contextmanager
    def _written(self) -> Iterator[None]:
        """A database error (the file locked by another run, the disk full) as a MethodError."""
        import sqlalchemy.exc

        try:
            yield
        except sqlalchemy.exc.SQLAlchemyError as exc:
            first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise MethodError(
                f"{self.path}: the tuning journal could not be written ({first}); is another "
                "run using it? Run again when it is done"
            ) from None

    def _open(self) -> Any:
        if self._storage is not None:
            return self._storage
        import optuna
        import sqlalchemy.exc

        optuna.logging.set_verbosity(optuna.logging.WARNING)  # library code never prints
        if self.fresh and self.path.exists():
            for side in ("", *_SQLITE_SIDE_FILES):
                Path(f"{self.path}{side}").unlink(missing_ok=True)
            self.say(f"--fresh: removed the tuning journal {self.path}; every trial runs again")
        self.fresh = False
        if self.path.exists() and not self.path.is_file():
            raise MethodError(f"{self.path} is not a file; move it away (the tuning journal)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        url = sqlalchemy.engine.URL.create("sqlite", database=str(self.path.resolve()))
        try:
            storage = optuna.storages.RDBStorage(url.render_as_string(hide_password=False))
            studies = optuna.get_all_study_summaries(storage, include_best_trial=False)
        except (sqlalchemy.exc.SQLAlchemyError, RuntimeError, ValueError) as exc:
            first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            if "locked" in first:
                with self._written():
                    raise
            raise MethodError(
                f"{self.path}: cannot read this tuning journal ({first}); run again with "
                "--fresh to start the search over"
            ) from None
        for summary in studies:
            if summary.user_attrs.get("fingerprint") == self.fingerprint:
                continue
            recorded = summary.user_attrs.get("inputs")
            changed = changed_inputs(recorded, self.inputs) if recorded else ["not recorded"]
            with self._written():
                optuna.delete_study(study_name=summary.study_name, storage=storage)
            self.say(
                f"{summary.study_name}: the journal's study was run with other inputs "
                f"({', '.join(changed)}); not kept, a new study starts"
            )
        self._storage = storage
        return storage

    def study(self, target: str) -> Any:
        """The target's study in the journal (created with the inputs when new), its
        interrupted trials marked FAIL."""
        storage = self._open()
        with self._written():
            return self._study(storage, target)

    def _study(self, storage: Any, target: str) -> Any:
        import optuna
        from optuna.trial import TrialState

        study = optuna.create_study(
            storage=storage,
            study_name=target,
            direction="minimize",
            # every parameter of a journal trial is fixed (enqueued): the sampler draws nothing
            sampler=optuna.samplers.RandomSampler(seed=0),
            load_if_exists=True,
        )
        if study.user_attrs.get("fingerprint") != self.fingerprint:
            study.set_user_attr("inputs", self.inputs)
            study.set_user_attr("fingerprint", self.fingerprint)
        cut = [t for t in study.trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
        for trial in cut:
            # a waiting one is asked first (the oldest, now running): only a running one is told
            number = study.ask().number if trial.state == TrialState.WAITING else trial.number
            study.tell(number, state=TrialState.FAIL)
        if cut:
            self.say(f"{target}: {len(cut)} trial(s) cut short by the interruption; not counted")
        return study

    def kept(self, study: Any, budget: int) -> list[Any]:
        """The study's completed trials in the order they ran, at most `budget`."""
        from optuna.trial import TrialState

        with self._written():
            done = [t for t in study.trials if t.state == TrialState.COMPLETE]
        return sorted(done, key=lambda t: t.number)[:budget]

    def restart(self, target: str) -> Any:
        """Delete the target's study and start an empty one."""
        import optuna

        storage = self._open()
        with self._written():
            optuna.delete_study(study_name=target, storage=storage)
        return self.study(target)

    def begin(self, study: Any, params: dict[str, Any], distributions: dict[str, Any]) -> Any:
        """A trial with these parameters written as RUNNING (enqueued, then asked)."""
        with self._written():
            study.enqueue_trial(params)
            return study.ask(fixed_distributions=distributions)

    def finish(self, study: Any, trial: Any, value: float) -> None:
        """The trial written as COMPLETE with its value."""
        with self._written():
            study.tell(trial, value)

    def fail(self, study: Any, trial: Any) -> None:
        """The trial written as FAIL: it raised or was interrupted, and is never kept."""
        from optuna.trial import TrialState

        with self._written():
            study.tell(trial, state=TrialState.FAIL)
