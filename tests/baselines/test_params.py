"""baselines.params: every method's parameters declared once, in one table of typed specs
(name, kind, default, bounds or choices, help) on its class, checked by `Method` when the method
is made, before any data is read: the values issue #37 found failing inside the libraries after
the data was loaded are refused with the parameter's name, exit 2, nothing written; an unknown
name is refused with the closest known one; `baseline --help` lists every table."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from gharuntime.baselines.laser.method import Laser
from gharuntime.baselines.laser.params import SPECS as LASER_SPECS
from gharuntime.baselines.method import Method, MethodError
from gharuntime.baselines.methods import METHODS, make_method
from gharuntime.baselines.params import ParamSpec, ParamTable, parse_param
from gharuntime.cli.main import cli

LIGHTGBM_CONFIG = {
    "n_estimators": 2000,
    "early_stopping_rounds": 100,
    "learning_rate": 0.05,
    "num_leaves": 63,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "lambda_l2": 1.0,
    "identity": True,
    "target_encoding": True,
    "masking": True,
    "intervals": "conformal",
    "calibrate_by": "recency",
}
"""LightGBM 2.1's parameters as its results record them, in their order (2.0's, in the results
made before the recency calibration, end at `intervals`)."""


def test_every_method_declares_its_parameters_in_one_table_on_its_class() -> None:
    with_params = [cls for cls in METHODS.values() if cls.param_specs]
    assert [cls.name for cls in with_params] == [
        "lightgbm",
        "xgboost",
        "catboost",
        "lightgbm-tuned",
        "xgboost-tuned",
        "laser",
    ]
    for cls in METHODS.values():
        assert isinstance(cls.param_specs, ParamTable), cls.name
        assert all(isinstance(s, ParamSpec) for s in cls.param_specs.values()), cls.name
        assert not cls.param_specs.problems(cls.param_specs.defaults), cls.name
    assert Laser.param_specs is LASER_SPECS
    # the codec's parameters are typed too (the codec still checks how they combine)
    assert LASER_SPECS["exp_width"].kind == "int" and LASER_SPECS["exp_width"].high == 3


def test_the_table_is_what_config_records_in_its_order() -> None:
    """The order and values of a committed result's `method_config` come from the table."""
    config = make_method("lightgbm", "config").config()
    assert list(config.items()) == list(LIGHTGBM_CONFIG.items())
    tuned = make_method("lightgbm-tuned", "config").config()
    assert list(tuned.items()) == [*LIGHTGBM_CONFIG.items(), ("trials", 20)]
    given = make_method("xgboost", "config", params={"max_depth": 3, "learning_rate": 1})
    specs = METHODS["xgboost"].param_specs
    # a parameter added after results were recorded is named only when set
    assert list(given.config()) == [n for n in specs if specs[n].recorded_at_default]
    assert "new_job_share" in specs and "new_job_share" not in given.config()
    assert given.config()["learning_rate"] == 1 and type(given.config()["learning_rate"]) is int


def test_an_unknown_parameter_is_refused_with_the_closest_known_name() -> None:
    with pytest.raises(MethodError, match=r"n_estimator \(did you mean n_estimators\?\)"):
        make_method("lightgbm", "config", params={"n_estimator": 3})
    with pytest.raises(MethodError, match=r"laser: unknown parameter\(s\) sample \(did you mean"):
        make_method("laser", "config", params={"sample": 3})
    with pytest.raises(MethodError, match=r"unknown parameter\(s\) zzz; known: "):
        make_method("catboost", "config", params={"zzz": 3})


def test_a_method_class_declares_parameters_and_the_base_class_checks_them() -> None:
    """Nothing but the table: the base class refuses unknown names and bad values and keeps
    the defaults of those not given."""

    class Shrunk(Method):
        name = "shrunk"
        version = "0"
        param_specs = ParamTable(
            ParamSpec("shrink", "float", 0.5, low=0, high=1, help="toward the median"),
            ParamSpec("rounds", "int", 3, low=1, high=9),
        )

        def reads(self, track: str) -> tuple[str, ...]:
            return ()

        def fit(self, train: object, validation: object = None, progress: object = None) -> None:
            return None

        def predict(self, inputs: object) -> dict[str, object]:  # type: ignore[override]
            return {}

        def save_state(self, folder: Path) -> dict[str, object]:
            return {}

        @classmethod
        def load_state(cls, folder: Path, meta: dict[str, object]) -> Method:
            return cls("config")

    assert Shrunk("config", rounds=5).config() == {"shrink": 0.5, "rounds": 5}
    with pytest.raises(MethodError, match=r"shrunk: unknown parameter\(s\) round \(did you"):
        Shrunk("config", round=5)
    with pytest.raises(MethodError, match="shrunk: bad --param: shrink must be ≥ 0 and ≤ 1"):
        Shrunk("config", shrink=2)


def test_a_value_is_read_as_json_else_as_text() -> None:
    assert parse_param("n_estimators=300") == ("n_estimators", 300)
    assert parse_param("identity=false") == ("identity", False)
    assert parse_param("lr=null") == ("lr", None)
    assert parse_param("model=tiny") == ("model", "tiny")
    assert parse_param('model="1"') == ("model", "1")
    assert parse_param("model=a=b") == ("model", "a=b")
    for bad in ("novalue", "=3"):
        with pytest.raises(ValueError, match="is not KEY=VALUE"):
            parse_param(bad)


def test_the_baseline_help_lists_every_methods_parameters_with_their_defaults() -> None:
    out = CliRunner().invoke(cli, ["baseline", "--help"], terminal_width=120).output
    listed = " ".join(out.split("Parameters (")[1].split())
    for cls in METHODS.values():
        for name, spec in cls.param_specs.items():
            assert f"{name}={spec.shown_default()}" in listed, (cls.name, name)
    assert "learning_rate=0.08" in listed and "lr=null" in listed and "identity=true" in listed


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
    assert ParamSpec("a", "bool", True).problem("yes") == "must be true or false"
    assert ParamSpec("a", "int", 1, low=1, high=10).problem(11) == "must be ≥ 1 and ≤ 10"
    spec = ParamSpec("a", "float", 0.5, low=0, high=1, low_open=True)
    assert spec.problem(0.0) == "must be > 0 and ≤ 1"
    assert spec.takes() == "a number > 0 and ≤ 1"
    assert ParamSpec("a", "float", 1.0).problem(math.nan) == "must be a finite number"
    assert ParamSpec("a", "choice", "x", choices=("x", "y")).takes() == "x | y"
    assert ParamSpec("a", "text", None, optional=True).takes() == "text | null"


def test_a_table_refuses_a_bad_declaration() -> None:
    with pytest.raises(ValueError, match="its default must be ≥ 1"):
        ParamSpec("a", "int", 0, low=1)
    with pytest.raises(ValueError, match="kind 'number'"):
        ParamSpec("a", "number", 0)
    with pytest.raises(ValueError, match="declared twice"):
        ParamTable(ParamSpec("a", "bool", True), ParamSpec("a", "bool", False))
