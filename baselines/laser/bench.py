"""Decoding latency: constrained + prefilled decoding against plain unconstrained generation.

Both sides run the same model on the same prompts in the same process, alternating, and each is
timed over whole batches (greedy). The plain side generates as many new tokens as the encoded
target has (its tokens as training shows them, plus eos), so it does the work of writing the
same output; each side's outputs are checked with `codec.decode` (validity rate). A randomly
initialised model is enough for latency; validity then shows what the constraint buys.

Also here: the small building blocks the bench and the tests share — a `tokenizers` BPE
tokenizer trained on serialized prompts (digits split, or merged), and a random Llama.
"""

from __future__ import annotations

import inspect
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from gharuntime.baselines.laser.decoding import (
    constrained_generate,
    plain_generate,
    prompt_token_ids,
    target_token_ids,
)
from gharuntime.baselines.laser.encoding import Codec, EncodingError, codec_for
from gharuntime.baselines.laser.serialize import serialize_job
from gharuntime.contract import TRACKS
from gharuntime.errors import GharuntimeError
from gharuntime.progress import Progress, say

__all__ = [
    "BenchError",
    "BenchSetup",
    "bench_prompts",
    "build_tokenizer",
    "check_random_size",
    "load_setup",
    "random_llama",
    "random_llama_parameters",
    "run_bench",
]

GOAL_TOKENS = 1024
GOAL_REDUCTION = 0.40
RANDOM_HEADS = 4
RANDOM_VOCAB = 1024
"""The random model's attention heads and its tokenizer's vocabulary (at most)."""
MAX_RANDOM_PARAMETERS = 2_000_000_000
"""The largest random Llama `laser bench` builds: 2 billion parameters, 8 GB in float32 (it is
built in float32 before any cast). `--layers 64 --width 8192`, each within its own range, would
be 69 billion (275 GB): refused before anything is built."""


class BenchError(GharuntimeError, ValueError):
    """Bench inputs that cannot be used (a model folder that does not load, bad lengths)."""


def build_tokenizer(
    corpus: Iterable[str], vocab_size: int = 1024, *, split_digits: bool = True
) -> Any:
    """A byte-level BPE tokenizer trained on `corpus` with <pad>, <s>, </s>. `split_digits`:
    every digit its own token (as Llama 3 / SmolLM2 do); otherwise merges may join digits with
    each other and with punctuation ("12", "e+0")."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=split_digits)
    if split_digits:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [pre_tokenizers.Digits(individual_digits=True), byte_level]
        )
    else:
        tok.pre_tokenizer = byte_level
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    bos = tok.token_to_id("<s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos)]
    )
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )


def random_llama_parameters(vocab_size: int, *, layers: int, width: int, heads: int) -> int:
    """The parameters of random_llama's model, counted from its shape: the (tied) embedding,
    per layer the four attention projections, the three MLP ones (4 × width) and two norms,
    and the final norm."""
    inner = heads * (width // heads)
    per_layer = 2 * width * inner + 2 * width * inner + 3 * width * 4 * width + 2 * width
    return vocab_size * width + layers * per_layer + width


def check_random_size(
    layers: int, width: int, *, vocab_size: int = RANDOM_VOCAB, heads: int = RANDOM_HEADS
) -> None:
    """BenchError (before anything is built) for a random Llama whose width the heads do not
    divide, or that is over MAX_RANDOM_PARAMETERS, saying the size asked and one that fits."""
    if layers < 1 or width < heads or width % heads:
        raise BenchError(
            f"--layers {layers} --width {width}: the width must be a multiple of the model's "
            f"{heads} attention heads, and the layers at least 1",
            where="--width",
            fix=f"e.g. --width {max(heads, width - width % heads)}",
        )
    n = random_llama_parameters(vocab_size, layers=layers, width=width, heads=heads)
    if n <= MAX_RANDOM_PARAMETERS:
        return
    per_layer = random_llama_parameters(vocab_size, layers=1, width=width, heads=heads) - (
        random_llama_parameters(vocab_size, layers=0, width=width, heads=heads)
    )
    fits = (MAX_RANDOM_PARAMETERS - vocab_size * width - width) // per_layer
    fix = (
        f"at most --layers {fits} at --width {width}, or a smaller --width"
        if fits >= 1
        else "a smaller --width (e.g. --layers 24 --width 2048: about 1.2 billion)"
    )
    raise BenchError(
        f"--layers {layers} --width {width} makes a random Llama of about {n / 1e9:,.1f} billion "
        f"parameters ({4 * n / 1e9:,.0f} GB in float32); laser bench builds at most "
        f"{MAX_RANDOM_PARAMETERS / 1e9:,.0f} billion ({4 * MAX_RANDOM_PARAMETERS / 1e9:,.0f} GB)",
        where="--layers/--width",
        fix=f"choose {fix}",
    )


def random_llama(
    vocab_size: int,
    *,
    layers: int = 4,
    width: int = 256,
    heads: int = RANDOM_HEADS,
    max_positions: int = 4096,
    seed: int = 0,
) -> Any:
    """A randomly initialised LlamaForCausalLM (float32, eval mode); BenchError, before it is
    built, for one over MAX_RANDOM_PARAMETERS (check_random_size)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    check_random_size(layers, width, vocab_size=vocab_size, heads=heads)

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=width,
        intermediate_size=width * 4,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.eval()  # type: ignore[no-untyped-call]
    return model


