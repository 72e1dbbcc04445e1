r"""ALiBi: attention with linear biases (Press, Smith & Lewis 2021, "Train Short, Test Long", arXiv:2108.12409).

No position enters the embeddings or q, k. Each head h adds a penalty proportional to the distance to the logits,

.. math::
    \text{score}_h(i, j) = q_i^\top k_j - m_h\,(i - j), \qquad j \le i,

with a head-specific slope :math:`m_h`. For H a power of two the slopes are the geometric sequence
:math:`m_h = 2^{-8(h+1)/H}` (1/2 … 1/256 for 8 heads), so some heads look far and some only at their neighbours.
Other head counts take the slopes of the nearest smaller power of two c, then every other slope of 2c
(§3 and the authors' ``get_slopes``). Implementations add :math:`m_h\,j` (key position only) instead: under the
causal mask it differs from :math:`-m_h(i-j)` by :math:`m_h i`, a constant per row, which softmax ignores
(:func:`alibi_key_only_bias` builds that form; :func:`posenc_core.attention_weights` shows the rows agree).
:func:`alibi_slope_exponents` gives the slopes in closed form, and :func:`alibi_receptive_field` turns a slope into
the distance at which the penalty alone reaches a threshold.

**Inside linear attention.** Kernelised attention (Katharopoulos et al. 2020, arXiv:2006.16236) replaces
:math:`e^{q_i^\top k_j}` by :math:`\phi(q_i)^\top\phi(k_j)`; ALiBi's bias then becomes the factor
:math:`e^{-m(i-j)} = e^{-mi}\,e^{mj}`, one number of the query times one of the key: rank 1, so it needs no N × N
matrix. :func:`alibi_linear_attention` sums it as decayed running totals, :math:`S_i = e^{-m}S_{i-1} +
\phi(k_i)v_i^\top`, which never forms :math:`e^{mj}` (it overflows float64 past j ≈ 709/m); the bidirectional
:math:`e^{-m|i-j|}` takes one such pass forwards and one backwards.
"""

from __future__ import annotations

import math

import numpy as np

from .attention import causal_mask
from .errors import MAX_ELEMENTS, PosEncError, as_array, as_bool, as_choice, as_float, as_int, check_elements
from .relative import relative_positions
from .rope.linear import elu_feature_map

__all__ = [
    "ALIBI_LINEAR_METHODS",
    "alibi_bias",
    "alibi_closest_power_of_two",
    "alibi_key_only_bias",
    "alibi_linear_attention",
    "alibi_receptive_field",
    "alibi_slope_exponents",
    "alibi_slopes",
]

MAX_HEADS = 4096
#: "decay": decayed running totals, O(N·d·d_v); "pairwise": the N × N weights written out, O(N²·d) (the reference).
ALIBI_LINEAR_METHODS = ("decay", "pairwise")


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


def alibi_closest_power_of_two(n_heads: int) -> int:
    r"""c = the largest power of two ≤ H: heads 0 … c − 1 take the geometric sequence :math:`2^{-8(h+1)/c}`, the
    other H − c take every other slope of the 2c-head sequence (Press et al. 2021, §3; their ``get_slopes``)."""
    n_heads = as_int("n_heads", n_heads, lo=1, hi=MAX_HEADS)
    return 1 << (n_heads.bit_length() - 1)


def alibi_slope_exponents(n_heads: int) -> np.ndarray:
    r"""The (H,) exponents :math:`e_h` with :math:`m_h = 2^{-e_h}`, in closed form: with c =
    :func:`alibi_closest_power_of_two`, :math:`e_h = 8(h+1)/c` for h < c and :math:`e_h = 8(2(h-c)+1)/(2c)` after.

    The first c heads are the geometric sequence of c heads (ratio :math:`2^{-8/c}`, 1/2 … 1/256 for c = 8); the
    rest are the odd-numbered terms of the 2c-head sequence, which fall between them. 12 heads: 1 … 8, then 0.5,
    1.5, 2.5, 3.5 (Press et al. 2021, §3 and ``get_slopes``; docs/references.md, "ALiBi").
    """
    c = alibi_closest_power_of_two(n_heads)
    h = np.arange(n_heads, dtype=np.float64)
    return np.where(h < c, 8.0 * (h + 1) / c, 8.0 * (2 * (h - c) + 1) / (2 * c))


def alibi_key_only_bias(
    n_heads: int, query_length: int, key_length: int | None = None, *, heads: object = None
) -> np.ndarray:
    r"""The (H, Lq, Lk) causal bias :math:`m_h\,j` (key position only, −inf above the diagonal), as BLOOM builds it.

    BLOOM adds :math:`m_h\,j`, MPT :math:`m_h\,(j - L + 1)`; both differ from the paper's :math:`-m_h(i - j)` by a
    constant per query row, so softmax rows are unchanged. Only causally: without the mask the keys after i would
    get a *growing* bonus instead of the symmetric penalty :math:`-m_h|i - j|`. ``heads`` as in
    :func:`~posenc_core.alibi_bias`; queries are the last Lq positions, keys are 0 … Lk − 1.
    """
    slopes, query_length, key_length = head_slopes_and_lengths(n_heads, heads, query_length, key_length)
    check_elements("alibi_key_only_bias", (slopes.shape[0], query_length, key_length))
    j = np.arange(key_length, dtype=np.float64)
    masked = np.where(causal_mask(query_length, key_length), -np.inf, 0.0)  # (Lq, Lk)
    return slopes[:, None, None] * j[None, None, :] + masked[None]


