"""The processes one `accelerate launch` started, and the three collectives LASER needs.

Under P processes `gharuntime baseline laser` fits on every one (the training loop splits each
optimizer step's micro-batches across them), trains the tokenizer once on the main process and
hands it to the others, and splits prediction: process r decodes jobs r, r+P, r+2P, ... and
every process receives all the outputs. One process (no launcher) does all of it alone and
never imports accelerate here.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar

from gharuntime.baselines.launch import launched
from gharuntime.baselines.method import MethodError

__all__ = ["Group", "check_launch"]

T = TypeVar("T")


def check_launch(running: int, kind: object) -> None:
    """Refuse a process the launcher started as one of several but accelerate runs alone
    (`--multi_gpu` without GPUs or ACCELERATE_USE_CPU): each would train alone and overwrite
    the others' files."""
    expected = launched()[1]
    if expected != running:
        hint = (
            "; on a machine without GPUs set ACCELERATE_USE_CPU=true"
            if "ACCELERATE_USE_CPU" not in os.environ
            else ""
        )
        raise MethodError(
            f"launched as one of {expected} processes, but accelerate runs this one as one of "
            f"{running} ({kind}): each would train alone and overwrite the others' files{hint}"
        )


class Group:
    """This process's place among the launched ones: `rank`, `count`, `main`."""

    def __init__(self) -> None:
        self.rank, self.count = launched()
        if self.count > 1:
            from accelerate import PartialState
            from accelerate.utils import parse_flag_from_env

            # joins the process group, as the training loop's Accelerator would (which reuses
            # it): on the CPU where ACCELERATE_USE_CPU says so
            state = PartialState(cpu=parse_flag_from_env("ACCELERATE_USE_CPU"))
            check_launch(state.num_processes, state.distributed_type)

    @property
    def main(self) -> bool:
        return self.rank == 0

    def broadcast(self, value: T | None) -> T:
        """The main process's `value`, on every process (others pass None)."""
        if self.count == 1:
            assert value is not None
            return value
        from accelerate.utils import broadcast_object_list

        box: list[Any] = [value if self.main else None]
        broadcast_object_list(box, from_process=0)
        return box[0]  # type: ignore[no-any-return]

    def share(self, n: int) -> list[int]:
        """The indices of `n` items this process works on: rank, rank + count, ..."""
        return list(range(self.rank, n, self.count))

    def collect(self, n: int, mine: list[T]) -> list[T]:
        """All `n` results in order, on every process, from each process's `share(n)` results."""
        if self.count == 1:
            return mine
        from accelerate.utils import gather_object

        pairs = gather_object(list(zip(self.share(n), mine, strict=True)))
        out: dict[int, T] = dict(pairs)
        if sorted(out) != list(range(n)):
            raise MethodError(f"gathered {len(out)} of {n} predictions from {self.count} processes")
        return [out[i] for i in range(n)]
