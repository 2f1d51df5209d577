"""Workflow YAML generator: realistic, varied GitHub Actions workflows for a simulated repository.

A repository gets a few workflows (CI, docker release, docs, nightly, reusable callee); each one
changes over time through commits (a matrix entry added, a cache introduced, a step removed, an
action bumped), so the text differs between head SHAs. Everything is drawn from the caller's
`random.Random`, so the same seed gives the same files.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any

import yaml

from gharuntime.sim.costs import SUITE_NAMES

__all__ = ["LANGUAGES", "WorkflowDraft", "draft_workflows", "render_yaml"]


@dataclass(frozen=True)
class _Lang:
    setup: str  # setup-* action, "" when none
    version_key: str  # matrix key for toolchain versions
    versions: tuple[str, ...]
    install: str
    build: str
    lint: str
    unit: str
    integration: str
    cache: str  # setup action's `cache:` value, "" when it has none


LANGUAGES: dict[str, _Lang] = {
    "Python": _Lang(
        "actions/setup-python@v5",
        "python-version",
        ("3.9", "3.10", "3.11", "3.12", "3.13"),
        "python -m pip install --upgrade pip\npip install -e .[test]",
        "python -m build",
        "ruff check .\nmypy src",
        "pytest -q tests/unit",
        "pytest -q tests/integration --durations=20",
        "pip",
    ),
    "JavaScript": _Lang(
        "actions/setup-node@v4",
        "node-version",
        ("18", "20", "22"),
        "npm ci",
        "npm run build",
        "npm run lint",
        "npm test",
        "npm run test:e2e",
        "npm",
    ),
    "TypeScript": _Lang(
        "actions/setup-node@v4",
        "node",
        ("18.x", "20.x", "22.x"),
        "yarn install --frozen-lockfile",
        "yarn build",
        "yarn lint && yarn typecheck",
        "yarn test --ci",
        "yarn test:integration",
        "yarn",
    ),
    "Go": _Lang(
        "actions/setup-go@v5",
        "go-version",
        ("1.21", "1.22", "1.23"),
        "go mod download",
        "go build ./...",
        "go vet ./...",
        "go test -race ./...",
        "go test -tags=integration ./integration/...",
        "",
    ),
    "Rust": _Lang(
        "dtolnay/rust-toolchain@stable",
        "rust",
        ("stable", "beta", "1.75.0"),
        "cargo fetch",
        "cargo build --release --all-features",
        "cargo clippy --all-targets -- -D warnings\ncargo fmt --check",
        "cargo test --all-features",
        "cargo test --test integration -- --test-threads=1",
        "",
    ),
    "Java": _Lang(
        "actions/setup-java@v4",
        "java",
        ("11", "17", "21"),
        "mvn -B dependency:go-offline",
        "mvn -B package -DskipTests",
        "mvn -B checkstyle:check",
        "mvn -B test",
        "mvn -B verify -Pintegration",
        "maven",
    ),
    "Ruby": _Lang(
        "ruby/setup-ruby@v1",
        "ruby-version",
        ("3.1", "3.2", "3.3"),
        "bundle install --jobs 4",
        "bundle exec rake build",
        "bundle exec rubocop",
        "bundle exec rspec",
        "bundle exec rspec spec/integration",
        "",
    ),
    "C++": _Lang(
        "",
        "compiler",
        ("gcc", "clang"),
        "sudo apt-get update && sudo apt-get install -y ninja-build libboost-dev",
        "cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release\ncmake --build build",
        "clang-format --dry-run --Werror src/*.cpp",
        "ctest --test-dir build --output-on-failure",
        "ctest --test-dir build -L integration",
        "",
    ),
    "PHP": _Lang(
        "shivammathur/setup-php@v2",
        "php",
        ("8.1", "8.2", "8.3"),
        "composer install --no-interaction --prefer-dist",
        "composer dump-autoload -o",
        "vendor/bin/phpcs",
        "vendor/bin/phpunit --testsuite unit",
        "vendor/bin/phpunit --testsuite integration",
        "",
    ),
    "C#": _Lang(
        "actions/setup-dotnet@v4",
        "dotnet",
        ("6.0.x", "8.0.x"),
        "dotnet restore",
        "dotnet build --no-restore -c Release",
        "dotnet format --verify-no-changes",
        "dotnet test --no-build -c Release",
        "dotnet test --no-build --filter Category=Integration",
        "",
    ),
}

_HOSTED = (
    "ubuntu-latest",
    "ubuntu-22.04",
    "ubuntu-24.04",
    "windows-latest",
    "macos-latest",
    "macos-14",
)
_LARGER = ("ubuntu-latest-4-cores", "ubuntu-22.04-8core", "ubuntu-latest-16-cores")
_SELF_HOSTED = (
    ["self-hosted", "linux", "x64"],
    ["self-hosted", "linux", "gpu"],
    ["self-hosted", "macOS", "ARM64"],
)


@dataclass
class WorkflowDraft:
    """One workflow file and its versions over time (each a YAML mapping)."""

    path: str
    name: str
    kind: str  # ci | docker | docs | nightly | reusable | release | labeler | stale | wheels
    versions: list[dict[str, Any]]


def _checkout(rng: random.Random) -> dict[str, Any]:
    step: dict[str, Any] = {
        "uses": rng.choice(["actions/checkout@v4", "actions/checkout@v4", "actions/checkout@v3"])
    }
    if rng.random() < 0.15:
        step["with"] = {"fetch-depth": 0}
    return step


def _setup(lang: _Lang, version: str, cache: bool) -> list[dict[str, Any]]:
    if not lang.setup:
        return []
    key = lang.setup.split("/")[1].split("@")[0].replace("setup-", "") + "-version"
    if lang.setup.startswith("dtolnay"):
        return [
            {"uses": f"dtolnay/rust-toolchain@{version if version.startswith('1.') else 'stable'}"}
        ]
    with_: dict[str, Any] = {key: version}
    if cache and lang.cache:
        with_["cache"] = lang.cache
    return [{"name": f"Set up {key.split('-')[0].capitalize()}", "uses": lang.setup, "with": with_}]


def _cache_step(language: str) -> dict[str, Any]:
    paths = {
        "Rust": "~/.cargo/registry\n~/.cargo/git\ntarget",
        "Go": "~/go/pkg/mod\n~/.cache/go-build",
        "Ruby": "vendor/bundle",
        "C++": "build",
        "PHP": "vendor",
        "C#": "~/.nuget/packages",
    }.get(language, "~/.cache")
    return {
        "name": "Cache dependencies",
        "uses": "actions/cache@v4",
        "with": {"path": paths, "key": "${{ runner.os }}-deps-${{ hashFiles('**/lockfile') }}"},
    }


def _run(name: str | None, command: str, **extra: Any) -> dict[str, Any]:
    step: dict[str, Any] = {}
    if name:
        step["name"] = name
    step["run"] = command
    step.update(extra)
    return step


def _ci(rng: random.Random, language: str, lang: _Lang, default_branch: str) -> dict[str, Any]:
    cache = rng.random() < 0.5
    jobs: dict[str, Any] = {}
    triggers: dict[str, Any] = {"push": {"branches": [default_branch]}, "pull_request": None}
    if rng.random() < 0.3:
        triggers["workflow_dispatch"] = None
    if rng.random() < 0.4:
        jobs["lint"] = {
            "runs-on": "ubuntu-latest",
            "timeout-minutes": rng.choice([5, 10, 15]),
            "steps": [
                _checkout(rng),
                *_setup(lang, lang.versions[-1], cache),
                _run("Install", lang.install),
                _run("Lint", lang.lint),
            ],
        }
    oses = ["ubuntu-latest"]
    if rng.random() < 0.35:
        oses.append("windows-latest")
    if rng.random() < 0.35:
        oses.append("macos-latest")
    nver = rng.choice([1, 2, 2, 3, 3, 4])
    versions = list(lang.versions[-nver:])
    # a matrix over test suites (apache/ozone's `matrix.check`): one job per suite, on one OS
    # and one toolchain; the suites' costs differ far more than the OS or the version does
    suites = sorted(rng.sample(SUITE_NAMES, rng.randint(2, 5))) if rng.random() < 0.15 else []
    if suites:
        oses, versions = ["ubuntu-latest"], versions[-1:]
    matrix: dict[str, Any] = {"os": oses, lang.version_key: versions}
    if suites:
        matrix["suite"] = suites
    if len(oses) > 1 and len(versions) > 1 and rng.random() < 0.5:
        matrix["exclude"] = [{"os": oses[-1], lang.version_key: versions[0]}]
    if rng.random() < 0.3 and not suites:
        matrix["include"] = [
            {"os": "ubuntu-latest", lang.version_key: versions[-1], "coverage": True}
        ]
    test: dict[str, Any] = {}
    if rng.random() < 0.4:
        test["name"] = rng.choice(
            [
                "${{ matrix.os }} / "
                + lang.version_key
                + " ${{ matrix."
                + lang.version_key
                + " }}",
                "Test ("
                + lang.version_key
                + " ${{ matrix."
                + lang.version_key
                + " }}, ${{ matrix.os }})",
            ]
        )
    if suites and "name" in test:
        test["name"] = "Test (${{ matrix.suite }})"  # a name that leaves the suite out repeats
    if "lint" in jobs:
        test["needs"] = "lint"
    test["runs-on"] = "${{ matrix.os }}"
    r = rng.random()
    if r < 0.08:
        test["runs-on"] = rng.choice(_SELF_HOSTED)
        matrix.pop("os")
        matrix.pop("exclude", None)
        matrix.pop("include", None)
    elif r < 0.16:
        test["runs-on"] = rng.choice(_LARGER)
        matrix.pop("os")
        matrix.pop("exclude", None)
        matrix.pop("include", None)
    test["strategy"] = {"fail-fast": rng.random() < 0.5, "matrix": matrix}
    test["timeout-minutes"] = rng.choice([20, 30, 45, 60, 90])
    steps: list[dict[str, Any]] = [_checkout(rng)]
    steps += _setup(lang, "${{ matrix." + lang.version_key + " }}", cache)
    if cache and not lang.cache:
        steps.append(_cache_step(language))
    steps.append(_run("Install dependencies", lang.install))
    if rng.random() < 0.6:
        steps.append(_run("Build", lang.build))
    if suites:
        steps.append(_run("Run tests", "./ci/test.sh ${{ matrix.suite }}"))
    else:
        steps.append(_run("Run tests", lang.unit))
    if rng.random() < 0.25:
        steps = _path_filtered(steps)
    if rng.random() < 0.3:
        steps.append(
            {
                "name": "Upload coverage",
                "if": "matrix.coverage",
                "uses": "codecov/codecov-action@v4",
            }
        )
    test["steps"] = steps
    jobs["test"] = test
    if rng.random() < 0.35:
        svc_name, svc = rng.choice(
            [
                (
                    "postgres",
                    {
                        "image": "postgres:16",
                        "env": {"POSTGRES_PASSWORD": "postgres"},
                        "ports": ["5432:5432"],
                    },
                ),
                ("redis", {"image": "redis:7", "ports": ["6379:6379"]}),
                (
                    "mysql",
                    {
                        "image": "mysql:8",
                        "env": {"MYSQL_ROOT_PASSWORD": "root"},
                        "ports": ["3306:3306"],
                    },
                ),
            ]
        )
        integ: dict[str, Any] = {
            "needs": ["test"],
            "runs-on": "ubuntu-latest",
            "if": rng.choice(
                ["github.event_name == 'push'", "github.ref == 'refs/heads/" + default_branch + "'"]
            ),
            "services": {svc_name: svc},
            "timeout-minutes": rng.choice([30, 60]),
            "steps": [
                _checkout(rng),
                *_setup(lang, lang.versions[-1], cache),
                _run(None, lang.install),
                _run(
                    "Integration tests",
                    lang.integration,
                    env={"DATABASE_URL": f"{svc_name}://localhost"},
                ),
            ],
        }
        if rng.random() < 0.4:
            integ["continue-on-error"] = True
        jobs["integration"] = integ
    if rng.random() < 0.25:
        jobs["build"] = {
            "needs": [k for k in ("lint", "test") if k in jobs],
            "runs-on": "ubuntu-latest",
            "steps": [
                _checkout(rng),
                *_setup(lang, lang.versions[-1], cache),
                _run(None, lang.install),
                _run("Build release", lang.build),
                {"uses": "actions/upload-artifact@v4", "with": {"name": "dist", "path": "dist/"}},
            ],
        }
    return {
        "name": rng.choice(["CI", "CI", "Tests", "Build and test", "ci"]),
        "on": triggers,
        "jobs": jobs,
    }


_SOURCE_CHANGED = "steps.filter.outputs.src == 'true'"


def _path_filtered(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A job that does its work only when the source changed: a paths-filter step after the
    checkout, and every later step gated on it (a push touching only docs takes seconds)."""
    gate = {
        "name": "Detect changed files",
        "id": "filter",
        "uses": "dorny/paths-filter@v3",
        "with": {"filters": "src:\n  - 'src/**'\n  - 'tests/**'"},
    }
    return [steps[0], gate, *({**step, "if": _SOURCE_CHANGED} for step in steps[1:])]


