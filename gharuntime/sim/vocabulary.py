"""The words a simulated world draws its names, topics, branches and commit messages from."""

from __future__ import annotations

__all__ = [
    "ADJECTIVES",
    "BRANCHES",
    "COMMIT_AUTHORS",
    "COMMIT_MESSAGES",
    "LANGUAGE_WEIGHTS",
    "NAME_SUFFIXES",
    "NOUNS",
    "SECOND_LANGUAGE",
    "STEP_TZ_OFFSETS",
    "TOPICS",
]

ADJECTIVES = (
    "quick",
    "lazy",
    "brave",
    "calm",
    "eager",
    "fancy",
    "happy",
    "jolly",
    "kind",
    "lucky",
    "mighty",
    "noble",
    "proud",
    "silly",
    "witty",
    "zesty",
    "rapid",
    "shiny",
    "tiny",
    "vast",
)
NOUNS = (
    "otter",
    "falcon",
    "badger",
    "comet",
    "engine",
    "forge",
    "garden",
    "harbor",
    "island",
    "lantern",
    "meadow",
    "nebula",
    "orbit",
    "pixel",
    "quartz",
    "river",
    "summit",
    "tensor",
    "vertex",
    "widget",
)
NAME_SUFFIXES = ("py", "js", "rs", "go", "core", "kit", "lab", "hub", "cli", "lib", "app", "sdk")
TOPICS = (
    "cli",
    "api",
    "web",
    "machine-learning",
    "devops",
    "database",
    "testing",
    "docker",
    "kubernetes",
    "library",
    "framework",
    "parser",
    "compiler",
    "game",
    "security",
)
LANGUAGE_WEIGHTS = (
    ("Python", 26),
    ("JavaScript", 14),
    ("TypeScript", 16),
    ("Go", 10),
    ("Rust", 8),
    ("Java", 9),
    ("Ruby", 4),
    ("C++", 6),
    ("PHP", 3),
    ("C#", 4),
)
COMMIT_MESSAGES = (
    "Fix typo in README",
    "Bump dependencies",
    "Add tests for parser",
    "Refactor config loading",
    "Fix flaky test",
    "Update CI",
    "Improve error messages",
    "Add caching",
    "Release v{v}",
    "Merge pull request #{pr} from {owner}/{branch}",
    "Handle empty input",
    "Speed up build",
    "Docs: clarify install steps",
)
BRANCHES = (
    "feature/cache",
    "fix/parser",
    "dependabot/pip/requests-2.32.0",
    "refactor/core",
    "docs/readme",
    "feat/cli",
    "fix/windows-paths",
)
STEP_TZ_OFFSETS = (-480, -420, 60, 330)  # minutes: the UTC offsets of the step-time quirk
SECOND_LANGUAGE = {
    "Python": ("C++", "Rust", "JavaScript"),  # native extensions, a web front end
    "JavaScript": ("TypeScript", "C++"),
    "TypeScript": ("JavaScript", "Rust"),
    "Go": ("JavaScript", "C++"),
    "Rust": ("C++", "Python"),
    "Java": ("C++", "JavaScript"),
    "Ruby": ("JavaScript", "C++"),
    "C++": ("Python", "C#"),
    "PHP": ("JavaScript", "TypeScript"),
    "C#": ("C++", "TypeScript"),
}
"""The other language a repository's build compiles, hidden behind its largest language."""

COMMIT_AUTHORS: tuple[str, ...] = ("alice", "bob", "carol", "dave", "dependabot[bot]")
"""Who writes the world's commits (the first commit of every repository is alice's)."""
