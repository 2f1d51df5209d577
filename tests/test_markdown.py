"""gharuntime.markdown: text from a file shows as written in the Markdown we publish."""

from __future__ import annotations

import pytest

from gharuntime.markdown import code, md


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("<b>#1</b> | x", "&lt;b&gt;\\#1&lt;/b&gt; \\| x"),
        ("- a", "\\- a"),
        ("1. a", "1\\. a"),
        ("===", "\\==="),
        ("a\n# b", "a \\# b"),
        ("![i](u)", "\\!\\[i\\](u)"),
        ("2.0", "2.0"),
        ("-1", "-1"),
        ("gharuntime-sim-small", "gharuntime-sim-small"),
    ],
)
def test_md(text: str, want: str) -> None:
    assert md(text) == want


def test_code() -> None:
    assert code("a`b|c\nd") == "`a'b\\|c d`"


def _outside_code_spans(text: str) -> str:
    """The text GitHub would scan for mentions and links: everything outside code spans."""
    import re

    return re.sub(r"(`+)(?:(?!\1).)*?\1", "", text)


@pytest.mark.parametrize(
    "text",
    [
        "deploy @octocat",
        "@org/team review",
        "cc @a-b, please",
        "mail admin@example.com",
        "see https://evil.example/x?y=1 now",
        "or http://a.b",
        "www.example.com/path",
        "WWW.EXAMPLE.COM",
        "x`@y`z @q",
    ],
)
def test_no_mention_or_bare_url_stays_live(text: str) -> None:
    """GitHub notifies `@user` and `@org/team` and links URLs and addresses in comments, but
    never inside a code span: each such word is set in one."""
    out = md(text)
    live = _outside_code_spans(out)
    assert "@" not in live and "://" not in live and "www." not in live.lower(), out


def test_a_code_span_keeps_the_word_as_written_and_ends_no_cell() -> None:
    assert md("deploy @octocat") == "deploy `@octocat`"
    assert md("a@b|c") == "`a@b\\|c`"
    assert md("x`@y`") == "`` x`@y` ``"


@pytest.mark.parametrize(
    "char", ["\u202e", "\u202d", "\u2066", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]
)
def test_invisible_characters_are_written_as_escapes(char: str) -> None:
    out = md(f"safe{char}name") + code(f"safe{char}name") + md(f"@safe{char}name")
    assert char not in out
    assert f"\\u{ord(char):04x}" in out
