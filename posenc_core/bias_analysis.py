r"""What relative biases buy, measured: Toeplitz structure, the cross term of additive codes, ALiBi's two forms.

A relative scheme adds to the logit of query i and key j a term that depends on the offset :math:`j - i` only, so
its bias matrix is **Toeplitz** — constant along every diagonal. :func:`diagonal_spread` measures how far a matrix is
from that (0 exactly for Shaw's and T5's biases and for ALiBi).

Additive absolute codes (Vaswani et al. 2017, §3.5) do not give this. With :math:`x_m + p_m` fed to the projections,

.. math::
    q_m^\top k_n = x_m W_Q W_K^\top x_n^\top + x_m W_Q W_K^\top p_n^\top + p_m W_Q W_K^\top x_n^\top
                 + p_m W_Q W_K^\top p_n^\top,

and even the purely positional last term (:func:`position_cross_scores`) depends on m and n separately once
:math:`W_Q W_K^\top` is a generic matrix: sinusoids make :math:`p_m \cdot p_n` a function of n − m, but a learned
matrix between them mixes the (sin, cos) pairs and the absolute phases come back (§2.2 of
the article 「从零学习大模型--旋转位置编码」; the motivation of Shaw et al. 2018 and of RoPE, Su et al. 2021,
arXiv:2104.09864, §3.1).

ALiBi (Press, Smith & Lewis 2021, arXiv:2108.12409, §3) writes its bias as :math:`-m_h(i - j)`; BLOOM and MPT add
:func:`alibi_key_only_bias` :math:`m_h\,j` instead. Under the causal mask the two differ by :math:`m_h\,i`, the same
for every key of row i, and softmax ignores a constant added to a row: the attention weights are identical
(:func:`attention_weights` on both). :func:`alibi_receptive_field` turns a slope into the distance at which the
penalty alone reaches a threshold.
"""

from __future__ import annotations

import numpy as np

from .alibi import MAX_HEADS, head_slopes_and_lengths
from .attention import causal_mask, softmax
from .errors import MAX_ELEMENTS, PosEncError, as_array, as_bool, as_float, as_int, check_elements

__all__ = [
    "alibi_closest_power_of_two",
    "alibi_key_only_bias",
    "alibi_receptive_field",
    "alibi_slope_exponents",
    "attention_weights",
    "diagonal_spread",
    "position_cross_scores",
    "random_logits",
    "t5_max_exact",
    "toeplitz_deviation",
]


# --- Toeplitz structure --------------------------------------------------------------------------------------------


def diagonal_spread(matrix: object) -> np.ndarray:
    r"""For each diagonal :math:`c - r = \delta` of an (R, C) matrix, :math:`\max - \min` of its entries, shape
    (R + C − 1,), ordered :math:`\delta = -(R-1), \dots, C-1`.

    All zeros exactly when the matrix is Toeplitz, i.e. when entry (r, c) depends on c − r only. (With queries
    aligned to the last keys, :func:`~posenc_core.relative_positions` is c − r plus the constant C − R, so the
    diagonals are the same.) −inf entries (masked keys) are allowed: a diagonal that is −inf throughout has spread
    0, one that mixes −inf with numbers has spread +inf. NaN and +inf are errors.
    """
    a = as_array("matrix", matrix, ndim=2, finite=False).astype(np.float64, copy=False)
    if np.isnan(a).any() or np.isposinf(a).any():
        raise PosEncError("matrix must not contain nan or +inf (−inf is allowed: a masked entry)")
    rows, cols = a.shape
    delta = (np.arange(cols)[None, :] - np.arange(rows)[:, None]).ravel() + (rows - 1)  # diagonal id 0 … R+C−2
    order = np.argsort(delta, kind="stable")
    starts = np.searchsorted(delta[order], np.arange(rows + cols - 1))
    values = a.ravel()[order]
    top, bottom = np.maximum.reduceat(values, starts), np.minimum.reduceat(values, starts)
    with np.errstate(invalid="ignore"):  # −inf − (−inf) on an all-masked diagonal: spread 0, set below
        spread = top - bottom
    return np.where(top == bottom, 0.0, spread)


def toeplitz_deviation(matrix: object) -> float:
    r""":math:`\max_\delta (\max - \min)` along the diagonals: 0 exactly for a Toeplitz (purely relative) matrix."""
    return float(np.max(diagonal_spread(matrix)))


# --- why relative: the cross term of additive encodings ------------------------------------------------------------


