r"""RoPE inside linear attention: the rotation is per token, so it survives the kernel trick.

Linear attention replaces :math:`\exp(q_m^\top k_n)` by a product of feature maps :math:`\phi(q_m)^\top \phi(k_n)`
and sums over keys once, as running totals, in O(N·d·d_v) instead of O(N²·d) (Katharopoulos et al. 2020,
arXiv:2006.16236, with :math:`\phi(x) = \operatorname{elu}(x) + 1`). RoFormer §3.3, eq. (19), rotates the features
and keeps the normaliser unrotated (so it stays positive):

.. math::

    \operatorname{Attn}_m = \frac{\sum_{n \le m} (R_m \phi(q_m))^\top (R_n \phi(k_n))\, v_n}
                                 {\sum_{n \le m} \phi(q_m)^\top \phi(k_n)}

Because :math:`R_m` acts on the query alone and :math:`R_n` on the key alone, the numerator factorises as
:math:`(R_m\phi(q_m))^\top S_m` with :math:`S_m = \sum_{n\le m} R_n\phi(k_n)\,v_n^\top`, a running total: no N × N
matrix is ever formed. A relative bias :math:`b_{n-m}` is not per token, but it need not form the matrix either: it
becomes a Toeplitz factor :math:`e^{b_{n-m}}`, applied by FFT (:func:`posenc_core.toeplitz_linear_attention`), and
ALiBi's :math:`e^{-m(i-j)}` is decayed running totals (:func:`posenc_core.alibi_linear_attention`).

Paper: Su et al. 2021, arXiv:2104.09864, §3.3.
"""

from __future__ import annotations

import numpy as np

from ..errors import PosEncError, as_array, as_bool, as_choice, check_elements
from .rotation import _check_inv_freq, _check_positions, apply_rope

__all__ = ["LINEAR_METHODS", "elu_feature_map", "rope_linear_attention", "rope_linear_attention_residual"]

#: "prefix": running totals, O(N·d·d_v); "pairwise": the N × N weights written out, O(N²·d) (the reference).
LINEAR_METHODS = ("prefix", "pairwise")


def elu_feature_map(x: object) -> np.ndarray:
    r""":math:`\phi(x) = \operatorname{elu}(x) + 1` elementwise: x + 1 for x > 0, :math:`e^x` otherwise (always > 0)."""
    x = as_array("x", x)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def rope_linear_attention(
    q: object,
    k: object,
    v: object,
    inv_freq: object,
    *,
    positions: object = None,
    causal: bool = True,
    method: str = "prefix",
) -> np.ndarray:
    r"""RoFormer's linear attention with RoPE (eq. 19), shape (L, d_v); ``method`` says how it is summed.

    ``q``, ``k`` are (L, d), ``v`` (L, d_v); ``positions`` default to 0 … L − 1. Features are rotated with
    interleaved pairs. ``causal=False`` sums over every key (the running total becomes one total).
    """
    q, k, v = as_array("q", q, ndim=2), as_array("k", k, ndim=2), as_array("v", v, ndim=2)
    if q.shape != k.shape or v.shape[0] != q.shape[0]:
        raise PosEncError(f"q, k must share a shape (L, d) and v have L rows, got {q.shape}, {k.shape}, {v.shape}")
    inv_freq = _check_inv_freq(inv_freq)
    positions = _check_positions(np.arange(q.shape[0], dtype=np.float64) if positions is None else positions)
    causal, method = as_bool("causal", causal), as_choice("method", method, LINEAR_METHODS)
    phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)  # (L, d), positive
    rq = apply_rope(phi_q, positions, inv_freq, pairing="interleaved")  # (L, d)
    rk = apply_rope(phi_k, positions, inv_freq, pairing="interleaved")
    if method == "pairwise":
        check_elements("rope_linear_attention(pairwise)", (q.shape[0], q.shape[0]))
        mask = np.tril(np.ones((q.shape[0], q.shape[0]), dtype=bool)) if causal else True
        numerator = np.where(mask, rq @ rk.T, 0.0) @ v  # (L, d_v)
        denominator = np.where(mask, phi_q @ phi_k.T, 0.0).sum(axis=1)  # (L,)
        return numerator / denominator[:, None]
    check_elements("rope_linear_attention(prefix)", (q.shape[0], q.shape[1], v.shape[1]))
    outer = rk[:, :, None] * v[:, None, :]  # (L, d, d_v): R_n φ(k_n) v_nᵀ
    totals = np.cumsum(outer, axis=0) if causal else np.broadcast_to(outer.sum(axis=0), outer.shape)  # S_m
    key_sums = np.cumsum(phi_k, axis=0) if causal else np.broadcast_to(phi_k.sum(axis=0), phi_k.shape)  # z_m
    numerator = np.einsum("ld,lde->le", rq, totals)  # (R_m φ(q_m))ᵀ S_m
    denominator = np.einsum("ld,ld->l", phi_q, key_sums)  # φ(q_m)ᵀ z_m
    return numerator / denominator[:, None]


def rope_linear_attention_residual(q: object, k: object, v: object, inv_freq: object) -> float:
    r""":math:`\max|A_{\text{prefix}} - A_{\text{pairwise}}| / \max|A_{\text{pairwise}}|` for causal
    :func:`rope_linear_attention`: 0 up to rounding, because the rotation factorises per token."""
    running = rope_linear_attention(q, k, v, inv_freq, method="prefix")  # O(N·d·d_v)
    pairwise = rope_linear_attention(q, k, v, inv_freq, method="pairwise")  # O(N²·d)
    peak = float(np.max(np.abs(pairwise)))
    gap = float(np.max(np.abs(running - pairwise)))
    return gap / peak if peak > 0.0 else gap  # all-zero values: an absolute gap (0 when the forms agree)
