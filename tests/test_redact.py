"""gharuntime.redact: every shape of credential a location carries is masked, and text without
one is left exactly as it was (the module is applied to every error and every printed line)."""

from __future__ import annotations

import json

import pytest

from gharuntime.errors import GharuntimeError
from gharuntime.redact import MASK, redact

PASSWORD = "Pw" + "S3cr3tValue" * 2


@pytest.mark.parametrize(
    "text",
    [
        f"https://someone:{PASSWORD}@host/x",
        f"https://{PASSWORD}@github.com/o/r",
        f"http://someone:p@{PASSWORD}@host/x",
        f"http://someone:p/{PASSWORD}@host/x",
        f"ftp://u:{PASSWORD}@h",
        f"hf://u:{PASSWORD}@org/ds",
        f"https://h/x?token={PASSWORD}&rev=main",
        f"https://h/x?api_key={PASSWORD}",
        f"https://h/x?sig={PASSWORD}#top",
        f"someone:{PASSWORD}@host/org/ds",
        f"error: 'https://u:{PASSWORD}@h/a' and \"https://u:{PASSWORD}@h/b\"",
    ],
)
def test_a_credential_is_masked(text: str) -> None:
    got = redact(text)
    assert PASSWORD not in got and MASK in got
    assert PASSWORD not in str(GharuntimeError(text, where=text, fix=text))


@pytest.mark.parametrize(
    "text",
    [
        "org/name@v1.0",
        "user@example.org",
        "a=b",
        "https://h/x?rev=main",
        "x:y",
        "git@github.com:o/r",
    ],
)
def test_text_without_a_credential_is_unchanged(text: str) -> None:
    assert redact(text) == text


def test_json_stays_json() -> None:
    doc = {"a": f"https://u:{PASSWORD}@h/x", "b": ["c@d", "http://e"], "q": 'x"@y'}
    text = redact(json.dumps(doc))
    assert PASSWORD not in text
    assert json.loads(text)["b"] == ["c@d", "http://e"]
