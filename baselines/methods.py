"""The reference methods by name, as `gharuntime baseline NAME` knows them."""

from __future__ import annotations

from typing import Any

from gharuntime.baselines.catboost_method import CatBoost
from gharuntime.baselines.gbdt import LightGBM, XGBoost
from gharuntime.baselines.laser.method import Laser
from gharuntime.baselines.method import Method, MethodError
from gharuntime.baselines.naive import GroupMedian, LastRun, Median
from gharuntime.baselines.tuned import LightGBMTuned, XGBoostTuned

__all__ = ["METHODS", "make_method"]

METHODS: dict[str, type[Method]] = {
    m.name: m
    for m in (
        Median,
        GroupMedian,
        LastRun,
        LightGBM,
        XGBoost,
        LightGBMTuned,
        XGBoostTuned,
        CatBoost,
        Laser,
    )
}


def make_method(
    name: str, track: str, *, seed: int = 0, params: dict[str, Any] | None = None
) -> Method:
    """A fresh method; raises MethodError for an unknown name or parameter, and
    ForbiddenInputError when the method reads a column `track` forbids."""
    cls = METHODS.get(name)
    if cls is None:
        raise MethodError(f"unknown method {name!r}; choose one of {', '.join(METHODS)}")
    if params:
        if not hasattr(cls, "defaults"):
            raise MethodError(f"method {name!r} takes no parameters (got {', '.join(params)})")
        return cls(track, seed=seed, **params)
    return cls(track, seed=seed)