def position_cross_scores(table: object, w_q: object, w_k: object) -> np.ndarray:
    r"""The (L, L) position-only part of additive attention logits, :math:`S_{mn} = p_m W_Q W_K^\top p_n^\top`.

    ``table`` (L, d_model) holds one position vector :math:`p_m` per row (e.g. :func:`~posenc_core.sinusoidal`),
    ``w_q`` and ``w_k`` are (d_model, d_head). With :math:`W_Q W_K^\top = I` and sinusoids,
    :math:`S_{mn} = \sum_i \cos((n - m)\omega_i)` is Toeplitz; a generic :math:`W_Q W_K^\top` makes it depend on m
    and n separately. Unscaled (no :math:`1/\sqrt{d}`): the structure, not the size, is the point.
    """
    table = as_array("table", table, ndim=2).astype(np.float64, copy=False)
    w_q = as_array("w_q", w_q, ndim=2).astype(np.float64, copy=False)
    w_k = as_array("w_k", w_k, ndim=2).astype(np.float64, copy=False)
    if w_q.shape[0] != table.shape[1] or w_k.shape != w_q.shape:
        raise PosEncError(
            f"w_q and w_k must both be (d_model, d_head) with d_model = {table.shape[1]} (the table's width); "
            f"got {w_q.shape} and {w_k.shape}"
        )
    check_elements("position_cross_scores", (table.shape[0], table.shape[0]))
    with np.errstate(over="ignore", invalid="ignore"):
        scores = (table @ w_q) @ (table @ w_k).T  # (L, d_head) @ (d_head, L)
    if not np.all(np.isfinite(scores)):
        raise PosEncError("table and weights are too large: the scores overflow float64")
    return scores


# --- T5 -------------------------------------------------------------------------------------------------------------


def t5_max_exact(*, bidirectional: bool = True, num_buckets: int = 32) -> int:
    r"""The distance where T5's buckets stop being exact and turn logarithmic: :math:`h/2`, h the buckets per
    direction (num_buckets/2 bidirectional, num_buckets causal), floor division as in Mesh TensorFlow.

    Distances 0 … max_exact − 1 get a bucket each; from max_exact on, buckets widen logarithmically up to
    ``max_distance``. Paper: Raffel et al. 2020, arXiv:1910.10683, §2.1.
    """
    bidirectional = as_bool("bidirectional", bidirectional)
    num_buckets = as_int("num_buckets", num_buckets, lo=4 if bidirectional else 2, hi=2**20)
    half = num_buckets // 2 if bidirectional else num_buckets
    return half // 2


# --- ALiBi ----------------------------------------------------------------------------------------------------------


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


# --- attention weights from logits ----------------------------------------------------------------------------------


def random_logits(query_length: int, key_length: int | None = None, *, std: float = 1.0, seed: int = 0) -> np.ndarray:
    r"""A reproducible (Lq, Lk) matrix of i.i.d. :math:`\mathcal N(0, \text{std}^2)` logits: a stand-in for
    :math:`q_i \cdot k_j / \sqrt d` of random unit-variance q, k, on which a bias can be shown at work."""
    query_length = as_int("query_length", query_length, lo=1, hi=MAX_ELEMENTS)
    key_length = query_length if key_length is None else as_int("key_length", key_length, lo=1, hi=MAX_ELEMENTS)
    std = as_float("std", std, ge=0.0, le=1e6)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    check_elements("random_logits", (query_length, key_length))
    return std * np.random.default_rng([seed, 0x10617]).standard_normal((query_length, key_length))


def attention_weights(logits: object, *, bias: object = None, causal: bool = False) -> np.ndarray:
    r""":math:`\operatorname{softmax}_j(\ell_{ij} + B_{ij})`, keys j > i masked when ``causal``; shape of the
    broadcast of ``logits`` (…, Lq, Lk) and ``bias`` (e.g. (H, Lq, Lk) against (Lq, Lk)).

    Queries are the last Lq positions (see :func:`~posenc_core.causal_mask`). −inf in ``bias`` masks an entry.
    """
    logits = as_array("logits", logits, min_ndim=2)
    causal = as_bool("causal", causal)
    scores = logits
    if bias is not None:
        bias = as_array("bias", bias, min_ndim=2, finite=False)
        if np.isnan(bias).any() or np.isposinf(bias).any():
            raise PosEncError("bias must not contain nan or +inf (−inf is allowed: it masks an entry)")
        try:
            shape = np.broadcast_shapes(logits.shape, bias.shape)
        except ValueError as exc:
            raise PosEncError(f"bias of shape {bias.shape} does not broadcast to the logits {logits.shape}") from exc
        check_elements("attention_weights", shape)
        with np.errstate(over="ignore"):
            scores = logits + bias
        if np.isposinf(scores).any():
            raise PosEncError("logits + bias overflow float64")
    if causal:
        scores = np.where(causal_mask(scores.shape[-2], scores.shape[-1]), -np.inf, scores)
    return softmax(scores, axis=-1)
