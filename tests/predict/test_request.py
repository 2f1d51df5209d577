"""`run_predict(PredictRequest(...))`: what `gharuntime predict` does, called from Python."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from gharuntime.errors import GharuntimeError
from gharuntime.predict.request import PredictError, PredictRequest, run_predict

WORKFLOW = """on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
  test:
    needs: lint
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
    steps:
      - run: pytest -q
"""
BASE = """on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
"""


@pytest.fixture()
def model(lightgbm_model: Path) -> Path:
    return lightgbm_model  # tests/conftest.py


@pytest.fixture()
def workflow(tmp_path: Path) -> Path:
    path = tmp_path / "ci.yml"
    path.write_text(WORKFLOW)
    return path


def test_a_request_predicts_and_prices_each_job(model: Path, workflow: Path) -> None:
    outcome = run_predict(PredictRequest(workflow, model, at=datetime(2026, 3, 2)))
    names = [j.name for j in outcome.result.jobs]
    assert names == ["lint", "test (ubuntu-latest)", "test (windows-latest)"]
    assert [c.point is not None for c in outcome.cost.jobs] == [True, True, True]
    assert outcome.result.model["folder"] == str(model)
    assert outcome.review is None and outcome.models.history is None


def test_a_base_file_is_reviewed_against(model: Path, workflow: Path, tmp_path: Path) -> None:
    base = tmp_path / "base.yml"
    base.write_text(BASE)
    outcome = run_predict(
        PredictRequest(workflow, model, base=base, path=".github/workflows/ci.yml")
    )
    assert outcome.review is not None
    assert [r.new.path for r in outcome.review.reviews] == [".github/workflows/ci.yml"]
    counts = outcome.review.reviews[0].counts()
    assert counts == {"added": 2, "removed": 0, "moved": 0, "changed": 0, "unchanged": 1}


def test_the_metadata_files_private_decides_unless_the_request_says(
    model: Path, workflow: Path, tmp_path: Path
) -> None:
    meta = tmp_path / "repo.json"
    meta.write_text(json.dumps({"private": False, "language": "Python"}))
    assert run_predict(PredictRequest(workflow, model, repo_meta=meta)).cost.public is True
    said = PredictRequest(workflow, model, repo_meta=meta, public=False)
    assert run_predict(said).cost.public is False
    assert run_predict(PredictRequest(workflow, model)).cost.public is False


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"base": Path("a.yml"), "base_ref": "main"}, "give --base FILE or --base-ref REV"),
        ({"repo_meta": Path("list.json")}, "list.json: not usable repository metadata"),
    ],
)
def test_what_it_cannot_use_is_a_library_error(
    model: Path, workflow: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra, message
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.yml").write_text(BASE)
    Path("list.json").write_text("[1, 2]")
    with pytest.raises(PredictError, match=message) as caught:
        run_predict(PredictRequest(workflow, model, **extra))
    assert isinstance(caught.value, GharuntimeError)
