"""gharuntime.predict.render and render_review: a prediction's and a review's views, built by
the library without printing, are exactly what `gharuntime predict` prints."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.table import Table

from gharuntime.cli.main import cli
from gharuntime.jsonout import strict_dumps
from gharuntime.predict.render import prediction_blocks, prediction_json, prediction_markdown
from gharuntime.predict.render_review import review_blocks, review_json, review_markdown_text
from gharuntime.predict.request import PredictRequest, run_predict

OLD = """on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps: [{run: ruff check .}]
"""
NEW = """on: push
jobs:
  lint:
    runs-on: macos-latest
    steps: [{run: ruff check .}]
  test:
    needs: lint
    if: failure()
    runs-on: ${{ matrix.os }}
    strategy: {matrix: {os: [ubuntu-latest, windows-latest]}}
    steps: [{run: pytest}]
"""
AT = "2024-06-01T12:00:00"


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "repo" / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "old.yml").write_text(OLD)
    (folder / "ci.yml").write_text(NEW)
    return folder / "ci.yml", folder / "old.yml"


def _cli(*args: str) -> str:
    done = CliRunner().invoke(cli, ["predict", *args, "--at", AT])
    assert done.exit_code == 0, done.output
    return done.output


def _lines(blocks: list[str | Table]) -> list[str]:
    return [b for b in blocks if isinstance(b, str)]


def test_a_predictions_views_print_nothing_and_are_what_the_command_prints(
    files: tuple[Path, Path], lightgbm_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow, _ = files
    outcome = run_predict(PredictRequest(workflow, lightgbm_model, at=datetime.fromisoformat(AT)))
    blocks, markdown, doc = (
        prediction_blocks(outcome),
        prediction_markdown(outcome),
        prediction_json(outcome),
    )
    assert capsys.readouterr() == ("", "")
    assert isinstance(blocks[0], Table) and len(_lines(blocks)) == len(blocks) - 1
    assert any("gated by `if:`" in line for line in _lines(blocks))
    model = str(lightgbm_model)
    assert _cli(str(workflow), "--model", model, "--format", "markdown") == markdown
    assert json.loads(_cli(str(workflow), "--model", model, "--json")) == json.loads(
        strict_dumps(doc)
    )
    table = _cli(str(workflow), "--model", model).splitlines()
    assert table[-len(_lines(blocks)) :] == _lines(blocks)


def test_a_reviews_views_print_nothing_and_are_what_the_command_prints(
    files: tuple[Path, Path], lightgbm_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow, base = files
    request = PredictRequest(workflow, lightgbm_model, at=datetime.fromisoformat(AT), base=base)
    outcome = run_predict(request)
    assert outcome.review is not None
    change = outcome.review
    blocks = review_blocks(change, outcome)
    markdown, doc = review_markdown_text(change, outcome), review_json(change, outcome)
    assert capsys.readouterr() == ("", "")
    assert [type(b) for b in blocks[:2]] == [str, Table]
    assert blocks[-1] == f"beyond the noise: {'yes' if change.beyond_noise else 'no'} (threshold 1)"
    args = (str(workflow), "--model", str(lightgbm_model), "--base", str(base))
    assert _cli(*args, "--format", "markdown") == markdown
    assert json.loads(_cli(*args, "--json")) == json.loads(strict_dumps(doc))
    printed = _cli(*args).splitlines()
    assert printed[0] == blocks[0]
    assert printed[-len(_lines(blocks)) + 1 :] == _lines(blocks)[1:]
