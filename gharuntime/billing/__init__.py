"""What a job will cost: runner labels → kind, a dated price table, seconds → billed minutes →
USD. `predict` calls `price_jobs`; nothing here knows about models."""

from gharuntime.billing.cost import (
    Bill,
    JobCost,
    JobTime,
    WorkflowCost,
    bill,
    billed_minutes,
    price_jobs,
)
from gharuntime.billing.prices import (
    PriceError,
    PriceTable,
    default_prices,
    load_prices,
    parse_prices,
)
from gharuntime.billing.runners import KINDS, RunnerKind, runner_kind

__all__ = [
    "KINDS",
    "Bill",
    "JobCost",
    "JobTime",
    "PriceError",
    "PriceTable",
    "RunnerKind",
    "WorkflowCost",
    "bill",
    "billed_minutes",
    "default_prices",
    "load_prices",
    "parse_prices",
    "price_jobs",
    "runner_kind",
]
