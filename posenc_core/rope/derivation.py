r"""RoPE derived, one step at a time, each step measured on numbers.

The requirement (RoFormer §3.1): find a position map f with :math:`\langle f(q, m), f(k, n)\rangle = g(q, k, n - m)`,
so that a query–key score sees only how far apart the two tokens are.

1. **Two dimensions, as complex numbers.** Write a pair as :math:`z = x_0 + i\,x_1`. Then
   :math:`f(z, m) = z\,e^{im\theta}` works: :math:`\operatorname{Re}[f(q, m)\,\overline{f(k, n)}] =
   \operatorname{Re}[q\,\bar k\,e^{i(m-n)\theta}]` depends on m and n only through m − n
   (:func:`complex_form_residual` measures it against the real rotation).
2. **As a real matrix.** Multiplying by :math:`e^{im\theta}` is the 2×2 rotation
   :math:`\begin{pmatrix}\cos m\theta & -\sin m\theta\\ \sin m\theta & \cos m\theta\end{pmatrix}`.
3. **d dimensions.** Split the vector into d/2 pairs, give pair i its own frequency :math:`\theta_i`, and stack the
   rotations block-diagonally: :math:`R_m`. Each block is a rotation, so :math:`R_m` is orthogonal
   (:math:`R_m^\top R_m = I`), has determinant 1, keeps every vector's length, and composes:
   :math:`R_m^\top R_n = R_{n-m}`, hence :math:`(R_m q)^\top (R_n k) = q^\top R_{n-m} k`
   (:func:`rotation_checks` measures all four).

Paper: Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding", arXiv:2104.09864, §3.2,
eqs. (11)–(16); the step-by-step presentation follows Biderman et al. 2021, "Rotary Embeddings: A Relative
Revolution" (EleutherAI blog).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import PosEncError, as_array, as_float
from .rotation import _check_inv_freq, rope_rotation_matrix

__all__ = ["RotationChecks", "complex_form_residual", "rotation_checks", "row_vector_gaps"]


class RotationChecks(NamedTuple):
    r"""What makes :math:`R_m` a rotation, each as a residual that is 0 up to rounding."""

    orthogonality: float  # max |R_mᵀ R_m − I|
    determinant: float  # |det R_m − 1|
    norm_change: float  # | ‖R_m x‖ − ‖x‖ |
    composition: float  # max |R_mᵀ R_n − R_{n−m}|


def rotation_checks(x: object, m: float, n: float, inv_freq: object) -> RotationChecks:
    r"""The four properties of :math:`R_m` (and :math:`R_n`) that RoPE's relative scores rest on, measured.

    ``x`` is a (d,) vector for the norm check and ``inv_freq`` the d/2 frequencies. The products of matrices are
    taken block by block (:func:`_blocks`), which is exact for block-diagonal matrices and O(d) instead of O(d³); the
    determinant is the product of the 2×2 blocks' (each :math:`\cos^2 + \sin^2`), so it stays exact for any d.
    """
    inv_freq = _check_inv_freq(inv_freq)
    x = as_array("x", x, ndim=1)
    if x.shape[0] != 2 * inv_freq.shape[0]:
        raise PosEncError(f"x must have d = {2 * inv_freq.shape[0]} entries (two per frequency), got {x.shape[0]}")
    m, n = as_float("m", m), as_float("n", n)
    r_m = rope_rotation_matrix(m, inv_freq)
    norm_change = float(abs(np.linalg.norm(r_m @ x) - np.linalg.norm(x)))  # before _blocks takes r_m apart
    (b_m, b_n, b_gap), outside = _blocks(r_m, rope_rotation_matrix(n, inv_freq), rope_rotation_matrix(n - m, inv_freq))
    t_m = np.swapaxes(b_m, 1, 2)  # (d/2, 2, 2): the blocks of R_mᵀ
    blocks = b_m[:, 0, 0] * b_m[:, 1, 1] - b_m[:, 0, 1] * b_m[:, 1, 0]  # det of each 2×2 block: cos·cos − (−sin)·sin
    return RotationChecks(
        orthogonality=max(float(np.max(np.abs(t_m @ b_m - np.eye(2)))), outside),
        determinant=float(abs(np.prod(blocks) - 1.0)),  # det of a block-diagonal matrix = product of the blocks'
        norm_change=norm_change,
        composition=max(float(np.max(np.abs(t_m @ b_n - b_gap))), outside),
    )


def complex_form_residual(q: object, k: object, m: float, n: float, inv_freq: object) -> float:
    r""":math:`|(R_m q)^\top (R_n k) - \operatorname{Re}\sum_i q^{(i)}\,\overline{k^{(i)}}\,e^{i(m-n)\theta_i}|`, with
    pair i of a vector read as the complex number :math:`x_{2i} + i\,x_{2i+1}`: 0 up to rounding.

    The left side is the real rotation (interleaved pairs); the right side is step 1 of the derivation, which
    needs only m − n.
    """
    inv_freq = _check_inv_freq(inv_freq)
    q, k = as_array("q", q, ndim=1), as_array("k", k, ndim=1)
    if q.shape != k.shape or q.shape[0] != 2 * inv_freq.shape[0]:
        raise PosEncError(f"q and k must both have d = {2 * inv_freq.shape[0]} entries, got {q.shape} and {k.shape}")
    m, n = as_float("m", m), as_float("n", n)
    real = (rope_rotation_matrix(m, inv_freq) @ q) @ (rope_rotation_matrix(n, inv_freq) @ k)
    zq, zk = q[0::2] + 1j * q[1::2], k[0::2] + 1j * k[1::2]  # (d/2,) complex
    # Re Σ_i q_i · conj(k_i) · e^{i(m − n)θ_i}
    complex_form = float(np.real(np.sum(zq * np.conj(zk) * np.exp(1j * (m - n) * inv_freq))))
    return float(abs(real - complex_form))


def row_vector_gaps(m: float, n: float, inv_freq: object) -> tuple[float, float]:
    r"""With row vectors, :math:`(q R_m)(k R_n)^\top = q\,R_m R_n^\top k^\top`: the largest gaps of
    :math:`R_m R_n^\top` to :math:`R_{m-n}` (0 up to rounding) and to :math:`R_{n-m}` (:math:`2|\sin((m-n)\theta_i)|`
    at most, not 0).

    :math:`R_m` is the column-vector rotation of :func:`~posenc_core.rope_rotation_matrix`; multiplying a row vector
    on the right by it turns the other way, which is how :math:`R_{m-n}` appears where column vectors give
    :math:`R_{n-m}`.
    """
    inv_freq = _check_inv_freq(inv_freq)
    m, n = as_float("m", m), as_float("n", n)
    matrices = (rope_rotation_matrix(p, inv_freq) for p in (m, n, m - n, n - m))
    (b_m, b_n, b_m_minus_n, b_n_minus_m), outside = _blocks(*matrices)
    product = b_m @ np.swapaxes(b_n, 1, 2)  # the blocks of R_m R_nᵀ
    to_m_minus_n = max(float(np.max(np.abs(product - b_m_minus_n))), outside)
    to_n_minus_m = max(float(np.max(np.abs(product - b_n_minus_m))), outside)
    return to_m_minus_n, to_n_minus_m


def _blocks(*matrices: np.ndarray) -> tuple[list[np.ndarray], float]:
    r"""The d/2 diagonal 2×2 blocks of each (d, d) matrix, (d/2, 2, 2) each, and the largest \|entry\| outside them.

    For block-diagonal matrices every product, and every difference, is block-diagonal too, each block formed from
    the matching blocks alone: the off-diagonal blocks of :math:`A^\top B` add products that each hold an exact 0,
    so they are exactly 0. An entry outside the blocks (none in :func:`~posenc_core.rope_rotation_matrix`) is
    returned so that the callers count it in their residuals instead of ignoring it.

    The matrices must be the caller's own: their blocks are zeroed in place to measure what lies outside, since a
    fresh (d, d) copy costs more in page faults than the whole measurement (1.4 ms at d = 512).
    """
    half = matrices[0].shape[0] // 2
    blocks, outside = [], 0.0
    for matrix in matrices:
        diagonal = np.einsum("iaib->iab", matrix.reshape(half, 2, half, 2))  # a view; block i: rows, columns 2i, 2i+1
        blocks.append(diagonal.copy())
        diagonal[...] = 0.0
        outside = max(outside, float(matrix.max()), float(-matrix.min()))
    return blocks, outside
