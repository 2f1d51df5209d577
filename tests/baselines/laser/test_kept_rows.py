"""The last decoder layer at the kept positions only (`kept_rows.py`): the loss and every
gradient are transformers' own full forward's, for each layout it serves, both paddings, a
sliding window and LoRA; any other layout is left alone; without the keyword nothing changes."""

from __future__ import annotations

import copy
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from gharuntime.baselines.laser import kept_rows  # noqa: E402
from gharuntime.baselines.laser.models import (  # noqa: E402
    ModelOptions,
    apply_lora,
    padding_safe_attention,
    tiny_model,
    train_tokenizer,
)
from gharuntime.baselines.laser.train import collate, make_example, target_loss  # noqa: E402

PROMPTS = [
    f"job test-{i} on ubuntu-{i % 3}, {i % 7} steps, matrix {i * 37 % 11}\n" for i in range(8)
]
TARGETS = [f"duration_s={(i % 9) + 1}.{i % 10}0e+0{i % 4}" for i in range(8)]


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return train_tokenizer(PROMPTS + TARGETS, 300)


@pytest.fixture(scope="module")
def examples(tokenizer: Any) -> list[Any]:
    # prompts of several lengths, so right-padded rows end at different columns
    return [
        make_example(
            tokenizer.encode(p * (1 + i % 3)),
            tokenizer.encode(t),
            tokenizer.eos_token_id,
            max_length=None,
        )
        for i, (p, t) in enumerate(zip(PROMPTS, TARGETS, strict=True))
    ]


def _llama_family(kind: str, tokenizer: Any) -> Any:
    """A small randomly initialised Llama or Qwen2 (tiny_model builds the Mistral ones)."""
    common = dict(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = (
        transformers.LlamaConfig(**common)
        if kind == "llama"
        else transformers.Qwen2Config(**common, use_sliding_window=False)
    )
    torch.manual_seed(1)
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    return padding_safe_attention(model.float())


def _model(kind: str, tokenizer: Any) -> Any:
    if kind == "mistral":
        return tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)
    if kind == "mistral-sliding":  # a window far shorter than the prompts: the mask bites
        return tiny_model(tokenizer, "tiny", ModelOptions(attention="sliding", sliding_window=9), 0)
    if kind == "mistral-lora":
        base = tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)
        return apply_lora(base, ModelOptions(lora_r=4))
    return _llama_family(kind, tokenizer)


def _loss_and_grads(model: Any, batch: dict[str, Any], kept: bool) -> tuple[float, dict[str, Any]]:
    model.zero_grad(set_to_none=True)
    loss, _ = target_loss(model, batch, kept)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    return float(loss.detach()), grads


@pytest.mark.parametrize("padding", ["right", "left"])
@pytest.mark.parametrize("kind", ["mistral", "mistral-sliding", "mistral-lora", "llama", "qwen2"])
def test_the_kept_positions_give_the_full_forwards_loss_and_gradients(
    tokenizer: Any, examples: list[Any], kind: str, padding: str
) -> None:
    full = _model(kind, tokenizer)
    full.train()
    kept = copy.deepcopy(full)
    assert kept_rows.install(kept)
    batch = collate(examples, tokenizer.pad_token_id, padding)
    assert len(batch["keep"]) < batch["input_ids"].shape[1]  # some positions are skipped
    want, want_grads = _loss_and_grads(full, batch, kept=False)  # transformers' own forward
    got, got_grads = _loss_and_grads(kept, batch, kept=True)
    assert got == pytest.approx(want, rel=1e-5)
    assert want_grads.keys() == got_grads.keys() and want_grads
    for name, g in want_grads.items():
        scale = float(g.abs().max()) + 1e-12
        assert float((got_grads[name] - g).abs().max()) <= 1e-4 * scale, name


def test_without_the_keyword_the_model_is_unchanged(tokenizer: Any, examples: list[Any]) -> None:
    """Prediction and generation call the model without `kept_positions`: same logits, same
    weights and weight names (what is saved), and installing twice changes nothing."""
    model = tiny_model(tokenizer, "tiny", ModelOptions(), seed=0).eval()
    ids = collate(examples, tokenizer.pad_token_id, "right")["input_ids"]
    with torch.no_grad():
        before = model(input_ids=ids).logits
    names = list(model.state_dict())
    assert kept_rows.install(model) and kept_rows.install(model)
    with torch.no_grad():
        after = model(input_ids=ids).logits
    assert torch.equal(before, after)
    assert list(model.state_dict()) == names
    out = model.generate(ids[:1, :5], max_new_tokens=3, do_sample=False, pad_token_id=0)
    assert out.shape == (1, 8)


def test_a_layout_it_does_not_serve_is_left_alone(tokenizer: Any) -> None:
    gpt2 = transformers.GPT2LMHeadModel(
        transformers.GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=1, n_head=2)
    )
    assert not kept_rows.install(gpt2)
    assert all("forward" not in vars(m) for m in gpt2.modules())
    qwen3 = transformers.AutoModelForCausalLM.from_config(
        transformers.Qwen3Config(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=48,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            head_dim=16,
        )
    )
    assert not kept_rows.install(qwen3)  # per-head query/key norms: another layer layout


def test_a_cache_is_refused(tokenizer: Any) -> None:
    model = tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)
    kept_rows.install(model)
    with pytest.raises(ValueError, match="kept_positions is for training"):
        model(
            input_ids=torch.tensor([[3, 4, 5]]),
            use_cache=True,
            logits_to_keep=0,
            kept_positions=torch.tensor([1, 2]),
        )
