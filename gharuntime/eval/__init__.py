"""`gharuntime eval`: validate a submission and score it, with repository-bootstrap intervals.

from gharuntime.eval import InvalidSubmission, evaluate_file

try:
    result = evaluate_file("preds.jsonl", "out/dataset", options={"track": "config"})
except InvalidSubmission as exc:
    print(*exc.problems.kept, sep="\n")  # every problem, with its line
"""

from gharuntime.eval.api import evaluate_file, evaluate_gold
from gharuntime.eval.bootstrap import Bootstrap
from gharuntime.eval.evaluate import (
    InvalidSubmission,
    Predictions,
    Scores,
    gold_methods,
    prepare_submission,
    resolve_meta,
    score,
)
from gharuntime.eval.meta import MethodMeta
from gharuntime.eval.metrics import METRICS, Metric
from gharuntime.eval.report import RESULT_VERSION, render_tables, result_json, write_result
from gharuntime.eval.truth import Truth, load_truth, resolve_dataset
from gharuntime.problems import Problem, ProblemLog

__all__ = [
    "METRICS",
    "RESULT_VERSION",
    "Bootstrap",
    "InvalidSubmission",
    "MethodMeta",
    "Metric",
    "Predictions",
    "Problem",
    "ProblemLog",
    "Scores",
    "Truth",
    "evaluate_file",
    "evaluate_gold",
    "gold_methods",
    "load_truth",
    "prepare_submission",
    "render_tables",
    "resolve_dataset",
    "resolve_meta",
    "result_json",
    "score",
    "write_result",
]
