"""Remove secrets from text before it is stored or shown.

Two concerns: job logs may hold secrets GitHub did not know to mask (it masks registered secrets as
`***`, which we keep as they are), and our own messages must never carry the crawl's tokens.
`redact` replaces common credential shapes; `Scrubber` also replaces the exact strings it was
given (the tokens in use), so an error message quoting a header or URL cannot leak one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["PATTERNS", "REDACTED", "Scrubber", "redact"]

REDACTED = "[REDACTED]"

# (name, pattern). Each pattern matches the secret itself (not its surroundings), so the text
# around it keeps its meaning. Ordered so longer, more specific shapes win.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
            re.DOTALL,
        ),
    ),
    ("github-fine-grained", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[A-Z0-9]{16}\b")),
    (
        "aws-secret-key",
        re.compile(
            r"(?i)(?<=aws_secret_access_key)(\s*[:=]\s*[\"']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"
        ),
    ),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("pypi-token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    ("stripe-key", re.compile(r"\b[rs]k_live_[A-Za-z0-9]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("basic-auth-url", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
    (
        "bearer",
        re.compile(r"(?i)(?<=authorization: )(?:bearer|token|basic) [A-Za-z0-9._~+/=-]{8,}"),
    ),
)


def _sub(name: str, pattern: re.Pattern[str], text: str) -> str:
    if name == "aws-secret-key":
        # Keep the separator captured after the look-behind; replace only the key.
        return pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return pattern.sub(REDACTED, text)


def redact(text: str) -> str:
    """Replace common secret shapes with `[REDACTED]`; GitHub's own `***` masks stay as they are."""
    for name, pattern in PATTERNS:
        text = _sub(name, pattern, text)
    return text


class Scrubber:
    """Redacts common secret shapes and, above all, the exact token strings it was given."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def add(self, secret: str) -> None:
        """Also remove this string from everything scrubbed from now on."""
        if secret and secret not in self._secrets:
            self._secrets = sorted([*self._secrets, secret], key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "<token>")
        return redact(text)
