"""Constrained decoding with prefix filling: a causal LM writes a codec's layout, always validly.

The codec's layout (`codec.segments()`) alternates `Fixed` text and `Free` slots. Fixed text is
tokenized once and fed to the model ("prefilled"), never generated. In a free slot the next token
is chosen only among the tokens that keep the text inside the slot's language: for every state of
the slot's character automaton a mask over the tokenizer's whole vocabulary is precomputed from
the tokens' real texts (what each token adds to a decoded string), so tokenizers that merge
digits ("12", "e+0"), mark spaces ("Ġ", "▁") or fall back to bytes are handled alike; a token
that would run past the slot's end is never allowed, since the following fixed text is prefilled.

One forward pass reads the prompt and the first fixed part together; after that each pass feeds
the token just chosen plus any fixed text after it, on top of the KV cache. Prompts decode in
batches (left padded); when rows need different numbers of tokens for a slot (one wrote "12" as
one token, another as "1","2") the rows that are done feed a masked pad, so the cache stays
aligned. The output text is assembled from the fixed texts and the chosen tokens' texts, so it
always parses with `codec.decode`, whatever the model's weights.

Training must show the model the same token sequences: `prompt_token_ids` + `target_token_ids`
(each fixed part and free slot tokenized on its own) + eos.
"""

from __future__ import annotations

import contextlib
import inspect
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from gharuntime.baselines.laser.encoding import (
    TARGET_SEPARATOR,
    CharDFA,
    Codec,
    Fixed,
    Free,
    Segment,
)
from gharuntime.baselines.laser.shared_kv import SharedPromptStepper, supports
from gharuntime.errors import GharuntimeError

__all__ = [
    "DECODERS",
    "DecodingError",
    "SlotMasks",
    "constrained_generate",
    "constrained_generate_traced",
    "plain_generate",
    "prompt_token_counter",
    "prompt_token_ids",
    "prompt_token_ids_many",
    "slot_masks",
    "target_token_ids",
    "token_texts",
]


DECODERS = ("shared", "reference")
"""`shared`: the draws share the prompt's KV cache (`shared_kv.py`) where the model allows it;
`reference`: the prompt's cache copied per draw and grown by concatenation, the straightforward
decode kept to check the other against and to measure it by."""


class DecodingError(GharuntimeError, ValueError):
    """A tokenizer that cannot write the codec's layout, or inputs the decoder cannot use."""


# --- token texts ---------------------------------------------------------------------------------

_TEXTS: weakref.WeakKeyDictionary[Any, list[str | None]] = weakref.WeakKeyDictionary()


def token_texts(tokenizer: Any) -> list[str | None]:
    """For every token id, the text it adds when decoded after other text (None for special
    tokens and tokens whose text depends on their neighbours, e.g. partial UTF-8 bytes).

    Computed by decoding [anchor, id] and removing the anchor's text, so the tokenizer's own
    decoder decides what "Ġ12", "▁1" or "<0x31>" stand for."""
    try:
        return _TEXTS[tokenizer]
    except (KeyError, TypeError):
        pass
    size = len(tokenizer)
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    anchor_ids = tokenizer.encode("a", add_special_tokens=False)
    if not anchor_ids:
        raise DecodingError("the tokenizer encodes 'a' as nothing; cannot read its token texts")
    anchor = anchor_ids[-1]
    kwargs = {"skip_special_tokens": False, "clean_up_tokenization_spaces": False}
    base = tokenizer.decode([anchor], **kwargs)
    decoded = tokenizer.batch_decode([[anchor, i] for i in range(size)], **kwargs)
    texts: list[str | None] = []
    for i, text in enumerate(decoded):
        if i in special or not text.startswith(base) or "\ufffd" in text:
            texts.append(None)
        else:
            texts.append(text[len(base) :])
    with contextlib.suppress(TypeError):  # not weak-referenceable: no cache
        _TEXTS[tokenizer] = texts
    return texts