def _labeler(rng: random.Random) -> dict[str, Any]:
    """A bot workflow: label pull requests by the paths they touch (seconds)."""
    steps: list[dict[str, Any]] = [
        {"uses": rng.choice(["actions/labeler@v5", "actions/labeler@v4"])}
    ]
    if rng.random() < 0.4:
        steps.append({"uses": "actions/first-interaction@v1", "with": {"issue-message": "Thanks!"}})
    return {
        "name": rng.choice(["Labeler", "Pull Request Labeler", "triage"]),
        "on": {"pull_request_target": None},
        "jobs": {"label": {"runs-on": "ubuntu-latest", "steps": steps}},
    }


def _stale(rng: random.Random) -> dict[str, Any]:
    """A bot workflow: mark and close stale issues on a schedule (seconds to a minute)."""
    return {
        "name": rng.choice(["Stale", "Close stale issues", "Mark stale issues"]),
        "on": {
            "schedule": [{"cron": f"{rng.randrange(60)} {rng.randrange(24)} * * *"}],
            "workflow_dispatch": None,
        },
        "jobs": {
            "stale": {
                "runs-on": "ubuntu-latest",
                "steps": [
                    {
                        "uses": "actions/stale@v9",
                        "with": {"days-before-stale": rng.choice([30, 60, 90])},
                    }
                ],
            }
        },
    }


