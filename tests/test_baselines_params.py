"""baselines.params: every method's parameters declared once (type, bounds), checked when the
method is made, before any data is read: the values issue #37 found failing inside the libraries
after the data was loaded are refused with the parameter's name, exit 2, nothing written."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from gharuntime.baselines.laser.params import SPECS as LASER_SPECS
from gharuntime.baselines.method import MethodError
from gharuntime.baselines.methods import METHODS, make_method
from gharuntime.baselines.params import Spec, check_specs
from gharuntime.cli.main import cli


def test_every_parameter_of_every_method_is_declared_and_its_default_valid() -> None:
    with_params = [cls for cls in METHODS.values() if getattr(cls, "defaults", None)]
    assert {cls.name for cls in with_params} >= {"lightgbm", "xgboost", "catboost", "laser"}
    for cls in with_params:
        specs = LASER_SPECS if cls.name == "laser" else cls.specs  # type: ignore[attr-defined]
        declared = set(specs)
        if cls.name == "laser":  # the codec's own parameters are checked by the codec
            declared |= {k for k, v in cls.defaults.items() if k not in specs and v is None}  # type: ignore[attr-defined]
        assert declared == set(cls.defaults), cls.name  # type: ignore[attr-defined]
        check_specs(cls.name, specs, cls.defaults)  # type: ignore[attr-defined]


BAD = [
    ("lightgbm", "n_estimators", -5),
    ("lightgbm", "n_estimators", 2.5),
    ("lightgbm", "learning_rate", math.nan),
    ("lightgbm", "learning_rate", math.inf),
    ("lightgbm", "learning_rate", 0),
    ("lightgbm", "num_leaves", 1),
    ("lightgbm", "identity", "yes"),
    ("lightgbm", "identity", 1),
    ("lightgbm", "masking", [True]),
    ("lightgbm", "intervals", "magic"),
    ("xgboost", "subsample", 5),
    ("xgboost", "max_depth", 100),
    ("xgboost", "min_child_weight", -1.0),
    ("catboost", "depth", 100),
    ("catboost", "l2_leaf_reg", {"a": 1}),
    ("lightgbm-tuned", "trials", 1_000_000_000),
    ("xgboost-tuned", "trials", 0),
    ("laser", "samples", 0),
]


@pytest.mark.parametrize(("method", "key", "value"), BAD)
def test_a_bad_value_is_refused_when_the_method_is_made(
    method: str, key: str, value: object
) -> None:
    with pytest.raises(MethodError, match=f"{key} must"):
        make_method(method, "config", params={key: value})


def test_good_values_pass() -> None:
    make_method("lightgbm", "config", params={"n_estimators": 5, "identity": False})
    make_method("xgboost", "config", params={"subsample": 1, "max_depth": 3})
    make_method("catboost", "config", params={"depth": 16, "learning_rate": 1})
    make_method("lightgbm-tuned", "config", params={"trials": 1000})


@pytest.mark.parametrize(
    "param",
    ["n_estimators=-5", "learning_rate=NaN", "num_leaves=1", "identity=yes", "identity=[1,2]"],
)
def test_the_command_refuses_before_reading_the_dataset(param: str, tmp_path: Path) -> None:
    """The dataset does not even exist: the parameter is refused first, naming it."""
    out = tmp_path / "preds.jsonl"
    done = CliRunner().invoke(
        cli,
        ["baseline", "lightgbm", "--dataset", str(tmp_path / "no-dataset"), "--out", str(out),
         "--param", param],
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    assert param.split("=")[0] + " must" in done.output
    assert "Traceback" not in done.output and not out.exists()


def test_a_spec_says_what_it_takes() -> None:
    assert Spec("bool").problem("yes") == "must be true or false"
    assert Spec("int", 1, 10).problem(11) == "must be ≥ 1 and ≤ 10"
    assert Spec("float", 0, 1, low_open=True).problem(0.0) == "must be > 0 and ≤ 1"
    assert Spec("float").problem(math.nan) == "must be a finite number"
