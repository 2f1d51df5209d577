"""`gharuntime baseline laser` as a whole under `accelerate launch` with two processes (CPU, gloo).

Two processes with micro-batches of 4 train the model one process trains with two micro-batches
a step (tests/baselines/laser/test_train_ddp.py checks the weights); here the whole command must give the same
submission as that one process: the tokenizer trained once and handed over, the test jobs
decoded half by each process and gathered in order, the files written and the result reported
by the main process only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from laser_support import write_laser_dataset
from launch_support import DISTRIBUTED_ENV, launch

from gharuntime.dataset import load

JOB_YAML = """runs-on: ubuntu-latest
steps:
  - uses: actions/checkout@v4
  - run: pytest -q
"""
PARAMS = {
    "model": "tiny",
    "max_steps": 4,
    "batch_size": 4,
    "budget": 160,
    "vocab_size": 400,
    "warmup_steps": 1,
    "lr": 0.003,
    "precision": "fp32",
    "threads": 1,
}
TIMEOUT = 300


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_laser_dataset(tmp_path_factory.mktemp("launch") / "dataset", JOB_YAML, repos=8)


WORKER = Path(__file__).resolve().parents[2] / "laser_launch_worker.py"


def _launch(args: list[str], out: Path, processes: int) -> subprocess.CompletedProcess[str]:
    """`python ARGS` in `processes` processes (1: plain python, no launcher)."""
    return launch(args, out, processes, timeout=TIMEOUT)


def _baseline(
    dataset: Path, out: Path, processes: int, **params: object
) -> subprocess.CompletedProcess[str]:
    """`gharuntime baseline laser` in `processes` processes (1: plain python, no launcher)."""
    cmd = ["-m", "gharuntime.cli.main", "baseline", "laser", "--dataset", str(dataset)]
    cmd += ["--track", "config", "--out", str(out / "sub.jsonl")]
    for k, v in {**PARAMS, **params}.items():
        cmd += ["--param", f"{k}={v}"]
    return _launch(cmd, out, processes)


def _ok(run: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    return run


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_processes_share_jobs_out_and_collect_them_back_in_order(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _ok(_launch([str(WORKER), str(out)], out, 2))
    reports = [json.loads((out / f"rank-{r}.json").read_text()) for r in (0, 1)]
    assert [(r["rank"], r["count"], r["share"]) for r in reports] == [
        (0, 2, [0, 2, 4, 6]),
        (1, 2, [1, 3, 5]),
    ]
    for r in reports:  # every process holds all seven, in job order
        assert r["collected"] == [f"job-{i} by {i % 2}" for i in range(7)]
        assert r["broadcast"] == {"from": 0}


@pytest.mark.slow
def test_two_processes_write_what_one_process_with_twice_the_accumulation_writes(
    dataset: Path, tmp_path: Path
) -> None:
    greedy = {"samples": 1, "decode_batch_size": 1}  # one job per forward: no padding effects
    one = tmp_path / "one"
    _ok(_baseline(dataset, one, 1, grad_accum=2, **greedy))
    two = tmp_path / "two"
    ckpt = two / "ckpt"
    run = _ok(_baseline(dataset, two, 2, grad_accum=1, checkpoint_dir=ckpt, **greedy))
    # the main process alone reports; the other one says nothing
    assert run.stderr.count("wrote ") == 1, run.stderr[-3000:]
    test_ids = load(dataset, "temporal", "test")["id"].to_list()
    got, want = _records(two / "sub.jsonl"), _records(one / "sub.jsonl")
    assert [r["id"] for r in got] == test_ids
    assert got == want
    meta = json.loads((two / "sub.meta.json").read_text())
    assert meta["timing"]["processes"] == 2
    assert json.loads((one / "sub.meta.json").read_text())["timing"]["processes"] == 1
    assert meta["method_config"]["grad_accum"] == 1
    # the model folder, written once and complete, holds the one-process model's tokenizer
    model = json.loads((two / "sub.model" / "model.json").read_text())
    assert model["state"]["training"]["processes"] == 2
    vocab = json.loads((two / "sub.model" / "tokenizer" / "tokenizer.json").read_text())
    assert vocab == json.loads((one / "sub.model" / "tokenizer" / "tokenizer.json").read_text())
    assert (ckpt / "tokenizer").is_dir() and (ckpt / "latest.json").is_file()
    assert not [p for p in two.rglob("*") if ".tmp" in p.name]


@pytest.mark.slow
def test_two_processes_sample_every_job_once_in_order(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    _ok(_baseline(dataset, out, 2, samples=3, decode_batch_size=4, max_steps=2))
    test_ids = load(dataset, "temporal", "test")["id"].to_list()
    subs = _records(out / "sub.jsonl")
    quantiles = _records(out / "sub.quantiles.jsonl")
    assert [r["id"] for r in subs] == [r["id"] for r in quantiles] == test_ids
    for sub, q in zip(subs, quantiles, strict=True):
        assert q["duration_s_p10"] <= sub["duration_s"] <= q["duration_s_p90"]


def test_a_malformed_launch_environment_is_a_clear_error(dataset: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in DISTRIBUTED_ENV}
    env.update(LOCAL_RANK="0", RANK="x", WORLD_SIZE="2")
    run = subprocess.run(
        [sys.executable, "-m", "gharuntime.cli.main", "baseline", "laser", "--dataset",
         str(dataset), "--track", "config", "--out", str(tmp_path / "sub.jsonl")],
        env=env, capture_output=True, text=True, timeout=TIMEOUT,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr[-2000:]
    assert "RANK='x'" in run.stderr and "Traceback" not in run.stderr
    assert not (tmp_path / "sub.jsonl").exists()