def _wheels(rng: random.Random, lang: _Lang, default_branch: str) -> dict[str, Any]:
    """Release wheels for several architectures; the non-x86 ones build under QEMU emulation,
    which takes hours (the real GHALogs record holds a 4.4-hour emulated aarch64 build)."""
    arches = ["x86_64", "aarch64"] + (["ppc64le", "s390x"] if rng.random() < 0.3 else [])
    return {
        "name": rng.choice(["Wheels", "Build wheels", "Release wheels"]),
        "on": {
            "push": {"tags": ["v*"], "branches": [default_branch]},
            "workflow_dispatch": None,
        },
        "jobs": {
            "build_wheels": {
                "name": "Build wheels for ${{ matrix.arch }}",
                "runs-on": "ubuntu-latest",
                "strategy": {"fail-fast": False, "matrix": {"arch": arches}},
                "steps": [
                    _checkout(rng),
                    {
                        "name": "Set up QEMU",
                        "if": "matrix.arch != 'x86_64'",
                        "uses": "docker/setup-qemu-action@v3",
                    },
                    {
                        "name": "Build wheels",
                        "uses": "pypa/cibuildwheel@v2.21",
                        "env": {"CIBW_ARCHS_LINUX": "${{ matrix.arch }}"},
                    },
                    {
                        "uses": "actions/upload-artifact@v4",
                        "with": {"name": "wheels-${{ matrix.arch }}", "path": "wheelhouse"},
                    },
                ],
            }
        },
    }