def _fragment_ids(tokenizer: Any, text: str, texts: list[str | None]) -> list[int]:
    """Token ids whose texts concatenate to exactly `text`: the tokenizer's own encoding when it
    round-trips (no dummy prefix space etc.), else greedy longest match over the token texts."""
    if not text:
        return []
    ids = list(tokenizer.encode(text, add_special_tokens=False))
    if (
        all(0 <= i < len(texts) and texts[i] is not None for i in ids)
        and "".join(texts[i] or "" for i in ids) == text
    ):
        return ids
    by_text: dict[str, int] = {}
    for i, t in enumerate(texts):
        if t and t not in by_text and t in text:
            by_text[t] = i
    out: list[int] = []
    pos = 0
    while pos < len(text):
        for end in range(len(text), pos, -1):
            tid = by_text.get(text[pos:end])
            if tid is not None:
                out.append(tid)
                pos = end
                break
        else:
            raise DecodingError(f"the tokenizer has no token for {text[pos]!r} (in {text!r})")
    return out


def prompt_token_ids(tokenizer: Any, prompt: str) -> list[int]:
    """The ids fed for a prompt: `prompt + TARGET_SEPARATOR`, with the tokenizer's special
    tokens (e.g. BOS). Training uses the same ids."""
    return list(tokenizer(prompt + TARGET_SEPARATOR, add_special_tokens=True)["input_ids"])


def prompt_token_ids_many(tokenizer: Any, prompts: Sequence[str]) -> list[list[int]]:
    """`prompt_token_ids` of every prompt, in one batched call (the fast tokenizers encode a
    batch in parallel)."""
    if not prompts:
        return []
    encoded = tokenizer([p + TARGET_SEPARATOR for p in prompts], add_special_tokens=True)
    return [list(ids) for ids in encoded["input_ids"]]


def prompt_token_counter(tokenizer: Any) -> Callable[[str], int]:
    """A `count_tokens` for `serialize_job`: the length of `prompt_token_ids`."""

    def count(text: str) -> int:
        return len(prompt_token_ids(tokenizer, text))

    return count


def target_token_ids(tokenizer: Any, codec: Codec, text: str) -> list[int]:
    """The ids of an encoded target as constrained decoding produces them: each fixed part and
    each free slot tokenized on its own. Raises DecodingError when `text` is not in the layout."""
    texts = token_texts(tokenizer)
    out: list[int] = []
    pos = 0
    for seg in codec.segments():
        if isinstance(seg, Fixed):
            if not text.startswith(seg.text, pos):
                raise DecodingError(f"{text!r} lacks {seg.text!r} at character {pos}")
            out.extend(_fragment_ids(tokenizer, seg.text, texts))
            pos += len(seg.text)
        else:
            chunk = text[pos : pos + seg.dfa.length]
            if not seg.dfa.accepts(chunk):
                raise DecodingError(f"{text!r}: {chunk!r} does not fit the {seg.role} slot")
            out.extend(_fragment_ids(tokenizer, chunk, texts))
            pos += len(chunk)
    if pos != len(text):
        raise DecodingError(f"{text!r} has extra text after the layout: {text[pos:]!r}")
    return out


# --- masks ---------------------------------------------------------------------------------------


@dataclass
class SlotMasks:
    """For one free slot's automaton: `next_state[s, t]` is the state after token t from state s,
    or -1 when t is not allowed there; `allowed = next_state >= 0`; `accepting[s]`."""

    next_state: torch.Tensor  # (states, vocab) int64
    allowed: torch.Tensor  # (states, vocab) bool
    accepting: torch.Tensor  # (states,) bool
    texts: list[str | None]


def slot_masks(dfa: CharDFA, texts: Sequence[str | None], vocab: int) -> SlotMasks:
    """Masks over a vocabulary of `vocab` logits (may exceed the tokenizer's size) for `dfa`."""
    alphabet = dfa.alphabet
    nxt = torch.full((dfa.states, vocab), -1, dtype=torch.long)
    for tid, text in enumerate(texts[:vocab]):
        if not text or len(text) > dfa.length or not set(text) <= alphabet:
            continue
        for s in range(dfa.states):
            end = dfa.run(s, text)
            if end is not None:
                nxt[s, tid] = end
    accepting = torch.tensor([dfa.accepting(s) for s in range(dfa.states)], dtype=torch.bool)
    allowed = nxt >= 0
    for s in range(dfa.states):
        if not accepting[s] and not bool(allowed[s].any()):
            raise DecodingError(
                f"the tokenizer has no token that continues a slot from state {s} "
                f"(characters {''.join(sorted(dfa.transitions[s]))!r})"
            )
    return SlotMasks(nxt, allowed, accepting, list(texts))


def _dfa_key(dfa: CharDFA) -> tuple[Any, ...]:
    return (dfa.length, tuple(tuple(sorted(t.items())) for t in dfa.transitions))


