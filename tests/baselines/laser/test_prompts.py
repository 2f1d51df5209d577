"""Batched prompts (prompts.py) are serialize_job's prompts byte for byte, and their token ids
prompt_token_ids', on varied jobs, budgets and tokenizers (issue #31)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gharuntime.baselines.laser.decoding import (
    prompt_token_counter,
    prompt_token_ids,
    prompt_token_ids_many,
)
from gharuntime.baselines.laser.prompts import (
    EstimateCounter,
    TokenCounter,
    prompt_rows,
    serialize_batch,
    units_add_up,
)
from gharuntime.baselines.laser.serialize import PromptTooLong, serialize_job
from gharuntime.dataset import load
from gharuntime.fixture import fixture_jobs

pytest.importorskip("tokenizers")

BUDGETS = (60, 90, 130, 200, 400, 100_000)

ODD_JOB = (
    "build:   \n"  # trailing spaces: this line's newline may join the next pre-token
    "  runs-on: ubuntu-latest\n"
    "\n"  # an empty line
    "  env:\n"
    '    NAME: "naïve – ünïcode"\t\n'
    "  steps:\n"
    "  - run: |\n"
    "      echo one\n"
    "\n"
    "      echo two   \n"
    "  # a comment between steps\n"
    "  - uses: actions/checkout@v4\n"
    "    with: {fetch-depth: 0}\n"
    "  - name: 3 digits 1234567\n"
    "    run: make -j8 all \\\n"
    "      check\n"
)


def _rows() -> list[dict[str, Any]]:
    """Fixture jobs, plus variants with awkward YAML, blank or missing parts, unicode."""
    rows = list(fixture_jobs(seed=4, repos=6, runs_per_repo=3).iter_rows(named=True))
    base = rows[0]
    variants = [
        {**base, "job_yaml": ODD_JOB, "job_key": "build"},
        {**base, "job_yaml": ODD_JOB.replace("\n", "\r\n"), "job_key": "build"},
        {**base, "job_yaml": None},  # taken from the workflow
        {**base, "job_yaml": "not: [valid", "workflow_yaml": "on: [push\njobs: {"},
        {
            **base,
            "head_commit_message": "fix: ünïcode ✓ " * 20 + "\n\nbody",
            "repo_topics": ["a", "b c"],
        },
        {
            **base,
            "step_names": [f"step {i}  " for i in range(30)],
            "matrix": '{"os": "ubuntu", "n": [1, 2]}',
        },
        {**base, "workflow_yaml": (base.get("workflow_yaml") or "") + "\nenv:\n  X: 1   \n\n"},
    ]
    return rows + variants


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from gharuntime.baselines.laser.models import train_tokenizer

    texts = [serialize_job(r, track="config", budget=100_000) for r in _rows()]
    return train_tokenizer(texts, 400)


def _same_or_same_error(rows: list[dict[str, Any]], budget: int, old: Any, new: Any) -> None:
    try:
        want = [serialize_job(r, track="config", budget=budget, **old) for r in rows]
    except PromptTooLong as exc:
        with pytest.raises(PromptTooLong) as got:
            serialize_batch(rows, track="config", budget=budget, **new)
        assert str(got.value) == str(exc)
        return
    assert serialize_batch(rows, track="config", budget=budget, **new) == want


@pytest.mark.parametrize("budget", BUDGETS)
def test_estimate_budgeted_prompts_are_serialize_jobs(budget: int) -> None:
    rows = _rows()
    _same_or_same_error(rows, budget, {}, {"count": EstimateCounter()})


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("additive", [True, False])
def test_token_budgeted_prompts_and_ids_are_the_old_ones(
    tokenizer: Any, budget: int, additive: bool
) -> None:
    rows = [r for r in _rows() if budget >= 130 or r.get("job_yaml") != "not: [valid"]
    counter = TokenCounter(tokenizer, additive=additive)
    _same_or_same_error(
        rows, budget, {"count_tokens": prompt_token_counter(tokenizer)}, {"count": counter}
    )
    try:
        prompts = serialize_batch(rows, track="config", budget=budget, count=counter)
    except PromptTooLong:
        return
    assert counter.ids(prompts) == [prompt_token_ids(tokenizer, p) for p in prompts]
    assert prompt_token_ids_many(tokenizer, prompts) == counter.ids(prompts)


@pytest.mark.parametrize("track", ["config", "history"])
def test_prompt_rows_give_the_prompts_of_whole_rows(track: str) -> None:
    """fit reads only the prompt's columns, from whole columns: the same prompts as every
    column of every row (iter_rows), and extra columns are left out."""
    frame = fixture_jobs(seed=3, repos=5, runs_per_repo=3).with_columns(
        pl.lit("not read").alias("unrelated")
    )
    rows = prompt_rows(frame, track)
    assert len(rows) == frame.height and "unrelated" not in rows[0]
    assert serialize_batch(rows, track=track, budget=300) == [
        serialize_job(r, track=track, budget=300) for r in frame.iter_rows(named=True)
    ]
    assert prompt_rows(frame.clear(), track) == []


def test_units_add_up_only_for_byte_level_bpe(tokenizer: Any) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    assert units_add_up(tokenizer)
    other = Tokenizer(models.BPE())
    other.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    assert not units_add_up(PreTrainedTokenizerFast(tokenizer_object=other))
    other.pre_tokenizer = pre_tokenizers.Whitespace()
    assert not units_add_up(PreTrainedTokenizerFast(tokenizer_object=other))


def test_a_tokenizer_whose_units_do_not_add_up_is_counted_whole() -> None:
    """Metaspace joins a newline's neighbours: counted exactly, the prompts are still the old."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    texts = [serialize_job(r, track="config", budget=100_000) for r in _rows()]
    tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>"]))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")
    counter = TokenCounter(fast)
    assert not counter.additive
    rows = _rows()[:20]
    for budget in (150, 300):
        want = [
            serialize_job(r, track="config", budget=budget, count_tokens=prompt_token_counter(fast))
            for r in rows
        ]
        assert serialize_batch(rows, track="config", budget=budget, count=counter) == want


def test_real_jobs_give_the_old_prompts(tokenizer: Any, real_dataset: Path) -> None:
    """On jobs of the real dataset ($GHARUNTIME_REAL_DATASET; skipped without it)."""
    frame = load(real_dataset, "temporal", "train")
    rows = list(
        frame.gather(list(range(0, frame.height, max(1, frame.height // 400)))).iter_rows(
            named=True
        )
    )
    for budget in (256, 512):
        count = prompt_token_counter(tokenizer)
        want = [serialize_job(r, track="config", budget=budget, count_tokens=count) for r in rows]
        assert (
            serialize_batch(rows, track="config", budget=budget, count=TokenCounter(tokenizer))
            == want
        )
