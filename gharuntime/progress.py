"""The one progress callback every long-running library call takes.

`progress(what, done, total)`: what is happening, how much of it is done, and the total when it
is known (None when it is not: a stream of unknown length, or a plain message). A plain message
is `progress(message, 0, None)`; `say(progress, message)` writes that for call sites that only
have something to say. One shape for everything means one adapter renders it (the CLI's
`gharuntime.cli.progress.ProgressView`), a test collects it with one lambda, and a caller can
pass one callback through a build, a fit and a score alike. The library never prints: it calls
this, and the caller decides what a person sees.

The crawler's `CrawlEvent` is the exception on purpose: it carries structured facts (requests,
rate limits, retries) that its own display and the build's adapter turn into this shape.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "say"]

Progress = Callable[[str, int, int | None], None]
"""progress(what is happening, done so far, total or None when unknown)."""


def say(progress: Progress | None, message: str) -> None:
    """Report a plain message (no count) through `progress`, when there is one."""
    if progress is not None:
        progress(message, 0, None)
