"""Text from a file (a manifest, a result, a dataset's rows) written into Markdown we publish (a
release diff, a dataset card, the leaderboard, a pull-request comment), escaped in one place so
it shows as written and cannot open a heading, a list, a tag, a comment, a link, emphasis or a
code span, or end a table cell or a line. Nor can it reach anyone: a word holding `@` (a
mention of a user or a team, an e-mail address) or a URL (`https://...`, `www.`) is set in a
code span, where GitHub links and notifies nobody, and an invisible character (a bidirectional
override such as U+202E, a zero-width space or joiner, any other format character) is written
as its `\u202e` escape, as the table and JSON output show it."""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Final

__all__ = ["INVISIBLE", "code", "md"]

INVISIBLE: Final = (
    "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
)
"""The format characters a name could hide or reorder text with (bidirectional controls,
zero-width spaces and joiners, the soft hyphen, the BOM), as a regex character class's body;
md() also escapes any other character of Unicode's category Cf."""
# a word GitHub would link or notify: a mention or e-mail (`@`), a URL or a www. address
_LIVE: Final = re.compile(r"\S*(?:@|://|\bwww\.)\S*", re.IGNORECASE)

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


def _visible(text: str) -> str:
    """Every format character (Cf: bidirectional controls, zero-width ones) as `\u202e`."""
    return "".join(f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cf" else c for c in text)


def _span(word: str) -> str:
    """`word` as a code span, literal whatever it holds (a fence longer than any run of
    backticks in it; `|`, which ends a table cell even there, escaped)."""
    longest = max((len(run) for run in re.findall(r"`+", word)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if word.startswith("`") or word.endswith("`") else ""
    return f"{fence}{pad}{word.replace('|', chr(92) + '|')}{pad}{fence}"


def _inline(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def md(text: object) -> str:
    """`text` as literal Markdown inline text: one line, HTML as entities, Markdown's
    punctuation backslash-escaped (a `|` cannot end a table cell), invisible characters as
    escapes, and a word GitHub would link or notify (`@user`, `@org/team`, an address, a URL)
    in a code span."""
    plain = _visible(_BREAKS.sub(" ", str(text)))
    out: list[str] = []
    last = 0
    for m in _LIVE.finditer(plain):
        out.append(_inline(plain[last : m.start()]))
        out.append(_span(m[0]))
        last = m.end()
    out.append(_inline(plain[last:]))
    return _BLOCK_START.sub(_unblock, "".join(out))


def code(text: object) -> str:
    """`text` in a code span, literal (HTML is not read inside one): a backtick or a line break
    could end or split it, so none stays, and `|`, which ends a table cell even inside a code
    span, is escaped."""
    return "`" + _visible(_BREAKS.sub(" ", str(text))).replace("`", "'").replace("|", "\\|") + "`"
