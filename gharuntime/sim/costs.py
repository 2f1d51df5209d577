"""The hidden cost model of the simulated GitHub: how long each step runs, how long a job queues,
how many log lines it prints, and how it ends.

Durations have structure a model can learn from the workflow text (what each step's command does,
the runner OS and size, caches, services, QEMU emulation, matrix width) and structure it cannot
(the size of the code that is built and tested, the languages it is written in, a per-repository
speed, heavy-tailed noise, rare hangs, slow drift, queue time by hour of day). None of the
parameters below is ever served: only their outcomes are. In particular the cost is driven by
`code_kb` and `stack`, which the served `size` (git history and assets included) and `language`
(the largest language only) merely correlate with, as on GitHub.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

__all__ = [
    "SUITE_NAMES",
    "PlannedStep",
    "RepoProfile",
    "StepOutcome",
    "plan_steps",
    "queue_seconds",
    "run_steps",
    "suite_factor",
]

# seconds at a 20 MB repository on a hosted Linux runner, per language
_INSTALL = {
    "Python": 40,
    "JavaScript": 35,
    "TypeScript": 45,
    "Go": 15,
    "Rust": 25,
    "Java": 60,
    "Ruby": 55,
    "C++": 50,
    "PHP": 30,
    "C#": 25,
}
_BUILD = {
    "Python": 15,
    "JavaScript": 40,
    "TypeScript": 55,
    "Go": 45,
    "Rust": 240,
    "Java": 90,
    "Ruby": 12,
    "C++": 300,
    "PHP": 6,
    "C#": 60,
}
_LINT = {
    "Python": 25,
    "JavaScript": 20,
    "TypeScript": 45,
    "Go": 30,
    "Rust": 150,
    "Java": 40,
    "Ruby": 20,
    "C++": 8,
    "PHP": 15,
    "C#": 30,
}
_TEST = {
    "Python": 90,
    "JavaScript": 60,
    "TypeScript": 75,
    "Go": 120,
    "Rust": 200,
    "Java": 180,
    "Ruby": 120,
    "C++": 60,
    "PHP": 50,
    "C#": 90,
}
_SETUP = {
    "setup-python": 4,
    "setup-node": 3,
    "setup-go": 6,
    "rust-toolchain": 18,
    "setup-java": 9,
    "setup-ruby": 22,
    "setup-php": 10,
    "setup-dotnet": 14,
}
# (base seconds, exponent on repository size) for each category
_FIXED = {
    "setup_job": (2.0, 0.0),
    "containers": (20.0, 0.0),
    "checkout": (2.0, 0.6),
    "cache": (6.0, 0.5),
    "artifact": (8.0, 0.4),
    "coverage": (6.0, 0.0),
    "docs": (45.0, 0.5),
    "docker": (150.0, 0.3),
    "qemu": (8.0, 0.0),
    "buildx": (5.0, 0.0),
    "login": (2.0, 0.0),
    "publish": (3.0, 0.0),
    "shell": (5.0, 0.0),
    "bot": (3.0, 0.0),
    "deploy": (14.0, 0.0),
    "post": (0.6, 0.0),
    "complete": (0.4, 0.0),
}
# Test suites of a `suite` matrix axis: the factor on the test step's cost that a suite of this
# name has across repositories. Learned from apache/ozone's real jobs (`matrix.check`), where the
# same workflow's suites ran from a minute (checkstyle, rat) to hours (integration): the suite
# explains more of a job's duration than anything else in its configuration.
_SUITES = {
    "unit": 0.5,
    "api": 0.8,
    "client": 1.2,
    "storage": 1.8,
    "ui": 2.0,
    "integration": 2.5,
    "e2e": 3.5,
    "acceptance": 4.0,
    "slow": 6.0,
}
SUITE_NAMES = list(_SUITES)  # cheapest first
# Compute steps (install, build, lint, tests) of the tables above, scaled so that the world's mean
# job times by task sit near those published for public repositories (Bouzenia & Pradel, ICSE
# 2024: test and build jobs average 1.5 minutes in free-tier repositories, 8-10 in paid-tier
# ones; benchmarks/sim_populations.py sets the world beside them).
_COMPUTE_SCALE = 0.4
_SIZE_EXP = {"install": 0.2, "build": 0.45, "lint": 0.35, "test": 0.5, "integration": 0.5}
_OS = {"Linux": 1.0, "Windows": 1.65, "macOS": 1.35}
# log lines per second of work, by category (tests and builds talk the most)
_LINES = {
    "install": 3.0,
    "build": 2.0,
    "test": 4.0,
    "integration": 3.0,
    "lint": 0.8,
    "docker": 2.5,
    "checkout": 6.0,
}


@dataclass(frozen=True)
class RepoProfile:
    """What the world knows about a repository and never serves as such."""

    stack: tuple[tuple[str, float], ...]  # languages of the built code and their shares
    code_kb: int  # size of the code that is built and tested (not served)
    speed: float  # per-repository multiplier (size of its test suite, machine luck)
    drift: float  # log-rate of slow change over the world's time span
    flaky: float  # probability a test step fails
    cache_hit: float  # probability a cache restores


@dataclass(frozen=True)
class PlannedStep:
    """A step as GitHub lists it, with the category the cost model charges for."""

    name: str
    category: str
    always: bool = False  # runs even after a failure (post steps, `if: always()`)
    gated: bool = False  # `if:` on an earlier step's output (a paths filter): may not run


@dataclass(frozen=True)
class StepOutcome:
    seconds: float
    conclusion: str  # success | failure | skipped | cancelled
    lines: int


def _classify(command: str) -> str:
    low = command.lower()
    if "integration" in low or "e2e" in low:
        return "integration"
    if any(w in low for w in ("test", "pytest", "rspec", "ctest", "phpunit")):
        return "test"
    if any(
        w in low
        for w in (
            "lint",
            "clippy",
            "ruff",
            "rubocop",
            "vet ",
            "checkstyle",
            "format",
            "phpcs",
            "fmt",
        )
    ):
        return "lint"
    if any(w in low for w in ("install", "npm ci", "download", "fetch", "restore", "go-offline")):
        return "install"
    if any(w in low for w in ("build", "package", "make", "cmake", "autoload")):
        return "docs" if "docs" in low else "build"
    if "publish" in low or "echo" in low:
        return "publish"
    return "shell"


def _uses_category(uses: str) -> tuple[str, bool]:
    """Category of an action and whether it has a post step."""
    name = uses.split("@")[0].lower()
    if name.endswith("/checkout"):
        return "checkout", True
    if name.endswith("/cache"):
        return "cache", True
    if "setup-qemu" in name:
        return "qemu", False
    if "setup-buildx" in name:
        return "buildx", True
    if "login-action" in name:
        return "login", True
    if "build-push" in name:
        return "docker", False
    if "upload" in name:
        return "artifact", False
    if "codecov" in name:
        return "coverage", False
    if "cibuildwheel" in name:
        return "wheels", False
    if "deploy-pages" in name:
        return "deploy", False
    if any(bot in name for bot in ("labeler", "/stale", "first-interaction", "paths-filter")):
        return "bot", False
    tail = name.split("/")[-1]
    if tail in _SETUP:
        return "setup:" + tail, False
    return "shell", False


def plan_steps(
    steps: Sequence[Mapping[str, Any]], services: int, container: bool
) -> list[PlannedStep]:
    """The step list GitHub shows for a job: `Set up job`, containers, each step, post steps in
    reverse order, `Complete job`."""
    out = [PlannedStep("Set up job", "setup_job")]
    if services or container:
        out.append(PlannedStep("Initialize containers", "containers"))
    posts: list[PlannedStep] = []
    for step in steps:
        name = step.get("name")
        always = "always()" in str(step.get("if", ""))
        gated = "steps." in str(step.get("if", ""))
        if "uses" in step:
            uses = str(step["uses"])
            category, post = _uses_category(uses)
            if (
                category.startswith("setup:")
                and isinstance(step.get("with"), Mapping)
                and step["with"].get("cache")
            ):
                category, post = category + "+cache", True
            shown = str(name) if name else f"Run {uses}"
            out.append(PlannedStep(shown, category, always, gated))
            if post:
                posts.append(
                    PlannedStep(
                        f"Post {shown}",
                        "post_cache" if "cache" in category else "post",
                        True,
                        gated,
                    )
                )
        else:
            command = str(step.get("run", ""))
            first = command.strip().splitlines()[0] if command.strip() else ""
            out.append(
                PlannedStep(
                    str(name) if name else f"Run {first}", _classify(command), always, gated
                )
            )
    out.extend(reversed(posts))
    if services or container:
        out.append(PlannedStep("Stop containers", "post", True))
    out.append(PlannedStep("Complete job", "complete", True))
    return out


def _runner_speed(labels: Sequence[str]) -> tuple[float, float]:
    """(factor on compute steps, factor on everything) for a runner label set."""
    low = [x.lower() for x in labels]
    if "self-hosted" in low:
        return (0.5 if "gpu" in low else 0.75), 0.8
    if any("core" in x for x in low):
        cores = 16 if "16" in " ".join(low) else 8 if "8" in " ".join(low) else 4
        return {4: 0.65, 8: 0.45, 16: 0.3}[cores], 1.0
    return 1.0, 1.0


def queue_seconds(
    rng: random.Random, labels: Sequence[str], os_name: str, hour: int, width: int
) -> float:
    """Time from job creation to a runner picking it up."""
    low = [x.lower() for x in labels]
    if "self-hosted" in low:
        base = 2.0 if rng.random() > 0.08 else rng.uniform(300, 2400)
    elif any("core" in x for x in low):
        base = 25.0
    else:
        base = {"Linux": 3.0, "Windows": 9.0, "macOS": 35.0}.get(os_name, 5.0)
    peak = 1.0 + 2.0 * math.exp(-(((hour - 15) / 3.0) ** 2))
    return base * peak * (1.0 + 0.04 * max(0, width - 4)) * rng.lognormvariate(0.0, 0.7)


def _cost(
    step: PlannedStep,
    profile: RepoProfile,
    os_name: str,
    compute: float,
    emulated: int,
    cache_hit: bool,
    docker_platforms: int,
) -> float:
    size = max(profile.code_kb, 50) / 20000.0
    cat = step.category
    os_f = _OS.get(os_name, 1.0)
    if cat.startswith("setup:"):
        base = _SETUP.get(cat.split(":")[1].split("+")[0], 5.0)
        if cat.endswith("+cache"):
            base += 8.0 * size**0.3 if cache_hit else 1.0
        return base * os_f
    if cat in _SIZE_EXP:
        table = {
            "install": _INSTALL,
            "build": _BUILD,
            "lint": _LINT,
            "test": _TEST,
            "integration": _TEST,
        }[cat]
        per_language = sum(share * table[lang] for lang, share in profile.stack)
        base = per_language * size ** _SIZE_EXP[cat] * profile.speed * _COMPUTE_SCALE
        if cat == "integration":
            base *= 2.5
        if cat == "install":
            base *= 0.35 if cache_hit else 1.0
            os_f = os_f**1.5
        else:
            base *= compute
        return float(base * os_f)
    if cat == "post_cache":
        return 1.0 if cache_hit else float(6.0 + 12.0 * size**0.5)
    if cat == "post":
        return _FIXED["post"][0]
    if cat == "wheels":
        # cibuildwheel: one build per Python version; under QEMU emulation about 12x slower
        per_language = sum(share * _BUILD[lang] for lang, share in profile.stack)
        native = (240.0 + 1.5 * per_language) * size**0.3 * profile.speed
        return float(native * (1.0 + 11.0 * emulated))
    if cat == "docker":
        native = 1 if docker_platforms else 0
        return float(_FIXED["docker"][0] * size**0.3 * profile.speed * (native + 6.0 * emulated))
    base, exp = _FIXED.get(cat, (5.0, 0.0))
    if cat == "cache":
        base = base * (1.0 if cache_hit else 0.2)
    return float(base * size**exp * os_f)


def suite_factor(repository: str, suite: object) -> float:
    """The factor on a job's test steps from its `suite` matrix value: the suite's factor across
    repositories times a hidden per-repository factor (lognormal, sigma 0.6) that only this
    repository's history reveals. Deterministic in (repository, suite); 1.0 for no suite."""
    if not isinstance(suite, str) or suite not in _SUITES:
        return 1.0
    digest = hashlib.sha256(f"{repository}\0{suite}".encode()).digest()
    u = (int.from_bytes(digest[:8], "big") + 0.5) / 2.0**64
    return _SUITES[suite] * math.exp(0.6 * NormalDist().inv_cdf(u))


