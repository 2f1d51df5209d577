"""Text from a file (a manifest, a result, a dataset's rows) written into Markdown we publish (a
release diff, a dataset card, the leaderboard), escaped in one place so it shows as written and
cannot open a heading, a list, a tag, a comment, a link, emphasis or a code span, or end a table
cell or a line."""

from __future__ import annotations

import html
import re
from typing import Final

__all__ = ["code", "md"]

# line and paragraph breaks, and every other control character
_BREAKS: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# the inline punctuation of Markdown, `#` (a heading wherever a block starts: after `- `, in a
# table-less line) and `!` (an image before `[`)
_SPECIAL: Final = re.compile(r"([\\`*_\[\]|~#!])")
# what starts a block when it opens the text: a list item (`- `, `+ `, `1. `, `2) `; a marker
# needs a space or the end after it) or a setext heading's underline (`===`)
_BLOCK_START: Final = re.compile(r"^(\s*)(?:(\d{1,9})([.)])|([-+]))(?=\s|$)|^(\s*)(=+\s*)$")


def _unblock(m: re.Match[str]) -> str:
    if m[5] is not None:
        return f"{m[5]}\\{m[6]}"
    if m[4] is not None:
        return f"{m[1]}\\{m[4]}"
    return f"{m[1]}{m[2]}\\{m[3]}"


def md(text: object) -> str:
    """`text` as literal Markdown inline text: one line, HTML as entities, Markdown's
    punctuation backslash-escaped (a `|` cannot end a table cell)."""
    plain = _BREAKS.sub(" ", str(text))
    escaped = _SPECIAL.sub(r"\\\1", html.escape(plain, quote=False))
    return _BLOCK_START.sub(_unblock, escaped)


def code(text: object) -> str:
    """`text` in a code span, literal (HTML is not read inside one): a backtick or a line break
    could end or split it, so none stays, and `|`, which ends a table cell even inside a code
    span, is escaped."""
    return "`" + _BREAKS.sub(" ", str(text)).replace("`", "'").replace("|", "\\|") + "`"
