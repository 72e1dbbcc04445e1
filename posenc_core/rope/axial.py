r"""2-D RoPE on an image's patch grid, axial form: half of the pairs turn with the row, half with the column.

A patch at (row r, column c) rotates pair i of the first half of each vector by :math:`r\,\theta_i` and pair i of
the second half by :math:`c\,\theta_i`. The score of two patches is then the sum of two 1-D RoPE scores, one per
axis, each a function of its own offset, so it depends only on :math:`(\Delta r, \Delta c)`
(:func:`rope_2d_relative_residual` measures it). Each axis uses the frequencies of a d/2-dimensional 1-D RoPE head.

Paper: Heo et al. 2024, "Rotary Position Embedding for Vision Transformer", arXiv:2403.13298, §3.2 (RoPE-Axial; they
also learn mixed frequencies, RoPE-Mixed). The same axial split extended to (time, row, column) is Qwen2-VL's
M-RoPE (Wang et al. 2024, arXiv:2409.12191).
"""

from __future__ import annotations

import numpy as np

from ..errors import PosEncError, as_array, as_int, check_elements
from .rotation import _check_inv_freq, apply_rope

__all__ = ["apply_rope_2d", "patch_grid", "rope_2d_relative_residual", "rope_2d_scores"]


def patch_grid(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Row and column of every patch of a rows × cols grid in raster order: two (rows·cols,) float arrays."""
    rows = as_int("rows", rows, lo=1, hi=4096)
    cols = as_int("cols", cols, lo=1, hi=4096)
    check_elements("patch_grid(rows, cols)", (rows, cols))
    r, c = np.divmod(np.arange(rows * cols), cols)
    return r.astype(np.float64), c.astype(np.float64)


def apply_rope_2d(x: object, rows: object, cols: object, inv_freq: object) -> np.ndarray:
    r"""x (…, P, d) with the first d/2 dimensions rotated by row and the last d/2 by column (interleaved pairs).

    ``rows`` and ``cols`` are the (P,) grid coordinates of the patches; ``inv_freq`` has d/4 entries.
    """
    x = as_array("x", x, min_ndim=2)
    inv_freq = _check_inv_freq(inv_freq)
    half = 2 * inv_freq.shape[0]
    if x.shape[-1] != 2 * half:
        raise PosEncError(f"x must have d = {2 * half} dims (4 per frequency: a pair per axis), got {x.shape[-1]}")
    row_half = apply_rope(x[..., :half], rows, inv_freq, pairing="interleaved")
    col_half = apply_rope(x[..., half:], cols, inv_freq, pairing="interleaved")
    return np.concatenate([row_half, col_half], axis=-1)


def rope_2d_scores(q: object, k: object, rows: object, cols: object, inv_freq: object) -> np.ndarray:
    r"""Raw logits :math:`(R_{r_a, c_a} q_a)^\top (R_{r_b, c_b} k_b)` for every pair of patches, shape (…, P, P)."""
    q_rot = apply_rope_2d(q, rows, cols, inv_freq)
    k_rot = apply_rope_2d(k, rows, cols, inv_freq)
    check_elements("rope_2d_scores", (*q_rot.shape[:-1], q_rot.shape[-2]))
    return q_rot @ np.swapaxes(k_rot, -1, -2)


def rope_2d_relative_residual(q: object, k: object, rows: int, cols: int, inv_freq: object) -> float:
    r"""How far the score of one fixed q and k placed at every two patches is from a function of (Δr, Δc) alone.

    Every patch gets the same q and k; patches a, b with the same offset (r_b − r_a, c_b − c_a) must then score the
    same. Returns the largest spread within any offset class: 0 up to rounding.
    """
    q, k = as_array("q", q, ndim=1), as_array("k", k, ndim=1)
    r, c = patch_grid(rows, cols)
    n = r.shape[0]
    scores = rope_2d_scores(np.broadcast_to(q, (n, q.shape[0])), np.broadcast_to(k, (n, k.shape[0])), r, c, inv_freq)
    dr = (r[None, :] - r[:, None]).astype(np.int64) + (rows - 1)  # (P, P) in 0 … 2·rows − 2
    dc = (c[None, :] - c[:, None]).astype(np.int64) + (cols - 1)
    offset = (dr * (2 * cols - 1) + dc).ravel()  # one id per (Δr, Δc)
    flat = scores.ravel()
    high = np.full(offset.max() + 1, -np.inf)
    low = np.full(offset.max() + 1, np.inf)
    np.maximum.at(high, offset, flat)
    np.minimum.at(low, offset, flat)
    return float(np.max(high - low))
