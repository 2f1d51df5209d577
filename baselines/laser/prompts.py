"""Many prompts at once: the text `serialize_job` gives for each row, byte for byte, fast.

`serialize_job` renders a prompt, counts its tokens with one tokenizer call, and renders and
counts again after each cut: about ten milliseconds a job at the real dataset's scale. Here:

- The YAML each prompt quotes is parsed once per distinct text in the batch (a job's YAML and
  its workflow's context are shared by every run of it at that commit, and by its matrix
  siblings), not once per row whenever a small LRU cache has forgotten it.
- Tokens are counted per *unit* (a run of prompt lines ending where the tokenizer cannot join
  across, see below), each distinct unit once, in batched calls of the fast tokenizer (Rust,
  in parallel); a prompt's count, and every cut stage's, is then a sum of cached unit counts.
- Tokenizers for which units are not provably independent are counted exactly instead, whole
  text by whole text, in batched calls, one wave of cut stages at a time.

Why units add up. A byte-level BPE tokenizer (GPT-2's pre-tokenizer regex, optionally after
splitting digits, with no normalizer and no prefix space) never makes a token across a
pre-token boundary, and that regex always starts a new pre-token at a newline that follows a
non-space character: none of its letter, number or symbol patterns takes whitespace, and its
whitespace patterns only look forward. So where a line ends in such a character, the text
before the newline and the text from it on tokenize independently, and the count of the whole
is the sum of the counts of the parts (plus the special tokens the tokenizer adds once).
`units_add_up` reads the tokenizer's own description to decide; the tests compare the prompts
with `serialize_job`'s on varied jobs, for both kinds of tokenizer.

No torch: tokenizers only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import polars as pl

from gharuntime.baselines.laser.encoding import TARGET_SEPARATOR
from gharuntime.baselines.laser.serialize import (
    PromptTooLong,
    Shared,
    build_prompt,
    columns_for,
    estimate_tokens,
    too_long,
)
from gharuntime.contract import TRACKS

__all__ = [
    "EstimateCounter",
    "TokenCounter",
    "prompt_rows",
    "serialize_batch",
    "units_add_up",
]

_SAFE_END: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
)
"""Line endings after which a newline always starts a new pre-token (ASCII, conservatively)."""


def _units(text: str, suffix: str) -> list[str]:
    """`text + suffix` cut before each newline that follows a safe character."""
    lines = text.split("\n")
    if {line[-1:] for line in lines[:-1]} <= _SAFE_END:  # the usual case: all end safely
        units = ["\n" + line for line in lines]
        units[0] = lines[0]
        units[-1] += suffix
        return units
    out: list[str] = []
    current = lines[0]
    for line in lines[1:]:
        if current and current[-1] in _SAFE_END:
            out.append(current)
            current = "\n" + line
        else:
            current += "\n" + line
    out.append(current + suffix)
    return out


def units_add_up(tokenizer: Any) -> bool:
    """Whether `tokenizer` (a transformers fast tokenizer) counts a text as the sum of its
    units' counts: a BPE model behind GPT-2's byte-level pre-tokenizer (regex on, no prefix
    space), optionally after individual digits, and no normalizer."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return False
    try:
        spec = json.loads(backend.to_str())
    except (ValueError, TypeError):
        return False
    if spec.get("normalizer") is not None or (spec.get("model") or {}).get("type") != "BPE":
        return False
    pre = spec.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    if not steps:
        return False
    *before, last = steps
    byte_level = (
        last.get("type") == "ByteLevel"
        and last.get("use_regex", True) is True
        and last.get("add_prefix_space") is False
    )
    digits = all(s.get("type") == "Digits" and s.get("individual_digits") for s in before)
    return byte_level and digits


