"""Which of several launched processes this one is, read from the launcher's environment.

`accelerate launch` and `torchrun` start P copies of a command and give each `LOCAL_RANK`,
`RANK` and `WORLD_SIZE`. A method that trains across them (LASER) needs every copy to fit and
predict, but only one may write the submission and the model folder, and only one should talk
to the user: that one is rank 0, the primary process. Without a launcher there is one process,
and it is primary. Reading the environment needs no torch, so core code can ask.
"""

from __future__ import annotations

import os
import sys

from gharuntime.baselines.method import MethodError

__all__ = ["finish", "is_primary", "launched"]


def launched() -> tuple[int, int]:
    """(rank, process count) of this process: (0, 1) unless a launcher started several."""
    if "LOCAL_RANK" not in os.environ:
        return 0, 1
    raw = {k: os.environ.get(k, d) for k, d in (("RANK", "0"), ("WORLD_SIZE", "1"))}
    try:
        rank, count = int(raw["RANK"]), int(raw["WORLD_SIZE"])
    except ValueError:
        raise MethodError(
            f"RANK={raw['RANK']!r} and WORLD_SIZE={raw['WORLD_SIZE']!r} are not whole numbers; "
            "start several processes with accelerate launch or torchrun, or unset LOCAL_RANK"
        ) from None
    if count < 1 or not 0 <= rank < count:
        raise MethodError(
            f"RANK={rank} does not fit WORLD_SIZE={count}; start several processes with "
            "accelerate launch or torchrun, or unset LOCAL_RANK"
        )
    return rank, count


def is_primary() -> bool:
    """True for the process that writes files and reports progress (rank 0, or the only one)."""
    return launched()[0] == 0


def finish(*, wait: bool = True) -> None:
    """Leave a launch's process group, if this process joined one: wait for the others (the
    primary may still be writing), then destroy it. A process that exits with the group alive
    can be aborted by its communication threads (SIGABRT) and fail the whole launch."""
    dist = sys.modules.get("torch.distributed")  # never imports torch
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return
    if wait:
        dist.barrier()
    dist.destroy_process_group()
