r"""Every encoding on the same footing: its position-only score matrix, how relative it is, how it extrapolated.

**Relative ⇔ Toeplitz.** Give every position the same content vector x, so whatever varies across the (L, L) score
matrix comes from position alone. An encoding is *relative* when that matrix depends on j − i only — is constant
along every diagonal (Toeplitz; the :math:`A_{\text{rel}}(i, j) = R_{j-i}` of
the article 「大语言模型原理基础与前沿：相对位置编码」):

* sinusoidal / learned, *added* to x: :math:`(x + p_i)W_QW_K^\top(x + p_j)^\top` — the cross terms
  :math:`xW_QW_K^\top p_j^\top` depend on j alone and :math:`p_iW_QW_K^\top p_j^\top` on i and j separately: not
  Toeplitz
  (Vaswani et al. 2017, §3.5; the motivation of Shaw et al. 2018, arXiv:1803.02155);
* Shaw: :math:`q\cdot k + q\cdot a_{\mathrm{clip}(j-i)}`; T5: :math:`q\cdot k + b_{\mathrm{bucket}(j-i)}`
  (Raffel et al. 2020, arXiv:1910.10683); ALiBi: :math:`q\cdot k - m|i-j|` (Press et al. 2021, arXiv:2108.12409);
  RoPE: :math:`(R_iq)^\top R_jk = q^\top R_{j-i}k` (Su et al. 2021, arXiv:2104.09864): all Toeplitz.

:func:`toeplitz_residual` measures the spread along diagonals relative to the spread of the whole matrix, so it is
0 (up to rounding) for relative encodings and of order 1 for absolute ones, whatever their scale.
:func:`position_cross_scores` isolates the purely positional term :math:`p_m W_Q W_K^\top p_n^\top` of an additive
code: sinusoids make :math:`p_m \cdot p_n` a function of n − m, but a learned matrix between them mixes the
(sin, cos) pairs and the absolute phases come back (§2.2 of the article 「从零学习大模型--旋转位置编码」; the
motivation of Shaw et al. 2018 and of RoPE, Su et al. 2021, arXiv:2104.09864, §3.1).

**Linear attention.** Kernelised attention (Katharopoulos et al. 2020, arXiv:2006.16236) never forms the N × N
weights; what each encoding needs there is :data:`LINEAR_ROUTES`. An added code or RoPE acts on one token at a time,
so its scores factorise through d-dimensional features (rank ≤ d; RoPE rotates φ(q) and φ(k), RoFormer §3.3,
eq. 19). A relative bias :math:`b_{j-i}` becomes the factor :math:`e^{b_{j-i}}` of each pair's weight, a Toeplitz
matrix, applied by FFT in O(N log N) (Luo et al. 2021, arXiv:2106.12566). ALiBi's factor :math:`e^{-m(i-j)} =
e^{-mi}e^{mj}` is rank 1 under the causal mask: decayed running totals, O(N). :func:`bias_route_residual` checks each
fast route against the dense N × N computation. Full rank of the logits is therefore no verdict on its own, and a
numerical rank depends on its tolerance: :func:`numerical_rank` counts singular values above ``rtol`` times the
largest.

Whether an encoding extrapolates is not read here: page 13 takes it from the extrapolation lab's committed runs and
their verdict rule (:mod:`posenc_lab.runs`).
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from .alibi import alibi_linear_attention, alibi_slopes
from .errors import PosEncError, as_array, as_choice, as_float, as_int, check_elements
from .families import ALIBI_HEADS, COMPARED, FAMILIES, LINEAR_ROUTES
from .relative import toeplitz_deviation, toeplitz_linear_attention
from .rope import elu_feature_map

__all__ = [
    "COMPARED",
    "LINEAR_ROUTES",
    "bias_route_residual",
    "numerical_rank",
    "position_cross_scores",
    "position_score_matrix",
    "toeplitz_residual",
]

# COMPARED (the families :func:`position_score_matrix` builds, absolute first) and LINEAR_ROUTES (how linear attention
# applies each without an N × N matrix: "per_token", features of one token, rank ≤ d; "fft", a Toeplitz factor by
# FFT, Luo et al. 2021; "decay", ALiBi's e^(−m(i−j)) as decayed running totals when causal, one pass each way when
# bidirectional) are read from the family registry, :data:`posenc_core.families.FAMILIES`.
#: The methods :func:`bias_route_residual` accepts per route.
BIAS_METHODS = MappingProxyType({"fft": ("fft",), "decay": ("decay", "fft")})
MAX_LENGTH = 4096
MAX_DIM = 1024
_ROUTE_VALUE_DIM = 8  # value width in bias_route_residual: the fast routes cost O(N log N · d · d_v)


def position_score_matrix(encoding: str, length: int, *, dim: int = 64, seed: int = 0) -> np.ndarray:
    r"""The (L, L) logits :math:`s_{ij}` of one head when every position holds the same content, scaled by
    :math:`1/\sqrt d` (biases are added unscaled, as in the models).

    Content x, projections :math:`W_Q, W_K` and any learned table (BERT-style positions, Shaw's 2k + 1 offset
    vectors, T5's bucket scalars) are random but fixed by ``seed``; ALiBi is shown in its bidirectional form
    :math:`-m|i - j|` (slope 1/2) so every matrix is full. ``encoding`` is one of :data:`COMPARED`; each family's
    ``scores`` (:data:`~posenc_core.families.FAMILIES`) builds its matrix.
    """
    encoding = as_choice("encoding", encoding, COMPARED)
    length = as_int("length", length, lo=2, hi=MAX_LENGTH)
    dim = as_int("dim", dim, lo=2, hi=MAX_DIM, even=True)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    return FAMILIES[encoding].scores(length, dim=dim, seed=seed)


def bias_route_residual(
    encoding: str, length: int, *, causal: bool = False, method: str = "fft", dim: int = 64, seed: int = 0
) -> float:
    r""":math:`\max|o_{\text{fast}} - o_{\text{dense}}| / \max|o_{\text{dense}}|`: linear attention with this
    encoding's position-only logits :math:`s_{ij}` as the factor :math:`e^{s_{ij}}` of each pair's weight, applied
    without (fast) and with (dense) the N × N matrix.

    The dense reference is :math:`o_i = \sum_j e^{s_{ij}}\phi(q_i)^\top\phi(k_j) v_j / \sum_j e^{s_{ij}}
    \phi(q_i)^\top\phi(k_j)` with :math:`s` from :func:`position_score_matrix` (``causal`` keeps j ≤ i, where ALiBi's
    :math:`-m|i-j|` is the causal :math:`-m(i-j)` of BLOOM and MPT), :math:`\phi = \operatorname{elu} + 1` of
    random q, k (d columns) and random v (8 columns; seeded); the content term of s is one constant, which cancels.
    The fast route reads only the first row and column of s: ``method="fft"``,
    :func:`~posenc_core.toeplitz_linear_attention`; ``method="decay"`` (ALiBi only),
    :func:`~posenc_core.alibi_linear_attention`. ``encoding`` is one with a bias
    route in :data:`LINEAR_ROUTES`.

    Paper: Luo et al. 2021, arXiv:2106.12566, §3 (FFT); Press et al. 2021, arXiv:2108.12409 (ALiBi); Katharopoulos
    et al. 2020, arXiv:2006.16236 (linear attention).
    """
    biased = tuple(e for e in COMPARED if LINEAR_ROUTES[e] in BIAS_METHODS)
    encoding = as_choice("encoding", encoding, biased)
    method = as_choice("method", method, BIAS_METHODS[LINEAR_ROUTES[encoding]])
    scores = position_score_matrix(encoding, length, dim=dim, seed=seed)  # (L, L), bidirectional
    n = scores.shape[0]
    rng = np.random.default_rng([seed, 0x11EA])
    q, k = rng.standard_normal((2, n, dim))  # (L, d) each
    v = rng.standard_normal((n, _ROUTE_VALUE_DIM))  # (L, d_v): the routes act on each value column alike
    phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)
    # dense: w_ij = e^(s_ij − max s) φ(q_i)ᵀφ(k_j), the N × N weights written out
    factor = np.exp(scores - np.max(scores))
    if causal:  # j ≤ i, where ALiBi's −m|i − j| is the causal −m(i − j)
        factor = np.tril(factor)
    weights = factor * (phi_q @ phi_k.T)
    dense = (weights @ v) / weights.sum(axis=1)[:, None]
    if method == "decay":
        slope = float(alibi_slopes(ALIBI_HEADS)[0])  # the head position_score_matrix draws
        fast = alibi_linear_attention(q, k, v, slope=slope, causal=causal)
    else:
        bias = np.concatenate([scores[:0:-1, 0], scores[0, :]])  # s at j − i = −(L−1) … L − 1
        fast = toeplitz_linear_attention(phi_q, phi_k, v, bias, causal=causal)
    return float(np.max(np.abs(fast - dense)) / np.max(np.abs(dense)))


def toeplitz_residual(matrix: object) -> float:
    r""":math:`\max_\delta(\max - \min)` along the diagonals, divided by :math:`\max - \min` of the whole matrix.

    0 exactly for a Toeplitz matrix (entry (i, j) a function of j − i), including a constant one; of order 1 when
    the entries depend on i and j separately. Scale-free, so a learned table initialised at 0.02 and a sinusoid
    of amplitude 1 are judged alike. Finite matrices only.
    """
    a = as_array("matrix", matrix, ndim=2).astype(np.float64, copy=False)
    spread = float(np.max(a) - np.min(a))
    if spread == 0.0:
        return 0.0
    return toeplitz_deviation(a) / spread


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


def numerical_rank(matrix: object, *, rtol: float = 1e-10) -> int:
    r"""How many singular values of ``matrix`` exceed ``rtol`` times the largest: its rank, up to rounding.

    A score matrix of rank r can be written :math:`s_{mn} = \phi_m^\top \psi_n` with per-token features of size r.
    The count depends on ``rtol``: the (128, 128) logits of sinusoids or RoPE with d = 64 have rank at most 64 by
    construction but count far fewer at the default, and ALiBi's bidirectional logits count all 128 at the default but
    as few at 1e-3 (page 13 shows the numbers). Nor does full rank mean linear attention needs the N × N matrix: it
    applies a Toeplitz bias by FFT and ALiBi's by decayed running totals (:func:`bias_route_residual`). A zero
    matrix has rank 0.
    """
    matrix = as_array("matrix", matrix, ndim=2)
    rtol = as_float("rtol", rtol, gt=0.0, le=1.0)
    check_elements("numerical_rank(matrix)", (min(matrix.shape) ** 2, max(matrix.shape)))
    singular = np.linalg.svd(matrix, compute_uv=False)  # descending
    if singular.size == 0 or singular[0] == 0.0:
        return 0
    return int(np.count_nonzero(singular > rtol * singular[0]))
