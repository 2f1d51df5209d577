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

REDACTED = "***"  # what GitHub writes for a masked secret

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
    (
        # A key pasted without its END line (cut off, or the log truncated): the BEGIN line and
        # every following line of base64 (each maybe after the log's timestamp), or key text
        # on the BEGIN line itself.
        "private-key-unterminated",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[ \t]+[A-Za-z0-9+/=]+)*"
            r"(?:\r?\n(?:\d{4}-\d\d-\d\dT[\d:.]+Z )?[ \t]*"
            r"(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: [^\n]*)[ \t]*(?=\r?\n|$))*"
        ),
    ),
    ("github-fine-grained", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[A-Z0-9]{16}\b")),
    (
        # Any length: GitHub masks the value whatever it is, and the simulated logs hold
        # secrets of 36 characters as well as AWS's usual 40.
        "aws-secret-key",
        re.compile(
            r"(?i)(?<=aws_secret_access_key)(\s*[:=]\s*[\"']?)(?!\*\*\*)[A-Za-z0-9/+=]{8,}(?![A-Za-z0-9/+=])"
        ),
    ),
    ("openai-key", re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("pypi-token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    ("stripe-key", re.compile(r"\b[rs]k_live_[A-Za-z0-9]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("basic-auth-url", re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)")),
    (
        # Authorization: Bearer X, authorization:bearer X, Authorization = token X, ...
        "bearer",
        re.compile(
            r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token|basic)\s+)"
            r"(?!\*\*\*)[A-Za-z0-9._~+/=-]{8,}"
        ),
    ),
    (
        "azure-account-key",
        re.compile(r"(?i)(\b(?:AccountKey|SharedAccessKey)\s*=\s*)(?!\*\*\*)[A-Za-z0-9+/=]{16,}"),
    ),
    (
        # docker login -p X / --password X / --password=X
        "docker-login-password",
        re.compile(
            r"(\bdocker\s+login\b[^\n]*?\s(?:-p|--password)(?:\s+|=)[\"']?)(?!\*\*\*)[^\s\"']+"
        ),
    ),
    (
        # password=X, PASSWORD: X, passwd=X, client_secret=X (a value that is not a mask, a
        # variable or a template)
        "password-assignment",
        re.compile(
            r"(?i)(\b(?:[a-z0-9_]*_)?(?:password|passwd|pwd|client_secret|api_key|secret_key)"
            r"[\"']?\s*[=:]\s*[\"']?)(?![*$%{<])[^\s\"'&;,]+"
        ),
    ),
)

_KEEP_PREFIX = {
    "aws-secret-key",
    "bearer",
    "azure-account-key",
    "docker-login-password",
    "password-assignment",
}


def _sub(name: str, pattern: re.Pattern[str], text: str) -> str:
    if name in _KEEP_PREFIX:
        # Keep the name and separator captured before the secret; replace only the secret.
        return pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return pattern.sub(REDACTED, text)


# Something every pattern above needs somewhere in the (lower-cased) text. Most logs hold none,
# and these substring searches are far faster than twenty regular expressions over the log:
# redaction runs on every log a crawl downloads.
_TRIGGERS = (
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "akia",
    "asia",
    "agpa",
    "aida",
    "aroa",
    "anpa",
    "anva",
    "secret",
    "sk-",
    "xox",
    "hooks.slack",
    "aiza",
    "npm_",
    "pypi-",
    "k_live_",
    "eyj",
    "://",
    "authorization",
    "accountkey",
    "sharedaccesskey",
    "login",
    "passw",
    "pwd",
    "api_key",
    "private key",
)


def redact(text: str) -> str:
    """Replace common secret shapes with `***`, as GitHub masks a known secret; its masks stay."""
    low = text.lower()
    if not any(t in low for t in _TRIGGERS):
        return text
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