def _docker(rng: random.Random, default_branch: str) -> dict[str, Any]:
    platforms = rng.choice(
        ["linux/amd64", "linux/amd64,linux/arm64", "linux/amd64,linux/arm64,linux/arm/v7"]
    )
    steps: list[dict[str, Any]] = [_checkout(rng)]
    if "arm" in platforms:
        steps.append({"name": "Set up QEMU", "uses": "docker/setup-qemu-action@v3"})
    steps += [
        {"name": "Set up Docker Buildx", "uses": "docker/setup-buildx-action@v3"},
        {
            "name": "Log in to registry",
            "if": "github.event_name != 'pull_request'",
            "uses": "docker/login-action@v3",
            "with": {
                "registry": "ghcr.io",
                "username": "${{ github.actor }}",
                "password": "${{ secrets.GITHUB_TOKEN }}",
            },
        },
        {
            "name": "Build and push",
            "uses": "docker/build-push-action@v6",
            "with": {
                "context": ".",
                "platforms": platforms,
                "push": "${{ github.event_name != 'pull_request' }}",
            },
        },
    ]
    return {
        "name": rng.choice(["Docker", "Publish image", "docker-build"]),
        "on": {"push": {"branches": [default_branch], "tags": ["v*"]}, "pull_request": None},
        "jobs": {
            "docker": {
                "runs-on": "ubuntu-latest",
                "timeout-minutes": rng.choice([60, 120]),
                "steps": steps,
            }
        },
    }


