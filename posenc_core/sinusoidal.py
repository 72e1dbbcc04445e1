r"""Fixed sinusoidal position encodings (Vaswani et al., 2017, "Attention Is All You Need", arXiv:1706.03762, §3.5).

.. math::
    PE_{(p,\,2i)} = \sin(p\,\omega_i), \qquad PE_{(p,\,2i+1)} = \cos(p\,\omega_i), \qquad
    \omega_i = \text{base}^{-2i/d} = \exp\!\left(-\tfrac{2i}{d}\ln \text{base}\right).

Each (sin, cos) pair is a point on the unit circle turning at its own speed, from one radian per token (i = 0) down to
about 1/base radian per token. Because the pair of a shifted position is the pair of the original rotated by a fixed
angle, :math:`PE_{p+k} = M_k\,PE_p` for a matrix :math:`M_k` that does not depend on p — the paper's reason for
choosing sinusoids ("for any fixed offset k, PE_{pos+k} can be represented as a linear function of PE_{pos}").

Conventions: ``layout="interleaved"`` is the paper's (and DistilBERT's, XLM's); ``layout="concat"`` puts all sines
before all cosines, as Marian, fairseq and tensor2tensor do (fairseq and tensor2tensor also use the exponent
denominator d/2 − 1 instead of d; this module uses d, as the paper does).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import _trig
from .errors import MAX_ELEMENTS, PosEncError, as_array, as_choice, as_float, as_float_dtype, as_int, check_elements

__all__ = [
    "PAIR_ORDERS",
    "SlowPairs",
    "linear_shift_residual",
    "pair_shift_gap",
    "pair_shift_matrix",
    "sinusoidal",
    "sinusoidal_inv_freq",
    "sinusoidal_shift_matrix",
    "sinusoidal_shift_residual",
    "sinusoidal_similarity",
    "sinusoidal_slow_pairs",
]

LAYOUTS = ("interleaved", "concat")
FORMS = ("exp", "power")
#: The two orders one (sin, cos) pair is written in: PE rows interleave (sin, cos); many articles use (cos, sin).
PAIR_ORDERS = ("sin_cos", "cos_sin")
_MAX_DIM = 65536


def sinusoidal_inv_freq(dim: int, *, base: float = 10000.0, form: str = "exp") -> np.ndarray:
    r"""The pair frequencies :math:`\omega_i = \text{base}^{-2i/d}`, i = 0 … d/2 − 1, shape (d/2,).

    ``form="exp"`` evaluates :math:`\exp(-\tfrac{2i}{d}\ln\text{base})` (the PyTorch tutorial's ``div_term``),
    ``form="power"`` evaluates the paper's :math:`\text{base}^{-2i/d}`; they are the same numbers up to rounding.
    """
    dim = as_int("dim", dim, lo=2, hi=_MAX_DIM, even=True)
    base = as_float("base", base, gt=1.0, le=1e30)
    form = as_choice("form", form, FORMS)
    two_i = np.arange(0, dim, 2, dtype=np.float64)
    if form == "power":
        return np.power(base, -two_i / dim)
    return np.exp(-(two_i / dim) * math.log(base))


def sinusoidal_shift_residual(table: object, shift: object, offset: int) -> float:
    r""":math:`\max_p \lVert PE_{p+k} - M_k\,PE_p \rVert_\infty` over every p of an interleaved ``table`` (L, d).

    The live check of the paper's linear-shift claim on the numbers a page has drawn: ``table`` from
    :func:`sinusoidal`, ``shift`` from :func:`sinusoidal_shift_matrix` for ``offset`` = k. The 2 × 2 diagonal
    blocks of M_k rotate each (sin, cos) pair; every entry outside them counts toward the residual (it must be 0).
    The same numbers as ``table[:-k] @ shift.T``, in O(L·d) instead of O(L·d²). 0 when k ≥ L (no pair of rows).
    Rounding only: ~1e-13 at L = 512.
    """
    table = as_array("table", table, ndim=2).astype(np.float64, copy=False)
    shift = as_array("shift", shift, ndim=2).astype(np.float64, copy=False)
    offset = as_int("offset", offset, lo=0, hi=MAX_ELEMENTS)
    length, dim = table.shape
    if dim % 2 or shift.shape != (dim, dim):
        raise PosEncError(f"table must be (L, d) with d even and shift (d, d); got {table.shape} and {shift.shape}")
    if offset >= length:
        return 0.0
    pairs = dim // 2
    blocks = shift.reshape(pairs, 2, pairs, 2)[np.arange(pairs), :, np.arange(pairs), :]  # (d/2, 2, 2): diagonal
    # Entries outside the blocks must be 0; each moves a row by at most its row's sum of |entry| (|PE| ≤ 1). The mask
    # keeps that sum exact for a true M_k: a total minus the blocks' total would leave ~d·1e-16 of cancellation.
    outside = np.abs(shift)
    outside[np.arange(dim)[:, None] // 2 == np.arange(dim)[None, :] // 2] = 0.0
    worst = float(outside.sum(axis=1).max())
    # Row by row, pair i of M_k PE_p is (a·sin + b·cos, c·sin + d·cos) for the block ((a, b), (c, d)). Over a whole
    # interleaved row that is same·PE_p + cross·swap(PE_p): same = (a₀, d₀, a₁, d₁, …) multiplies each entry in
    # place, cross = (b₀, c₀, b₁, c₁, …) multiplies the pair swapped, (cos, sin). The swap is exact: read as complex
    # numbers s + i·c, it is i·conj(s + i·c) = c + i·s (products with 0 and 1 only). So every entry is the same two
    # products and one sum as the strided (sin, cos) columns gave (a sum does not depend on its order), in contiguous
    # passes: 46 → 22 ms at L = 4096, d = 1024 (issue 46).
    same = np.stack([blocks[:, 0, 0], blocks[:, 1, 1]], axis=1).ravel()
    cross = np.stack([blocks[:, 0, 1], blocks[:, 1, 0]], axis=1).ravel()
    table = np.ascontiguousarray(table)
    rows = max(1, _trig.BLOCK_ELEMENTS // dim)  # a block of rows and its two buffers stay in cache
    moved = np.empty((min(rows, length - offset), dim))
    swapped = np.empty((moved.shape[0], pairs), dtype=np.complex128)
    for start in range(0, length - offset, rows):
        stop = min(start + rows, length - offset)
        block, turned = moved[: stop - start], swapped[: stop - start]
        np.conjugate(table[start:stop].view(np.complex128), out=turned)
        turned *= 1j
        turned_reals = turned.view(np.float64)
        np.multiply(cross, turned_reals, out=turned_reals)
        np.multiply(same, table[start:stop], out=block)
        block += turned_reals
        np.subtract(table[start + offset : stop + offset], block, out=block)  # 0 up to rounding, for a true M_k
        worst = max(worst, float(block.max()), -float(block.min()))  # max |·| without an |·| pass
    return worst


def sinusoidal(
    length: int,
    dim: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype: type = np.float64,
) -> np.ndarray:
    r"""The (L, d) table :math:`PE_{p}` for p = 0 … L − 1 (interleaved: column 2i = sin, 2i + 1 = cos).

    Paper: Vaswani et al. 2017, arXiv:1706.03762, §3.5. ``dtype`` may be float32 to halve what a page sends.
    """
    length = as_int("length", length, lo=1, hi=MAX_ELEMENTS)
    dim = as_int("dim", dim, lo=2, hi=_MAX_DIM, even=True)
    layout = as_choice("layout", layout, LAYOUTS)
    dtype = as_float_dtype("dtype", dtype)
    check_elements("sinusoidal(length, dim)", (length, dim))
    omega = sinusoidal_inv_freq(dim, base=base)
    half = dim // 2
    out = np.empty((length, dim), dtype=dtype)
    # Row blocks of cos + i sin, each written out while it is in cache: the whole (L, d/2) complex table first cost
    # 2.5× as much at L = 4096, d = 1024 (34 ms against 14 ms, the same numbers bit for bit).
    rows = max(1, _trig.CHUNK_ELEMENTS // half)
    for start, stop, table in _trig.phasor_blocks(np.arange(length, dtype=np.float64), omega, block_rows=rows):
        if layout == "interleaved":
            out[start:stop, 0::2], out[start:stop, 1::2] = table.imag, table.real
        else:
            out[start:stop, :half], out[start:stop, half:] = table.imag, table.real
    return out


def sinusoidal_shift_matrix(offset: float, dim: int, *, base: float = 10000.0) -> np.ndarray:
    r"""The (d, d) matrix :math:`M_k` with :math:`PE_{p+k} = M_k\,PE_p` for every p (interleaved layout).

    Block i acts on (sin pω_i, cos pω_i):

    .. math::
        M_k^{(i)} = \begin{pmatrix} \cos k\omega_i & \sin k\omega_i \\ -\sin k\omega_i & \cos k\omega_i \end{pmatrix},

    from :math:`\sin(a+b) = \sin a\cos b + \cos a\sin b` and :math:`\cos(a+b) = \cos a\cos b - \sin a\sin b`.
    It is a rotation by :math:`-k\omega_i` of the (sin, cos) point, independent of p.
    """
    offset = as_float("offset", offset)
    omega = sinusoidal_inv_freq(dim, base=base)
    dim = omega.shape[0] * 2
    check_elements("sinusoidal_shift_matrix", (dim, dim))
    c, s = np.cos(offset * omega), np.sin(offset * omega)
    m = np.zeros((dim, dim))
    rows = np.arange(0, dim, 2)
    m[rows, rows] = c
    m[rows, rows + 1] = s
    m[rows + 1, rows] = -s
    m[rows + 1, rows + 1] = c
    return m


def sinusoidal_similarity(offsets: object, dim: int, *, base: float = 10000.0) -> np.ndarray:
    r""":math:`PE_p \cdot PE_{p+k} = \sum_i \cos(k\,\omega_i)` for each offset k — the same for every p.

    Each (sin, cos) pair contributes :math:`\sin a\sin b + \cos a\cos b = \cos(a - b)`; computed in chunks, so
    10^6 offsets stay within a few tens of MB. Paper: Vaswani et al. 2017, arXiv:1706.03762, §3.5.
    """
    offsets = _trig.check_distances(offsets, "offsets")
    omega = sinusoidal_inv_freq(dim, base=base)
    return _trig.reduce_in_chunks(offsets, omega, lambda e: e.real.sum(axis=1))


class SlowPairs(NamedTuple):
    r"""The pairs whose angle stays under ``max_angle`` over the whole sequence, and how flat their columns are."""

    first: int  # the first slow pair (every later pair is slower); d/2 when there is none
    count: int  # how many pairs are slow
    sin_max: float  # max |PE[p, 2i]| over those columns: ≤ sin(max_angle)
    cos_gap: float  # max |1 − PE[p, 2i+1]| over those columns: ≤ 1 − cos(max_angle)


def sinusoidal_slow_pairs(length: int, dim: int, *, base: float = 10000.0, max_angle: float = 0.1) -> SlowPairs:
    r"""The pairs i with :math:`(L-1)\,\omega_i \le` ``max_angle``: their sin column stays near 0 and their cos column
    near 1 at every position, the flat stripes on the right of the table.

    Measured on the table itself (:func:`sinusoidal`, interleaved), so :attr:`SlowPairs.sin_max` and
    :attr:`SlowPairs.cos_gap` are what the heatmap shows. Paper: Vaswani et al. 2017, §3.5.
    """
    length = as_int("length", length, lo=1, hi=MAX_ELEMENTS)
    max_angle = as_float("max_angle", max_angle, gt=0.0, le=math.pi / 2)
    inv_freq = sinusoidal_inv_freq(dim, base=base)  # validates dim and base
    first = int(np.searchsorted(-(length - 1) * inv_freq, -max_angle))  # ω_i falls with i: the first slow pair
    if first == inv_freq.shape[0]:
        return SlowPairs(first, 0, 0.0, 0.0)
    table = sinusoidal(length, dim, base=base)[:, 2 * first :]  # (L, 2·count): the slow pairs' columns
    return SlowPairs(
        first,
        inv_freq.shape[0] - first,
        float(np.max(np.abs(table[:, 0::2]))),
        float(np.max(np.abs(1.0 - table[:, 1::2]))),
    )


def pair_shift_matrix(offset: float, theta: float, *, order: str = "sin_cos") -> np.ndarray:
    r"""The 2 × 2 matrix taking one pair at position p to position p + offset, angle :math:`k\theta`.

    ``order="sin_cos"``, the pair :math:`(\sin p\theta, \cos p\theta)`:
    :math:`\begin{pmatrix}\cos k\theta & \sin k\theta\\ -\sin k\theta & \cos k\theta\end{pmatrix}`;
    ``order="cos_sin"``, the pair :math:`(\cos p\theta, \sin p\theta)`: its transpose, the usual rotation.
    Both follow from :math:`\sin(a+b) = \sin a\cos b + \cos a\sin b` and
    :math:`\cos(a+b) = \cos a\cos b - \sin a\sin b`.
    """
    offset, theta = as_float("offset", offset), as_float("theta", theta)
    order = as_choice("order", order, PAIR_ORDERS)
    angle = as_float("offset · theta", offset * theta)  # finite: math.cos(inf) raises
    c, s = math.cos(angle), math.sin(angle)
    matrix = np.array([[c, s], [-s, c]])
    return matrix if order == "sin_cos" else matrix.T


def pair_shift_gap(matrix: object, position: float, offset: float, theta: float, *, order: str = "sin_cos") -> float:
    r""":math:`\lVert A\,x_p - x_{p+k}\rVert` for the pair :math:`x_p` written in ``order``: 0 when ``matrix`` A is the
    shift, of order 1 when it is not (a missing θ, a sign flipped for the other order)."""
    matrix = as_array("matrix", matrix, ndim=2)
    if matrix.shape != (2, 2):
        raise PosEncError(f"matrix must be 2 × 2, got shape {matrix.shape}")
    position, offset, theta = as_float("position", position), as_float("offset", offset), as_float("theta", theta)
    order = as_choice("order", order, PAIR_ORDERS)

    def pair(p: float) -> np.ndarray:
        angle = as_float("position · theta", p * theta)  # finite: math.sin(inf) raises
        sin, cos = math.sin(angle), math.cos(angle)
        return np.array([sin, cos] if order == "sin_cos" else [cos, sin])

    return float(np.linalg.norm(matrix @ pair(position) - pair(position + offset)))


def linear_shift_residual(table: object, offset: int) -> float:
    r"""How far the best single matrix M comes from taking every row p of ``table`` to row p + offset:
    :math:`\max |T_{p+k} - M^\top T_p|` with M fitted by least squares over all p.

    0 up to rounding for a full sinusoidal table (M is the rotation :math:`M_k`), but not for its sin columns alone:
    :math:`\sin((p+k)\omega) = \sin p\omega\cos k\omega + \cos p\omega\sin k\omega` needs the cosine, which a
    sin-only code does not hold. Why the encoding has both (Vaswani et al. 2017, §3.5; Kazemnejad 2019, FAQ).
    """
    table = as_array("table", table, ndim=2)
    offset = as_int("offset", offset, lo=1, hi=max(1, table.shape[0] - 1))
    if table.shape[0] - offset < table.shape[1]:
        raise PosEncError(
            f"table needs at least d + offset = {table.shape[1] + offset} rows to pin M down, got {table.shape[0]}"
        )
    before, after = table[:-offset], table[offset:]
    m, *_ = np.linalg.lstsq(before, after, rcond=None)  # (d, d)
    return float(np.max(np.abs(before @ m - after)))
