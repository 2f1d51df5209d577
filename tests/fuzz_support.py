"""What every fuzzing test asserts about one run of a command or a reader (tests/hostile/test_fuzz*):
an exit code of 0, 1 or 2; no traceback; no secret in the output; nothing written on refusal;
and, for the heavy cases, bounded memory (a subprocess under an RLIMIT_AS limit)."""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from gharuntime.cli.main import cli

# A token-shaped secret that every fuzzed command gets in its environment (built at run time).
SECRET = "ghp_" + "Fuzz" + "S3cr3t" * 5 + "xy"
ENV = {"GITHUB_TOKEN": SECRET, "GITHUB_API_URL": "http://127.0.0.1:9", "COLUMNS": "200"}


def tree_digest(root: Path) -> str:
    """A digest of every file name, size and content under `root` (what a refusal must keep)."""
    h = hashlib.sha256()
    if not root.exists():
        return "absent"
    for path in sorted(root.rglob("*")):
        if path.name.endswith(("-wal", "-shm")):
            continue  # SQLite's own files, created by any reader of a WAL database
        h.update(str(path.relative_to(root)).encode("utf-8", "surrogateescape"))
        if path.is_file() and not path.is_symlink():
            h.update(path.read_bytes())
    return h.hexdigest()


@dataclass
class Outcome:
    code: int
    output: str
    exception: BaseException | None


def invoke(args: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Outcome:
    """Run the CLI in this process (fast), in `cwd`, with the fuzzing environment (and `env`)."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(
            cli, list(args), env={**ENV, **(env or {})}, catch_exceptions=True
        )
    finally:
        os.chdir(old)
    exc = result.exception
    if isinstance(exc, SystemExit):
        exc = None
    return Outcome(result.exit_code, result.output, exc)


def check(outcome: Outcome, what: Any) -> None:
    """The harness's four promises for one run."""
    assert outcome.exception is None, (
        f"{what}: {type(outcome.exception).__name__}: {outcome.exception}"
    )
    assert outcome.code in (0, 1, 2), f"{what}: exit code {outcome.code}\n{outcome.output[-2000:]}"
    assert "Traceback (most recent call last)" not in outcome.output, f"{what}: traceback"
    assert SECRET not in outcome.output, f"{what}: the token is in the output"


def run_limited(args: Sequence[str], cwd: Path, *, memory_mb: int, timeout: float = 120) -> Outcome:
    """Run the CLI in a subprocess whose address space is capped at `memory_mb` (a command
    that tried to hold a bomb would fail with MemoryError, i.e. a traceback or exit 1/137)."""

    def limit() -> None:
        cap = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = {**os.environ, **ENV, "POLARS_MAX_THREADS": "2", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "gharuntime.cli.main", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=timeout,
        preexec_fn=limit,
    )
    return Outcome(proc.returncode, proc.stdout + proc.stderr, None)
