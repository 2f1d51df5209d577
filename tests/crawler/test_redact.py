from __future__ import annotations

import pytest

from gharuntime.crawler.redact import REDACTED, Scrubber, redact

# Fake secrets assembled at run time, so no secret-shaped literal sits in the source.
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
JWT = (
    "eyJhbGciOiJIUzI1NiJ9"
    + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0"
    + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)


@pytest.mark.parametrize(
    "secret", [GHP, PAT, AWS, SLACK, JWT, "gho_" + "x" * 36, "ghs_" + "Y" * 36]
)
def test_token_shapes_are_replaced(secret: str) -> None:
    out = redact(f"2025-01-01T00:00:00Z echo {secret} done")
    assert secret not in out
    assert REDACTED in out and out.endswith(" done")


def test_private_key_block_is_replaced_whole() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nIBAAKC\n-----END RSA PRIVATE KEY-----"
    out = redact(f"key:\n{block}\nafter")
    assert "MIIEow" not in out and "BEGIN" not in out and out.endswith("\nafter")


def test_aws_secret_keeps_its_name() -> None:
    out = redact("aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    assert out == f"aws_secret_access_key = {REDACTED}"


def test_github_masks_stay() -> None:
    text = "Run echo ***\n***\npassword=***"
    assert redact(text) == text


def test_ordinary_log_text_is_untouched() -> None:
    text = "##[group]Run actions/checkout@v4\nsha 0123456789abcdef0123456789abcdef01234567\n"
    assert redact(text) == text


def test_scrubber_removes_exact_tokens_of_any_shape() -> None:
    scrub = Scrubber(["plain-token-without-prefix"])
    out = scrub("Authorization: Bearer plain-token-without-prefix failed")
    assert "plain-token-without-prefix" not in out
