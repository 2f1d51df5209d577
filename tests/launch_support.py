"""Running a Python command in several processes with `accelerate launch` on CPU (gloo), for the
LASER tests that check what two processes do against what one process does.

On a machine without GPUs, `accelerate launch --cpu --num_processes 2` starts a single process
(its simple launcher spreads over several only through mpirun), so this launches with
`--multi_gpu` and ACCELERATE_USE_CPU=true: torch.distributed's launcher, gloo, CPU tensors.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hub_servers import free_port

__all__ = ["DISTRIBUTED_ENV", "launch"]

DISTRIBUTED_ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR")


def launch(
    args: list[str], out: Path, processes: int, *, timeout: float, use_cpu: bool = True
) -> subprocess.CompletedProcess[str]:
    """`python ARGS` in `processes` processes (1: plain python, no launcher), in a clean
    environment: no launcher variables inherited, no user accelerate config (HF_HOME under
    `out`, which is created), one thread per process."""
    out.mkdir(parents=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in DISTRIBUTED_ENV and not k.startswith(("ACCELERATE_", "MASTER_"))
    }
    env.update(OMP_NUM_THREADS="1", HF_HOME=str(out / "hf"), HF_HUB_OFFLINE="1")
    if use_cpu:
        env["ACCELERATE_USE_CPU"] = "true"
    cmd = [sys.executable]
    if processes > 1:
        cmd += [
            "-m", "accelerate.commands.launch", "--multi_gpu",
            "--num_processes", str(processes), "--num_machines", "1",
            "--mixed_precision", "no", "--dynamo_backend", "no",
            "--main_process_port", str(free_port()),
        ]  # fmt: skip
    return subprocess.run(cmd + args, env=env, capture_output=True, text=True, timeout=timeout)