def _docs(rng: random.Random, lang: _Lang, default_branch: str) -> dict[str, Any]:
    return {
        "name": "Docs",
        "on": {
            "push": {"branches": [default_branch], "paths": ["docs/**"]},
            "workflow_dispatch": None,
        },
        "jobs": {
            "docs": {
                "runs-on": "ubuntu-latest",
                "steps": [
                    _checkout(rng),
                    *_setup(lang, lang.versions[-1], False),
                    _run("Build docs", "make -C docs html"),
                    {
                        "uses": "actions/upload-pages-artifact@v3",
                        "with": {"path": "docs/_build/html"},
                    },
                ],
            },
            "deploy": {
                "needs": "docs",
                "if": f"github.ref == 'refs/heads/{default_branch}'",
                "runs-on": "ubuntu-latest",
                "environment": "github-pages",
                "steps": [{"name": "Deploy to GitHub Pages", "uses": "actions/deploy-pages@v4"}],
            },
        },
    }


def _nightly(rng: random.Random, lang: _Lang) -> dict[str, Any]:
    return {
        "name": "Nightly",
        "on": {
            "schedule": [{"cron": f"{rng.randrange(60)} {rng.randrange(24)} * * *"}],
            "workflow_dispatch": None,
        },
        "jobs": {
            "full-suite": {
                "runs-on": "ubuntu-latest",
                "timeout-minutes": 120,
                "steps": [
                    _checkout(rng),
                    *_setup(lang, lang.versions[-1], False),
                    _run("Install", lang.install),
                    _run("Build", lang.build),
                    _run("Full test suite", lang.unit + "\n" + lang.integration),
                ],
            }
        },
    }


def _reusable(rng: random.Random, lang: _Lang) -> dict[str, Any]:
    return {
        "name": "Reusable build",
        "on": {
            "workflow_call": {
                "inputs": {
                    "version": {"type": "string", "required": False, "default": lang.versions[-1]}
                }
            }
        },
        "jobs": {
            "build": {
                "name": "Build",
                "runs-on": "ubuntu-latest",
                "steps": [
                    _checkout(rng),
                    *_setup(lang, "${{ inputs.version }}", True),
                    _run("Install", lang.install),
                    _run("Build", lang.build),
                ],
            },
            "check": {
                "needs": "build",
                "runs-on": "ubuntu-latest",
                "steps": [_checkout(rng), _run("Check", lang.lint)],
            },
        },
    }


def _mutate(rng: random.Random, spec: dict[str, Any], language: str, lang: _Lang) -> dict[str, Any]:
    """One commit's change to a workflow: what maintainers typically do."""
    spec = copy.deepcopy(spec)
    jobs = spec["jobs"]
    key = rng.choice(sorted(k for k, j in jobs.items() if "steps" in j))
    job = jobs[key]
    steps = job["steps"]
    choice = rng.random()
    matrix = job.get("strategy", {}).get("matrix")
    if choice < 0.3 and matrix and lang.version_key in matrix:
        have = matrix[lang.version_key]
        extra = [v for v in lang.versions if v not in have]
        if extra:
            have.append(extra[0])
        elif len(have) > 1:
            have.pop(0)
    elif choice < 0.5 and not any("actions/cache" in str(s.get("uses", "")) for s in steps):
        steps.insert(min(2, len(steps)), _cache_step(language))
    elif choice < 0.65 and len(steps) > 3:
        steps.pop(rng.randrange(2, len(steps)))
    elif choice < 0.8:
        for s in steps:
            if s.get("uses", "").startswith("actions/checkout@v3"):
                s["uses"] = "actions/checkout@v4"
                break
        else:
            job["timeout-minutes"] = int(job.get("timeout-minutes", 30)) + 10
    else:
        steps.append(_run("Check formatting", lang.lint))
    return spec


