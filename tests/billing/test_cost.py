"""Seconds → billed minutes → USD, checked against the worked examples in GitHub's own billing
documentation ("GitHub Actions billing", github/docs
content/billing/concepts/product-billing/github-actions.md, and "Actions runner pricing",
content/billing/reference/actions-runner-pricing.md; read 2026-12-01)."""

from __future__ import annotations

import pytest

from gharuntime.billing.cost import JobTime, bill, billed_minutes, price_jobs
from gharuntime.billing.prices import PriceTable, default_prices, parse_prices

# The standard-runner rates "until January 1, 2026", the rates GitHub's worked example of a
# minutes cost still uses, and its self-hosted cloud-platform rate, written as a price file.
RATES_2025 = parse_prices(
    "source: https://docs.github.com/en/billing/reference/actions-runner-pricing\n"
    "rates_from: 2025-01-01\n"
    "rates:\n  linux: 0.008\n  windows: 0.016\n  macos: 0.080\n  self_hosted: 0.002\n"
    "free_in_public: [linux, windows, macos, self_hosted]\n",
    "rates-2025.yml",
)


def _run(prices: PriceTable, *jobs: tuple[str, float], public: bool = False) -> dict:
    cost = price_jobs([JobTime((label,), s) for label, s in jobs], prices, public=public)
    return cost.to_json()


def test_github_rounds_each_jobs_partial_minutes_up() -> None:
    # "GitHub rounds the minutes and partial minutes each job uses up to the nearest whole minute."
    assert [billed_minutes(s) for s in (0, 1, 59.9, 60, 60.001, 61, 600, 3599)] == [
        0, 1, 1, 1, 2, 2, 10, 60,
    ]  # fmt: skip


def test_rounding_is_per_job_not_per_run() -> None:
    # Three 10-second jobs are billed three minutes, not the half minute they add up to.
    run = _run(RATES_2025, *[("ubuntu-latest", 10.0)] * 3)
    assert run["billed_minutes"] == 3
    assert run["cost_usd"] == pytest.approx(3 * 0.008)


def test_usage_examples_ten_minutes_and_a_failed_run_retried() -> None:
    # "If you run a workflow on a Linux runner and it takes 10 minutes to complete, you'll use
    # 10 minutes"; failing "after 5 minutes" and re-running successfully, "in total you'll use
    # 15 minutes".
    assert _run(RATES_2025, ("ubuntu-latest", 600.0))["billed_minutes"] == 10
    assert (
        _run(RATES_2025, ("ubuntu-latest", 300.0), ("ubuntu-latest", 600.0))["billed_minutes"] == 15
    )


def test_example_minutes_cost_calculation_is_56_dollars() -> None:
    # "5,000 (3,000 Linux and 2,000 Windows) minutes = $56 USD ($24 USD + $32 USD).
    #  3,000 Linux minutes at $0.008 USD per minute = $24 USD.
    #  2,000 Windows minutes at $0.016 USD per minute = $32 USD."
    linux = [("ubuntu-latest", 3600.0)] * 50  # 50 jobs of an hour: 3,000 minutes
    windows = [("windows-latest", 6000.0)] * 20  # 20 jobs of 100 minutes: 2,000 minutes
    assert _run(RATES_2025, *linux)["cost_usd"] == pytest.approx(24.0)
    assert _run(RATES_2025, *windows)["cost_usd"] == pytest.approx(32.0)
    both = _run(RATES_2025, *linux, *windows)
    assert (both["billed_minutes"], both["cost_usd"]) == (5000, pytest.approx(56.0))


def test_example_self_hosted_cost_is_10_dollars_for_5000_minutes() -> None:
    # "using 5,000 minutes on self-hosted runners would have a total actions minutes cost of
    # $10 USD ... Calculation: 5,000 * $0.002 USD per minute = $10 USD"
    jobs = [JobTime(("self-hosted", "linux"), 3000.0)] * 100
    assert price_jobs(jobs, RATES_2025, public=False).to_json()["cost_usd"] == pytest.approx(10.0)


