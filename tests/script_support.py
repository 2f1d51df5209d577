"""Loading a `benchmarks/` script as a module, and the small dataset LASER's script tests run on:
the fixture jobs with each job's own YAML block (LASER reads it)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import polars as pl

from gharuntime.dataset import write_dataset
from gharuntime.fixture import fixture_jobs

__all__ = ["load_script", "write_yaml_dataset"]

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_script(name: str) -> ModuleType:
    """benchmarks/NAME.py as a module (registered in sys.modules: its dataclasses look it up),
    with benchmarks/ on the path for its `_common`, as when it runs as a script."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"{name}_script", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def write_yaml_dataset(out: Path) -> Path:
    """The fixture job table (10 repositories, 3 runs each) with a job YAML block, at `out`."""
    yaml = "runs-on: ubuntu-latest\nsteps:\n  - run: pytest -q\n"
    jobs = fixture_jobs(repos=10, runs_per_repo=3).with_columns(pl.lit(yaml).alias("job_yaml"))
    write_dataset(jobs, out, provenance={"kind": "fixture", "seed": 0})
    return out
