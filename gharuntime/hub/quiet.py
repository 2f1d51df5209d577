"""huggingface_hub draws progress bars and logs warnings on stderr; the library never prints,
so Hub calls run inside `quiet()` and report progress through the caller's callback instead."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["quiet"]


@contextmanager
def quiet() -> Iterator[None]:
    """Silence huggingface_hub's progress bars and log output for the duration."""
    from huggingface_hub.utils.tqdm import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    was_disabled = are_progress_bars_disabled()
    logger = logging.getLogger("huggingface_hub")
    level = logger.level
    disable_progress_bars()
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
        if not was_disabled:
            enable_progress_bars()
