"""history_duration_s: what a job's own past says about it, never reaching past its creation.

For each job: the durations of up to HISTORY_MAX earlier jobs of the same repository + workflow
path + job name that *completed strictly before* the job was created, most recent first. It is
computed vectorised (two sorts and a binary search) so millions of rows take seconds.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from gharuntime.contract import HISTORY_COLUMN, HISTORY_MAX

__all__ = ["HISTORY_KEY", "history_durations"]

HISTORY_KEY = ("repo_id", "workflow_path", "job_name")


def history_durations(
    jobs: pl.DataFrame, pool: pl.DataFrame | None = None, k: int = HISTORY_MAX
) -> pl.Series:
    """history_duration_s for every row of `jobs` (same order).

    `jobs` needs the HISTORY_KEY columns and `created_at`; `pool` (default: `jobs`) needs the key,
    `completed_at` and `duration_s` and holds the completed jobs history may draw from.
    """
    pool = jobs if pool is None else pool
    if jobs.height == 0:
        return pl.Series(HISTORY_COLUMN, [], dtype=pl.List(pl.Float64))
    keys = list(HISTORY_KEY)
    groups = (
        pl.concat([jobs.select(keys), pool.select(keys)])
        .unique(maintain_order=True)
        .with_row_index("g")
    )
    q = jobs.select(*keys, "created_at").with_row_index("i").join(groups, on=keys, how="left")
    p = pool.select(*keys, "completed_at", "duration_s").join(groups, on=keys, how="left")
    q_t = q["created_at"].dt.epoch("us").to_numpy()
    p_t = p["completed_at"].dt.epoch("us").to_numpy()
    # Rank all times together so (group, time) packs into one int64 key.
    _, inv = np.unique(np.concatenate([q_t, p_t]), return_inverse=True)
    shift = np.int64(max(int(inv.max()).bit_length(), 1))
    q_key = (q["g"].to_numpy().astype(np.int64) << shift) | inv[: len(q_t)].astype(np.int64)
    p_key = (p["g"].to_numpy().astype(np.int64) << shift) | inv[len(q_t) :].astype(np.int64)
    order = np.argsort(p_key, kind="stable")
    p_key = p_key[order]
    p_dur = p["duration_s"].to_numpy().astype(np.float64)[order]
    # end: first pool job of the same group completing at or after creation; start: group start.
    end = np.searchsorted(p_key, q_key, side="left")
    start = np.searchsorted(p_key, q["g"].to_numpy().astype(np.int64) << shift, side="left")
    lo = np.maximum(start, end - k)
    counts = end - lo
    # Gather most recent first: positions end-1, end-2, ..., lo.
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    within = np.arange(counts.sum()) - offsets
    pos = np.repeat(end - 1, counts) - within
    values = p_dur[pos] if len(pos) else np.array([], dtype=np.float64)
    offsets_arrow = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    lists = pa.LargeListArray.from_arrays(
        pa.array(offsets_arrow), pa.array(values, type=pa.float64())
    )
    result = pl.Series(HISTORY_COLUMN, pl.from_arrow(lists)).cast(pl.List(pl.Float64))
    # Rows of q follow the join's order; put them back in the order of `jobs`.
    return result.gather(np.argsort(q["i"].to_numpy(), kind="stable"))
