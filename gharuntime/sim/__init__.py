"""The simulated GitHub: a seeded world of repositories, workflows and runs (`World`), served
over real HTTP on 127.0.0.1 by a GitHub-compatible REST API (`serve`), or written straight into
a raw store (`dump`). The project's test double for GitHub and the offline data source."""

from __future__ import annotations

from gharuntime.sim.faults import Faults, Recorder
from gharuntime.sim.server import ServerConfig, SimServer, serve
from gharuntime.sim.world import END, LOG_RETENTION_DAYS, SCALES, Scale, World

__all__ = [
    "END",
    "LOG_RETENTION_DAYS",
    "SCALES",
    "Faults",
    "Recorder",
    "Scale",
    "ServerConfig",
    "SimServer",
    "World",
    "serve",
]
