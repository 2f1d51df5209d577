"""The last decoder layer, computed only at the positions whose logits the loss reads.

LASER's loss reads the logits of the few positions that predict a target token (`keep`, about
one in twenty of a 500-token prompt). Every position feeds the next layer's keys and values, so
all layers but the last must run everywhere; the last layer's output, though, is read only
through the final norm and the vocabulary projection at the kept positions. There it needs the
keys and values of every position (two small projections) and nothing else of the others: the
queries, the attention, the output projection and the feed-forward block run for the kept
positions alone. The loss and every gradient are the full forward's, up to float rounding
(`tests/baselines/laser/test_kept_rows.py`); a 2-layer model does about half the work per token.

`install(model)` gives the model's last layer a forward that does this when the model is called
with `kept_positions=` (a 1-D tensor of positions, the same for every row of the batch) and
`logits_to_keep=0`; the logits are then one per kept position. Without that argument the layer
runs as before (prediction, generation). The weights and their names are untouched, so saving,
loading, checkpoints and LoRA are unchanged. Served: the Llama-family layouts whose layers this
module runs from their own modules (`llama`, `mistral`, `qwen2`: LASER's tiny models and
SmolLM2), with their own padding and sliding-window masks; any other model is left as it is.
"""

from __future__ import annotations

import importlib
import types
from typing import Any

__all__ = ["KEPT_POSITIONS", "SUPPORTED_TYPES", "install"]

KEPT_POSITIONS = "kept_positions"
"""The keyword the model is called with: the positions the last layer computes."""

SUPPORTED_TYPES = ("llama", "mistral", "qwen2")


def _last_layer(model: Any) -> Any | None:
    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # peft (LoRA)
    config: Any = getattr(base, "config", None)
    inner: Any = getattr(base, "model", None)
    if config is None or getattr(config, "model_type", None) not in SUPPORTED_TYPES:
        return None
    layers = getattr(inner, "layers", None)
    if not layers or not hasattr(inner, "norm"):
        return None
    layer = layers[config.num_hidden_layers - 1]
    attn = getattr(layer, "self_attn", None)
    parts = ("q_proj", "k_proj", "v_proj", "o_proj", "scaling", "head_dim")
    if attn is None or not all(hasattr(attn, a) for a in parts):
        return None
    if any(hasattr(attn, a) for a in ("q_norm", "k_norm")):  # another layout (Qwen3, OLMo 2)
        return None
    if not all(hasattr(layer, a) for a in ("input_layernorm", "post_attention_layernorm", "mlp")):
        return None
    return layer


def install(model: Any) -> bool:
    """Give `model`'s last decoder layer the kept-positions forward; False (model unchanged)
    when its layout is not one this module serves. Installing twice changes nothing."""
    layer = _last_layer(model)
    if layer is None:
        return False
    if "forward" not in vars(layer):
        layer.forward = types.MethodType(_forward, layer)
        layer._gharuntime_rotate_half = importlib.import_module(type(layer).__module__).rotate_half
    return True


def _forward(self: Any, hidden_states: Any, *args: Any, **kwargs: Any) -> Any:
    """The decoder layer's forward; with `kept_positions`, only those positions' outputs."""
    import torch

    rows = kwargs.pop(KEPT_POSITIONS, None)
    if rows is None:
        return type(self).forward(self, hidden_states, *args, **kwargs)
    if args or kwargs.get("use_cache") or kwargs.get("cache") is not None:
        raise ValueError("kept_positions is for training: no cache, keyword arguments only")
    attn = self.self_attn
    batch, width, _ = hidden_states.shape
    n = rows.shape[0]
    cos, sin = kwargs["position_embeddings"]  # (1 or batch, width, head_dim)
    x = self.input_layernorm(hidden_states)
    shape = (batch, -1, attn.head_dim)
    q = attn.q_proj(x[:, rows]).view(batch, n, *shape[1:]).transpose(1, 2)
    k = attn.k_proj(x).view(batch, width, *shape[1:]).transpose(1, 2)
    v = attn.v_proj(x).view(batch, width, *shape[1:]).transpose(1, 2)
    # the layout's rotary embedding (its apply_rotary_pos_emb, one tensor at a time: the
    # queries at their own positions, the keys at every position)
    q = _rotary(self._gharuntime_rotate_half, q, cos[:, rows], sin[:, rows])
    k = _rotary(self._gharuntime_rotate_half, k, cos, sin)
    mask = kwargs.get("attention_mask")
    if mask is None:  # the model found causal attention enough (right padding, no window bites)
        allowed = torch.arange(width, device=rows.device)[None, :] <= rows[:, None]
    else:  # its own padding / sliding-window mask (batch, 1, width, width), the kept rows
        allowed = mask[:, :, rows]
    groups = q.shape[1] // k.shape[1]
    if groups > 1:  # grouped-query attention: each key/value head serves `groups` query heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=allowed, scale=attn.scaling
    )
    h = hidden_states[:, rows] + attn.o_proj(out.transpose(1, 2).reshape(batch, n, -1))
    return h + self.mlp(self.post_attention_layernorm(h))


def _rotary(rotate_half: Any, x: Any, cos: Any, sin: Any) -> Any:
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)  # over the heads
    return x * cos + rotate_half(x) * sin
