"""LASER's training loop under `accelerate launch` with two processes, on CPU (gloo).

Each launch runs tests/laser_ddp_worker.py in every process. Two processes with micro-batches of
4 must train the same model as one process that accumulates two micro-batches a step: the same
examples per optimizer step, the loss divided by the whole step's target-token count. Only the
main process reports progress and writes the checkpoint's shared files; a killed two-process
training resumes to the weights of an uninterrupted one, also under one process with twice the
accumulation; a process launched as one of several that accelerate runs alone is refused.

The processes run on CPU over gloo (tests/launch_support.py says how they are launched).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from launch_support import launch  # noqa: E402

from gharuntime.baselines.laser.train import TrainConfig, train  # noqa: E402
from gharuntime.baselines.method import MethodError  # noqa: E402

WORKER = Path(__file__).resolve().parents[2] / "laser_ddp_worker.py"
# the 2-process runs; the 1-process reference has grad_accum=2
BASE: dict[str, Any] = {
    "max_steps": 8,
    "batch_size": 4,
    "grad_accum": 1,
    "lr": 3e-3,
    "warmup_steps": 2,
    "precision": "fp32",
    "checkpoint_every": 3,
}
TIMEOUT = 240


def _launch(
    out: Path, config: dict[str, Any], processes: int = 2, *, use_cpu: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run the worker in `processes` processes (1: plain python, no launcher) writing to `out`."""
    args = [str(WORKER), str(out), json.dumps(config)]
    return launch(args, out, processes, timeout=TIMEOUT, use_cpu=use_cpu)


def _ok(out: Path, config: dict[str, Any], processes: int = 2) -> Path:
    run = _launch(out, config, processes)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-6000:]
    return out


def _reports(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("rank-*.json"))]


def _weights(out: Path, rank: int = 0) -> dict[str, Any]:
    return dict(torch.load(out / f"rank-{rank}.pt"))


def _assert_close(a: dict[str, Any], b: dict[str, Any], atol: float) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.allclose(a[k], b[k], atol=atol, rtol=0), (k, float((a[k] - b[k]).abs().max()))


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted two-process training, checkpointed every 3 steps."""
    out = tmp_path_factory.mktemp("whole")
    return _ok(out / "run", {**BASE, "checkpoint_dir": str(out / "run" / "ckpt")})


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkpoint folder of the same training stopped after step 4 (its last checkpoint:
    step 3), as a kill would."""
    out = tmp_path_factory.mktemp("killed") / "run"
    ckpt = out / "ckpt"
    _ok(out, {**BASE, "checkpoint_dir": str(ckpt), "stop_after": 4})
    reports = _reports(out)
    assert [(r["steps"], r["stopped_early"]) for r in reports] == [(4, True)] * 2
    assert sorted(p.name for p in ckpt.iterdir()) == ["latest.json", "step-3"]
    return ckpt


@pytest.mark.slow
def test_two_processes_train_what_one_process_with_twice_the_accumulation_trains(
    whole: Path, tmp_path: Path
) -> None:
    reports = _reports(whole)
    assert [(r["rank"], r["processes"]) for r in reports] == [(0, 2), (1, 2)]
    assert reports[0]["examples"] == reports[1]["examples"]
    # progress from the main process only; every process reports the whole step's loss
    assert reports[0]["said"] == [f"step 8/8: target loss {reports[0]['losses'][-1]:.4f}"]
    assert reports[1]["said"] == []
    assert reports[0]["losses"] == reports[1]["losses"] and len(reports[0]["losses"]) == 8
    assert reports[0]["losses"][-1] < 0.6 * reports[0]["losses"][0]
    assert not reports[0]["training"] and not reports[1]["training"]
    # DDP kept the two copies of the model equal
    w0, w1 = _weights(whole, 0), _weights(whole, 1)
    assert all(torch.equal(w0[k], w1[k]) for k in w0)
    # one checkpoint, complete, written once: model and optimizer by the main process, each
    # process its own random state; no temporary folder left
    ckpt = whole / "ckpt"
    assert sorted(p.name for p in ckpt.iterdir()) == ["latest.json", "step-8"]
    assert json.loads((ckpt / "latest.json").read_text())["step"] == 8
    assert sorted(p.name for p in (ckpt / "step-8").iterdir()) == [
        "model.safetensors", "optimizer.bin", "random_states_0.pkl", "random_states_1.pkl",
    ]  # fmt: skip

    single = _ok(tmp_path / "single", {**BASE, "grad_accum": 2}, processes=1)
    (one,) = _reports(single)
    assert one["processes"] == 1 and one["examples"] == reports[0]["examples"]
    assert one["losses"] == pytest.approx(reports[0]["losses"], rel=1e-5)
    for key in ("tokens", "target_tokens"):
        assert one["summary"][key] == reports[0]["summary"][key]
    _assert_close(_weights(single), w0, atol=1e-6)