class TokenCounter:
    """Token counts of prompts as LASER feeds them (`prompt + TARGET_SEPARATOR`, with the
    tokenizer's special tokens): `prompt_token_counter`'s numbers, many at a time; and the
    token ids themselves (`ids`), from the same units when they add up."""

    def __init__(self, tokenizer: Any, *, additive: bool | None = None) -> None:
        self.tokenizer = tokenizer
        self.backend = tokenizer.backend_tokenizer
        self.additive = units_add_up(tokenizer) if additive is None else additive
        self._units: dict[str, list[int]] = {}
        self._counts: dict[str, int] = {}
        plain = len(self.backend.encode("a", add_special_tokens=False).ids)
        self.specials = len(self.backend.encode("a", add_special_tokens=True).ids) - plain

    def exact(self, texts: Sequence[str]) -> list[int]:
        """Each text counted whole by the tokenizer (batched)."""
        encoded = self.backend.encode_batch_fast(
            [t + TARGET_SEPARATOR for t in texts], add_special_tokens=True
        )
        return [len(e.ids) for e in encoded]

    def _split(self, texts: Sequence[str]) -> list[list[str]]:
        """Each text's units, every unit's ids cached (the new ones encoded in one batch)."""
        split = [_units(t, TARGET_SEPARATOR) for t in texts]
        cache = self._units
        new = list({u: None for units in split for u in units if u not in cache})
        if new:
            encoded = self.backend.encode_batch_fast(new, add_special_tokens=False)
            ids = [e.ids for e in encoded]
            cache.update(zip(new, ids, strict=True))
            self._counts.update(zip(new, map(len, ids), strict=True))
        return split

    def __call__(self, texts: Sequence[str]) -> list[int]:
        if not self.additive:
            return self.exact(texts)
        count = self._counts.__getitem__
        return [self.specials + sum(map(count, units)) for units in self._split(texts)]

    def ids(self, prompts: Sequence[str]) -> list[list[int]]:
        """`prompt_token_ids` of each prompt: its units' ids joined when units add up and the
        tokenizer adds no special tokens, else the tokenizer's (batched)."""
        if not (self.additive and self.specials == 0):
            from gharuntime.baselines.laser.decoding import prompt_token_ids_many

            return prompt_token_ids_many(self.tokenizer, prompts)
        cache = self._units
        out = []
        for units in self._split(prompts):
            ids: list[int] = []
            for u in units:
                ids += cache[u]
            out.append(ids)
        return out


class EstimateCounter:
    """`estimate_tokens` of many texts: it counts within lines only (a newline is never part of
    a counted run), so a text's estimate is the sum of its lines', each line counted once."""

    def __init__(self) -> None:
        self._lines: dict[str, int] = {}

    def __call__(self, texts: Sequence[str]) -> list[int]:
        cache = self._lines
        out = []
        for text in texts:
            total = 0
            for line in text.split("\n"):
                n = cache.get(line)
                if n is None:
                    n = cache[line] = estimate_tokens(line)
                total += n
            out.append(total)
        return out


def prompt_rows(frame: pl.DataFrame, track: str) -> list[dict[str, Any]]:
    """The rows of `frame` as serialize_batch reads them: a dict per row of the columns a
    prompt is built from (`columns_for(track)`, those the frame has), made from whole columns.
    Polars' `iter_rows(named=True)` converts every column of every row, which took as long as
    building the prompts."""
    names = [c for c in columns_for(track) if c in frame.columns]
    columns = [frame.get_column(c).to_list() for c in names]
    return (
        [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]
        if names
        else [{} for _ in range(frame.height)]
    )


def serialize_batch(
    rows: Sequence[Mapping[str, Any]],
    *,
    track: str,
    budget: int,
    count: Callable[[Sequence[str]], list[int]] | None = None,
) -> list[str]:
    """`serialize_job(row, track=track, budget=budget, count_tokens=...)` for every row, the
    same texts, with `count` a batch counter (TokenCounter, or EstimateCounter by default).
    Raises PromptTooLong, as serialize_job would, for the first row whose header is too long."""
    if track not in TRACKS:
        raise ValueError(f"unknown track {track!r}; choose one of {', '.join(TRACKS)}")
    if budget < 1:
        raise ValueError(f"budget must be a positive number of tokens, got {budget}")
    counter = count if count is not None else EstimateCounter()
    shared = Shared()
    prompts = [build_prompt(row, track, shared) for row in rows]
    texts = [p.render() for p in prompts]
    out = list(texts)
    counts = counter(texts)
    pending = [i for i, n in enumerate(counts) if n > budget]
    stages = {i: prompts[i].cuts() for i in pending}
    failed: dict[int, int] = {}  # row -> tokens of its shortest prompt
    last = {i: counts[i] for i in pending}  # tokens of each prompt's latest text
    while pending:  # one wave: the next cut of every prompt still over the budget
        alive = [i for i in pending if next(stages[i], False) is None]
        for i in set(pending) - set(alive):
            failed[i] = last[i]
        wave = [prompts[i].render() for i in alive]
        pending = []
        for i, text, n in zip(alive, wave, counter(wave), strict=True):
            if n <= budget:
                out[i] = text
            else:
                pending.append(i)
                last[i] = n
    if failed:
        first = min(failed)
        raise PromptTooLong(too_long(rows[first], failed[first], budget))
    return out
