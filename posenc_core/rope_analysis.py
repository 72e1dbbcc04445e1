r"""RoPE under the microscope: the two pairings as one rotation, what "relative" means for a score matrix, and
when a set of rotating pairs first comes back to where it started.

* **Pairing.** Half-split (``rotate_half``: pair i = (x_i, x_{i+d/2})) and interleaved (pair i = (x_{2i}, x_{2i+1}))
  rotate the same pairs by the same angles once the dimensions are reordered by :func:`pairing_permutation`.
  Hugging Face's ``convert_llama_weights_to_hf.py`` applies exactly this reordering (its ``permute``) to the rows of
  Meta's :math:`W_Q` and :math:`W_K`, per head. Skip it and nothing fails: the model just scores with the wrong pairs.
* **Relative scores.** A score matrix depends on the positions only through n − m exactly when it is Toeplitz
  (constant along every diagonal); :func:`posenc_core.toeplitz_deviation` measures how far it is from that.
  :func:`rope_scores_mixed_pairing` rotates queries and keys with possibly different pairings — what happens when
  two pieces of code that disagree meet in one model — and the result is no longer Toeplitz.
* **Near repeats.** One pair turning 30° per token is back where it started after 12 tokens (the clock of
  the WeChat article 「Transformer位置编码问题」). With several pairs all of them have to come back at once;
  :func:`rope_near_repeats` finds the first such distance for the first 1, 2, 3 … pairs in one pass (Su et al. 2021,
  arXiv:2104.09864, §3.3, for the frequencies).
"""

from __future__ import annotations

import math

import numpy as np

from .errors import as_choice, as_float, as_int
from .rope import MAX_ROTARY_DIM, PAIRINGS, _check_inv_freq, rope_scores

__all__ = [
    "pairing_permutation",
    "rope_near_repeats",
    "rope_scores_mixed_pairing",
]

#: Distances searched per block by :func:`rope_near_repeats`: 512 KiB of float64, whatever the number of pairs.
_BLOCK_DISTANCES = 2**16
#: The first block is small: with a loose tolerance every pair comes back almost at once and the search ends there.
_FIRST_BLOCK = 2**10
_MAX_DISTANCE = 10**7
#: Radians added to each window of :func:`_returns`: more than the rounding of cos near a tolerance down to 0.
_ANGLE_SLACK = 1e-7


def pairing_permutation(dim: int) -> np.ndarray:
    r"""The index array P, shape (d,), that lays interleaved pairs out half-split: ``x[..., P]`` puts
    :math:`x_{2i}` in slot i and :math:`x_{2i+1}` in slot i + d/2, so that for every x and every position

    .. math::
        \operatorname{RoPE}_{\text{interleaved}}(x)[P] = \operatorname{RoPE}_{\text{half}}(x[P]).

    The two conventions are one rotation written in two orders of the dimensions. Its inverse is ``np.argsort(P)``.
    Paper: Su et al. 2021, arXiv:2104.09864, eq. (13) (interleaved); GPT-NeoX / Hugging Face ``rotate_half`` (half).
    """
    dim = as_int("dim", dim, lo=2, hi=MAX_ROTARY_DIM, even=True)
    return np.concatenate([np.arange(0, dim, 2), np.arange(1, dim, 2)])  # (d,): evens, then odds


def rope_scores_mixed_pairing(
    q: object,
    k: object,
    inv_freq: object,
    *,
    query_pairing: str,
    key_pairing: str,
    query_positions: object = None,
    key_positions: object = None,
    scale: float | None = None,
) -> np.ndarray:
    r"""Logits :math:`s\,(R^{a}_m q)^\top (R^{b}_n k)`, shape (…, Lq, Lk): queries rotated with pairing a, keys with b.

    With a = b this is :func:`posenc_core.rope_scores` and depends on n − m only. With a ≠ b the two rotations turn
    different pairs of dimensions, :math:`(R^a_m)^\top R^b_n` is no function of n − m, and neither is the score.
    Positions default as in ``rope_scores`` (keys 0 … Lk − 1, queries the last Lq of them); ``scale`` defaults to
    :math:`1/\sqrt{d}`.
    """
    query_pairing = as_choice("query_pairing", query_pairing, PAIRINGS)
    key_pairing = as_choice("key_pairing", key_pairing, PAIRINGS)
    return rope_scores(
        q, k, inv_freq, query_positions=query_positions, key_positions=key_positions,
        pairing=query_pairing, key_pairing=key_pairing, scale=scale,
    )  # fmt: skip


