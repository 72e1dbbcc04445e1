r"""Relative positions as learned biases: Shaw et al. (2018) clipping and T5's logarithmic buckets.

Both replace "where is each token" by "how far is the key from the query", :math:`r = j - i` (key minus query, one
sign everywhere in this library), and look up a learned quantity per offset. The score for query i and key j gains
a term that depends on j − i only, so the bias matrix :math:`A_{\text{rel}}(i, j) = R_{j-i}` is Toeplitz: constant
along every diagonal.

* Shaw, Uszkoreit & Vaswani 2018, "Self-Attention with Relative Position Representations", arXiv:1803.02155, §3.2:
  offsets are clipped to [−k, k], so 2k + 1 learned vectors serve any length.
* Raffel et al. 2020, "Exploring the Limits of Transfer Learning" (T5), arXiv:1910.10683, §2.1, and Mesh
  TensorFlow's ``_relative_position_bucket``: one learned scalar per bucket per head; small offsets get a bucket
  each, larger ones share logarithmically wider buckets up to ``max_distance``, beyond which all share the last.

The offsets themselves are :func:`relative_positions` (queries aligned to the last keys;
:func:`~posenc_core.causal_mask`, in :mod:`.attention`, marks the keys in the future). A matrix that depends on j − i
only is **Toeplitz**; :func:`diagonal_spread` and :func:`toeplitz_deviation` measure how far any matrix is from that
(0 exactly for Shaw's and T5's biases, for ALiBi and for RoPE's scores).

**Toeplitz by FFT.** A Toeplitz matrix is a corner of a circulant one, and a circulant matrix is diagonal in the
Fourier basis, so :func:`toeplitz_matmul` applies :math:`T_{ij} = c_{j-i}` to a vector in O(N log N) from its
2N − 1 diagonals, never forming the N × N matrix. In kernelised (linear) attention a scalar relative bias
:math:`b_{j-i}` becomes the factor :math:`e^{b_{j-i}}` of each pair's weight, and :func:`toeplitz_linear_attention`
applies it that way (Luo et al. 2021, "Stable, Fast and Accurate: Kernelized Attention with Relative Positional
Encoding", NeurIPS, arXiv:2106.12566, §3).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .attention import softmax
from .errors import (
    MAX_ELEMENTS,
    PosEncError,
    as_array,
    as_bool,
    as_choice,
    as_int,
    as_query_key_lengths,
    check_elements,
)

__all__ = [
    "SHAW_METHODS",
    "TOEPLITZ_METHODS",
    "ShawAttention",
    "diagonal_spread",
    "relative_positions",
    "shaw_attention",
    "shaw_relative_bias",
    "shaw_relative_index",
    "t5_bucket_matrix",
    "t5_max_exact",
    "t5_relative_bucket",
    "toeplitz_deviation",
    "toeplitz_linear_attention",
    "toeplitz_matmul",
]

#: "fft": the circulant embedding, O(N log N) per column; "dense": the N × N matrix written out (the reference).
TOEPLITZ_METHODS = ("fft", "dense")


def relative_positions(query_length: int, key_length: int | None = None) -> np.ndarray:
    r"""The (Lq, Lk) matrix of :math:`j - i` (key minus query), with queries aligned to the last keys.

    Query row r sits at absolute position i = Lk − Lq + r, so for Lq = Lk this is the familiar Toeplitz matrix
    with 0 on the diagonal, negative below it (keys in the past). More queries than keys is an error.
    """
    query_length, key_length = as_query_key_lengths(query_length, key_length)
    i = np.arange(query_length, dtype=np.int64) + (key_length - query_length)
    j = np.arange(key_length, dtype=np.int64)
    return j[None, :] - i[:, None]  # (Lq, Lk)


def shaw_relative_index(query_length: int, key_length: int, *, max_relative: int) -> np.ndarray:
    r"""(Lq, Lk) indices :math:`\mathrm{clip}(j - i, -k, k) + k` into 2k + 1 learned embeddings (int64).

    Paper: Shaw et al. 2018, arXiv:1803.02155, eq. (5)–(6). Queries are the last Lq positions (Lq ≤ Lk).
    """
    k = as_int("max_relative", max_relative, lo=0, hi=MAX_ELEMENTS)
    return np.clip(relative_positions(query_length, key_length), -k, k) + k


def shaw_relative_bias(
    weights: object, query_length: int, key_length: int | None = None, *, max_relative: int
) -> np.ndarray:
    r"""The bias :math:`A_{\text{rel}}(i, j) = w_{\mathrm{clip}(j-i,-k,k)+k}`: (Lq, Lk), or (H, Lq, Lk) for (H, 2k+1).

    Paper: Shaw et al. 2018, §3.2, with one scalar per offset (the form of
    the article 「大语言模型原理基础与前沿：相对位置编码」).
    """
    k = as_int("max_relative", max_relative, lo=0, hi=MAX_ELEMENTS)
    weights = as_array("weights", weights, min_ndim=1)
    if weights.ndim > 2 or weights.shape[-1] != 2 * k + 1:
        raise PosEncError(
            f"weights must have shape (2k+1,) or (heads, 2k+1) = (…, {2 * k + 1}) for max_relative = {k}, "
            f"got {weights.shape}"
        )
    key_length = query_length if key_length is None else key_length
    index = shaw_relative_index(query_length, key_length, max_relative=k)
    check_elements("shaw_relative_bias", (*weights.shape[:-1], *index.shape))
    return weights[..., index]


def t5_relative_bucket(
    relative_position: object,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    r"""T5's bucket for each ``relative_position`` = key − query (int64, same shape).

    Bidirectional: half the buckets per direction, keys in the future (r > 0) in the upper half. Causal: every
    future key shares bucket 0. Within a half of size h, offsets below h/2 get a bucket each; an offset
    :math:`n \ge h/2` gets :math:`h/2 + \lfloor \ln(2n/h) / \ln(2\,\text{max\_distance}/h) \cdot h/2 \rfloor`, capped
    at h − 1. The logarithm is evaluated in float32, as Mesh TensorFlow and transformers do, so bucket edges agree
    with theirs exactly.
    """
    rel = as_array("relative_position", relative_position, integer=True, allow_empty=True)
    bidirectional = as_bool("bidirectional", bidirectional)
    num_buckets = as_int("num_buckets", num_buckets, lo=4 if bidirectional else 2, hi=2**20)
    if rel.size and np.max(np.abs(rel)) > 2**53:
        raise PosEncError("relative_position must have magnitude ≤ 2^53")
    if bidirectional:
        half = num_buckets // 2
        bucket = np.where(rel > 0, half, 0)
        distance = np.abs(rel)
    else:
        half = num_buckets
        bucket = np.zeros(rel.shape, dtype=np.int64)
        distance = -np.minimum(rel, 0)  # future keys collapse to distance 0
    max_exact = half // 2
    max_distance = as_int("max_distance", max_distance, lo=max_exact + 1, hi=2**53)
    # h/2 + ln(n / max_exact) / ln(max_distance / max_exact) · (h − h/2), in float32, truncated toward zero
    ratio = np.maximum(distance, max_exact).astype(np.float32) / np.float32(max_exact)
    log_part = np.log(ratio) / np.float32(math.log(max_distance / max_exact)) * np.float32(half - max_exact)
    large = np.minimum(max_exact + log_part.astype(np.int64), half - 1)
    return bucket + np.where(distance < max_exact, distance, large)


def t5_bucket_matrix(
    query_length: int,
    key_length: int | None = None,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    r"""(Lq, Lk) bucket of every (query, key) pair: :func:`t5_relative_bucket` of :math:`j - i`."""
    return t5_relative_bucket(
        relative_positions(query_length, key_length),
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    )


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


# --- Toeplitz structure: what makes a bias relative -----------------------------------------------------------------


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


class ShawAttention(NamedTuple):
    r"""What :func:`shaw_attention` returns."""

    output: np.ndarray  # (L, d_v): z_i
    weights: np.ndarray  # (L, L): α_ij
    value_term: np.ndarray  # (L, d_v): Σ_j α_ij a^V_ij, the value side's share of z_i
    value_share: float  # ‖value_term‖ / (‖value_term‖ + ‖output − value_term‖), Frobenius: the value side's part


#: "split": the paper's efficient form, two matrix products per term (§3.3); "pairwise": eqs. (3)–(5) pair by pair.
SHAW_METHODS = ("split", "pairwise")


def shaw_attention(
    x: object,
    w_q: object,
    w_k: object,
    w_v: object,
    key_offsets: object,
    value_offsets: object,
    *,
    max_relative: int,
    method: str = "split",
) -> ShawAttention:
    r"""Self-attention with Shaw's relative terms on both sides: output, weights and the value side's share.

    .. math::
        e_{ij} = \frac{x_i W_Q\,(x_j W_K + a^K_{ij})^\top}{\sqrt{d_k}}, \qquad
        z_i = \sum_j \alpha_{ij}\,(x_j W_V + a^V_{ij}), \qquad
        a^{K,V}_{ij} = w^{K,V}_{\operatorname{clip}(j-i, -k, k)}

    ``key_offsets`` (2k + 1, d_k) and ``value_offsets`` (2k + 1, d_v) hold :math:`w_{-k} … w_k`. Absolute attention
    expands :math:`(x_i + p_i)W_Q\,((x_j + p_j)W_K)^\top` into four terms; Shaw keeps the content term and replaces
    the position terms by one learned vector per clipped offset, on the key side and on the value side.
    Paper: Shaw, Uszkoreit & Vaswani 2018, "Self-Attention with Relative Position Representations",
    arXiv:1803.02155, eqs. (3)–(5) and §3.3.
    """
    x, w_q, w_k, w_v = (as_array(n, a, ndim=2) for n, a in (("x", x), ("w_q", w_q), ("w_k", w_k), ("w_v", w_v)))
    k = as_int("max_relative", max_relative, lo=0, hi=MAX_ELEMENTS)
    method = as_choice("method", method, SHAW_METHODS)
    a_k, a_v = as_array("key_offsets", key_offsets, ndim=2), as_array("value_offsets", value_offsets, ndim=2)
    d_k, d_v = _check_shaw_shapes(x, w_q, w_k, w_v, a_k, a_v, k)
    length = x.shape[0]
    index = shaw_relative_index(length, length, max_relative=k)  # (L, L): clip(j − i) + k
    check_elements("shaw_attention", (length, length, max(d_k, d_v)))
    q, keys, values = x @ w_q, x @ w_k, x @ w_v  # (L, d_k), (L, d_k), (L, d_v)
    if method == "pairwise":
        logits = np.einsum("id,ijd->ij", q, keys[None, :, :] + a_k[index]) / math.sqrt(d_k)
        weights = softmax(logits)
        value_term = np.einsum("ij,ijd->id", weights, a_v[index])
        return _shaw_result(np.einsum("ij,ijd->id", weights, values[None, :, :] + a_v[index]), weights, value_term)
    # §3.3: the content terms as plain matrix products, the offset terms as products with the (2k + 1) offsets
    logits = (q @ keys.T + np.take_along_axis(q @ a_k.T, index, axis=1)) / math.sqrt(d_k)
    weights = softmax(logits)
    per_offset = np.zeros((length, 2 * k + 1))
    np.add.at(per_offset, (np.arange(length)[:, None], index), weights)  # Σ_j α_ij over the j of each offset
    value_term = per_offset @ a_v
    return _shaw_result(weights @ values + value_term, weights, value_term)


def _check_shaw_shapes(x, w_q, w_k, w_v, a_k, a_v, k: int) -> tuple[int, int]:
    r"""(d_k, d_v) once the projections and the 2k + 1 offset vectors fit x; else a :class:`PosEncError`."""
    d_k, d_v = w_q.shape[1], w_v.shape[1]
    if w_q.shape[0] != x.shape[1] or w_k.shape != w_q.shape or w_v.shape[0] != x.shape[1]:
        raise PosEncError(
            f"w_q, w_k must be (d, d_k) and w_v (d, d_v) with d = {x.shape[1]}, "
            f"got {w_q.shape}, {w_k.shape}, {w_v.shape}"
        )
    if a_k.shape != (2 * k + 1, d_k) or a_v.shape != (2 * k + 1, d_v):
        raise PosEncError(
            f"key_offsets must be ({2 * k + 1}, {d_k}) and value_offsets ({2 * k + 1}, {d_v}), "
            f"got {a_k.shape} and {a_v.shape}"
        )
    return d_k, d_v


def _shaw_result(output: np.ndarray, weights: np.ndarray, value_term: np.ndarray) -> ShawAttention:
    offsets, content = float(np.linalg.norm(value_term)), float(np.linalg.norm(output - value_term))
    return ShawAttention(output, weights, value_term, offsets / (offsets + content) if offsets + content else 0.0)


def _check_diagonals(diagonals: object, length: int) -> np.ndarray:
    diagonals = as_array("diagonals", diagonals, ndim=1).astype(np.float64, copy=False)
    if diagonals.shape[0] != 2 * length - 1:
        raise PosEncError(
            f"diagonals must hold the 2N - 1 = {2 * length - 1} values c_(-(N-1)) … c_(N-1) for N = {length} rows, "
            f"got {diagonals.shape[0]}"
        )
    return diagonals


def toeplitz_matmul(diagonals: object, x: object, *, method: str = "fft") -> np.ndarray:
    r"""The product :math:`y = Tx` with :math:`T_{ij} = c_{j-i}`, shape of ``x``: :math:`y_i = \sum_j c_{j-i}\,x_j`.

    ``diagonals`` holds the 2N − 1 values :math:`c_{-(N-1)}, \dots, c_{N-1}` (offset j − i, key minus query, from
    the lowest diagonal up); ``x`` is (N, …) and is multiplied along its first axis, every other axis a separate
    column. ``method="fft"`` embeds T in a circulant matrix of size M ≥ 2N − 1, whose first column is
    :math:`c_0, c_{-1}, \dots, c_{-(N-1)}, 0, \dots, 0, c_{N-1}, \dots, c_1`, and multiplies in the Fourier basis:
    O(M log M) per column, no N × N array. ``method="dense"`` writes T out (the reference).

    Paper: Luo et al. 2021, NeurIPS, arXiv:2106.12566, §3 (Toeplitz products by FFT inside kernelised attention).
    """
    x = as_array("x", x).astype(np.float64, copy=False)
    if x.ndim < 1 or x.shape[0] < 1:
        raise PosEncError(f"x must have at least one row, got shape {x.shape}")
    n = x.shape[0]
    diagonals = _check_diagonals(diagonals, n)
    method = as_choice("method", method, TOEPLITZ_METHODS)
    columns = x.reshape(n, -1)  # (N, C)
    if method == "dense":
        check_elements("toeplitz_matmul(dense)", (n, n))
        t = diagonals[relative_positions(n) + n - 1]  # (N, N): T_ij = c_(j-i)
        with np.errstate(over="ignore", invalid="ignore"):
            product = t @ columns
        return _finite_product(product).reshape(x.shape)
    size = 1 << (2 * n - 2).bit_length()  # a power of two ≥ 2N − 1
    check_elements("toeplitz_matmul(fft)", (size, columns.shape[1]))
    first = np.zeros(size)
    first[:n] = diagonals[n - 1 :: -1]  # c_0, c_(-1), …, c_(-(N-1)): row i ≥ j reads c_(j-i)
    first[size - n + 1 :] = diagonals[: n - 1 : -1]  # c_(N-1), …, c_1 at the end: they wrap round to j > i
    with np.errstate(over="ignore", invalid="ignore"):
        # y = ifft(fft(col) · fft(x padded)), the first N rows of the circulant product
        spectrum = np.fft.rfft(first)[:, None] * np.fft.rfft(columns, n=size, axis=0)
        product = np.fft.irfft(spectrum, n=size, axis=0)[:n]
    return _finite_product(product).reshape(x.shape)


def _finite_product(product: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(product)):
        raise PosEncError("diagonals and x are too large: the Toeplitz product overflows float64")
    return product


def toeplitz_linear_attention(
    phi_q: object, phi_k: object, v: object, bias: object, *, causal: bool = True, method: str = "fft"
) -> np.ndarray:
    r"""Kernelised attention with a relative bias, shape (N, d_v):
    :math:`o_i = \frac{\sum_j e^{b_{j-i}}\,\phi(q_i)^\top\phi(k_j)\,v_j}{\sum_j e^{b_{j-i}}\,\phi(q_i)^\top\phi(k_j)}`.

    The softmax weight :math:`e^{q_i^\top k_j + b_{j-i}}` becomes :math:`\phi(q_i)^\top\phi(k_j)\,e^{b_{j-i}}`, so
    the numerator is :math:`\phi(q_i)^\top U_i` with :math:`U = C\,[\phi(k_j) v_j^\top]_j`, C the Toeplitz matrix of
    :math:`e^{b}`: one :func:`toeplitz_matmul` per entry of :math:`\phi(k)v^\top`, O(N log N · d · d_v).
    ``phi_q``, ``phi_k`` are (N, d) positive features (e.g. :func:`posenc_core.elu_feature_map` of q and k), ``v``
    (N, d_v), ``bias`` the 2N − 1 values :math:`b_{-(N-1)} \dots b_{N-1}`; ``causal`` drops the keys j > i. The
    largest bias is subtracted first: a constant factor cancels between numerator and denominator.

    Paper: Luo et al. 2021, NeurIPS, arXiv:2106.12566, §3; Katharopoulos et al. 2020, arXiv:2006.16236 (linear
    attention).
    """
    phi_q, phi_k, v = as_array("phi_q", phi_q, ndim=2), as_array("phi_k", phi_k, ndim=2), as_array("v", v, ndim=2)
    if phi_q.shape != phi_k.shape or v.shape[0] != phi_q.shape[0]:
        raise PosEncError(
            f"phi_q, phi_k must share a shape (N, d) and v have N rows, got {phi_q.shape}, {phi_k.shape}, {v.shape}"
        )
    if np.any(phi_q <= 0) or np.any(phi_k <= 0):
        raise PosEncError("phi_q and phi_k must be positive features (a feature map such as elu + 1)")
    n = phi_q.shape[0]
    bias = _check_diagonals(bias, n)
    causal = as_bool("causal", causal)
    check_elements("toeplitz_linear_attention", (n, phi_q.shape[1], v.shape[1]))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        factor = np.exp(bias - np.max(bias))  # (2N − 1,): e^(b_δ − max b), at most 1
        if causal:
            factor = np.where(np.arange(-(n - 1), n) > 0, 0.0, factor)  # keys after the query: weight 0
        outer = phi_k[:, :, None] * v[:, None, :]  # (N, d, d_v): φ(k_j) v_jᵀ
        totals = toeplitz_matmul(factor, outer, method=method)  # U_i = Σ_j c_(j-i) φ(k_j) v_jᵀ
        key_sums = toeplitz_matmul(factor, phi_k, method=method)  # z_i = Σ_j c_(j-i) φ(k_j)
        numerator = np.einsum("nd,nde->ne", phi_q, totals)
        denominator = np.einsum("nd,nd->n", phi_q, key_sums)
        out = numerator / denominator[:, None]
    if not np.all(np.isfinite(out)) or np.any(denominator <= 0.0):
        raise PosEncError(
            "the weights overflow or vanish in float64: use smaller features, values or a narrower spread of bias"
        )
    return out