@dataclass
class _Plan:
    """A codec's layout made ready for one tokenizer and model: token ids of fixed parts,
    masks (on the model's device) of free slots."""

    steps: list[tuple[str, list[int]] | tuple[str, SlotMasks]]  # ("fixed", ids) / ("free", masks)
    fixed_texts: list[str]


_PLANS: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], _Plan]] = weakref.WeakKeyDictionary()


def _plan(tokenizer: Any, codec: Codec, vocab: int, device: torch.device) -> _Plan:
    segments: list[Segment] = codec.segments()
    key = (str(device), vocab, tuple(_seg_key(s) for s in segments))
    try:
        cached = _PLANS.setdefault(tokenizer, {})
    except TypeError:
        cached = {}
    if key in cached:
        return cached[key]
    texts = token_texts(tokenizer)
    masks_by_dfa: dict[tuple[Any, ...], SlotMasks] = {}
    steps: list[tuple[str, list[int]] | tuple[str, SlotMasks]] = []
    fixed_texts: list[str] = []
    for seg in segments:
        if isinstance(seg, Fixed):
            steps.append(("fixed", _fragment_ids(tokenizer, seg.text, texts)))
            fixed_texts.append(seg.text)
        else:
            dk = _dfa_key(seg.dfa)
            if dk not in masks_by_dfa:
                m = slot_masks(seg.dfa, texts, vocab)
                masks_by_dfa[dk] = SlotMasks(
                    m.next_state.to(device), m.allowed.to(device), m.accepting.to(device), texts
                )
            steps.append(("free", masks_by_dfa[dk]))
    plan = _Plan(steps, fixed_texts)
    cached[key] = plan
    return plan


def _seg_key(seg: Segment) -> tuple[Any, ...]:
    if isinstance(seg, Fixed):
        return ("fixed", seg.text)
    assert isinstance(seg, Free)
    return ("free", _dfa_key(seg.dfa))


# --- the model -----------------------------------------------------------------------------------


def _cache_kwarg(model: Any) -> str:
    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def _new_cache(model: Any) -> Any:
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config)
    except TypeError:
        return DynamicCache()


def _pad_id(tokenizer: Any) -> int:
    for attr in ("pad_token_id", "eos_token_id", "unk_token_id"):
        value = getattr(tokenizer, attr, None)
        if isinstance(value, int):
            return value
    return 0


class _Stepper:
    """Feeds chunks of tokens (one list per row) to the model on top of the KV cache."""

    def __init__(self, model: Any, pad: int, device: torch.device) -> None:
        self.model = model
        self.pad = pad
        self.device = device
        self.cache = _new_cache(model)
        self.kwarg = _cache_kwarg(model)
        self.mask: torch.Tensor | None = None
        params = inspect.signature(model.forward).parameters
        self.keep = "logits_to_keep" if "logits_to_keep" in params else None
        if self.keep is None and "num_logits_to_keep" in params:
            self.keep = "num_logits_to_keep"

    def feed(self, chunks: Sequence[Sequence[int]]) -> torch.Tensor:
        """Feed each row's tokens (left padded to the longest); the logits after each row's last
        fed token, float32 (rows, vocab)."""
        width = max(1, max(len(c) for c in chunks))
        ids = torch.full((len(chunks), width), self.pad, dtype=torch.long)
        mask = torch.zeros((len(chunks), width), dtype=torch.long)
        for r, chunk in enumerate(chunks):
            if chunk:
                ids[r, width - len(chunk) :] = torch.tensor(chunk, dtype=torch.long)
                mask[r, width - len(chunk) :] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        self.mask = mask if self.mask is None else torch.cat([self.mask, mask], dim=1)
        positions = (self.mask.cumsum(-1) - 1).clamp(min=0)[:, -width:]
        kwargs: dict[str, Any] = {
            "input_ids": ids,
            "attention_mask": self.mask,
            "position_ids": positions,
            self.kwarg: self.cache,
            "use_cache": True,
        }
        if self.keep:
            kwargs[self.keep] = 1
        out = self.model(**kwargs)
        logits: torch.Tensor = out.logits[:, -1, :].float()
        return logits

    def repeat(self, k: int) -> None:
        """Each row becomes k rows (after the prompt: K samples share one prompt pass)."""
        if k == 1:
            return
        self.cache.batch_repeat_interleave(k)
        assert self.mask is not None
        self.mask = self.mask.repeat_interleave(k, dim=0)