def run_steps(
    rng: random.Random,
    steps: Sequence[PlannedStep],
    profile: RepoProfile,
    labels: Sequence[str],
    os_name: str,
    *,
    time_frac: float,
    timeout_s: float,
    emulated: int,
    docker_platforms: int,
    must_fail: bool,
    cancel_after: float | None,
    test_factor: float = 1.0,
) -> tuple[list[StepOutcome], str]:
    """Durations, log lines and conclusions of a job's steps; returns (outcomes, job conclusion).
    `test_factor` scales the test steps (a suite's cost, `suite_factor`)."""
    compute, overall = _runner_speed(labels)
    cache_hit = rng.random() < profile.cache_hit
    job_noise = rng.lognormvariate(0.0, 0.3) * math.exp(profile.drift * time_frac) * overall
    if rng.random() < 0.03:  # a slow machine, a cold network: heavy tail
        job_noise *= min(8.0, rng.paretovariate(1.6))
    hang = rng.random() < 0.004
    # a paths filter that finds no source change skips every step gated on it
    gate_open = not any(s.gated for s in steps) or rng.random() > 0.35
    fail_at = -1
    if must_fail or (
        any(s.category in ("test", "integration") for s in steps) and rng.random() < profile.flaky
    ):
        candidates = [
            i
            for i, s in enumerate(steps)
            if s.category in ("test", "integration", "build", "lint", "install")
        ]
        if candidates:
            fail_at = rng.choice(candidates[-2:]) if rng.random() < 0.8 else rng.choice(candidates)
    out: list[StepOutcome] = []
    elapsed = 0.0
    state = "success"
    for i, step in enumerate(steps):
        if state != "success" and not step.always:
            out.append(StepOutcome(0.0, "skipped" if state != "cancelled" else "cancelled", 0))
            continue
        if step.gated and not gate_open:
            out.append(StepOutcome(0.0, "skipped", 0))
            continue
        seconds = _cost(step, profile, os_name, compute, emulated, cache_hit, docker_platforms)
        seconds *= job_noise * rng.lognormvariate(0.0, 0.12)
        if step.category in ("test", "integration"):
            seconds *= test_factor
        if step.category in ("test", "integration") and rng.random() < 0.01:
            seconds *= rng.uniform(3, 12)  # a rare outlier: a retry storm, a slow external service
        conclusion = "success"
        if hang and step.category in ("test", "integration", "build") and state == "success":
            seconds = timeout_s  # hangs until the job's timeout
        if i == fail_at and state == "success":
            seconds *= rng.uniform(0.1, 1.0)
            conclusion = "failure"
        if elapsed + seconds >= timeout_s and state == "success":
            seconds = max(0.0, timeout_s - elapsed)
            conclusion = "cancelled"
            state = "timed_out"
        if cancel_after is not None and elapsed + seconds >= cancel_after and state == "success":
            seconds = max(0.0, cancel_after - elapsed)
            conclusion = "cancelled"
            state = "cancelled"
        if conclusion == "failure":
            state = "failure"
        rate = _LINES.get(step.category, 1.0)
        lines = 2 + int(seconds * rate * rng.uniform(0.6, 1.4))
        out.append(StepOutcome(seconds, conclusion, lines))
        elapsed += seconds
    return out, state
