"""gharuntime.predict.spread: the run-level Δ's P10–P90 by its stated rule (joint draws: jobs
independent, a job on both sides drawn once), and the verdict against the repository's noise."""

from __future__ import annotations

import numpy as np
import pytest

from gharuntime.billing import default_prices, price_jobs
from gharuntime.billing.cost import JobTime
from gharuntime.predict.history import RunSpread
from gharuntime.predict.spread import delta_spread, judge
from gharuntime.predict.workflow import JobPrediction

Z90 = 1.2815515655446004


def _job(key: str, median: float, sigma: float, needs: tuple[str, ...] = ()) -> JobPrediction:
    """A job whose duration is log-normal: median `median`, log-sd `sigma`."""
    return JobPrediction(
        key=key,
        name=key,
        runner_labels=("ubuntu-latest",),
        runner_os="Linux",
        matrix=None,
        needs=needs,
        predicted={"duration_s": median},
        quantiles={
            "p10": median * np.exp(-Z90 * sigma),
            "p90": median * np.exp(Z90 * sigma),
            "p99": median * np.exp(2.3263478740408408 * sigma),
        },
    )


def _cost(jobs: list[JobPrediction]):  # type: ignore[no-untyped-def]
    times = [JobTime(j.runner_labels, j.predicted["duration_s"]) for j in jobs]
    return price_jobs(times, default_prices(), public=False)


def test_one_added_job_gives_its_own_p10_p90() -> None:
    job = _job("a", 600.0, 0.5)
    spread = delta_spread([(None, job)], [], _cost([]), [job], _cost([job]))
    assert spread is not None
    assert spread.p10["total_job_s"] == pytest.approx(job.quantiles["p10"], rel=0.05)
    assert spread.p90["total_job_s"] == pytest.approx(job.quantiles["p90"], rel=0.05)


def test_independent_jobs_add_up_narrower_than_their_ranges_summed() -> None:
    """n log-normal jobs drawn independently: the sum's P10–P90 is the sum's own quantiles
    (here by the analytic mean and variance of the sum, a normal approximation), far inside
    the sum of the jobs' P10s and P90s."""
    jobs = [_job(f"j{i}", 600.0, 0.4) for i in range(30)]
    spread = delta_spread([(None, j) for j in jobs], [], _cost([]), jobs, _cost(jobs))
    assert spread is not None
    mean = 600.0 * np.exp(0.4**2 / 2)
    sd = np.sqrt((np.exp(0.4**2) - 1) * mean**2)
    total_mean, total_sd = 30 * mean, np.sqrt(30) * sd
    assert spread.p10["total_job_s"] == pytest.approx(total_mean - Z90 * total_sd, rel=0.03)
    assert spread.p90["total_job_s"] == pytest.approx(total_mean + Z90 * total_sd, rel=0.03)
    assert spread.p90["total_job_s"] < sum(j.quantiles["p90"] for j in jobs) * 0.9


def test_a_job_on_both_sides_is_drawn_once() -> None:
    """Unchanged jobs add exactly 0 to every draw; a job made 10% slower adds 10% of itself."""
    a, b = _job("a", 600.0, 0.5), _job("b", 300.0, 0.8)
    same = delta_spread([(a, a), (b, b)], [a, b], _cost([a, b]), [a, b], _cost([a, b]))
    assert same is not None
    assert all(v == 0.0 for v in (*same.p10.values(), *same.p90.values()))
    slower = _job("b", 330.0, 0.8)
    moved = delta_spread([(a, a), (b, slower)], [a, b], _cost([a, b]), [a, slower],
                         _cost([a, slower]))  # fmt: skip
    assert moved is not None
    assert moved.p10["total_job_s"] > 0  # the same draw, 10% more: never below 0
    assert moved.p10["total_job_s"] == pytest.approx(0.1 * b.quantiles["p10"], rel=0.06)


def test_the_critical_path_and_the_bill_are_drawn_too() -> None:
    first = _job("build", 600.0, 0.3)
    then = _job("test", 600.0, 0.3, needs=("build",))
    spread = delta_spread([(None, first), (None, then)], [], _cost([]), [first, then],
                          _cost([first, then]))  # fmt: skip
    assert spread is not None
    assert spread.p10["critical_path_s"] == pytest.approx(spread.p10["total_job_s"])
    # ubuntu-latest bills $0.006 a minute, whole minutes per job
    assert 0.006 * 2 * 7 <= spread.p10["cost_usd"] <= spread.p90["cost_usd"] <= 0.006 * 2 * 20


def test_without_ranges_there_is_no_spread() -> None:
    job = JobPrediction("a", "a", ("ubuntu-latest",), "Linux", None, (), {"duration_s": 60.0})
    assert delta_spread([(None, job)], [], _cost([]), [job], _cost([job])) is None


NOISE = RunSpread(runs=20, event="push", total_job_s=(9_000.0, 10_000.0, 11_000.0),
                  wall_s=(1_700.0, 2_000.0, 2_300.0))  # fmt: skip


def test_a_delta_inside_the_noise_says_so_and_the_threshold_scales_it() -> None:
    def verdict(delta_s: float, threshold: float = 1.0) -> dict[str, bool]:
        deltas = {"total_job_s": delta_s, "critical_path_s": 0.0, "cost_usd": 0.0}
        return {k: m.beyond for k, m in judge(deltas, None, NOISE, 10_000, 1.0, threshold).items()}

    assert verdict(900.0)["total_job_s"] is False  # ±1,000 s: inside
    assert verdict(1_100.0)["total_job_s"] is True
    assert verdict(-1_100.0)["total_job_s"] is True
    assert verdict(1_100.0, threshold=2.0)["total_job_s"] is False
    assert verdict(1.0, threshold=0.0)["total_job_s"] is True
    assert verdict(0.0, threshold=0.0)["total_job_s"] is False
    measures = judge({"total_job_s": 0.0, "critical_path_s": 400.0, "cost_usd": 0.2}, None,
                     NOISE, 10_000.0, 1.0, 1.0)  # fmt: skip
    assert measures["critical_path_s"].band == 300.0 and measures["critical_path_s"].beyond
    assert measures["cost_usd"].band == pytest.approx(0.1) and measures["cost_usd"].beyond


def test_without_noise_the_delta_range_decides() -> None:
    deltas = {"total_job_s": 100.0, "critical_path_s": 0.0, "cost_usd": 0.0}
    from gharuntime.predict.spread import DeltaSpread

    clear = DeltaSpread(
        {"total_job_s": 20.0, "critical_path_s": 0.0, "cost_usd": 0.0},
        {"total_job_s": 200.0, "critical_path_s": 0.0, "cost_usd": 0.0},
    )
    unsure = DeltaSpread({"total_job_s": -20.0, "critical_path_s": 0.0, "cost_usd": 0.0},
                         {"total_job_s": 200.0, "critical_path_s": 0.0, "cost_usd": 0.0})  # fmt: skip
    assert judge(deltas, clear, None, 1.0, 1.0, 1.0)["total_job_s"].beyond is True
    assert judge(deltas, unsure, None, 1.0, 1.0, 1.0)["total_job_s"].beyond is False
