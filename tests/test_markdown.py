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
