"""Shared fixtures: a small dataset folder written through the contract."""

from __future__ import annotations

import os
import sys
from datetime import datetime, timedelta
from pathlib import Path

# `python -m pytest` at the checkout's root puts the root first on sys.path, and there
# gharuntime/ lacks the packages setup.py maps into it (crawler/ -> gharuntime.crawler, ...).
# Drop that entry so the installed (editable) gharuntime, which has them all, is imported.
_ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _ROOT]

import polars as pl  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# Hypothesis profiles. `default` is derandomized: the same cases on every run, so CI is
# reproducible and a red run is a real regression. `explore` (random, 200 cases a test) and `deep`
# (random, 2000) search new inputs: `pytest --hypothesis-profile=explore` before a release, and
# turn each case they find into a fixed test.
_COMMON = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}
settings.register_profile("default", max_examples=20, derandomize=True, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("explore", max_examples=200, derandomize=False, **_COMMON)  # type: ignore[arg-type]
settings.register_profile("deep", max_examples=2000, derandomize=False, **_COMMON)  # type: ignore[arg-type]
settings.load_profile("default")

# huggingface_hub reads this once, at import: the Hub tests' servers speak LFS, not Xet.
os.environ.setdefault("HF_HUB_DISABLE_XET", "1")

pytest_plugins = ["crawler_support", "leaderboard_support"]  # simulated GitHub; scored results

from gharuntime.dataset import write_dataset  # noqa: E402
from gharuntime.fixture import fixture_jobs  # noqa: E402

# GHARUNTIME_SHARED points at the reference folder when the checkout does not sit beside it
# (e.g. a git worktree elsewhere).
SHARED = Path(
    os.environ.get("GHARUNTIME_SHARED") or Path(__file__).resolve().parents[1].parent / "shared"
)


@pytest.fixture(scope="session")
def fixture_dataset_master(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("datasets") / "fixture"
    write_dataset(fixture_jobs(), out, provenance={"kind": "fixture", "seed": 0})
    return out


@pytest.fixture(scope="session")
def no_logs_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture dataset built without logs: no row has log_bytes (as the real Apache one)."""
    import polars as pl

    out = tmp_path_factory.mktemp("datasets") / "no-logs"
    jobs = fixture_jobs().with_columns(pl.lit(None, dtype=pl.Int64).alias("log_bytes"))
    write_dataset(jobs, out, provenance={"kind": "fixture", "seed": 0})
    return out


@pytest.fixture(scope="session")
def shifted_waits_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture jobs (without logs, as the real Apache dataset), those of the temporal test
    split waiting a hundredth as long: the test split holds far shorter waits than validation,
    durations as they were."""
    import polars as pl

    from gharuntime.splits import assign_temporal

    jobs = fixture_jobs().with_columns(pl.lit(None, dtype=pl.Int64).alias("log_bytes"))
    test = assign_temporal(jobs) == "test"
    jobs = jobs.with_columns(
        pl.when(test).then(pl.col("queue_s") / 100).otherwise(pl.col("queue_s")).alias("queue_s")
    )
    out = tmp_path_factory.mktemp("shift") / "shifted"
    write_dataset(jobs, out, provenance={"kind": "fixture", "seed": 0})
    return out


@pytest.fixture(scope="session")
def lightgbm_model(fixture_dataset_master: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A LightGBM model (config track) trained on the fixture dataset, for predict's tests."""
    from gharuntime.baselines.run import run_baseline

    folder = tmp_path_factory.mktemp("models")
    run_baseline(
        "lightgbm",
        fixture_dataset_master,
        config="temporal",
        track="config",
        out=folder / "lgb.jsonl",
        model_dir=folder / "lgb",
        params={"n_estimators": 80, "early_stopping_rounds": 10, "learning_rate": 0.2},
    )
    return folder / "lgb"


@pytest.fixture()
def fixture_dataset(fixture_dataset_master: Path, tmp_path: Path) -> Path:
    """A private copy of the fixture dataset that a test may break."""
    import shutil

    dst = tmp_path / "dataset"
    shutil.copytree(fixture_dataset_master, dst)
    return dst


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference data folder {SHARED} is absent (it sits beside the project in CI)")
    return SHARED


REAL_DATASET_ENV = "GHARUNTIME_REAL_DATASET"


@pytest.fixture(scope="session")
def real_dataset() -> Path:
    """The real dataset folder $GHARUNTIME_REAL_DATASET names (gharuntime-real-apache, built by
    benchmarks/real_apache.py); the test is skipped, saying why, when it names none."""
    named = os.environ.get(REAL_DATASET_ENV)
    if not named:
        pytest.skip(f"{REAL_DATASET_ENV} is not set: it names the real dataset folder")
    if not (Path(named) / "manifest.json").is_file():
        pytest.skip(f"{REAL_DATASET_ENV}={named} is not a dataset folder (no manifest.json)")
    return Path(named)


@pytest.fixture(scope="session")
def sim_world():  # type: ignore[no-untyped-def]
    """A tiny seeded simulated world (12 repositories)."""
    from gharuntime.sim import World

    return World(seed=7, scale="tiny")


@pytest.fixture(scope="session")
def sim_server(sim_world):  # type: ignore[no-untyped-def]
    """The simulated GitHub serving `sim_world` on a free 127.0.0.1 port; `.url`, `.recorder`."""
    from gharuntime.sim import serve

    with serve(sim_world) as server:
        yield server


# A repository whose `basic` job runs a matrix given by an expression: the build records its
# jobs under job key `basic` with no matrix values, each under the name GitHub gave it.
MATRIX_REPO = "fixture-org/repo-1"
MATRIX_RUNS_AT = [f"2026-01-{d:02d}T00:00:00+00:00" for d in range(2, 9)]  # 7 runs, a day apart
MATRIX_JOBS = {  # name -> duration in each run (run k: base + k); "old" only in the first two
    "basic (unit)": 1000.0,
    "basic (lint)": 20.0,
    "basic (old)": 500.0,
}


def matrix_durations(name: str) -> list[tuple[str, float]]:
    """(created_at, duration) of each run of that `basic` job, oldest first."""
    runs = MATRIX_RUNS_AT[:2] if name == "basic (old)" else MATRIX_RUNS_AT
    return [(at, MATRIX_JOBS[name] + k) for k, at in enumerate(runs)]


def repo_job_rows(
    jobs: pl.DataFrame,
    repo: str,
    runs: list[tuple[str, str, str | None, datetime, float, int]],
    first_id: int,
) -> pl.DataFrame:
    """Successful jobs of `repo` with `jobs`' schema, its first row's other values: one per
    (job name, job key, matrix JSON, created = started, duration, run number k) in `runs`;
    run k's id is the repository's id * 1000 + k, job ids count up from `first_id`."""
    template = jobs.filter(pl.col("repo") == repo).row(0, named=True)
    rows = []
    for name, key, matrix, created, duration, k in runs:
        job_id = first_id + len(rows)
        rows.append(
            {
                **template,
                "id": str(job_id),
                "job_id": job_id,
                "run_id": template["repo_id"] * 1000 + k,
                "job_name": name,
                "job_key": key,
                "matrix": matrix,
                "runner_labels": ["ubuntu-latest"],
                "runner_os": "Linux",
                "created_at": created,
                "started_at": created,
                "completed_at": created + timedelta(seconds=duration),
                "duration_s": duration,
                "queue_s": 0.0,
                "log_bytes": 1000,
            }
        )
    return pl.DataFrame(rows, schema=jobs.schema)


def _matrix_rows(jobs: pl.DataFrame) -> pl.DataFrame:
    runs = [
        (name, "basic", None, datetime.fromisoformat(at), duration, 100 + k)
        for name in MATRIX_JOBS
        for k, (at, duration) in enumerate(matrix_durations(name))
    ]
    return repo_job_rows(jobs, MATRIX_REPO, runs, 9_000_000)


@pytest.fixture(scope="session")
def matrix_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture dataset plus MATRIX_REPO's `basic` jobs (see MATRIX_JOBS)."""
    from gharuntime.history import history_durations

    jobs = fixture_jobs()
    jobs = pl.concat([jobs, _matrix_rows(jobs)]).drop("history_duration_s")
    jobs = jobs.with_columns(history_durations(jobs))
    out = tmp_path_factory.mktemp("datasets") / "matrix"
    write_dataset(jobs, out, provenance={"kind": "fixture", "seed": 0})
    return out


@pytest.fixture(scope="session")
def learned_from_dataset(matrix_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`gharuntime learn --from-dataset` of matrix_dataset: a learned folder, both tracks."""
    from click.testing import CliRunner

    from gharuntime.cli.main import cli

    out = tmp_path_factory.mktemp("learned") / "fixture"
    args = ["learn", "--from-dataset", str(matrix_dataset), "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return out