def rope_near_repeats(inv_freq: object, *, tolerance: float = 0.1, max_distance: int = 10**6) -> tuple[int | None, ...]:
    r"""For k = 1 … n: the smallest distance r ≥ 1 at which each of the first k pairs is within ``tolerance``
    radians of a whole number of turns, :math:`\min_{i<k} \cos(r\,\theta_i) \ge \cos(\text{tolerance})`; None
    where no r ≤ ``max_distance`` qualifies.

    Entry k − 1 equals :func:`posenc_core.rope_first_near_repeat` of ``inv_freq[:k]``, for every k at once: a
    distance that brings back k + 1 pairs brings back the first k, so the entries never decrease, and a sieve finds
    them all — the first pair keeps a fraction ≈ tolerance/π of the distances, the second pair filters only those,
    and so on. Memory stays at one block of distances whatever ``max_distance``.
    """
    inv_freq = _check_inv_freq(inv_freq)
    tolerance = as_float("tolerance", tolerance, gt=0.0, le=math.pi)
    max_distance = as_int("max_distance", max_distance, lo=1, hi=_MAX_DISTANCE)
    # |r θ mod 2π| ≤ tolerance  ⇔  cos(r θ) ≥ cos(tolerance)   (tolerance ≤ π)
    threshold = math.cos(tolerance)
    first: list[int | None] = [None] * inv_freq.shape[0]
    found = 0
    start, block = 1, _FIRST_BLOCK
    while start <= max_distance and found < len(first):
        stop = min(start + block, max_distance + 1)
        r = _returns(start, stop, float(inv_freq[0]), tolerance, threshold)  # pair 0 back: the distances in the running
        for k, theta in enumerate(inv_freq):
            if k:
                r = r[np.cos(r * theta) >= threshold]  # those that also bring pair k back
            if r.size == 0:
                break
            if first[k] is None:
                first[k], found = int(r[0]), found + 1
        start, block = stop, min(2 * block, _BLOCK_DISTANCES)
    return tuple(first)


def _returns(
    start: int, stop: int, theta: float, tolerance: float, threshold: float, *, dense: bool = False
) -> np.ndarray:
    r"""The distances r in [start, stop) with :math:`\cos(r\theta) \ge` ``threshold`` (= cos ``tolerance``), ascending.

    A fast pair comes back only near :math:`r = 2\pi j/\theta`, so rather than evaluate every r the windows
    :math:`|r\theta - 2\pi j| \le` tolerance (widened by :data:`_ANGLE_SLACK`, beyond any rounding of the cosine
    test) are enumerated, and only the integers inside them are tested — about tolerance/π of the block instead of
    all of it. The test itself is the same, so both routes return the same distances.
    """
    if dense or theta / (2 * math.pi) + tolerance / math.pi >= 0.5:  # windows as long as the gaps: test every r
        r = np.arange(start, stop, dtype=np.float64)
        return r[np.cos(r * theta) >= threshold]
    reach = tolerance + _ANGLE_SLACK
    j = np.arange(math.floor((start * theta - reach) / (2 * math.pi)), math.ceil(stop * theta / (2 * math.pi)) + 1)
    lo = np.maximum(np.ceil((2 * math.pi * j - reach) / theta), start)  # window j: the integers lo … hi
    hi = np.minimum(np.floor((2 * math.pi * j + reach) / theta), stop - 1)
    counts = np.maximum(hi - lo + 1, 0).astype(np.int64)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)  # 0, 1, … within each window
    r = np.repeat(lo, counts) + offsets
    return r[np.cos(r * theta) >= threshold]
