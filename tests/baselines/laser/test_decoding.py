"""Constrained decoding with prefix filling: masks over real BPE vocabularies (merged digits,
space-marked tokens), outputs that always parse, KV-cache correctness and prefilling."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from gharuntime.baselines.laser.bench import build_tokenizer, random_llama  # noqa: E402
from gharuntime.baselines.laser.decoding import (  # noqa: E402
    DecodingError,
    constrained_generate,
    constrained_generate_traced,
    plain_generate,
    prompt_token_ids,
    slot_masks,
    target_token_ids,
    token_texts,
)
from gharuntime.baselines.laser.encoding import (  # noqa: E402
    Fixed,
    Free,
    codec_for,
    median_and_quantiles,
)

MULTI = ("duration_s", "queue_s", "log_bytes")


def _corpus() -> list[str]:
    sci = codec_for("sci", MULTI)
    dec = codec_for("decimal", MULTI)
    out = []
    for i in range(300):
        v = {"duration_s": 1.7 ** (i % 40), "queue_s": i * 3.3, "log_bytes": 12 * i**2}
        out.append(f"repo: org/r{i} job: test {i} 12 123 1234\n" + sci.encode(v))
        out.append(dec.encode(v))
    return out


@pytest.fixture(autouse=True)
def _one_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def merged() -> Any:
    """A byte-level BPE whose merges join digits and punctuation ("12", "e+0", "+0")."""
    return build_tokenizer(_corpus(), vocab_size=600, split_digits=False)


@pytest.fixture(scope="module")
def split() -> Any:
    """A byte-level BPE with every digit its own token (as Llama 3 / SmolLM2)."""
    return build_tokenizer(_corpus(), vocab_size=400, split_digits=True)


def _model(tokenizer: Any, seed: int = 0) -> Any:
    return random_llama(len(tokenizer), layers=2, width=32, heads=2, max_positions=512, seed=seed)


PROMPTS = [
    "repo: org/a job: build",
    "repo: org/bigger-name job: test (ubuntu-latest, 3.12)\nsteps: pytest -q",
    "x",
    "repo: org/c job: lint " * 6,
    "steps: 1 12 123",
]


def test_the_merged_vocabulary_really_merges_digits(merged: Any) -> None:
    texts = token_texts(merged)
    present = {t for t in texts if t}
    assert {"12", "00"} <= present
    assert any(t and len(t) >= 3 and t[0] in "e+-" and t[-1].isdigit() for t in texts), (
        "expected a merge such as 'e+0' or '+01'"
    )
    assert any(t and t.startswith(" ") and t.strip().isdigit() for t in texts)  # " 12"
    for special in merged.all_special_ids:
        assert texts[special] is None


def _allowed_by_brute_force(words: list[str], texts: list[str | None], prefix: str) -> set[int]:
    return {i for i, t in enumerate(texts) if t and any(w.startswith(prefix + t) for w in words)}


def test_masks_follow_the_slot_language_over_a_merged_vocabulary(merged: Any) -> None:
    texts = token_texts(merged)
    codec = codec_for("sci", ("duration_s",), exp_min=-2, exp_max=9)
    free = [s for s in codec.segments() if isinstance(s, Free)]
    mantissa, exponent = free[1], free[2]
    digits2 = [f"{a}{b}" for a in "0123456789" for b in "0123456789"]
    exps = [f"-0{e}" for e in (1, 2)] + [f"+0{e}" for e in range(10)]
    for slot, words, prefixes in (
        (mantissa, digits2, ["", "4"]),
        (exponent, exps, ["", "+", "-", "-0", "+0"]),
    ):
        m = slot_masks(slot.dfa, texts, len(texts))
        for prefix in prefixes:
            state = slot.dfa.run(0, prefix)
            assert state is not None
            got = set(torch.nonzero(m.allowed[state]).flatten().tolist())
            assert got == _allowed_by_brute_force(words, texts, prefix), (slot.role, prefix)
            for tid in got:  # the state a token leads to is the one its text reaches
                assert int(m.next_state[state, tid]) == slot.dfa.run(state, texts[tid] or "")
    m = slot_masks(mantissa.dfa, texts, len(texts))
    twelve = texts.index("12")
    assert bool(m.allowed[0, twelve]) and not bool(m.allowed[1, twelve])
    assert bool(m.accepting[int(m.next_state[0, twelve])])
    ex = slot_masks(exponent.dfa, texts, len(texts))
    minus0 = ex.next_state[0, texts.index("-")]
    assert {
        texts[i]
        for i in torch.nonzero(ex.allowed[ex.next_state[minus0, texts.index("0")]])
        .flatten()
        .tolist()
    } == {"1", "2"}


def _bias_towards_invalid(model: Any, tokenizer: Any) -> Any:
    """A hook making the model strongly prefer tokens no layout allows (eos, spaces, letters)."""
    texts = token_texts(tokenizer)
    bad = [tokenizer.eos_token_id] + [i for i, t in enumerate(texts) if t and not t[0].isdigit()]

    def hook(_module: Any, _args: Any, output: Any) -> Any:
        output = output.clone()
        output[..., bad] += 1000.0
        output[..., tokenizer.eos_token_id] += 1000.0  # eos above all
        return output

    return model.lm_head.register_forward_hook(hook)


@pytest.mark.parametrize("name", ["sci", "decimal"])
def test_every_output_parses_even_from_a_random_model(merged: Any, split: Any, name: str) -> None:
    for tokenizer in (merged, split):
        codec = codec_for(name, MULTI)
        model = _model(tokenizer)
        out = constrained_generate(model, tokenizer, PROMPTS, codec, batch_size=2)
        assert [len(o) for o in out] == [1] * len(PROMPTS)
        for (text,) in out:
            assert set(codec.decode(text)) == set(MULTI)
        handle = _bias_towards_invalid(model, tokenizer)
        try:
            sampled = constrained_generate(model, tokenizer, PROMPTS[:3], codec, samples=3, seed=5)
        finally:
            handle.remove()
        assert [len(o) for o in sampled] == [3, 3, 3]
        for row in sampled:
            for text in row:
                codec.decode(text)


def test_plain_generation_of_a_biased_model_is_invalid_where_constrained_is_not(split: Any) -> None:
    model = _model(split)
    codec = codec_for("sci", ("duration_s",))
    handle = _bias_towards_invalid(model, split)
    try:
        plain = plain_generate(model, split, PROMPTS[:2], max_new_tokens=12)
        constrained = constrained_generate(model, split, PROMPTS[:2], codec)
    finally:
        handle.remove()
    assert plain == ["", ""]  # stops at the eos it prefers
    assert all(codec.decode(row[0]) for row in constrained)


def test_cached_batched_decoding_matches_a_full_recompute(merged: Any) -> None:
    """Every chosen token is the best allowed one under a fresh, unpadded, cache-free forward
    pass over the whole sequence: the KV cache, left padding and positions are right."""
    tokenizer = merged
    texts = token_texts(tokenizer)
    codec = codec_for("sci", MULTI)
    model = _model(tokenizer, seed=3)
    traced = constrained_generate_traced(model, tokenizer, PROMPTS, codec, batch_size=3)
    segments = codec.segments()
    for prompt, [(text, trace)] in zip(PROMPTS, traced, strict=True):
        ids = prompt_token_ids(tokenizer, prompt)
        full = ids + [t for t, _ in trace]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([full])).logits[0].float()
        # walk the layout alongside the trace to know each pick's slot and position in it
        pos = len(ids)
        i = 0
        for seg in segments:
            if isinstance(seg, Fixed):  # prefilled tokens: skip them
                while i < len(trace) and not trace[i][1]:
                    i += 1
                    pos += 1
                continue
            so_far = ""
            while len(so_far) < seg.dfa.length:
                tid, free = trace[i]
                assert free
                allowed = [
                    j for j, t in enumerate(texts) if t and seg.dfa.run(0, so_far + t) is not None
                ]
                row = logits[pos - 1]
                assert float(row[tid]) >= float(row[allowed].max()) - 1e-4
                so_far += texts[tid] or ""
                i += 1
                pos += 1
        assert i == len(trace)
        assert codec.decode(text)


@pytest.mark.parametrize("decoder", ["shared", "reference"])
def test_prefilled_parts_cost_no_generation_step_and_the_prompt_is_read_once(
    split: Any, decoder: str
) -> None:
    codec = codec_for("sci", ("duration_s",))  # free: 1 + 2 mantissa digits + 3 exponent chars
    model = _model(split)
    widths: list[int] = []

    def hook(_module: Any, args: Any) -> None:  # every pass embeds what it feeds
        widths.append(int(args[0].shape[1]))

    handle = model.model.embed_tokens.register_forward_pre_hook(hook)
    try:
        [[text]] = constrained_generate(model, split, [PROMPTS[1]], codec, decoder=decoder)
    finally:
        handle.remove()
    prompt = len(prompt_token_ids(split, PROMPTS[1]))
    first_fixed = len(target_token_ids(split, codec, text)) - 6 - 2  # minus free, ".", "e"
    # one pass reads prompt + "duration_s=", then one per chosen character but the last;
    # "." and "e" ride along with the digit before them
    assert widths == [prompt + first_fixed, 2, 1, 2, 1, 1]
    assert len(target_token_ids(split, codec, text)) + 1 > len(widths)  # plain would need more


def test_sampling_is_seeded_and_summarised(split: Any) -> None:
    codec = codec_for("sci", MULTI)
    model = _model(split)
    a = constrained_generate(model, split, PROMPTS[:2], codec, samples=4, seed=7, temperature=1.5)
    b = constrained_generate(model, split, PROMPTS[:2], codec, samples=4, seed=7, temperature=1.5)
    assert a == b
    summary = median_and_quantiles([codec.decode(t) for t in a[0]])
    for med, p10, p90 in summary.values():
        assert p10 <= med <= p90
    with pytest.raises(DecodingError, match="samples"):
        constrained_generate(model, split, PROMPTS[:1], codec, samples=0)


def test_target_token_ids_are_what_the_decoder_feeds(merged: Any) -> None:
    codec = codec_for("sci", MULTI)
    texts = token_texts(merged)
    text = codec.encode({"duration_s": 123.4, "queue_s": 0.0, "log_bytes": 98765})
    ids = target_token_ids(merged, codec, text)
    assert "".join(texts[i] or "" for i in ids) == text
    with pytest.raises(DecodingError):
        target_token_ids(merged, codec, text.replace("queue_s", "queue"))
    with pytest.raises(DecodingError):
        target_token_ids(merged, codec, text + "1")


def test_a_tokenizer_that_cannot_write_a_digit_is_refused() -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(
        vocab_size=60, special_tokens=["<unk>", "</s>"], show_progress=False
    )
    tok.train_from_iterator(["duration_s=1.23e+02 0123456 abc +-;."] * 5, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", eos_token="</s>")
    model = _model(fast)
    with pytest.raises(DecodingError, match="no token"):
        constrained_generate(model, fast, ["abc"], codec_for("sci", ("duration_s",)))


def test_space_marking_tokenizer(merged: Any) -> None:
    """A SentencePiece-style tokenizer ("▁12"): space-marked tokens never enter a number."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(
        vocab_size=500, special_tokens=["<unk>", "<pad>", "</s>"], show_progress=False
    )
    tok.train_from_iterator(_corpus(), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="</s>"
    )
    texts = token_texts(fast)
    assert any(t and t.startswith(" ") and t[1:].isdigit() for t in texts)
    codec = codec_for("sci", MULTI)
    model = _model(fast)
    for (text,) in constrained_generate(model, fast, PROMPTS, codec, batch_size=4):
        assert " " not in text
        codec.decode(text)
