"""The price table: the shipped, dated one is complete and says where its rates come from; a
price file that cannot be used is refused whole, naming its line and the fix."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from gharuntime.billing.prices import (
    MAX_PRICE_FILE_BYTES,
    PriceError,
    default_prices,
    load_prices,
    parse_prices,
)
from gharuntime.billing.runners import KINDS

# GitHub's "Actions runner pricing", rates "January 1, 2026 onward" (github/docs
# content/billing/reference/actions-runner-pricing.md and the standard-runner table it renders,
# data/reusables/billing/actions-standard-runner-prices.md; read 2026-12-01), typed here from
# the page, a row of each table.
DOCS_2026 = {
    "linux_slim": 0.002,
    "linux": 0.006,
    "linux_arm": 0.005,
    "windows": 0.010,
    "windows_arm": 0.010,
    "macos": 0.062,
    "linux_2_core_advanced": 0.006,
    "linux_96_core": 0.252,
    "windows_96_core": 0.552,
    "macos_l": 0.077,
    "linux_64_core_arm": 0.098,
    "windows_2_core_arm": 0.008,
    "macos_xl": 0.102,
    "linux_4_core_gpu": 0.052,
    "windows_4_core_gpu": 0.102,
}


def test_the_shipped_table_prices_every_kind_with_githubs_dated_rates() -> None:
    table = default_prices()
    assert set(table.rates) == set(KINDS)
    for kind, rate in DOCS_2026.items():
        assert table.rates[kind] == rate, kind
    assert table.source == "https://docs.github.com/en/billing/reference/actions-runner-pricing"
    assert table.rates_from == date(2026, 1, 1)
    assert table.read_on == date(2026, 12, 1)
    # "Standard GitHub-hosted or self-hosted runner usage on public repositories will remain
    # free"; larger runners "are always charged for, even when used by public repositories".
    assert table.free_in_public == {
        "linux_slim",
        "linux",
        "linux_arm",
        "windows",
        "windows_arm",
        "macos",
        "self_hosted",
    }


def test_a_file_in_the_same_format_overrides_the_table(tmp_path: Path) -> None:
    path = tmp_path / "ours.yml"
    path.write_text(
        "source: our contract with GitHub\nrates_from: 2026-07-01\n"
        "rates:\n  linux: 0.005\n  self_hosted: 0.0125\nfree_in_public: []\n"
        "labels:\n  build-farm: self_hosted\n"
    )
    table = load_prices(path)
    assert table.rates == {"linux": 0.005, "self_hosted": 0.0125}
    assert table.labels == {"build-farm": "self_hosted"}
    assert table.free_in_public == frozenset()
    assert table.provenance() == {
        "file": str(path),
        "source": "our contract with GitHub",
        "read_on": None,
        "rates_from": "2026-07-01",
    }


@pytest.mark.parametrize(
    ("text", "line", "message", "fix"),
    [
        ("rates:\n  linux: [0.006\n", 3, "does not parse as YAML", "fix the YAML"),
        ("rates:\n  linux: 0.006\n  windows: -0.01\n", 3, "at least 0", "0 for a runner"),
        ("rates:\n  linux: .nan\n", 2, "finite number", "USD per minute"),
        ("rates:\n  linux: .inf\n", 2, "finite number", "USD per minute"),
        ("rates:\n  linux: $0.006\n", 2, "not a number", "no $ sign"),
        ("rates:\n  linux: '0.006'\n", 2, "not a number", "no quotes"),
        ("rates:\n  linux: true\n", 2, "not a number", "plain number"),
        (
            "rates:\n  linux: 0.006\n  linux-8-core: 0.02\n",
            3,
            "unknown runner kind",
            "linux_8_core",
        ),
        ("rates:\n  linux: 0.006\n  linux: 0.007\n", 3, "given twice", "keep one"),
        (
            "rates:\n  linux: 0.006\nfree_in_public: [linux, mac]\n",
            3,
            "unknown runner kind",
            "macos",
        ),
        (
            "rates:\n  linux: 0.006\nlabels:\n  big: linux_12_core\n",
            4,
            "unknown runner kind",
            "kinds",
        ),
        (
            "rates: {linux: 0.006}\nrates_form: 2026-01-01\n",
            2,
            "unknown key `rates_form`",
            "rates_from",
        ),
        ("rates: {linux: 0.006}\nrates_from: January 2026\n", 2, "not a date", "YYYY-MM-DD"),
        ("rates:\n  - linux\n", 2, "must be a mapping", "key: value"),
        ("- 0.006\n", 1, "must be a mapping", "key: value"),
    ],
)
def test_a_bad_price_file_names_the_line_and_the_fix(
    tmp_path: Path, text: str, line: int, message: str, fix: str
) -> None:
    path = tmp_path / "prices.yml"
    path.write_text(text)
    with pytest.raises(PriceError) as caught:
        load_prices(path)
    err = caught.value
    assert err.line == line, str(err)
    assert message in err.message and fix in err.fix, str(err)
    assert str(err).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "is empty"),
        (b"source: x\n", "has no `rates:`"),
        (b"rates:\n  linux: 0.006 # \xff\n", "not UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
        (b"#" * (MAX_PRICE_FILE_BYTES + 1), "over"),
    ],
)
def test_files_that_are_no_price_table_at_all_are_refused(
    tmp_path: Path, raw: bytes, message: str
) -> None:
    path = tmp_path / "prices.yml"
    path.write_bytes(raw)
    with pytest.raises(PriceError, match=message):
        load_prices(path)


def test_a_json_price_file_reads_too() -> None:
    table = parse_prices('{"rates": {"linux": 0.004, "macos": 0.05}}', "p.json")
    assert table.rates == {"linux": 0.004, "macos": 0.05}
