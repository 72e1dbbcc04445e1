r"""ALiBi: attention with linear biases (Press, Smith & Lewis 2021, "Train Short, Test Long", arXiv:2108.12409).

No position enters the embeddings or q, k. Each head h adds a penalty proportional to the distance to the logits,

.. math::
    \text{score}_h(i, j) = q_i^\top k_j - m_h\,(i - j), \qquad j \le i,

with a head-specific slope :math:`m_h`. For H a power of two the slopes are the geometric sequence
:math:`m_h = 2^{-8(h+1)/H}` (1/2 … 1/256 for 8 heads), so some heads look far and some only at their neighbours.
Other head counts take the slopes of the nearest smaller power of two c, then every other slope of 2c
(§3 and the authors' ``get_slopes``). Implementations add :math:`m_h\,j` (key position only) instead: under the
causal mask it differs from :math:`-m_h(i-j)` by :math:`m_h i`, a constant per row, which softmax ignores.
"""

from __future__ import annotations

import math

import numpy as np

from .attention import relative_positions
from .errors import MAX_ELEMENTS, PosEncError, as_array, as_bool, as_int, check_elements

__all__ = ["alibi_bias", "alibi_slopes"]

MAX_HEADS = 4096


def alibi_slopes(n_heads: int) -> np.ndarray:
    r"""The (H,) head slopes, equal to the authors' reference ``get_slopes(H)`` (non-powers of two included)."""
    n_heads = as_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    return np.array(_slopes(n_heads), dtype=np.float64)


def head_slopes_and_lengths(
    n_heads: int, heads: object, query_length: int, key_length: int | None
) -> tuple[np.ndarray, int, int]:
    r"""The slopes of the chosen ``heads`` (all when ``None``) and the checked lengths (keys default to queries)."""
    slopes = alibi_slopes(n_heads)
    if heads is not None:
        index = as_array("heads", heads, ndim=1, integer=True)
        if index.size == 0 or np.any((index < 0) | (index >= slopes.shape[0])):
            raise PosEncError(f"heads must be a non-empty list of indices in 0 … {slopes.shape[0] - 1}")
        slopes = slopes[index]
    query_length = as_int("query_length", query_length, lo=1, hi=MAX_ELEMENTS)
    key_length = query_length if key_length is None else as_int("key_length", key_length, lo=1, hi=MAX_ELEMENTS)
    return slopes, query_length, key_length


def _slopes(n: int) -> list[float]:
    if n & (n - 1) == 0:  # a power of two: start^1, start^2, …, start^n with start = 2^(−8/n)
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start * start**h for h in range(n)]
    closest = 2 ** math.floor(math.log2(n))
    return _slopes(closest) + _slopes(2 * closest)[0::2][: n - closest]


def alibi_bias(
    n_heads: int,
    query_length: int,
    key_length: int | None = None,
    *,
    causal: bool = True,
    heads: object = None,
) -> np.ndarray:
    r"""The (H, Lq, Lk) bias :math:`-m_h\,(i - j)`; −inf above the diagonal when ``causal``, :math:`-m_h|i-j|` if not.

    ``heads`` (indices into 0 … H − 1) builds only those heads — a page shows a few of 128, never all of them.
    Queries are the last Lq positions.
    """
    causal = as_bool("causal", causal)
    slopes, query_length, key_length = head_slopes_and_lengths(n_heads, heads, query_length, key_length)
    check_elements("alibi_bias", (slopes.shape[0], query_length, key_length))  # before anything is allocated
    rel = relative_positions(query_length, key_length)  # j − i, (Lq, Lk)
    distance = rel.astype(np.float64)
    if causal:
        distance = np.where(rel > 0, -np.inf, distance)  # −(i − j) = j − i ≤ 0 on and below the diagonal
    else:
        distance = -np.abs(distance)
    return slopes[:, None, None] * distance[None]
