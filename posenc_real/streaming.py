r"""StreamingLLM on the real model: a sliding window of keys, with and without the first tokens kept, through
transformers' own forward and its own KV cache.

Xiao, Tian, Chen, Han & Lewis 2023, "Efficient Streaming Language Models with Attention Sinks", arXiv:2309.17453,
§3.2: while token t is decoded the cache holds the first ``sink_tokens`` tokens and the last ``window`` tokens (the
current one included), and positions are counted *inside the cache*: slot c has position c, whatever token it holds
(the layout of :func:`posenc_core.streaming_cache`, the one page 10 draws).

How it is run here, faithfully and step by step:

1. the first ``sink_tokens + window`` tokens go through one forward into a :class:`transformers.DynamicCache` (they
   all fit, at their own positions 0, 1, …);
2. before each later token, every layer's cache drops the oldest key and value of the window (slot ``sink_tokens``),
   and the window's remaining keys move down one slot. transformers caches keys *after* RoPE has rotated them, so each
   moved key is rotated by one position back (angle −θ_i per pair), with transformers' own ``apply_rotary_pos_emb``
   and the model's own rotary embedding at position −1; values carry no position and only move;
3. the token goes through transformers' forward with that cache, so it sits at position ``sink_tokens + window − 1``
   and attends to exactly the cache.

The keys and values in the cache were computed when their tokens were decoded, with the cache of that moment: this
is what a streaming server does. Re-running each window from scratch (re-encoding the kept tokens at their new
positions at every step) is a different, costlier baseline, and is not what this module measures.

The loss is the mean next-token negative log-likelihood (nats) of tokens 1 … L − 1, each predicted from the logits of
the token before it, as transformers' own ``labels=`` loss averages it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .load import RealModel

__all__ = ["SINK_CHOICES", "WINDOW_CHOICES", "StreamingLoss", "streaming_loss"]

#: The window sizes the page offers (each costs one forward per token past the cache, so a few, not a slider).
WINDOW_CHOICES = (16, 32, 64, 128)
#: The numbers of first tokens kept: none (a plain sliding window) and the paper's four.
SINK_CHOICES = (0, 4)


@dataclass(frozen=True)
class StreamingLoss:
    r"""The loss of one StreamingLLM run: the per-token negative log-likelihood and its mean, in nats."""

    nll: np.ndarray  # (L − 1,) float64: −log p(token t + 1 | the cache while token t was decoded)
    sink_tokens: int
    window: int

    @property
    def loss(self) -> float:
        r"""The mean of :attr:`nll` (nats per token)."""
        return float(self.nll.mean())

    @property
    def length(self) -> int:
        r"""Tokens in the text."""
        return int(self.nll.size) + 1


def streaming_loss(real: RealModel, ids: np.ndarray, *, sink_tokens: int, window: int) -> StreamingLoss:
    r"""The next-token loss of ``ids`` decoded with a StreamingLLM cache of ``sink_tokens`` first tokens and a window
    of ``window`` tokens (current one included), positions counted inside the cache (Xiao et al. 2023, §3.2)."""
    nll, _ = _stream(real, ids, sink_tokens=sink_tokens, window=window)
    return StreamingLoss(nll=nll, sink_tokens=int(sink_tokens), window=int(window))


def _stream(real: RealModel, ids: np.ndarray, *, sink_tokens: int, window: int) -> tuple[np.ndarray, Any]:
    r"""(per-token NLL (L − 1,), the final ``DynamicCache``): the steps of the module docstring."""
    import torch
    from transformers import DynamicCache

    if sink_tokens < 0 or window < 1:
        raise ValueError(f"need sink_tokens ≥ 0 and window ≥ 1, got {sink_tokens} and {window}")
    tokens = torch.tensor(np.asarray(ids, dtype=np.int64), device=real.device)[None]  # (1, L), a copy
    length, size = tokens.shape[1], sink_tokens + window
    cache = DynamicCache(config=real.model.config)
    threads = torch.get_num_threads()
    with torch.no_grad():
        first = min(size, length)
        logits = real.model(tokens[:, :first], past_key_values=cache, use_cache=True).logits[0]  # (first, V)
        nll = [_nll(logits, tokens[0, 1 : first + 1])]
        back = _one_back(real, size)
        torch.set_num_threads(1)  # one token a forward is too little work to share: the threads only wait on each other
        try:
            for t in range(first, length - 1):  # token t predicts t + 1
                _evict_oldest(cache, sink_tokens, back)
                logits = real.model(tokens[:, t : t + 1], past_key_values=cache, use_cache=True).logits[0]  # (1, V)
                nll.append(_nll(logits, tokens[0, t + 1 : t + 2]))
        finally:
            torch.set_num_threads(threads)
    return torch.cat(nll).double().numpy()[: length - 1], cache


def _nll(logits: Any, targets: Any) -> Any:
    r"""−log softmax(logits)[target] for the rows that have a target (the last token of the text has none)."""
    import torch

    rows = targets.shape[0]
    return -torch.log_softmax(logits[:rows].float(), dim=-1).gather(1, targets[:, None])[:, 0]


def _one_back(real: RealModel, size: int) -> tuple[Any, Any, Any]:
    r"""The model's own cos and sin at position −1 for ``size`` keys, divided by its attention scaling (a rotation,
    not a rescale), and its module's own ``apply_rotary_pos_emb``."""
    import torch

    rotary = real.model.model.rotary_emb
    probe = torch.zeros(1, device=real.device, dtype=torch.float32)
    cos, sin = rotary(probe, position_ids=torch.full((1, size), -1, device=real.device))  # (1, size, head_dim)
    scale = float(getattr(rotary, "attention_scaling", 1.0))
    apply = sys.modules[type(real.model.model.layers[0].self_attn).__module__].apply_rotary_pos_emb
    return cos / scale, sin / scale, apply


def _evict_oldest(cache: Any, sink_tokens: int, back: tuple[Any, Any, Any]) -> None:
    r"""Every layer: drop slot ``sink_tokens`` (the window's oldest), and rotate the window's later keys one position
    back, into the slots they now occupy."""
    import torch

    cos, sin, apply = back
    for layer in cache.layers:
        keys, values = layer.keys, layer.values  # (1, kv_heads, size, head_dim)
        moved = keys[:, :, sink_tokens + 1 :]
        n = moved.shape[2]
        _, moved = apply(moved, moved, cos[:, :n], sin[:, :n])
        layer.keys = torch.cat([keys[:, :, :sink_tokens], moved], dim=2)
        layer.values = torch.cat([values[:, :, :sink_tokens], values[:, :, sink_tokens + 1 :]], dim=2)