def draft_workflows(
    rng: random.Random, language: str, default_branch: str, count: int, changes: int
) -> list[WorkflowDraft]:
    """`count` workflows for one repository, each with 1 + about `changes` versions."""
    lang = LANGUAGES[language]
    drafts: list[WorkflowDraft] = []
    pool = ["docker", "docs", "nightly", "ci2", "reusable"]
    if language in ("Python", "C++", "Rust") and rng.random() < 0.5:
        pool[0] = "wheels"
    kinds = ["ci", *rng.sample(pool, k=4)][:count]
    # bots come on top of a repository's CI: cheap, seconds-long, and common
    if count and rng.random() < 0.4:
        kinds.append("labeler")
    if count and rng.random() < 0.25:
        kinds.append("stale")
    for kind in kinds:
        if kind in ("ci", "ci2"):
            spec = _ci(rng, language, lang, default_branch)
            path = ".github/workflows/" + (
                "ci.yml" if kind == "ci" else rng.choice(["tests.yml", "main.yaml", "build.yml"])
            )
            if kind == "ci2":
                spec["name"] = "Tests " + rng.choice(["(extended)", "matrix", "all"])
        elif kind == "docker":
            spec, path = _docker(rng, default_branch), ".github/workflows/docker.yml"
        elif kind == "docs":
            spec, path = _docs(rng, lang, default_branch), ".github/workflows/docs.yml"
        elif kind == "nightly":
            spec, path = _nightly(rng, lang), ".github/workflows/nightly.yml"
        elif kind == "labeler":
            spec, path = _labeler(rng), ".github/workflows/labeler.yml"
        elif kind == "stale":
            spec, path = _stale(rng), ".github/workflows/stale.yml"
        elif kind == "wheels":
            spec, path = _wheels(rng, lang, default_branch), ".github/workflows/wheels.yml"
        else:
            callee = _reusable(rng, lang)
            drafts.append(
                WorkflowDraft(
                    ".github/workflows/reusable-build.yml", callee["name"], "reusable", [callee]
                )
            )
            spec = {
                "name": "Release",
                "on": {
                    "push": {"tags": ["v*"], "branches": [default_branch]},
                    "workflow_dispatch": None,
                },
                "jobs": {
                    "call-build": {
                        "uses": "./.github/workflows/reusable-build.yml",
                        "with": {"version": lang.versions[-1]},
                    },
                    "publish": {
                        "needs": "call-build",
                        "runs-on": "ubuntu-latest",
                        "if": "startsWith(github.ref, 'refs/tags/')",
                        "steps": [
                            _checkout(rng),
                            _run("Publish", "echo publishing ${{ github.ref_name }}"),
                        ],
                    },
                },
            }
            path = ".github/workflows/release.yml"
            kind = "release"
        versions = [spec]
        for _ in range(changes if kind not in ("release", "labeler", "stale", "wheels") else 0):
            if rng.random() < 0.7:
                versions.append(_mutate(rng, versions[-1], language, lang))
        drafts.append(WorkflowDraft(path, str(spec["name"]), kind, versions))
    return drafts


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


def _none_representer(dumper: yaml.SafeDumper, data: None) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:null", "")


_Dumper.add_representer(str, _str_representer)
_Dumper.add_representer(type(None), _none_representer)


def render_yaml(spec: dict[str, Any]) -> str:
    """The file text as a person would write it (block style, `on:` unquoted)."""
    text = yaml.dump(
        spec, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000, indent=2
    )
    # (None is already written empty, by _none_representer: no `: null` to replace, and one
    # replaced would be in a block of text, a `run:` that says "key: null")
    return (
        text.replace("\n'on':", "\non:").replace("'on':\n", "on:\n", 1)
        if text.startswith("'on'")
        else text.replace("\n'on':", "\non:")
    )
