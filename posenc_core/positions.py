r"""The first attempts at encoding position, each with the flaw that motivates the next.

mmmwhy's 「Transformer 中的 position embedding 的设计」 (2024-02-06, https://iii.run/archives/2b8191dac105.html)
walks through them before sinusoids: the integer index p (unbounded, grows with the sequence), the index normalised
to [0, 1] (the step between neighbours depends on the length), and the binary code of p (bounded and
length-independent, but discrete: neighbouring positions can differ in many bits at once).
:func:`neighbour_distances` measures that last flaw on any table: the step from each position to the next.
"""

from __future__ import annotations

import numpy as np

from .errors import MAX_ELEMENTS, PosEncError, as_array, as_bool, as_int, check_elements

__all__ = ["binary_positions", "integer_positions", "neighbour_distances", "normalized_positions"]


def integer_positions(length: int) -> np.ndarray:
    r"""Positions :math:`0, 1, \dots, L-1` as float64, shape (L,). The value grows without bound with L."""
    length = as_int("length", length, lo=1, hi=MAX_ELEMENTS)
    return np.arange(length, dtype=np.float64)


def normalized_positions(length: int) -> np.ndarray:
    r"""Positions :math:`p/(L-1)` in [0, 1], shape (L,); a single token sits at 0.

    The step between neighbours is 1/(L − 1): 0.5 for three tokens, 1/3 for four — the same offset means a
    different number in sequences of different length, which is the flaw.
    """
    length = as_int("length", length, lo=1, hi=MAX_ELEMENTS)
    if length == 1:
        return np.zeros(1)
    return np.arange(length, dtype=np.float64) / (length - 1)


def binary_positions(length: int, dim: int, *, wrap: bool = False) -> np.ndarray:
    r"""Bit k of position p in column k (least-significant bit first), shape (L, dim), values 0.0 / 1.0.

    ``dim`` bits hold positions 0 … 2^dim − 1. Longer sequences are an error, unless ``wrap=True``, which takes
    p mod 2^dim so that the collisions of an overflowing odometer can be shown.
    """
    length = as_int("length", length, lo=1, hi=MAX_ELEMENTS)
    dim = as_int("dim", dim, lo=1, hi=62)
    wrap = as_bool("wrap", wrap)
    check_elements("binary_positions(length, dim)", (length, dim))
    if length > 2**dim and not wrap:
        raise PosEncError(
            f"length = {length} needs positions up to {length - 1}, but dim = {dim} bits hold only 0 … {2**dim - 1}; "
            "use more bits, or wrap=True to see the collisions",
            code="too_few_bits",
            length=length,
            dim=dim,
            largest=2**dim - 1,
        )
    p = np.arange(length, dtype=np.int64)
    bits = (p[:, None] >> np.arange(dim, dtype=np.int64)) & 1  # (L, dim)
    return bits.astype(np.float64)


def neighbour_distances(table: object) -> np.ndarray:
    r""":math:`\lVert PE_{p+1} - PE_p \rVert_2` for p = 0 … L − 2, shape (L − 1,).

    Constant for sinusoids (one fixed rotation per step), jumping for binary codes (7 → 8 flips four bits).
    """
    table = as_array("table", table, ndim=2).astype(np.float64, copy=False)
    if table.shape[0] < 2:
        raise PosEncError(f"table must have at least 2 rows (positions), got shape {table.shape}")
    with np.errstate(over="ignore"):
        steps = np.diff(table, axis=0)  # (L − 1, d)
    if not np.all(np.isfinite(steps)):
        raise PosEncError("table values are too large: differences between rows overflow float64")
    scale = np.max(np.abs(steps), axis=1, keepdims=True)  # norms of rescaled rows cannot overflow
    scale[scale == 0] = 1.0
    return scale[:, 0] * np.linalg.norm(steps / scale, axis=1)
