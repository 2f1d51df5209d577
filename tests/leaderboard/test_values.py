"""gharuntime.leaderboard.values: every number and string a result holds is checked before it is
filed or ranked (finite, bounded, printable single lines), and what is drawn together agrees."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest

from gharuntime.leaderboard.values import (
    MAX_FLOAT,
    MAX_STRING,
    range_problems,
    shape_problems,
    value_problems,
)

ROOT = Path(__file__).resolve().parents[2]

# --- value_problems ---------------------------------------------------------------------------


def test_an_ordinary_document_has_no_problems() -> None:
    doc = {
        "meta": {"method": "lightgbm-é-中", "version": "1.0", "flags": [True, False, None]},
        "metrics": {"rmsle": {"value": 0.5, "ci_low": -MAX_FLOAT, "ci_high": MAX_FLOAT}},
        "counts": {"rows": 2**64, "zero": 0, "negative": -(2**64)},
        "text": "x" * MAX_STRING,
        "nbsp": "a\u00a0b",  # U+00A0 is printable, the first character after the C1 controls
    }
    assert value_problems(doc, "r.json") == []


@pytest.mark.parametrize(
    "number", [math.nan, math.inf, -math.inf, MAX_FLOAT * 1.0001, -1.7e308], ids=repr
)
def test_a_number_that_is_not_finite_and_bounded_is_named_with_its_path(number: float) -> None:
    doc = {"metrics": {"duration_s": {"rmsle": {"value": number}}}}
    assert value_problems(doc, "r.json") == [
        f"r.json: metrics/duration_s/rmsle/value: the number {number!r} is not finite or beyond "
        "±1e+15"
    ]


def test_an_integer_beyond_2_to_the_64_is_a_problem_and_2_to_the_64_is_not() -> None:
    assert value_problems({"n": 2**64}, "r") == []
    (problem,) = value_problems({"n": 2**64 + 1}, "r")
    assert problem.startswith("r: n: the integer 18446744073709551617") and "±2**64" in problem
    assert value_problems({"n": True}, "r") == []  # a bool is not read as the integer 1


@pytest.mark.parametrize(
    "char", ["\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\x85", "\x9f", "\u2028", "\u2029", "\ud800"]
)
def test_a_string_holding_a_control_character_is_named(char: str) -> None:
    (problem,) = value_problems({"meta": {"method": f"ok{char}forged"}}, "r.json")
    assert problem == (
        f"r.json: meta/method: a string holding the control character {char!r}; results hold "
        "single lines of printable text"
    )


def test_a_string_too_long_is_a_problem() -> None:
    (problem,) = value_problems({"s": "x" * (MAX_STRING + 1)}, "r")
    assert problem.startswith("r: s: a string of 10,001 characters (at most 10,000)")


def test_a_bad_key_is_named_where_it_sits_and_its_value_is_not_read() -> None:
    doc = {"meta": {"bad\nkey": {"deeper": math.nan}}, "x\x00": 1}
    assert value_problems(doc, "r") == [
        "r: (top level): a key is a string holding the control character '\\x00'",
        "r: meta: a key is a string holding the control character '\\n'",
    ]


def test_list_items_are_named_by_their_index_and_a_bare_value_by_top_level() -> None:
    doc = {"per_resample": [0.1, 0.2, math.inf, {"q": ["ok", "no\r"]}]}
    assert value_problems(doc, "r") == [
        "r: per_resample/2: the number inf is not finite or beyond ±1e+15",
        "r: per_resample/3/q/1: a string holding the control character '\\r'; results hold "
        "single lines of printable text",
    ]
    bare = "r: (top level): the number nan is not finite or beyond ±1e+15"
    assert value_problems(math.nan, "r") == [bare]


def test_problems_come_sorted_and_more_than_twenty_are_summed_up() -> None:
    doc = {f"k{i:02d}": math.nan for i in range(25)}
    problems = value_problems(doc, "r")
    assert len(problems) == 21
    assert problems[0].startswith("r: k00:") and problems[19].startswith("r: k19:")
    assert problems[20] == "r: … and 5 more"
    assert value_problems({f"k{i:02d}": math.nan for i in range(20)}, "r")[-1].startswith("r: k19")


# --- shape_problems ---------------------------------------------------------------------------


def _doc() -> dict[str, Any]:
    """The parts of a schema-valid result that shape_problems reads."""
    return {
        "counts": {"missing": 0, "scored": {"duration_s": 3}, "without_truth": {"duration_s": 0}},
        "metrics": {"duration_s": {}},
        "meta": {"extra": {"timing": {"fit_seconds": 0.5, "note": "fast", "flag": False}}},
        "plot_data": {
            "sample": {"actual": [1.0, 2.0, None], "predicted": [1.5, None, 3.0]},
            "abs_log_ratio_quantiles": {"q": [0.0, 0.5, 1.0], "value": [0.0, 0.1, None]},
        },
    }


def test_a_consistent_document_has_no_shape_problems() -> None:
    assert shape_problems(_doc(), "r") == []
    doc = _doc()
    doc["meta"] = {}  # no extra, or an extra without timing: nothing to check
    assert shape_problems(doc, "r") == []
    doc["meta"] = {"extra": "not a mapping"}
    assert shape_problems(doc, "r") == []


@pytest.mark.parametrize("count", [-1, 1.5, True, None, "3"], ids=repr)
def test_a_count_that_is_not_a_whole_number_of_zero_or_more_is_named(count: Any) -> None:
    doc = _doc()
    doc["counts"]["without_truth"]["duration_s"] = count
    assert shape_problems(doc, "r") == [
        f"r: counts/without_truth/duration_s: {count!r} is not a count (a whole number, 0 or more)"
    ]


def test_a_scored_target_without_a_count_is_named() -> None:
    doc = _doc()
    doc["metrics"]["queue_s"] = {}
    assert shape_problems(doc, "r") == ["r: counts/scored has no count for the target 'queue_s'"]


def test_a_negative_timing_is_named_and_a_bool_or_text_timing_is_not_read() -> None:
    doc = _doc()
    doc["meta"]["extra"]["timing"]["predict_seconds"] = -0.25
    doc["meta"]["extra"]["timing"]["flag"] = True
    assert shape_problems(doc, "r") == ["r: meta/extra/timing/predict_seconds: -0.25 is negative"]


def test_plot_series_of_unequal_lengths_are_named() -> None:
    doc = _doc()
    doc["plot_data"]["sample"]["predicted"].append(4.0)
    doc["plot_data"]["abs_log_ratio_quantiles"]["q"].pop()
    assert shape_problems(doc, "r") == [
        "r: plot_data/sample has 3 actual and 4 predicted values; they come in pairs",
        "r: plot_data/abs_log_ratio_quantiles has 2 q and 3 values; they come in pairs",
    ]


def test_checking_does_not_change_the_document() -> None:
    doc = _doc()
    doc["counts"]["missing"] = -3
    before = copy.deepcopy(doc)
    assert shape_problems(doc, "r") and value_problems(doc, "r") == []
    assert doc == before


_RANGE_CASES = {
    "coverage 500%": ("intervals", "metrics", "duration_s", "central", "p10-p90", "coverage", "value", 5.0),
    "interval low above high": ("metrics", "duration_s", "mae", "ci_low", 1e9),
    "negative width": ("intervals", "metrics", "duration_s", "central", "p10-p90", "log_width", "value", -0.5),
    "RMSLE -1": ("metrics", "duration_s", "rmsle", "value", -1.0),
    "Spearman 7": ("metrics", "duration_s", "spearman", "value", 7.0),
    "R² above 1": ("metrics", "duration_s", "r2_log", "ci_high", 1.5),
    "within 2x of 120%": ("metrics", "duration_s", "within_2x", "value", 1.2),
    "calibration 150%": ("intervals", "metrics", "duration_s", "levels", "p50", "calibration", "value", 1.5),
    "negative pinball": ("intervals", "metrics", "duration_s", "mean_pinball", "ci_low", -0.1),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(_RANGE_CASES))
def test_leaderboard_add_refuses_a_metric_outside_what_it_can_be(case: str, tmp_path: Path) -> None:
    """Each metric declares the values it can take (Metric.bounds); a result claiming another
    is refused by `leaderboard add`, naming the field, and nothing is filed."""
    from click.testing import CliRunner

    from gharuntime.cli.main import cli

    source = ROOT / "leaderboard/results/gharuntime-sim-small/temporal-config-lightgbm.json"
    doc = json.loads(source.read_text())
    *path, value = _RANGE_CASES[case]
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    result = tmp_path / "result.json"
    result.write_text(json.dumps(doc))
    done = CliRunner().invoke(
        cli, ["leaderboard", "add", str(result), "--results", str(tmp_path / "results")]
    )
    assert done.exit_code == 2, done.output
    assert "/".join(str(p) for p in path[:-1]) in done.output.replace("\n", "")
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.json"))


def test_a_resample_outside_the_metrics_range_is_named() -> None:
    source = ROOT / "leaderboard/results/gharuntime-sim-small/temporal-config-lightgbm.json"
    doc = json.loads(source.read_text())
    assert range_problems(doc) == []
    doc["bootstrap"]["per_resample"]["duration_s"]["spearman"][3] = -2.0
    (problem,) = range_problems(doc)
    assert "per_resample/duration_s/spearman" in problem and "-2.0" in problem


def test_a_breakdown_groups_coverage_outside_its_range_is_named() -> None:
    doc = {
        "breakdowns": {
            "duration_s": {
                "train_recency": {
                    "never": {
                        "rows": 3,
                        "metrics": {"rmsle": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}},
                        "intervals": {
                            "p10-p90": {
                                "nominal": 0.8,
                                "coverage": {"value": 5.0, "ci_low": 0.1, "ci_high": 0.9},
                                "log_width": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6},
                            }
                        },
                    }
                }
            }
        }
    }
    (problem,) = range_problems(doc)
    assert "breakdowns/duration_s/train_recency/never/intervals/p10-p90/coverage/value" in problem
