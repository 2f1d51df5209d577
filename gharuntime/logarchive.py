"""A workflow run attempt's log archive, as GitHub serves it from
`GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/logs` (a 302 to a zip).

Layout, as in the real archive of the GHALogs reference record (a tar of the same files): one
full log per job at the top, `{k}_{job name}.txt`, and a folder per job, `{job name}/`, holding one
`{n}_{step name}.txt` per step that ran. File names drop `/` (`Run actions/checkout@v3` becomes
`Run actionscheckout@v3`, as seen in the real archive); the other characters Windows forbids in
file names are dropped too (our assumption). A second job of the same file name gets ` (1)`, a
third ` (2)`, and so on (the real archive holds `1_Build source distribution (1).txt`).

`write_archive` builds one (the simulated GitHub serves it); `read_archive` returns each job's
full log by file name, and `job_file_name` says which name a job's log has, so a crawler can map
the logs back to job ids (names shared by two jobs are ambiguous and are left to the per-job log
endpoint).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Sequence

from gharuntime.errors import GharuntimeError

__all__ = ["ArchiveError", "job_file_name", "read_archive", "write_archive"]

_DROPPED = re.compile(r'[/\\:*?"<>|]')
_TOP = re.compile(r"^(\d+)_(.*)\.txt$", re.S)
_EPOCH = (1980, 1, 1, 0, 0, 0)


class ArchiveError(GharuntimeError):
    """Bytes that are not a readable zip archive."""


def job_file_name(name: str) -> str:
    """The file name stem GitHub gives a job's (or step's) log in the archive."""
    return _DROPPED.sub("", name).strip() or "job"


def write_archive(jobs: Sequence[tuple[str, str, Sequence[tuple[str, str]]]]) -> bytes:
    """A zip of (job name, full log, [(step name, step log), ...]) in the order given,
    byte-identical for the same input."""
    buffer = io.BytesIO()
    seen: dict[str, int] = {}
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for k, (name, text, steps) in enumerate(jobs, start=1):
            stem = job_file_name(name)
            n = seen.get(stem, 0)
            seen[stem] = n + 1
            if n:
                stem = f"{stem} ({n})"
            zf.writestr(zipfile.ZipInfo(f"{k}_{stem}.txt", _EPOCH), text)
            for i, (step, step_text) in enumerate(steps, start=1):
                info = zipfile.ZipInfo(f"{stem}/{i}_{job_file_name(step)}.txt", _EPOCH)
                zf.writestr(info, step_text)
    return buffer.getvalue()


def read_archive(data: bytes) -> dict[str, bytes]:
    """Each job's full log by its file name stem (with any ` (n)` suffix). Raises ArchiveError
    for bytes that are not a zip."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveError(f"not a zip archive: {exc}") from exc
    out: dict[str, bytes] = {}
    with zf:
        for info in zf.infolist():
            m = _TOP.match(info.filename)
            if m is None or "/" in info.filename:
                continue
            try:
                out[m.group(2)] = zf.read(info)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise ArchiveError(f"{info.filename}: {exc}") from exc
    return out
