r"""ReRoPE: relative positions clipped at a window, so no angle ever leaves the trained range (Su 2023).

Su Jianlin, 「Transformer升级之路：12、无限外推的ReRoPE？」 (科学空间 kexue.fm, 2023): keep RoPE's relative
position :math:`r = j - i` (key − query) for :math:`|r| < w` and use w for everything further
(:func:`rerope_relative_positions`), the clipping Shaw et al. (2018) apply to their learned table. With
:math:`w < L` every angle :math:`r\theta_i` is one the model saw in training, at any length.
The price: a clipped relative position is no longer a difference of two absolute ones, so no single rotation
per token produces it — the attention logits are computed twice, once with plain RoPE and once with every pair
at −w, and merged by distance (:func:`rerope_scores`).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import PosEncError, as_array, as_choice, as_float, as_int
from ..rope import PAIRINGS, rope_scores

__all__ = ["rerope_relative_positions", "rerope_scores"]


def rerope_relative_positions(relative_positions: object, *, window: int) -> np.ndarray:
    r"""ReRoPE's relative position :math:`\operatorname{clip}(r, -w, w)` for each ``r = key − query`` (same shape).

    Paper: Su 2023, 「Transformer升级之路：12、无限外推的ReRoPE？」; the same clip as Shaw et al. 2018,
    arXiv:1803.02155, §3.2 (there with a learned vector per clipped distance).
    """
    r = as_array("relative_positions", relative_positions, allow_empty=True).astype(np.float64, copy=False)
    window = as_int("window", window, lo=1, hi=2**40)
    return np.clip(r, -window, window)


def rerope_scores(
    q: object, k: object, inv_freq: object, *, window: int, pairing: str = "half", scale: float | None = None
) -> np.ndarray:
    r"""Causal ReRoPE logits, shape (n, n): :math:`q_i^\top R_{\operatorname{clip}(j-i, -w, w)}\,k_j` for j ≤ i, −inf
    above the diagonal (the causal mask).

    Computed as ReRoPE is run, in two passes: plain RoPE logits (positions 0 … n − 1) where :math:`i - j < w`, and
    logits with the query at position w and the key at 0 (relative −w for every pair) elsewhere. q and k are (n, d)
    at positions 0 … n − 1; ``scale`` defaults to :math:`1/\sqrt d`. Paper: Su 2023, 「无限外推的ReRoPE？」.
    """
    q = as_array("q", q, ndim=2)
    k = as_array("k", k, ndim=2)
    if q.shape != k.shape:
        raise PosEncError(f"q and k must both be (n, d) at positions 0 … n − 1, got {q.shape} and {k.shape}")
    window = as_int("window", window, lo=1, hi=2**40)
    pairing = as_choice("pairing", pairing, PAIRINGS)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else as_float("scale", scale)
    n = q.shape[0]
    near = rope_scores(q, k, inv_freq, pairing=pairing, scale=scale)  # (n, n): relative j − i
    at_w, at_0 = np.full(n, float(window)), np.zeros(n)
    far = rope_scores(q, k, inv_freq, query_positions=at_w, key_positions=at_0, pairing=pairing, scale=scale)  # all −w
    i, j = np.indices((n, n))
    return np.where(j > i, -np.inf, np.where(i - j < window, near, far))
