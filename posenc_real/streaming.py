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

from .load import RealModel, forward

__all__ = ["SINK_CHOICES", "WINDOW_CHOICES", "StreamingLoss", "streaming_loss", "streaming_losses", "whole_text_loss"]

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
    return streaming_losses(real, ids, ((sink_tokens, window),))[0]


def streaming_losses(
    real: RealModel, ids: np.ndarray, caches: tuple[tuple[int, int], ...]
) -> tuple[StreamingLoss, ...]:
    r""":func:`streaming_loss` for each ``(sink_tokens, window)`` of ``caches``, decoded side by side: one batch of
    rows, one of transformers' forwards per token for all of them. A forward of one token reads every weight of the
    model from memory for little arithmetic, so a row more costs far less than a run more (on two cores, nine rows
    take about what two runs one by one did)."""
    nll, _ = _stream(real, ids, caches)
    return tuple(
        StreamingLoss(nll=row, sink_tokens=int(sinks), window=int(window))
        for row, (sinks, window) in zip(nll, caches, strict=True)
    )


def whole_text_loss(real: RealModel, ids: np.ndarray) -> StreamingLoss:
    r"""The per-token loss with the whole text in view, from one of transformers' forwards: what a cache that never
    evicts gives (``sink_tokens=0, window=L``), without decoding token by token."""
    import torch

    logits = forward(real, ids).logits[0]  # (L, V)
    targets = torch.tensor(np.asarray(ids, dtype=np.int64), device=logits.device)[1:]  # a copy: ids are read-only
    nll = _nll(logits, targets).double().cpu().numpy()
    return StreamingLoss(nll=nll, sink_tokens=0, window=int(np.asarray(ids).size))


def _stream(real: RealModel, ids: np.ndarray, caches: tuple[tuple[int, int], ...]) -> tuple[np.ndarray, Any]:
    r"""(per-token NLL (rows, L − 1), the final ``DynamicCache``): the steps of the module docstring, for every row.

    Each row's cache is kept right-aligned in a buffer as long as the longest row's: slots on the left that a row does
    not use are masked out (a padding ``attention_mask``), and each row's new token is at its own cache position (its
    ``position_ids``), so every row attends to exactly its own StreamingLLM cache, as if decoded alone. The first
    tokens, which fit every row's cache, go through one forward of one row, copied to every row."""
    import torch
    from transformers import DynamicCache

    if not caches or any(sinks < 0 or window < 1 for sinks, window in caches):
        raise ValueError(f"need sink_tokens ≥ 0 and window ≥ 1 for each cache, got {caches}")
    tokens = torch.tensor(np.asarray(ids, dtype=np.int64), device=real.device)[None]  # (1, L), a copy
    length, rows = tokens.shape[1], len(caches)
    sizes = np.array([sinks + window for sinks, window in caches])
    sinks = np.array([sinks for sinks, _ in caches])
    cache = DynamicCache(config=real.model.config)
    threads = torch.get_num_threads()
    with torch.no_grad():
        first = min(int(sizes.min()), length)  # these fit every row's cache: positions 0 … first − 1, no eviction
        logits = real.model(tokens[:, :first], past_key_values=cache, use_cache=True).logits[0]  # (first, V)
        nll = [_nll(logits, tokens[0, 1 : first + 1])[None].expand(rows, -1)]
        for layer in cache.layers:
            layer.keys = layer.keys.expand(rows, -1, -1, -1).contiguous()
            layer.values = layer.values.expand(rows, -1, -1, -1).contiguous()
        held = np.full(rows, first)  # each row's cached tokens, right-aligned in the buffer
        back = _one_back(real)
        if rows == 1:  # one token a forward is too little work to share: the threads only wait on each other
            torch.set_num_threads(1)
        try:
            for t in range(first, length - 1):  # token t predicts t + 1
                held = _evict_oldest(cache, held, sizes, sinks, back)
                width = int(held.max())
                mask = torch.as_tensor(np.arange(width + 1)[None] >= width - held[:, None], device=real.device)
                step = real.model(
                    tokens[:, t : t + 1].expand(rows, 1),
                    attention_mask=mask.long(),
                    position_ids=torch.as_tensor(held[:, None], device=real.device),
                    past_key_values=cache,
                    use_cache=True,
                )
                nll.append(_nll(step.logits[:, 0], tokens[0, t + 1 : t + 2].expand(rows))[:, None])
                held = held + 1
        finally:
            torch.set_num_threads(threads)
    return torch.cat(nll, dim=1).double().cpu().numpy()[:, : length - 1], cache


def _nll(logits: Any, targets: Any) -> Any:
    r"""−log softmax(logits)[target] for the rows that have a target (the last token of the text has none)."""
    import torch

    rows = targets.shape[0]
    return -torch.log_softmax(logits[:rows].float(), dim=-1).gather(1, targets[:, None])[:, 0]


def _one_back(real: RealModel) -> tuple[Any, Any, Any]:
    r"""The model's own cos and sin at position −1, divided by its attention scaling (a rotation, not a rescale), and
    its module's own ``apply_rotary_pos_emb``."""
    import torch

    rotary = real.model.model.rotary_emb
    probe = torch.zeros(1, device=real.device, dtype=torch.float32)
    cos, sin = rotary(probe, position_ids=torch.full((1, 1), -1, device=real.device))  # (1, 1, head_dim)
    scale = float(getattr(rotary, "attention_scaling", 1.0))
    apply = sys.modules[type(real.model.model.layers[0].self_attn).__module__].apply_rotary_pos_emb
    return cos / scale, sin / scale, apply


def _evict_oldest(
    cache: Any, held: np.ndarray, sizes: np.ndarray, sinks: np.ndarray, back: tuple[Any, Any, Any]
) -> np.ndarray:
    r"""Every layer, every row whose cache is full: drop its slot ``sinks`` (the window's oldest) and rotate the
    window's later keys one position back, into the slots they now occupy. The buffer is rebuilt right-aligned as long
    as the longest row now needs; returns each row's cached tokens."""
    import torch

    cos, sin, apply = back
    width = cache.layers[0].keys.shape[2]
    full = held == sizes
    kept = held - full
    new_width = int(kept.max())
    source = np.zeros((len(held), new_width), dtype=np.int64)  # buffer slot each new slot copies (pads: any slot)
    moved = np.zeros((len(held), new_width), dtype=bool)  # the slots whose key turns one position back
    for row, (count, evict, sink) in enumerate(zip(held, full, sinks, strict=True)):
        start = width - count
        slots = np.arange(start, width)
        if evict:
            slots = np.delete(slots, sink)
            moved[row, new_width - slots.size + sink :] = True
        source[row, new_width - slots.size :] = slots
    index = torch.as_tensor(source, device=cache.layers[0].keys.device)[:, None, :, None]
    turn = torch.as_tensor(moved, device=index.device)[:, None, :, None]
    for layer in cache.layers:
        keys, values = layer.keys, layer.values  # (rows, kv_heads, width, head_dim)
        at = index.expand(-1, keys.shape[1], -1, keys.shape[3])
        keys, values = keys.gather(2, at), values.gather(2, at)
        if full.any():
            _, turned = apply(keys, keys, cos, sin)  # the same angle −θ_i for every slot
            keys = torch.where(turn, turned, keys)
        layer.keys, layer.values = keys, values
    return kept