def _fixture_prompts(track: str) -> list[str]:
    from gharuntime.fixture import fixture_jobs

    rows = fixture_jobs(seed=0, repos=6, runs_per_repo=2).iter_rows(named=True)
    return [serialize_job(r, track=track, budget=100_000) for r in rows]


def bench_prompts(tokenizer: Any, base: Sequence[str], length: int, count: int) -> list[str]:
    """`count` prompts of about `length` tokens: serialized jobs, each started at a different
    job and continued with the next ones until long enough, then cut to `length` tokens."""
    if length < 8:
        raise BenchError(f"prompt length {length} is too short; use at least 8 tokens")
    out = []
    for i in range(count):
        ids: list[int] = []
        j = i
        while len(ids) < length + 8:
            ids.extend(tokenizer.encode(base[j % len(base)] + "\n\n", add_special_tokens=False))
            j += 1
        text = tokenizer.decode(ids[:length], skip_special_tokens=True)
        # the separator and the tokenizer's own tokens come on top: trim to the length
        while len(prompt_token_ids(tokenizer, text)) > length and text:
            text = text[:-1]
        out.append(text)
    return out


@dataclass
class BenchSetup:
    model: Any
    tokenizer: Any
    name: str


def load_setup(
    model: str,
    *,
    layers: int | None = None,
    width: int | None = None,
    track: str = "config",
    seed: int = 0,
) -> BenchSetup:
    """`tiny` / `tiny-256`: the very decoder LASER trains from scratch (models.tiny_model, seeded,
    untrained: latency needs no training) with LASER's BPE tokenizer trained on serialized
    fixture jobs; `random`: a random Llama of `layers` × `width` (other sizes than LASER's);
    `smollm2-135m`: the pretrained SmolLM2 (as LASER loads it); otherwise a Hugging Face
    causal-LM folder (model + tokenizer)."""
    from gharuntime.baselines.laser.models import TINY_SIZES

    if (layers is not None or width is not None) and model != "random":
        raise BenchError(f"--layers and --width size --model random only, not --model {model!r}")
    if model in TINY_SIZES:
        from gharuntime.baselines.laser.models import ModelOptions, tiny_model, train_tokenizer

        tokenizer = train_tokenizer(_fixture_prompts(track), vocab_size=2000)  # LASER's default
        net = tiny_model(tokenizer, model, ModelOptions(), seed)
        net.eval()
        dims = TINY_SIZES[model]
        return BenchSetup(
            net,
            tokenizer,
            f"{model} (LASER's decoder, {dims['layers']} layers × {dims['hidden']}, untrained)",
        )
    if model == "random":
        layers, width = layers or 4, width or 256
        check_random_size(layers, width)  # before the tokenizer and the model are made
        tokenizer = build_tokenizer(_fixture_prompts(track), vocab_size=RANDOM_VOCAB)
        net = random_llama(len(tokenizer), layers=layers, width=width, seed=seed)
        return BenchSetup(net, tokenizer, f"random Llama, {layers} layers × {width}")
    if model == "smollm2-135m":  # the pretrained LM LASER fine-tunes (weights from a GGUF file)
        from gharuntime.baselines.laser.models import ModelOptions, load_base
        from gharuntime.baselines.method import MethodError

        try:
            loaded = load_base(ModelOptions(model=model))
        except MethodError as exc:
            raise BenchError(str(exc)) from exc
        assert loaded is not None
        loaded.model.eval()
        return BenchSetup(
            loaded.model, loaded.tokenizer, "smollm2-135m (pretrained, not fine-tuned)"
        )
    path = Path(model)
    if not path.is_dir():
        raise BenchError(
            f"--model {model!r}: not tiny, tiny-256, random, smollm2-135m or a folder; give a "
            "Hugging Face causal-LM folder (config.json, weights, tokenizer files)"
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        net = AutoModelForCausalLM.from_pretrained(path)
    except (OSError, ValueError, KeyError) as exc:
        raise BenchError(f"--model {model!r} does not load as a causal LM: {exc}") from exc
    net.eval()  # type: ignore[no-untyped-call]
    return BenchSetup(net, tokenizer, str(path))


def _prefill(
    model: Any, tokenizer: Any, prompts: list[str], batch_size: int, dev: torch.device
) -> None:
    """One forward pass over the prompts (left padded, batched): the part of a decode both
    sides share, timed to separate it from the generation steps."""
    ids = [prompt_token_ids(tokenizer, p) for p in prompts]
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    extra = (
        {"logits_to_keep": 1}
        if "logits_to_keep" in inspect.signature(model.forward).parameters
        else {}
    )
    with torch.inference_mode():
        for b in range(0, len(ids), batch_size):
            chunk = ids[b : b + batch_size]
            width = max(len(x) for x in chunk)
            x = torch.full((len(chunk), width), pad, dtype=torch.long)
            m = torch.zeros((len(chunk), width), dtype=torch.long)
            for r, row in enumerate(chunk):
                x[r, width - len(row) :] = torch.tensor(row)
                m[r, width - len(row) :] = 1
            model(input_ids=x.to(dev), attention_mask=m.to(dev), use_cache=False, **extra)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _valid(codec: Codec, text: str) -> bool:
    try:
        codec.decode(text.strip())
    except EncodingError:
        return False
    return True


def run_bench(
    setup: BenchSetup,
    *,
    prompt_lengths: Sequence[int] = (256, 1024, 2048),
    track: str = "config",
    encoding: str = "sci",
    prompts_per_length: int = 8,
    batch_size: int = 8,
    repeats: int = 3,
    device: str = "auto",
    dtype: str = "auto",
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Time both decoders at each prompt length; a JSON-able dict of the figures."""
    if track not in TRACKS:
        raise BenchError(f"unknown track {track!r}; choose one of {', '.join(TRACKS)}")
    if repeats < 1 or prompts_per_length < 1 or batch_size < 1:
        raise BenchError("--repeats, --prompts and --batch-size must be at least 1")
    dev = torch.device(
        ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
    )
    if dtype == "auto":
        dtype = "bfloat16" if dev.type == "cuda" and torch.cuda.is_bf16_supported() else "float32"
    torch_dtype = {
        "float32": torch.float32,
        "bfloat16": torch.bfloat16,
        "float16": torch.float16,
    }.get(dtype)
    if torch_dtype is None:
        raise BenchError(f"unknown dtype {dtype!r}; use float32, bfloat16 or float16")
    model = setup.model.to(device=dev, dtype=torch_dtype)
    tokenizer = setup.tokenizer
    codec = codec_for(encoding, TRACKS[track].targets)
    example = codec.encode({t: 123.0 for t in codec.targets})
    new_tokens = len(target_token_ids(tokenizer, codec, example)) + 1  # + eos
    limit = getattr(model.config, "max_position_embeddings", None)
    base = _fixture_prompts(track)
    results: list[dict[str, Any]] = []
    for length in prompt_lengths:
        if limit is not None and length + new_tokens + 8 > limit:
            raise BenchError(
                f"prompt length {length} + {new_tokens} new tokens exceeds the model's "
                f"{limit} positions"
            )
        prompts = bench_prompts(tokenizer, base, length, prompts_per_length)
        actual = statistics.mean(len(prompt_token_ids(tokenizer, p)) for p in prompts)

        def constrained(ps: list[str] = prompts) -> list[str]:
            out = constrained_generate(model, tokenizer, ps, codec, batch_size=batch_size)
            return [row[0] for row in out]

        def plain(ps: list[str] = prompts) -> list[str]:
            return plain_generate(
                model, tokenizer, ps, new_tokens, batch_size=batch_size, min_new_tokens=new_tokens
            )

        def prefill(ps: list[str] = prompts) -> list[str]:
            _prefill(model, tokenizer, ps, batch_size, dev)
            return []

        say(progress, f"{length} tokens: warming up")
        constrained(prompts[:batch_size])
        plain(prompts[:batch_size])
        times: dict[str, list[float]] = {"constrained": [], "plain": [], "prefill": []}
        outputs: dict[str, list[str]] = {}
        for rep in range(repeats):
            sides = [("constrained", constrained), ("plain", plain), ("prefill", prefill)]
            for name, fn in sides if rep % 2 == 0 else reversed(sides):
                _sync(dev)
                start = time.perf_counter()
                outputs[name] = fn()
                _sync(dev)
                times[name].append(time.perf_counter() - start)
            say(
                progress,
                f"{length} tokens, repeat {rep + 1}/{repeats}: constrained "
                f"{times['constrained'][-1]:.3f} s, plain {times['plain'][-1]:.3f} s, "
                f"prompt pass alone {times['prefill'][-1]:.3f} s",
            )
        c_s = statistics.median(times["constrained"])
        p_s = statistics.median(times["plain"])
        f_s = statistics.median(times["prefill"])
        results.append(
            {
                "prompt_tokens": length,
                "prompt_tokens_mean": round(actual, 1),
                "prompts": len(prompts),
                "constrained_s": round(c_s, 5),
                "plain_s": round(p_s, 5),
                "constrained_s_all": [round(t, 5) for t in times["constrained"]],
                "plain_s_all": [round(t, 5) for t in times["plain"]],
                "ratio": round(c_s / p_s, 4),
                "latency_reduction": round(1 - c_s / p_s, 4),
                "prefill_s": round(f_s, 5),
                "decode_only_reduction": round(1 - (c_s - f_s) / (p_s - f_s), 4)
                if p_s > f_s
                else None,
                "constrained_valid": sum(_valid(codec, t) for t in outputs["constrained"])
                / len(prompts),
                "plain_valid": sum(_valid(codec, t) for t in outputs["plain"]) / len(prompts),
                "plain_example": outputs["plain"][0][:120],
                "constrained_example": outputs["constrained"][0],
            }
        )
    at_goal: dict[str, Any] | None = next(
        (r for r in results if r["prompt_tokens"] == GOAL_TOKENS), None
    )
    return {
        "bench": "laser_decode",
        "model": setup.name,
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": str(dev),
        "device_name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "torch_threads": torch.get_num_threads(),
        "dtype": dtype,
        "track": track,
        "encoding": codec.config(),
        "new_tokens_plain": new_tokens,
        "batch_size": batch_size,
        "repeats": repeats,
        "results": results,
        "goal": {
            "prompt_tokens": GOAL_TOKENS,
            "latency_reduction_at_least": GOAL_REDUCTION,
            "constrained_valid": 1.0,
            "met": None
            if at_goal is None
            else bool(
                at_goal["latency_reduction"] >= GOAL_REDUCTION
                and at_goal["constrained_valid"] == 1.0
            ),
        },
    }
