"""The shared-prompt decoder against the straightforward one (the prompt's KV cache copied per draw
and grown by concatenation): the same logits up to float rounding at every step, so a seeded run
draws the same tokens; and what it does not serve falls back to the reference."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from gharuntime.baselines.laser.bench import build_tokenizer, random_llama  # noqa: E402
from gharuntime.baselines.laser.decoding import (  # noqa: E402
    DecodingError,
    _Stepper,
    constrained_generate,
    constrained_generate_traced,
    prompt_token_ids,
)
from gharuntime.baselines.laser.encoding import codec_for  # noqa: E402
from gharuntime.baselines.laser.models import ModelOptions, tiny_model  # noqa: E402
from gharuntime.baselines.laser.shared_kv import SharedPromptStepper, supports  # noqa: E402

MULTI = ("duration_s", "queue_s", "log_bytes")
PROMPTS = [
    "repo: org/a job: build",
    "repo: org/bigger-name job: test (ubuntu-latest, 3.12)\nsteps: pytest -q",
    "x",
    "repo: org/c job: lint " * 6,
    "steps: 1 12 123",
]


@pytest.fixture(autouse=True)
def _one_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def merged() -> Any:
    """Merges join digits and punctuation, so rows feed chunks of different widths."""
    sci = codec_for("sci", MULTI)
    corpus = []
    for i in range(300):
        v = {"duration_s": 1.7 ** (i % 40), "queue_s": i * 3.3, "log_bytes": 12 * i**2}
        corpus.append(f"repo: org/r{i} job: test {i} 12 123 1234\n" + sci.encode(v))
    return build_tokenizer(corpus, vocab_size=600, split_digits=False)


def _tiny(tokenizer: Any, **options: Any) -> Any:
    """LASER's own tiny Mistral (4 query heads on 2 kv heads), weights scaled up so that the
    logits are far from uniform and a wrong attention would show."""
    model = tiny_model(tokenizer, "tiny", ModelOptions(max_positions=512, **options), seed=5)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.mul_(8.0)
    return model.eval()


def test_every_step_gives_the_reference_logits(merged: Any) -> None:
    model = _tiny(merged)
    assert supports(model)
    prompts = [prompt_token_ids(merged, p) for p in PROMPTS[:3]]
    ref = _Stepper(model, merged.pad_token_id, torch.device("cpu"))
    new = SharedPromptStepper(
        model,
        merged.pad_token_id,
        torch.device("cpu"),
        _Stepper(model, merged.pad_token_id, torch.device("cpu")),
    )
    g = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        assert torch.equal(ref.feed(prompts), new.feed(prompts))  # the same prompt pass
        ref.repeat(4)
        new.repeat(4)
        for step in range(40):  # past the first buffer's 32 columns: it grows
            chunks = [
                torch.randint(2, len(merged), (int(n),), generator=g).tolist()
                for n in torch.randint(0, 3, (12,), generator=g)
            ]
            chunks[step % 12] = chunks[step % 12] or [7]
            a, b = ref.feed(chunks), new.feed(chunks)
            assert torch.allclose(a, b, atol=1e-4, rtol=1e-4), (step, (a - b).abs().max())
    assert new.used > 32


@pytest.mark.parametrize("samples", [1, 16])
def test_seeded_draws_are_the_reference_draws(merged: Any, samples: int) -> None:
    codec = codec_for("sci", MULTI)
    for model in (_tiny(merged), random_llama(len(merged), layers=2, width=32, heads=2, seed=1)):
        kwargs: dict[str, Any] = {"samples": samples, "seed": 11, "batch_size": 3}
        new = constrained_generate_traced(model, merged, PROMPTS, codec, **kwargs)
        ref = constrained_generate_traced(
            model, merged, PROMPTS, codec, decoder="reference", **kwargs
        )
        assert new == ref
        assert len({t for row in new for t, _ in row}) > (3 if samples > 1 else 1)


def test_what_it_cannot_serve_uses_the_reference(merged: Any) -> None:
    sliding = _tiny(merged, attention="sliding", sliding_window=8)
    assert not supports(sliding)
    codec = codec_for("sci", ("duration_s",))
    a = constrained_generate(sliding, merged, PROMPTS, codec, samples=4, seed=3)
    b = constrained_generate(
        sliding, merged, PROMPTS, codec, samples=4, seed=3, decoder="reference"
    )
    assert a == b
    with pytest.raises(DecodingError, match="decoder"):
        constrained_generate(sliding, merged, PROMPTS, codec, decoder="fast")


@pytest.mark.parametrize(("batch_size", "samples"), [(1, 2), (2, 4), (1, 16)])
def test_a_batch_of_one_prompt_is_served(merged: Any, batch_size: int, samples: int) -> None:
    """A batch holding one prompt (batch_size 1, or the last of a split) gives merged
    attention outputs in another memory layout: they must be reshaped, not viewed (a
    pipeline on the tiny world stopped with "view size is not compatible")."""
    codec = codec_for("sci", MULTI)
    model = _tiny(merged)
    kwargs: dict[str, Any] = {"samples": samples, "seed": 1, "batch_size": batch_size}
    new = constrained_generate_traced(model, merged, PROMPTS[:3], codec, **kwargs)
    ref = constrained_generate_traced(
        model, merged, PROMPTS[:3], codec, decoder="reference", **kwargs
    )
    assert new == ref
