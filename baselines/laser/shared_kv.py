"""A decode stepper whose draws share one prompt pass: the prompt's KV cache is read, never copied.

The reference stepper (`decoding._Stepper`) reads the prompt, copies its KV cache once per draw
(`batch_repeat_interleave`: 16 draws, 16 copies) and grows it with `torch.cat` at every step, so
each step copies the whole cache again; on a CPU that copying was half of prediction's time
(`benchmarks/laser_predict_profile.py`). This stepper runs the same prompt pass (the model's own
forward, the same numbers), then keeps the prompt's keys and values once per prompt and writes
the draws' own tokens into a preallocated buffer in place (it doubles in the rare case the
layout needs more columns than planned). Each decode step attends in two parts, merged exactly
by their log-sum-exp: the draws' queries against the shared prompt keys (one matrix product per
prompt for all its draws) and against their own tokens. Same inputs, same positions, same masks
as the reference, so the logits agree up to float rounding and a seeded run draws the same
tokens (`tests/baselines/laser/test_shared_kv.py`).

It runs the decoder layers itself from the model's own modules, so it serves the Llama-family
layouts it knows (`llama`, `mistral`, `qwen2`: LASER's tiny models and SmolLM2) with full
attention; any other model, a sliding window, or a wrapped (LoRA) model uses the reference.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import torch

__all__ = ["SUPPORTED_TYPES", "SharedPromptStepper", "supports"]

SUPPORTED_TYPES = ("llama", "mistral", "qwen2")


def supports(model: Any) -> bool:
    """Whether `model` is a plain Llama-family causal LM with full attention on every layer."""
    config: Any = getattr(model, "config", None)
    inner: Any = getattr(model, "model", None)
    if config is None or getattr(config, "model_type", None) not in SUPPORTED_TYPES:
        return False
    if not all(hasattr(inner, a) for a in ("layers", "embed_tokens", "norm", "rotary_emb")):
        return False
    if not hasattr(model, "lm_head"):
        return False
    types = getattr(config, "layer_types", None) or ["full_attention"]
    if any(t != "full_attention" for t in types):
        return False
    if config.model_type == "mistral" and getattr(config, "sliding_window", None) is not None:
        return False
    attn = inner.layers[0].self_attn
    return all(hasattr(attn, a) for a in ("q_proj", "k_proj", "v_proj", "o_proj", "scaling"))


class SharedPromptStepper:
    """`decoding._Stepper`'s interface (`feed`, `repeat`) with the prompt's cache shared."""

    def __init__(self, model: Any, pad: int, device: torch.device, reference: Any) -> None:
        self.model = model
        self.pad = pad
        self.device = device
        self.reference = reference  # runs the prompt pass, then is dropped
        inner = model.model
        self.layers = list(inner.layers)
        self.rotate = importlib.import_module(type(inner).__module__).apply_rotary_pos_emb
        self.samples = 1
        self.prompts = 0
        self.keys: list[torch.Tensor] = []  # per layer: prompt keys (B, Hkv, Lp, d)
        self.values: list[torch.Tensor] = []
        self.prompt_mask: torch.Tensor | None = None  # (B, Lp) bool
        self.draw_keys: list[torch.Tensor] = []  # per layer: (R, Hkv, capacity, d)
        self.draw_values: list[torch.Tensor] = []
        self.draw_mask: torch.Tensor | None = None  # (R, capacity) bool
        self.count: torch.Tensor | None = None  # (R,) real tokens so far
        self.used = 0  # draw columns written

    # --- the prompt pass -------------------------------------------------------------------

    def feed(self, chunks: Sequence[Sequence[int]]) -> torch.Tensor:
        """Feed each row's tokens (left padded); the logits after each row's last fed token."""
        if self.reference is not None:
            logits: torch.Tensor = self.reference.feed(chunks)
            self._take_prompt()
            return logits
        return self._step(chunks)

    def _take_prompt(self) -> None:
        ref = self.reference
        layers = ref.cache.layers
        self.keys = [layer.keys for layer in layers]
        self.values = [layer.values for layer in layers]
        mask = ref.mask.bool()
        self.prompt_mask = mask
        self.prompts = int(mask.shape[0])
        self.count = mask.sum(-1)
        self.reference = None

    def repeat(self, k: int) -> None:
        """Each prompt row stands for k draw rows; nothing is copied."""
        assert self.count is not None and self.reference is None
        self.samples = k
        self.count = self.count.repeat_interleave(k)

    # --- the draws ---------------------------------------------------------------------------

    def _reserve(self, width: int) -> None:
        rows = self.prompts * self.samples
        need = self.used + width
        have = 0 if self.draw_mask is None else int(self.draw_mask.shape[1])
        if need <= have:
            return
        capacity = max(32, 2 * have, need)
        proto = self.keys[0]
        shape = (rows, proto.shape[1], capacity, proto.shape[3])

        def grown(old: torch.Tensor | None) -> torch.Tensor:
            new = torch.zeros(shape, dtype=proto.dtype, device=proto.device)
            if old is not None:
                new[:, :, : self.used] = old[:, :, : self.used]
            return new

        none: list[torch.Tensor | None] = [None] * len(self.layers)
        old_k: list[torch.Tensor | None] = list(self.draw_keys) or none
        old_v: list[torch.Tensor | None] = list(self.draw_values) or none
        self.draw_keys = [grown(x) for x in old_k]
        self.draw_values = [grown(x) for x in old_v]
        mask = torch.zeros((rows, capacity), dtype=torch.bool, device=proto.device)
        if self.draw_mask is not None:
            mask[:, : self.used] = self.draw_mask[:, : self.used]
        self.draw_mask = mask

    def _step(self, chunks: Sequence[Sequence[int]]) -> torch.Tensor:
        rows = len(chunks)
        assert rows == self.prompts * self.samples and self.count is not None
        width = max(1, max(len(c) for c in chunks))
        ids = torch.full((rows, width), self.pad, dtype=torch.long)
        new = torch.zeros((rows, width), dtype=torch.bool)
        for r, chunk in enumerate(chunks):
            if chunk:
                ids[r, width - len(chunk) :] = torch.tensor(chunk, dtype=torch.long)
                new[r, width - len(chunk) :] = True
        ids, new = ids.to(self.device), new.to(self.device)
        self._reserve(width)
        assert self.draw_mask is not None
        start, end = self.used, self.used + width
        self.draw_mask[:, start:end] = new
        positions = (self.count[:, None] + new.long().cumsum(-1) - 1).clamp(min=0)
        self.count = self.count + new.sum(-1)
        # the draws' keys a query of chunk column i sees: written ones, up to its own column
        cols = torch.arange(end, device=self.device)
        causal = cols[None, :] <= (start + torch.arange(width, device=self.device))[:, None]
        allowed = self.draw_mask[:, None, :end] & causal[None]  # (R, width, end)
        inner = self.model.model
        hidden = inner.embed_tokens(ids)
        cos, sin = inner.rotary_emb(hidden, position_ids=positions)
        for li, layer in enumerate(self.layers):
            attn = layer.self_attn
            x = layer.input_layernorm(hidden)
            shape = (rows, width, -1, self.keys[li].shape[3])
            q = attn.q_proj(x).view(shape).transpose(1, 2)
            k = attn.k_proj(x).view(shape).transpose(1, 2)
            v = attn.v_proj(x).view(shape).transpose(1, 2)
            q, k = self.rotate(q, k, cos, sin)
            self.draw_keys[li][:, :, start:end] = k
            self.draw_values[li][:, :, start:end] = v
            out = self._attend(li, q, end, allowed, float(attn.scaling))
            hidden = hidden + attn.o_proj(out.transpose(1, 2).reshape(rows, width, -1))
            hidden = hidden + layer.mlp(layer.post_attention_layernorm(hidden))
        self.used = end
        last = inner.norm(hidden[:, -1:, :])
        logits: torch.Tensor = self.model.lm_head(last)[:, -1, :].float()
        return logits

    def _attend(
        self, li: int, q: torch.Tensor, end: int, allowed: torch.Tensor, scale: float
    ) -> torch.Tensor:
        """Softmax attention of q (R, H, w, d) over the shared prompt keys and the draws' own,
        the two parts merged by their maxima and sums (exact up to rounding)."""
        assert self.prompt_mask is not None
        b, k = self.prompts, self.samples
        rows, heads, width, dim = q.shape
        kv_heads = self.keys[li].shape[1]
        group = heads // kv_heads
        neg = torch.finfo(q.dtype).min
        # prompt part: all draws of a prompt (and the heads sharing a kv head) in one product
        qp = q.reshape(b, k, kv_heads, group * width, dim).transpose(1, 2)
        qp = qp.reshape(b, kv_heads, k * group * width, dim)
        s1 = torch.matmul(qp, self.keys[li].transpose(-1, -2)) * scale  # (B, Hkv, kgw, Lp)
        s1 = s1.masked_fill(~self.prompt_mask[:, None, None, :], neg)
        m1 = s1.amax(-1, keepdim=True)
        e1 = torch.exp(s1 - m1)
        l1 = e1.sum(-1, keepdim=True)
        o1 = torch.matmul(e1, self.values[li])  # (B, Hkv, kgw, d)

        def per_row(t: torch.Tensor) -> torch.Tensor:  # (B, Hkv, k*g*w, x) -> (R, Hkv, g*w, x)
            x = t.shape[-1]
            return (
                t.reshape(b, kv_heads, k, group * width, x)
                .transpose(1, 2)
                .reshape(rows, kv_heads, group * width, x)
            )

        m1, l1, o1 = per_row(m1), per_row(l1), per_row(o1)
        # the draws' own tokens
        qd = q.reshape(rows, kv_heads, group * width, dim)
        keys = self.draw_keys[li][:, :, :end]
        s2 = torch.matmul(qd, keys.transpose(-1, -2)) * scale  # (R, Hkv, g*w, end)
        s2 = s2.reshape(rows, kv_heads, group, width, end)
        s2 = s2.masked_fill(~allowed[:, None, None], neg).reshape(
            rows, kv_heads, group * width, end
        )
        m2 = s2.amax(-1, keepdim=True)
        m = torch.maximum(m1, m2)
        e2 = torch.exp(s2 - m)
        a1 = torch.exp(m1 - m)
        total = l1 * a1 + e2.sum(-1, keepdim=True)
        out = (o1 * a1 + torch.matmul(e2, self.draw_values[li][:, :, :end])) / total
        return out.reshape(rows, heads, width, dim)