def _choose(
    logits: torch.Tensor,
    allowed: torch.Tensor,
    sample: bool,
    temperature: float,
    generator: torch.Generator | None,
) -> torch.Tensor:
    finite = torch.nan_to_num(logits, nan=0.0, posinf=1e30, neginf=-1e30)
    masked = finite.masked_fill(~allowed, float("-inf"))
    if not sample:
        return masked.argmax(dim=-1)
    probs = torch.softmax(masked / temperature, dim=-1)
    # a model whose allowed logits are all -inf (or NaN) must still pick an allowed token
    bad = ~torch.isfinite(probs).all(dim=-1) | (probs.sum(dim=-1) <= 0)
    if bool(bad.any()):  # (rows already done with the slot have nothing allowed: any pick)
        fallback = allowed[bad].float()
        fallback[fallback.sum(dim=-1) == 0] = 1.0
        probs[bad] = fallback
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


def _decode_batch(
    model: Any,
    plan: _Plan,
    prompt_ids: list[list[int]],
    samples: int,
    temperature: float,
    generator: torch.Generator | None,
    pad: int,
    device: torch.device,
    vocab: int,
    shared: bool,
) -> list[tuple[str, list[tuple[int, bool]]]]:
    stepper: Any = _Stepper(model, pad, device)
    if shared:
        stepper = SharedPromptStepper(model, pad, device, stepper)
    steps = plan.steps
    first_fixed: list[int] = []
    start = 0
    if steps and steps[0][0] == "fixed":
        first_fixed = list(steps[0][1])  # type: ignore[arg-type]
        start = 1
    logits = stepper.feed([p + first_fixed for p in prompt_ids])[:, :vocab]
    stepper.repeat(samples)
    logits = logits.repeat_interleave(samples, dim=0)
    rows = len(prompt_ids) * samples
    pieces: list[list[str]] = [[plan.fixed_texts[0]] if start else [] for _ in range(rows)]
    trace: list[list[tuple[int, bool]]] = [[(t, False) for t in first_fixed] for _ in range(rows)]
    pending: list[list[int]] = [[] for _ in range(rows)]
    fixed_i = start
    for kind, payload in steps[start:]:
        if kind == "fixed":
            assert isinstance(payload, list)
            for r in range(rows):
                pending[r].extend(payload)
                pieces[r].append(plan.fixed_texts[fixed_i])
                trace[r].extend((t, False) for t in payload)
            fixed_i += 1
            continue
        assert isinstance(payload, SlotMasks)
        masks = payload
        if any(pending):
            logits = stepper.feed(pending)[:, :vocab]
            pending = [[] for _ in range(rows)]
        state = torch.zeros(rows, dtype=torch.long, device=device)
        active = ~masks.accepting[state]
        while bool(active.any()):
            chosen = _choose(logits, masks.allowed[state], samples > 1, temperature, generator)
            new_state = masks.next_state[state, chosen]
            state = torch.where(active, new_state, state)
            picked = chosen.tolist()
            for r in torch.nonzero(active).flatten().tolist():
                tid = picked[r]
                pending[r] = [tid]
                pieces[r].append(masks.texts[tid] or "")
                trace[r].append((tid, True))
            active = ~masks.accepting[state]
            if bool(active.any()):
                logits = stepper.feed(pending)[:, :vocab]
                pending = [[] for _ in range(rows)]
    return [("".join(p), t) for p, t in zip(pieces, trace, strict=True)]


def _model_device(model: Any) -> torch.device:
    try:
        return next(model.parameters()).device  # type: ignore[no-any-return]
    except (StopIteration, AttributeError):
        return torch.device("cpu")


def constrained_generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    codec: Codec,
    *,
    samples: int = 1,
    temperature: float = 1.0,
    seed: int = 0,
    batch_size: int = 8,
    max_prompt_tokens: int | None = None,
    decoder: str = "shared",
) -> list[list[str]]:
    """Per prompt, `samples` encoded-target strings, every one valid for `codec.decode`.

    samples=1 decodes greedily; samples>1 samples at `temperature` (seeded by `seed`). Prompts
    longer than `max_prompt_tokens` keep their last tokens. `decoder` (`DECODERS`) picks how the
    KV cache is kept; both write the same texts for the same seed up to float rounding."""
    traced = constrained_generate_traced(
        model,
        tokenizer,
        prompts,
        codec,
        samples=samples,
        temperature=temperature,
        seed=seed,
        batch_size=batch_size,
        max_prompt_tokens=max_prompt_tokens,
        decoder=decoder,
    )
    return [[text for text, _ in row] for row in traced]


