r"""Positions in a rolling KV cache, and a softmax that may attend to nothing.

**StreamingLLM** (Xiao, Tian, Chen, Han & Lewis 2023, "Efficient Streaming Language Models with Attention Sinks",
arXiv:2309.17453, §3.2). A model serving an endless stream cannot keep every key: it keeps the first few tokens (the
*attention sinks*: softmax has to put its weight somewhere, and trained models park it on the first tokens) and a
window of the most recent ones, and evicts the rest. Positions are counted *inside the cache*, not in the text: the
k-th entry of the cache gets position k whatever token it holds, so RoPE never sees a distance larger than the
cache (:func:`streaming_cache`).

**A learned sink logit** (gpt-oss; transformers' ``GptOssAttention``: a parameter ``sinks`` of one value per head,
concatenated to each row of logits before the softmax and dropped after it). The weights over the real keys then
sum to less than 1, so a head can give most of its attention to nothing instead of to the first token
(:func:`sink_softmax`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .errors import PosEncError, as_array, as_int, check_elements

__all__ = ["StreamingCache", "sink_softmax", "streaming_cache"]

#: The longest stream :func:`streaming_cache` lays out, step by step.
MAX_STREAM = 2**20


class StreamingCache(NamedTuple):
    r"""The cache at each step t of a stream (the query is token t): ``tokens[t, c]`` is the text position of the
    token in cache slot c (−1 for an empty slot) and ``positions[t, c]`` the position RoPE gives it (−1 if empty)."""

    tokens: np.ndarray  # (T, sink_tokens + window) int64
    positions: np.ndarray  # (T, sink_tokens + window) int64


def streaming_cache(stream_length: int, *, sink_tokens: int = 4, window: int) -> StreamingCache:
    r"""The keys a StreamingLLM cache holds while token t is decoded, for t = 0 … T − 1, and their positions.

    Paper: Xiao et al. 2023, arXiv:2309.17453, §3.2 and Fig. 4: the cache is the first ``sink_tokens`` tokens and the
    last ``window`` tokens (the current one included), in text order; slot c holds position c. With 4 sinks and a
    window of 4 at t = 9 the cache holds tokens [0, 1, 2, 3, 6, 7, 8, 9] at positions [0 … 7], as in the paper's
    example. The largest query–key distance is therefore sink_tokens + window − 1 at every step.
    """
    length = as_int("stream_length", stream_length, lo=1, hi=MAX_STREAM)
    sinks = as_int("sink_tokens", sink_tokens, lo=0, hi=4096)
    window = as_int("window", window, lo=1, hi=65536)
    size = sinks + window
    check_elements("streaming_cache", (2**3, length, size))  # two int64 tables and their temporaries
    t = np.arange(length)[:, None]  # (T, 1): the query
    slot = np.arange(size)[None, :]  # (1, C)
    # tokens 0 … t while they fit; then the sinks 0 … S − 1 and the window t − W + 1 … t
    full = t + 1 > size
    token = np.where(full, np.where(slot < sinks, slot, t - (size - 1 - slot)), slot)
    token = np.where(token <= t, token, -1)  # slots not yet filled
    position = np.where(token >= 0, np.broadcast_to(slot, token.shape), -1)
    return StreamingCache(tokens=token.astype(np.int64), positions=position.astype(np.int64))


def sink_softmax(logits: object, sinks: object) -> np.ndarray:
    r"""Softmax over the last axis with one extra logit s per row that receives weight and is then dropped:
    :math:`w_j = e^{x_j} / (e^{s} + \sum_k e^{x_k})`, so each row sums to :math:`1 - \sigma(s - \mathrm{LSE}(x)) < 1`.

    Paper: OpenAI 2025, gpt-oss-120b & gpt-oss-20b Model Card, arXiv:2508.10925; the form is transformers 5.23's
    ``eager_attention_forward`` in ``modeling_gpt_oss.py`` (``sinks`` of shape (H,) broadcast over batch and queries,
    appended as a last column). ``logits`` is (…, H, Lq, Lk) (−inf for masked keys), ``sinks`` (H,) or a scalar; a row
    with every key masked puts all its weight on the sink, so its weights are all 0.
    """
    x = as_array("logits", logits, min_ndim=1, finite=False)
    if np.any(np.isnan(x)) or np.any(x == np.inf):
        raise PosEncError("logits must not hold nan or +inf (−inf marks a masked key)")
    s = as_array("sinks", sinks)
    if s.ndim > 1:
        raise PosEncError(f"sinks must be a scalar or one value per head (H,), got shape {s.shape}")
    if s.ndim == 1:
        if x.ndim < 3 or x.shape[-3] != s.shape[0]:
            raise PosEncError(f"sinks has {s.shape[0]} heads but logits' head axis (−3) is {x.shape[-3:-2]}")
        s = s[:, None]  # (H, 1): one per head, every query
    s = np.broadcast_to(s, x.shape[:-1])[..., None]  # (…, 1): one sink column per row
    top = np.maximum(np.max(x, axis=-1, keepdims=True), s)  # shift by the row's max, sink included
    with np.errstate(over="ignore"):  # a gap past float64's range is −inf: that entry's weight is 0
        e = np.exp(x - top)
        return e / (np.sum(e, axis=-1, keepdims=True) + np.exp(s - top))
