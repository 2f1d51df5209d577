"""What a job's steps run, as one digest: how a review tells a renamed or moved job
(gharuntime.predict.moves) from a new one.

The job's steps in order, each reduced to what it runs — `uses:` (the action without its
`@ref`, so a version bump does not hide a move), `run:` (each line's runs of spaces made one,
blank lines dropped) and `with:` (keys sorted) — with every `${{ ... }}` expression made one
placeholder (a moved job reads `inputs.x` where it read `matrix.x` or `needs.a.outputs.x`).
Step names, `if:`, `env:` and the job's own keys (`runs-on:`, `needs:`, ...) are ignored.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from gharuntime.workflow import ExpandedJob

__all__ = ["step_fingerprint"]

_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.S)


def _text(value: Any) -> str:
    """A step's text as it runs: expressions as one placeholder, each line's runs of spaces
    made one, blank lines out."""
    text = _EXPRESSION.sub("${{}}", str(value))
    return "\n".join(" ".join(line.split()) for line in text.splitlines() if line.strip())


def step_fingerprint(job: ExpandedJob) -> str:
    """A digest of the steps the job runs (see the module), or "" for none."""
    if job.call_problem is not None:
        return ""
    steps = []
    for step in (job.callee or job.spec).steps:
        uses, run, with_ = step.get("uses"), step.get("run"), step.get("with")
        if not uses and not run:
            continue
        steps.append(
            {
                "uses": str(uses).split("@", 1)[0].strip().lower() if uses else None,
                "run": _text(run) if run else None,
                "with": sorted((str(k), _text(v)) for k, v in with_.items())
                if isinstance(with_, Mapping)
                else None,
            }
        )
    if not steps:
        return ""
    return hashlib.sha256(json.dumps(steps, sort_keys=True).encode()).hexdigest()[:32]