@pytest.mark.slow
def test_a_killed_two_process_training_resumes_to_the_same_weights(
    whole: Path, killed: Path, tmp_path: Path
) -> None:
    ckpt = tmp_path / "ckpt"
    shutil.copytree(killed, ckpt)
    out = _ok(tmp_path / "resumed", {**BASE, "checkpoint_dir": str(ckpt)})
    reports = _reports(out)
    assert [(r["resumed_from"], r["steps"], len(r["losses"])) for r in reports] == [(3, 8, 5)] * 2
    assert reports[0]["said"][0] == "resuming from the checkpoint at step 3"
    assert reports[1]["said"] == []
    assert reports[0]["losses"] == pytest.approx(_reports(whole)[0]["losses"][3:], rel=1e-5)
    _assert_close(_weights(out), _weights(whole), atol=1e-6)
    assert sorted(p.name for p in ckpt.iterdir()) == ["latest.json", "step-8"]


@pytest.mark.slow
def test_a_two_process_checkpoint_resumes_in_one_process_with_twice_the_accumulation(
    whole: Path, killed: Path, tmp_path: Path
) -> None:
    from laser_ddp_worker import setup

    ckpt = tmp_path / "ckpt"
    shutil.copytree(killed, ckpt)
    tokenizer, examples, model = setup()
    config = {**BASE, "checkpoint_dir": str(ckpt), "checkpoint_every": 100}
    doubled = TrainConfig(**{**config, "grad_accum": 2})
    result = train(model, examples, tokenizer.pad_token_id, doubled)
    assert (result.processes, result.resumed_from, result.steps) == (1, 3, 8)
    weights = {k: v.detach() for k, v in model.state_dict().items()}
    _assert_close(weights, _weights(whole), atol=1e-5)  # this process's thread count: rounding
    # one process with the same micro-batches per step as ONE of the two processes: another
    # training (half the examples per step), refused
    shutil.rmtree(ckpt)
    shutil.copytree(killed, ckpt)
    tokenizer, examples, model = setup()
    with pytest.raises(MethodError, match="different training"):
        train(model, examples, tokenizer.pad_token_id, TrainConfig(**config))


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="with a GPU, --multi_gpu really runs")
def test_a_process_launched_as_one_of_two_that_runs_alone_is_refused(tmp_path: Path) -> None:
    # --multi_gpu without a GPU and without ACCELERATE_USE_CPU: torchrun starts two processes,
    # accelerate finds no device to share and makes each a single-process run; both would
    # train alone and race on the same checkpoint folder
    ckpt = tmp_path / "run" / "ckpt"
    run = _launch(tmp_path / "run", {**BASE, "checkpoint_dir": str(ckpt)}, use_cpu=False)
    assert run.returncode != 0
    assert "launched as one of 2 processes, but accelerate runs this one as one of 1" in (
        " ".join((run.stdout + run.stderr).split())
    )
    assert "ACCELERATE_USE_CPU=true" in run.stderr
    assert not ckpt.exists() and not list((tmp_path / "run").glob("rank-*"))
