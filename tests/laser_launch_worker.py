"""Run in each process of `accelerate launch` by tests/baselines/laser/test_method_launch.py: share 7 items out,
collect them back, broadcast the main process's value; report as OUT/rank-R.json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gharuntime.baselines.laser.processes import Group
from gharuntime.baselines.launch import finish


def main() -> None:
    out = Path(sys.argv[1])
    group = Group()
    mine = [f"job-{i} by {group.rank}" for i in group.share(7)]
    report = {
        "rank": group.rank,
        "count": group.count,
        "share": group.share(7),
        "collected": group.collect(7, mine),
        "broadcast": group.broadcast({"from": group.rank} if group.main else None),
    }
    (out / f"rank-{group.rank}.json").write_text(json.dumps(report))
    finish()


if __name__ == "__main__":
    main()
