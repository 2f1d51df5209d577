"""Credentials in a location a user gave (a dataset argument, `$GHARUNTIME_DATASET`, an
endpoint), removed from any text before it is shown: every error's str() (gharuntime.errors)
and every line the command line prints (gharuntime.cli.output) pass through `redact`, so a
`https://user:PASSWORD@host/...` named anywhere shows as `https://***@host/...`. Imports nothing
from gharuntime, so the error base can use it."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MASK", "redact"]

MASK: Final = "***"

# user[:password]@ after a scheme. The userinfo ends at the last `@` before a space, quote or
# bracket (a password may hold `@`, and one written with a raw `/` or `:` is caught too, a path
# segment with an `@` after it being masked in the rare case it is not a password).
_USERINFO: Final = re.compile(r"(?<=://)[^\s\"'<>`]*@")
# user:password@host with no scheme (scp-like, `alice:pw@host/x`)
_BARE: Final = re.compile(r"(?<![\w.+%-])([\w.+%-]+):[^\s\"'<>`@/]+@(?=[\w.-])")
# a secret carried in a URL's query string (?token=..., &password=..., ?sig=...)
_QUERY: Final = re.compile(
    r"(?i)([?&](?:[\w.-]*(?:token|passw(?:or)?d|secret|api[_-]?key|auth\w*|credential\w*)|"
    r"key|sig|signature|pwd|pass)=)[^\s\"'<>`&#]+"
)


def redact(text: str) -> str:
    """`text` with every credential a URL or `user:password@host` location carries replaced by
    ***; text without one is returned unchanged."""
    if "@" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(MASK + "@", text)
    text = _BARE.sub(lambda m: f"{m[1]}:{MASK}@", text)
    return _QUERY.sub(lambda m: m[1] + MASK, text)
