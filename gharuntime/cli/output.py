"""What every command shares for talking to a person: a console on stderr for progress and
problems, so stdout stays clean for machine-readable output."""

from __future__ import annotations

from rich.console import Console

__all__ = ["err_console", "out_console"]

err_console = Console(stderr=True, highlight=False, soft_wrap=True)
out_console = Console(highlight=False, soft_wrap=True)
