"""Real Hub servers on 127.0.0.1 for the Hub tests: olah serving a local git repository as a
Hub (offline mirror mode, gharuntime.sim.hub.mirror, which the benchmarks use too), and the
project's own upload-accepting endpoint (gharuntime.sim.hub)."""

from __future__ import annotations

from gharuntime.sim.hub.mirror import (
    branch,
    free_port,
    git_dataset_repo,
    hub_env,
    serve_olah,
    tag,
)

__all__ = ["branch", "free_port", "git_dataset_repo", "hub_env", "serve_olah", "tag"]
