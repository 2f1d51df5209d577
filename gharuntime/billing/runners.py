"""Runner labels → a runner kind that a price table prices.

A kind is named after GitHub's billing SKU (`linux`, `windows_8_core`, `macos_xl`, ...; the
standard arm64 runners as `linux_arm` / `windows_arm`), plus `self_hosted`. Only labels whose
meaning GitHub documents are mapped: the standard hosted images (`ubuntu-24.04`,
`windows-latest`, `macos-15-xlarge`, ...), `self-hosted`, and larger-runner names that state
their OS and cores (`ubuntu-22.04-16core`, `windows-2022-8-cores`, `linux-arm64-4core`). Any
other label — an organisation's own runner name, a runner group, a label still holding
`${{ ... }}` — maps to no kind with a reason, never to a guess; a price file's `labels:` section
names such runners' kinds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["KINDS", "RunnerKind", "runner_kind"]


def _larger(os_name: str, cores: Sequence[int], suffix: str, what: str) -> dict[str, str]:
    return {f"{os_name.lower()}_{n}_core{suffix}": f"{os_name} {n}-core {what}" for n in cores}


KINDS: dict[str, str] = {
    "linux_slim": "Linux 1-core x64 (ubuntu-slim)",
    "linux": "Linux 2-core x64, standard",
    "linux_arm": "Linux 2-core arm64, standard",
    "windows": "Windows 2-core x64, standard",
    "windows_arm": "Windows 2-core arm64, standard",
    "macos": "macOS 3-core (M1) or 4-core (Intel), standard",
    "linux_2_core_advanced": "Linux Advanced 2-core x64, larger",
    **_larger("Linux", (4, 8, 16, 32, 64, 96), "", "x64, larger"),
    **_larger("Windows", (4, 8, 16, 32, 64, 96), "", "x64, larger"),
    "macos_l": "macOS 12-core Intel, larger (-large)",
    **_larger("Linux", (2, 4, 8, 16, 32, 64), "_arm", "arm64, larger"),
    **_larger("Windows", (2, 4, 8, 16, 32, 64), "_arm", "arm64, larger"),
    "macos_xl": "macOS 5-core M2 Pro, larger (-xlarge)",
    "linux_4_core_gpu": "Linux 4-core GPU, larger",
    "windows_4_core_gpu": "Windows 4-core GPU, larger",
    "self_hosted": "self-hosted runner",
}
"""Every kind a price table may price, with what it is."""

_STANDARD: list[tuple[re.Pattern[str], str]] = [
    (re.compile(p), kind)
    for p, kind in [
        (r"ubuntu-slim", "linux_slim"),
        (r"ubuntu-(latest|\d+\.\d+)", "linux"),
        (r"ubuntu-(latest-arm|\d+\.\d+-arm)", "linux_arm"),
        (r"windows-(latest|\d{4})", "windows"),
        (r"windows-(11|latest)-arm", "windows_arm"),
        (r"macos-(latest|\d+)(-intel|-arm64)?", "macos"),
        (r"macos-(latest|\d+)-large", "macos_l"),
        (r"macos-(latest|\d+)-xlarge", "macos_xl"),
    ]
]
_CORES = re.compile(r"(?:^|[-_.])(\d+)[-_]?cores?$")


@dataclass(frozen=True)
class RunnerKind:
    """The kind a job's labels map to, or None with why it could not be mapped."""

    kind: str | None
    reason: str | None = None


def _larger_kind(label: str) -> str | None:
    m = _CORES.search(label)
    if not m:
        return None
    words = set(re.split(r"[-_.]", label[: m.start()]))
    if words & {"windows", "win"}:
        os_name = "windows"
    elif words & {"ubuntu", "linux"}:
        os_name = "linux"
    else:
        return None
    cores = int(m.group(1))
    if "gpu" in words:
        kind = f"{os_name}_{cores}_core_gpu"
    elif words & {"arm", "arm64"}:
        kind = f"{os_name}_{cores}_core_arm"
    elif os_name == "linux" and cores == 2:
        kind = "linux_2_core_advanced"
    else:
        kind = f"{os_name}_{cores}_core"
    return kind if kind in KINDS else None


def _one(label: str) -> str | None:
    low = label.strip().lower()
    for pattern, kind in _STANDARD:
        if pattern.fullmatch(low):
            return kind
    return _larger_kind(low)


def runner_kind(labels: Sequence[str], custom: Mapping[str, str] | None = None) -> RunnerKind:
    """Map `runs-on` labels (as `predict` reads them) to a kind. `custom` (label → kind, from a
    price file's `labels:`) is tried first, case-insensitively as GitHub matches labels."""
    custom_low = {k.lower(): v for k, v in (custom or {}).items()}
    if not labels:
        return RunnerKind(None, "no `runs-on:` (a reusable workflow whose jobs were not read)")
    if any("${{" in x for x in labels):
        return RunnerKind(None, "its runner is an expression only known at run time")
    for label in labels:
        if label.strip().lower() in custom_low:
            return RunnerKind(custom_low[label.strip().lower()])
    if any(x.strip().lower() == "self-hosted" for x in labels):
        return RunnerKind("self_hosted")
    kinds = {_one(x) for x in labels}
    if len(kinds) == 1 and None not in kinds:
        return RunnerKind(kinds.pop())
    unknown = [x for x in labels if _one(x) is None]
    if unknown:
        return RunnerKind(
            None,
            f"runner label `{unknown[0]}` is not a GitHub-hosted runner label gharuntime "
            "knows; name its kind under `labels:` in a --prices file",
        )
    return RunnerKind(None, f"labels {', '.join(labels)} name different runner kinds")
