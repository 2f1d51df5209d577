"""Hostile `${{ ... }}` expressions in every place a workflow holds one (name, runs-on, matrix
values, a call's `with:`, `if:`) go through `predict` and the shared parser without a traceback:
past the evaluator's limits an expression is left as written, as one it cannot know."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fuzz_support import check, invoke

from gharuntime.expressions import MAX_EXPRESSION_DEPTH, UnknownExpression, evaluate
from gharuntime.workflow import expand_jobs, parse_workflow

HOSTILE = {
    "parentheses": "(" * 5000 + "matrix.a" + ")" * 5000,
    "nots": "!" * 100_000 + "matrix.a",
    "indexes": "matrix" + "[matrix" * 3000 + "]" * 3000,
    "calls": "format('{0}', " * 3000 + "matrix.a" + ")" * 3000,
    "digits": "1" * 5000,
    "json": "fromJSON('" + "[" * 100_000 + "]" * 100_000 + "')",
    "unclosed": "(" * 5000 + "matrix.a",
}

PLACES = {
    "name": "    name: x ${{{{ {e} }}}}\n    runs-on: ubuntu-latest\n    steps: [{{run: make}}]\n",
    "runs-on": "    runs-on: ${{{{ {e} }}}}\n    steps: [{{run: make}}]\n",
    "if": "    if: ${{{{ {e} }}}}\n    runs-on: ubuntu-latest\n    steps: [{{run: make}}]\n",
    "matrix-name": "    name: ${{{{ {e} }}}}\n    runs-on: ubuntu-latest\n"
    "    strategy: {{matrix: {{a: [1, 2]}}}}\n    steps: [{{run: make}}]\n",
    "with": "    uses: ./.github/workflows/callee.yml\n    with:\n      v: ${{{{ {e} }}}}\n"
    "    strategy: {{matrix: {{a: [1, 2]}}}}\n",
}
CALLEE = (
    "on: {workflow_call: {inputs: {v: {type: string}}}}\njobs:\n  inner:\n"
    "    name: in ${{ inputs.v }}\n    runs-on: ${{ inputs.v && 'ubuntu-latest' }}\n"
    "    steps: [{run: make}]\n"
)


@pytest.mark.parametrize("expr", [e for e in HOSTILE if e != "nots"])
def test_the_evaluator_refuses_past_its_limits_as_unknown(expr: str) -> None:
    with pytest.raises(UnknownExpression):
        evaluate(HOSTILE[expr], {"matrix": {"a": 1}})


def test_nesting_within_the_limit_still_evaluates() -> None:
    depth = MAX_EXPRESSION_DEPTH - 1
    assert evaluate("(" * depth + "matrix.a" + ")" * depth, {"matrix": {"a": 3}}) == 3
    assert evaluate("!!!matrix.a", {"matrix": {"a": 3}}) is False
    assert evaluate("!!matrix.a", {"matrix": {"a": 3}}) is True
    assert evaluate(HOSTILE["nots"], {"matrix": {"a": 3}}) is True  # an even run: a loop, no frames


@pytest.fixture(scope="module")
def model_root(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> Path:
    root = tmp_path_factory.mktemp("expressions")
    shutil.copytree(fixture_dataset_master, root / "ds")
    out = invoke(["baseline", "median", "--dataset", "ds", "--out", "m.jsonl"], root)
    assert out.code == 0, out.output
    return root


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("expr", list(HOSTILE))
def test_every_place_of_a_workflow_takes_them(model_root: Path, place: str, expr: str) -> None:
    text = "on: push\njobs:\n  j:\n" + PLACES[place].format(e=HOSTILE[expr])
    wf_dir = model_root / expr / place / ".github" / "workflows"
    wf_dir.mkdir(parents=True, exist_ok=True)
    (wf_dir / "main.yml").write_text(text)
    (wf_dir / "callee.yml").write_text(CALLEE)
    callee = parse_workflow(CALLEE)
    expand_jobs(parse_workflow(text), lambda uses: callee)
    out = invoke(
        ["predict", str(wf_dir / "main.yml"), "--model", str(model_root / "m.model"), "--json"],
        model_root,
    )
    check(out, (place, expr))
    assert out.code == 0, out.output[-2000:]
    assert json.loads(out.output)["jobs"]