def alibi_receptive_field(slopes: object, *, threshold: float) -> np.ndarray:
    r"""Per head, the distance :math:`d_h = \tau / m_h` at which ALiBi's penalty :math:`-m_h d` reaches :math:`-\tau`.

    Beyond :math:`d_h` the bias alone shrinks a key's weight by more than :math:`e^{\tau}` relative to a key at
    distance 0 *with the same logit*. It is not a hard window: a key whose logit :math:`q \cdot k` is larger by
    more than :math:`m_h d` still wins. Paper: Press et al. 2021, §3 (slopes) and §5 (what heads attend to).
    """
    slopes = as_array("slopes", slopes, ndim=1)
    if np.any(slopes <= 0):
        raise PosEncError("slopes must all be > 0")
    threshold = as_float("threshold", threshold, gt=0.0)
    with np.errstate(over="ignore"):
        field = threshold / slopes.astype(np.float64)
    if not np.all(np.isfinite(field)):
        raise PosEncError("threshold / slope overflows float64: use larger slopes or a smaller threshold")
    return field


def alibi_linear_attention(
    q: object, k: object, v: object, *, slope: float, causal: bool = True, method: str = "decay"
) -> np.ndarray:
    r"""Linear attention with ALiBi's factor, shape (L, d_v):
    :math:`o_i = \frac{\sum_{j} e^{-m|i-j|}\,\phi(q_i)^\top\phi(k_j)\,v_j}{\sum_{j} e^{-m|i-j|}\,\phi(q_i)^\top
    \phi(k_j)}`, over j ≤ i when ``causal``.

    :math:`e^{q_i^\top k_j - m(i-j)}` with the exponential replaced by the feature map
    :math:`\phi = \operatorname{elu} + 1` (:func:`posenc_core.elu_feature_map`). ``method="decay"`` keeps
    :math:`S_i = e^{-m}S_{i-1} + \phi(k_i)v_i^\top` and :math:`z_i = e^{-m}z_{i-1} + \phi(k_i)`, so
    :math:`o_i = \phi(q_i)^\top S_i / \phi(q_i)^\top z_i`: every step multiplies by :math:`e^{-m} \le 1`, so
    nothing grows. Without the mask a second pass from the end adds the keys j > i, decayed the same way.
    ``method="pairwise"`` writes the N × N weights out (the reference). ``q``, ``k`` are (L, d), ``v`` (L, d_v),
    ``slope`` m ≥ 0 (:func:`alibi_slopes`).

    Paper: Press et al. 2021, arXiv:2108.12409, §3 (the bias); Katharopoulos et al. 2020, arXiv:2006.16236, §3.2
    (running totals).
    """
    q, k, v = as_array("q", q, ndim=2), as_array("k", k, ndim=2), as_array("v", v, ndim=2)
    if q.shape != k.shape or v.shape[0] != q.shape[0]:
        raise PosEncError(f"q, k must share a shape (L, d) and v have L rows, got {q.shape}, {k.shape}, {v.shape}")
    slope = as_float("slope", slope, ge=0.0)
    causal, method = as_bool("causal", causal), as_choice("method", method, ALIBI_LINEAR_METHODS)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = _alibi_linear(q, k, v, slope, causal, method)
    if not np.all(np.isfinite(out)):
        raise PosEncError("q, k or v are too large: the linear-attention sums overflow float64")
    return out


def _alibi_linear(q: np.ndarray, k: np.ndarray, v: np.ndarray, slope: float, causal: bool, method: str) -> np.ndarray:
    r""":func:`alibi_linear_attention` on checked arguments (the caller catches overflow)."""
    phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)  # (L, d), positive
    n = q.shape[0]
    if method == "pairwise":
        check_elements("alibi_linear_attention(pairwise)", (n, n))
        rel = relative_positions(n).astype(np.float64)  # j − i
        factor = np.exp(-slope * np.abs(rel))  # e^(−m|i−j|)
        if causal:
            factor = np.where(rel > 0, 0.0, factor)
        weights = factor * (phi_q @ phi_k.T)  # (L, L)
        return (weights @ v) / weights.sum(axis=1)[:, None]
    check_elements("alibi_linear_attention(decay)", (n, q.shape[1], v.shape[1]))
    decay = math.exp(-slope)
    totals = _decayed_totals(phi_k[:, :, None] * v[:, None, :], decay)  # S_i over j ≤ i, (L, d, d_v)
    key_sums = _decayed_totals(phi_k, decay)  # z_i over j ≤ i, (L, d)
    if not causal:  # add j > i: the same recurrence run from the end, shifted by one
        totals = totals + decay * _decayed_totals(phi_k[::-1, :, None] * v[::-1, None, :], decay, shift=True)[::-1]
        key_sums = key_sums + decay * _decayed_totals(phi_k[::-1], decay, shift=True)[::-1]
    numerator = np.einsum("ld,lde->le", phi_q, totals)  # φ(q_i)ᵀ S_i
    denominator = np.einsum("ld,ld->l", phi_q, key_sums)  # φ(q_i)ᵀ z_i
    return numerator / denominator[:, None]


def _decayed_totals(terms: np.ndarray, decay: float, *, shift: bool = False) -> np.ndarray:
    r"""The running totals :math:`S_i = \text{decay}\cdot S_{i-1} + t_i` along the first axis (:math:`S_{-1} = 0`);
    with ``shift`` row i holds :math:`S_{i-1}`, the terms before i only."""
    totals = np.empty_like(terms)
    running = np.zeros_like(terms[0])
    for i in range(terms.shape[0]):
        if shift:
            totals[i] = running  # Σ_(j<i) decay^(i−1−j) t_j
            running = decay * running + terms[i]
        else:
            running = decay * running + terms[i]  # S_i = e^(−m) S_(i−1) + t_i
            totals[i] = running
    return totals