def constrained_generate_traced(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    codec: Codec,
    *,
    samples: int = 1,
    temperature: float = 1.0,
    seed: int = 0,
    batch_size: int = 8,
    max_prompt_tokens: int | None = None,
    decoder: str = "shared",
) -> list[list[tuple[str, list[tuple[int, bool]]]]]:
    """As `constrained_generate`, each text with the token ids fed after the prompt, in order,
    each marked True when the model chose it (a free slot) and False when it was prefilled (the
    last chosen token is in the trace though never fed)."""
    if samples < 1:
        raise DecodingError(f"samples must be at least 1, got {samples}")
    if batch_size < 1:
        raise DecodingError(f"batch_size must be at least 1, got {batch_size}")
    if samples > 1 and not temperature > 0:
        raise DecodingError(f"sampling needs a temperature above 0, got {temperature}")
    if decoder not in DECODERS:
        raise DecodingError(f"decoder must be one of {', '.join(DECODERS)}, not {decoder!r}")
    if not prompts:
        return []
    device = _model_device(model)
    shared = decoder == "shared" and supports(model)
    vocab = int(model.get_output_embeddings().weight.shape[0])
    plan = _plan(tokenizer, codec, vocab, device)
    pad = _pad_id(tokenizer)
    ids = [prompt_token_ids(tokenizer, p) for p in prompts]
    if max_prompt_tokens is not None:
        ids = [x[-max_prompt_tokens:] for x in ids]
    order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i))
    generator = None
    if samples > 1:
        generator = torch.Generator(device=device)
        generator.manual_seed(seed)
    out: list[list[tuple[str, list[tuple[int, bool]]]]] = [[] for _ in prompts]
    was_training = bool(getattr(model, "training", False))
    model.eval()
    try:
        with torch.inference_mode():
            for b in range(0, len(order), batch_size):
                batch = order[b : b + batch_size]
                texts = _decode_batch(
                    model,
                    plan,
                    [ids[i] for i in batch],
                    samples,
                    temperature,
                    generator,
                    pad,
                    device,
                    vocab,
                    shared,
                )
                for j, i in enumerate(batch):
                    out[i] = texts[j * samples : (j + 1) * samples]
    finally:
        model.train(was_training)
    for row in out:
        for text, _ in row:
            codec.decode(text)  # cannot fail by construction; a bug here must not pass silently
    return out


def plain_generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[str],
    max_new_tokens: int,
    batch_size: int = 8,
    *,
    min_new_tokens: int = 0,
) -> list[str]:
    """Unconstrained greedy generation after `prompt_token_ids` (HF `generate`, KV cache, left
    padding), decoded without special tokens: the reference the latency bench compares with."""
    from transformers import GenerationConfig

    if not prompts:
        return []
    device = _model_device(model)
    pad = _pad_id(tokenizer)
    eos = getattr(tokenizer, "eos_token_id", None)
    config = GenerationConfig(  # type: ignore[no-untyped-call]
        max_new_tokens=max_new_tokens,
        min_new_tokens=min_new_tokens,
        do_sample=False,
        pad_token_id=pad,
        eos_token_id=eos,
    )
    ids = [prompt_token_ids(tokenizer, p) for p in prompts]
    order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i))
    out: list[str] = ["" for _ in prompts]
    was_training = bool(getattr(model, "training", False))
    model.eval()
    try:
        with torch.inference_mode():
            for b in range(0, len(order), batch_size):
                batch = order[b : b + batch_size]
                width = max(len(ids[i]) for i in batch)
                x = torch.full((len(batch), width), pad, dtype=torch.long)
                m = torch.zeros((len(batch), width), dtype=torch.long)
                for r, i in enumerate(batch):
                    x[r, width - len(ids[i]) :] = torch.tensor(ids[i])
                    m[r, width - len(ids[i]) :] = 1
                gen = model.generate(
                    input_ids=x.to(device), attention_mask=m.to(device), generation_config=config
                )
                for r, i in enumerate(batch):
                    out[i] = tokenizer.decode(gen[r, width:].tolist(), skip_special_tokens=True)
    finally:
        model.train(was_training)
    return out