def test_os_minute_multipliers_where_the_docs_state_them() -> None:
    # "jobs that run on Windows and macOS runners hosted by GitHub consume minutes at 2 and 10
    # times the rate that jobs on Linux runners consume" (Linux 1, Windows 2, macOS 10): so
    # they are at the rates until 2026. The 2026 page replaced the multipliers with per-minute
    # costs, whose ratios are no longer 2 and 10.
    def per_os(prices: PriceTable) -> tuple[float, float]:
        linux, windows, macos = (
            bill(600, kind, prices, public=False).cost_usd for kind in ("linux", "windows", "macos")
        )
        return windows / linux, macos / linux

    assert per_os(RATES_2025) == pytest.approx((2.0, 10.0))
    assert per_os(default_prices()) == pytest.approx((0.010 / 0.006, 0.062 / 0.006))


def test_public_repositories_pay_nothing_on_standard_runners_but_pay_for_larger_ones() -> None:
    prices = default_prices()
    public = _run(prices, ("macos-latest", 600.0), ("ubuntu-22.04-16core", 600.0), public=True)
    assert public["billed_minutes"] == 10  # the larger runner's 10 minutes only
    assert public["cost_usd"] == pytest.approx(10 * 0.042)
    private = _run(prices, ("macos-latest", 600.0), ("ubuntu-22.04-16core", 600.0))
    assert private["cost_usd"] == pytest.approx(10 * 0.062 + 10 * 0.042)
    assert (public["billing"]["repository"], private["billing"]["repository"]) == (
        "public",
        "private",
    )


def test_an_interval_gives_the_bill_a_range_and_totals_sum_the_ranges() -> None:
    prices = default_prices()
    jobs = [
        JobTime(("ubuntu-latest",), 150.0, low_s=90.0, high_s=300.0),
        JobTime(("windows-latest",), 400.0, low_s=380.0, high_s=650.0),
    ]
    cost = price_jobs(jobs, prices, public=False)
    first = cost.jobs[0].to_json()
    assert (first["billed_minutes"], first["billed_minutes_range"]) == (3, [2, 5])
    assert first["cost_usd_range"] == pytest.approx([2 * 0.006, 5 * 0.006])
    run = cost.to_json()
    assert run["billed_minutes"] == 3 + 7
    assert run["billed_minutes_range"] == [2 + 7, 5 + 11]
    assert run["cost_usd_range"] == pytest.approx([2 * 0.006 + 7 * 0.01, 5 * 0.006 + 11 * 0.01])


def test_without_an_interval_the_point_is_billed_and_the_ranges_stay_null() -> None:
    cost = price_jobs(
        [JobTime(("ubuntu-latest",), 150.0, 90.0, 300.0), JobTime(("ubuntu-latest",), 30.0)],
        default_prices(),
        public=False,
    )
    assert cost.jobs[1].to_json()["billed_minutes_range"] is None
    run = cost.to_json()
    assert (run["billed_minutes"], run["billed_minutes_range"], run["cost_usd_range"]) == (
        4,
        None,
        None,
    )


def test_unpriced_jobs_are_left_out_of_the_totals_and_counted() -> None:
    prices = parse_prices("rates: {linux: 0.006}\n", "partial.yml")
    cost = price_jobs(
        [
            JobTime(("ubuntu-latest",), 61.0),
            JobTime(("my-runner",), 600.0),
            JobTime(("windows-latest",), 600.0),
        ],
        prices,
        public=False,
    )
    assert [j.kind for j in cost.jobs] == ["linux", None, "windows"]
    assert "`my-runner`" in (cost.jobs[1].unpriced or "")
    assert "no rate for `windows`" in (cost.jobs[2].unpriced or "")
    assert cost.jobs[2].to_json()["cost_usd"] is None
    run = cost.to_json()
    assert (run["billed_minutes"], run["billing"]["unpriced_jobs"]) == (2, 2)
