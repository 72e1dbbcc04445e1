r"""The rotation itself: frequencies, angles, rotated vectors and the scores between them, in either pairing.

See :mod:`posenc_core.rope` for the maths; Su et al. 2021, "RoFormer", arXiv:2104.09864, §3.2–3.4.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np

from .. import _trig
from ..errors import (
    MAX_ELEMENTS,
    PosEncError,
    as_array,
    as_choice,
    as_float,
    as_int,
    check_elements,
    check_finite_scores,
)

__all__ = [
    "PAIRINGS",
    "apply_rope",
    "pair_index",
    "pair_wavelengths",
    "pairing_permutation",
    "rope_angles",
    "rope_inv_freq",
    "rope_offset_scores",
    "rope_rotation_matrix",
    "rope_scores",
    "rope_scores_mixed_pairing",
    "rope_wavelengths",
]

PAIRINGS = ("half", "interleaved")
MAX_ROTARY_DIM = 65536
#: No real model turns faster than 1 radian per token; the cap keeps position · inv_freq finite for |position| ≤ 2^53.
MAX_INV_FREQ = 1e6
#: ... and none slower than 1e-30 (a wavelength of 6e30 tokens); the cap keeps 2π / inv_freq finite.
MIN_INV_FREQ = 1e-30
#: The largest base accepted: with it the slowest pair still turns faster than MIN_INV_FREQ.
MAX_BASE = 1e30


def rope_inv_freq(dim: int, *, base: float = 10000.0) -> np.ndarray:
    r"""The rotation speeds :math:`\theta_i = 1/\text{base}^{2i/d}` in radians per token, i = 0 … d/2 − 1.

    Paper: Su et al. 2021, arXiv:2104.09864, eq. (15). Written as the reference implementations write it
    (``1.0 / base ** (arange(0, dim, 2) / dim)``) so the float64 values agree with theirs bit for bit.
    """
    dim = as_int("dim", dim, lo=2, hi=MAX_ROTARY_DIM, even=True)
    base = as_float("base", base, gt=1.0, le=MAX_BASE)
    return 1.0 / base ** (np.arange(0, dim, 2, dtype=np.float64) / dim)  # (d/2,)


def rope_wavelengths(inv_freq: object) -> np.ndarray:
    r"""Tokens per full turn of each pair, :math:`\lambda_i = 2\pi/\theta_i`."""
    inv_freq = _check_inv_freq(inv_freq)
    return 2.0 * math.pi / inv_freq


def pair_wavelengths(inv_freq: object, *, pairs: int | None = None) -> np.ndarray:
    r"""Each pair's wavelength :math:`\lambda_i = 2\pi/\theta_i` in its place in the head, NaN where it does not turn.

    Proportional RoPE (p-RoPE, Gemma 4's global layers) keeps a head's pairs and sets the slow ones to
    :math:`\theta_i = 0`: their wavelength is infinite, so this returns NaN there (a chart leaves a gap) instead of
    dropping them, which would spread the turning pairs over the whole head. ``pairs`` pads the result with NaN to
    that many pairs (a wider head drawn on the same axis); the default is ``len(inv_freq)``.
    Paper: Su et al. 2021, arXiv:2104.09864, eq. (15) for θ_i; p-RoPE as transformers' ``proportional`` rope_type.
    """
    inv_freq = as_array("inv_freq", inv_freq, ndim=1).astype(np.float64)
    if np.any(inv_freq < 0):
        raise PosEncError("inv_freq must be ≥ 0 radians per token (0 is a pair that does not turn)")
    pairs = inv_freq.shape[0] if pairs is None else as_int("pairs", pairs, lo=inv_freq.shape[0], hi=MAX_ROTARY_DIM // 2)
    out = np.full(pairs, np.nan)  # (pairs,)
    turning = inv_freq > 0
    if np.any(turning):
        out[: inv_freq.shape[0]][turning] = rope_wavelengths(inv_freq[turning])
    return out


def rope_angles(positions: object, inv_freq: object) -> np.ndarray:
    r"""The (L, d/2) table of angles :math:`m\,\theta_i` (radians), one row per position."""
    positions = _check_positions(positions)
    inv_freq = _check_inv_freq(inv_freq)
    check_elements("rope_angles(positions, inv_freq)", (positions.shape[0], inv_freq.shape[0]))
    return np.multiply.outer(positions, inv_freq)  # (L, d/2)


def rope_rotation_matrix(position: float, inv_freq: object) -> np.ndarray:
    r"""The (d, d) block-diagonal :math:`R_m` of eq. (13) in the paper: 2×2 rotations on interleaved pairs."""
    position = as_float("position", position)
    if abs(position) > 2.0**53:
        raise PosEncError(f"position must have magnitude ≤ 2^53 (exact in float64), got {position:g}")
    inv_freq = _check_inv_freq(inv_freq)
    dim = 2 * inv_freq.shape[0]
    check_elements("rope_rotation_matrix", (dim, dim))
    c, s = np.cos(position * inv_freq), np.sin(position * inv_freq)
    r = np.zeros((dim, dim))
    even = np.arange(0, dim, 2)
    r[even, even], r[even, even + 1] = c, -s
    r[even + 1, even], r[even + 1, even + 1] = s, c
    return r


def apply_rope(
    x: object,
    positions: object,
    inv_freq: object,
    *,
    pairing: str = "half",
    attention_factor: float = 1.0,
) -> np.ndarray:
    r"""x with pair i of the row at position m rotated by :math:`m\,\theta_i`, same shape as x (…, L, d).

    ``inv_freq`` has n ≤ d/2 entries; only the first 2n dimensions rotate and the rest pass through unchanged
    (partial rotary, as in GPT-NeoX). ``attention_factor`` multiplies cos and sin — YaRN's and LongRoPE's
    "mscale" — so a q·k logit scales by its square. Float32 input stays float32 (angles are still float64).
    """
    x = as_array("x", x, min_ndim=2)
    positions = _check_positions(positions)
    inv_freq = _check_inv_freq(inv_freq)
    pairing = as_choice("pairing", pairing, PAIRINGS)
    attention_factor = as_float("attention_factor", attention_factor, gt=0.0)
    return _rotate(x, positions, inv_freq, attention_factor, pairing)


def rope_scores(
    q: object,
    k: object,
    inv_freq: object,
    *,
    query_positions: object = None,
    key_positions: object = None,
    pairing: str = "half",
    key_pairing: str | None = None,
    attention_factor: float = 1.0,
    scale: float | None = None,
) -> np.ndarray:
    r"""Logits :math:`s\,(R_m q)^\top (R_n k)` for every query m and key n, shape (…, Lq, Lk).

    Positions default to keys 0 … Lk − 1 and queries at the last Lq of them. When both sets of positions are the
    same, the cos/sin table is computed once and shared. ``scale`` defaults to :math:`1/\sqrt{d}`; pass 1.0 for
    the raw dot products the RoFormer paper analyses. ``key_pairing`` (default: ``pairing``) rotates the keys by
    another convention — the silent bug of loading weights trained with one pairing into code using the other.
    """
    # Finiteness is read off the rotated rows while they are in cache (_scores_bounded), not in two more passes here.
    q = as_array("q", q, min_ndim=2, finite=False)
    k = as_array("k", k, min_ndim=2, finite=False)
    if q.shape[-1] != k.shape[-1]:
        raise PosEncError(f"q and k must share their last dimension, got {q.shape} and {k.shape}")
    lq, lk = q.shape[-2], k.shape[-2]
    if key_positions is None:
        key_positions = np.arange(lk, dtype=np.float64)
    if query_positions is None:
        query_positions = np.arange(lk - lq, lk, dtype=np.float64)
    query_positions = _check_positions(query_positions, name="query_positions")
    key_positions = _check_positions(key_positions, name="key_positions")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else as_float("scale", scale)
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    except ValueError as exc:
        raise PosEncError(f"the leading dimensions of q {q.shape} and k {k.shape} do not broadcast") from exc
    check_elements("rope_scores", (*lead, lq, lk))
    inv_freq = _check_inv_freq(inv_freq)
    pairing = as_choice("pairing", pairing, PAIRINGS)
    key_pairing = pairing if key_pairing is None else as_choice("key_pairing", key_pairing, PAIRINGS)
    attention_factor = as_float("attention_factor", attention_factor, gt=0.0)
    with np.errstate(over="ignore", invalid="ignore"):  # checked below, with a message instead of a warning
        if np.array_equal(query_positions, key_positions):  # one cos/sin table for both (the usual self-attention)
            # With one pairing, q and k may be rotated in any order of their columns that they share: a score is a
            # sum over the columns. Pair by pair, in memory, is the order that needs no copy back (_rotate_many).
            (q_rot, k_rot), (q_sq, k_sq) = _rotate_many(
                (q, k),
                query_positions,
                inv_freq,
                attention_factor,
                (pairing, key_pairing),
                pairs_adjacent=pairing == key_pairing,
                scales=(scale, 1.0),  # s·(R_m q)ᵀ(R_n k): s on the (L, d) rows, not a pass over the (Lq, Lk) result
                measure=True,
            )
        else:
            (q_rot,), (q_sq,) = _rotate_many(
                (q,), query_positions, inv_freq, attention_factor, (pairing,), scales=(scale,), measure=True
            )
            (k_rot,), (k_sq,) = _rotate_many(
                (k,), key_positions, inv_freq, attention_factor, (key_pairing,), measure=True
            )
        # on the (L, d) inputs, not on the (Lq, Lk) result
        bounded = _scores_bounded(q_sq, k_sq, np.result_type(q_rot, k_rot))
        if not bounded:  # a nan or an inf in the inputs is refused by name, as every other function refuses it
            as_array("q", q)
            as_array("k", k)
        scores = q_rot @ np.swapaxes(k_rot, -1, -2)
    if not bounded:
        check_finite_scores(scores)
    return scores


#: A sixteenth of the scores' dtype's largest value (float64: ~2^1020; float32: ~2^124), room for the rounding of a
#: d-term dot product.
_BOUND_MARGIN = 16.0


def _scores_bounded(q_sq: float, k_sq: float, dtype: np.dtype) -> bool:
    r"""True when every entry of ``q @ kᵀ`` in ``dtype`` (and every partial sum of it) is certainly finite, given the
    sums of squares ``q_sq`` and ``k_sq`` of all the entries of q and of k (NaN or inf: not bounded). By
    Cauchy–Schwarz, for rows :math:`q_m` and :math:`k_n`, :math:`|\sum_j q_{mj} k_{nj}| \le \sum_j |q_{mj}||k_{nj}|
    \le \lVert q_m\rVert\,\lVert k_n\rVert \le \lVert Q\rVert_F\,\lVert K\rVert_F`, so the two sums bound every
    score. They are read off the (L, d) rows as they are rotated (one dot product a block, while it is in cache), so
    :func:`rope_scores` need not pass over its (Lq, Lk) result; where the bound fails (huge inputs, or a sum of squares
    past the dtype's range) the caller checks the result itself."""
    if not (math.isfinite(q_sq) and math.isfinite(k_sq)):
        return False
    return math.sqrt(q_sq) * math.sqrt(k_sq) < float(np.finfo(dtype).max) / _BOUND_MARGIN


def rope_offset_scores(q: object, k: object, inv_freq: object, offsets: object, *, pairing: str = "half") -> np.ndarray:
    r""":math:`q^\top R_r\,k` for each offset r: the raw score (scale 1) of q at any position m against k at m + r.

    A RoPE score sees the two positions only through r = n − m (RoFormer §3.2), so this one curve is every diagonal
    of :func:`rope_scores` for the single vectors q and k. Pair i adds :math:`a_i\cos r\theta_i + b_i\sin r\theta_i
    = \operatorname{Re}[(a_i - \mathrm{i}\,b_i)\,e^{\mathrm{i}r\theta_i}]`, with :math:`a_i = q_1k_1 + q_2k_2` and
    :math:`b_i = q_2k_1 - q_1k_2` for its coordinates (1, 2) in q and k; the dimensions beyond the rotated pairs add
    their plain dot product. So the curve is one complex matrix–vector product with the table of
    :math:`e^{\mathrm{i}r\theta_i}`, made block by block: no (R, d) array of rotated keys, which :func:`rope_scores`
    needs (at R = 8k offsets and d = 512, 33 MB).
    """
    q, k = as_array("q", q, ndim=1), as_array("k", k, ndim=1)
    inv_freq = _check_inv_freq(inv_freq)
    offsets = _check_positions(offsets, name="offsets")
    pairing = as_choice("pairing", pairing, PAIRINGS)
    n = inv_freq.shape[0]
    if q.shape != k.shape or q.shape[0] < 2 * n:
        raise PosEncError(f"q and k must both have d ≥ {2 * n} entries (two per frequency), got {q.shape}, {k.shape}")
    if pairing == "interleaved":  # pair i = (x_{2i}, x_{2i+1})
        first, second = slice(0, 2 * n, 2), slice(1, 2 * n, 2)
    else:  # pair i = (x_i, x_{i+n})
        first, second = slice(0, n), slice(n, 2 * n)
    (q1, q2), (k1, k2) = (q[first], q[second]), (k[first], k[second])
    weights = (q1 * k1 + q2 * k2) - 1j * (q2 * k1 - q1 * k2)  # (n,): a_i − i·b_i
    rest = float(q[2 * n :] @ k[2 * n :])  # partial rotary: the dimensions that do not turn
    out = np.empty(offsets.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):  # checked below, with a message instead of a warning
        for start, stop, table in _trig.phasor_blocks(offsets, inv_freq, block_rows=max(1, _BLOCK_ELEMENTS // n)):
            out[start:stop] = (table @ weights).real + rest
    check_finite_scores(out)
    return out


# --- pairings -------------------------------------------------------------------------------------------------------


def pairing_permutation(dim: int) -> np.ndarray:
    r"""The index array P, shape (d,), that lays interleaved pairs out half-split: ``x[..., P]`` puts
    :math:`x_{2i}` in slot i and :math:`x_{2i+1}` in slot i + d/2, so that for every x and every position

    .. math::
        \operatorname{RoPE}_{\text{interleaved}}(x)[P] = \operatorname{RoPE}_{\text{half}}(x[P]).

    The two conventions are one rotation written in two orders of the dimensions. Its inverse is ``np.argsort(P)``.
    Paper: Su et al. 2021, arXiv:2104.09864, eq. (13) (interleaved); GPT-NeoX / Hugging Face ``rotate_half`` (half).
    """
    dim = as_int("dim", dim, lo=2, hi=MAX_ROTARY_DIM, even=True)
    return np.concatenate([np.arange(0, dim, 2), np.arange(1, dim, 2)])  # (d,): evens, then odds


def pair_index(dim: int, *, pairing: str) -> np.ndarray:
    r"""The pair each of the d dimensions belongs to, shape (d,) int64: :math:`j // 2` for ``"interleaved"`` (pair i =
    (x_{2i}, x_{2i+1})), :math:`j \bmod d/2` for ``"half"`` (pair i = (x_i, x_{i+d/2}))."""
    dim = as_int("dim", dim, lo=2, hi=MAX_ROTARY_DIM, even=True)
    pairing = as_choice("pairing", pairing, PAIRINGS)
    j = np.arange(dim, dtype=np.int64)
    return j // 2 if pairing == "interleaved" else j % (dim // 2)


def rope_scores_mixed_pairing(
    q: object,
    k: object,
    inv_freq: object,
    *,
    query_pairing: str,
    key_pairing: str,
    query_positions: object = None,
    key_positions: object = None,
    scale: float | None = None,
) -> np.ndarray:
    r"""Logits :math:`s\,(R^{a}_m q)^\top (R^{b}_n k)`, shape (…, Lq, Lk): queries rotated with pairing a, keys with b.

    With a = b this is :func:`posenc_core.rope_scores` and depends on n − m only. With a ≠ b the two rotations turn
    different pairs of dimensions, :math:`(R^a_m)^\top R^b_n` is no function of n − m, and neither is the score.
    Positions default as in ``rope_scores`` (keys 0 … Lk − 1, queries the last Lq of them); ``scale`` defaults to
    :math:`1/\sqrt{d}`.
    """
    query_pairing = as_choice("query_pairing", query_pairing, PAIRINGS)
    key_pairing = as_choice("key_pairing", key_pairing, PAIRINGS)
    return rope_scores(
        q,
        k,
        inv_freq,
        query_positions=query_positions,
        key_positions=key_positions,
        pairing=query_pairing,
        key_pairing=key_pairing,
        scale=scale,
    )


# --- helpers --------------------------------------------------------------------------------------------------------


#: Entries of x rotated per block: the block's phasors, x and the result stay in L2 cache.
_BLOCK_ELEMENTS = 2**15


#: The largest cos/sin table kept between calls (4 MiB of complex128: L = 4096 positions × 64 pairs).
_KEPT_TABLE_ELEMENTS = 2**18


class _KeptTables:
    r"""Read-only cos/sin tables kept between calls, the ``size`` most recently used, each admitted on its second
    request: a key asked for once is only remembered (the last ``history`` of them).

    Admission on the second request is what keeps a class from paying for the cache. Fifty students on one process
    each ask for their own positions, more sets than the cache holds. Made whole on every request, a table that was
    then dropped unused made the rotation of q and k at L = 4096, d = 128 cost 7.35 ms, against 3.35 ms for blocks made
    in cache and kept nowhere. A table is now kept as it is made, block by block beside the rotation: the rotation
    costs 2.85 ms on a first request, 3.24 ms on the second (the table kept), 2.13 ms from the kept table, and 2.87 ms
    with nothing kept (medians of 150 calls each, taking turns).
    """

    def __init__(self, size: int, history: int) -> None:
        self.size, self.history = size, history
        self._tables: OrderedDict[tuple[bytes, bytes], np.ndarray] = OrderedDict()
        self._asked: OrderedDict[int, None] = OrderedDict()  # hashes of keys asked for once (a collision only admits)
        self._lock = threading.Lock()

    def get(self, key: tuple[bytes, bytes]) -> np.ndarray | None:
        r"""The kept table of ``key`` (now the most recently used), else ``None``."""
        with self._lock:
            table = self._tables.get(key)
            if table is not None:
                self._tables.move_to_end(key)
            return table

    def admits(self, key: tuple[bytes, bytes]) -> bool:
        r"""Whether a table for ``key``, which is not kept, should be kept once made: it was asked for before."""
        digest = hash(key)
        with self._lock:
            if digest in self._asked:
                del self._asked[digest]
                return True
            self._asked[digest] = None
            while len(self._asked) > self.history:
                self._asked.popitem(last=False)
            return False

    def put(self, key: tuple[bytes, bytes], table: np.ndarray) -> None:
        r"""Keep ``table`` (made read-only) for ``key``, dropping the least recently used past :attr:`size`."""
        table.setflags(write=False)
        with self._lock:
            self._tables[key] = table
            self._tables.move_to_end(key)
            while len(self._tables) > self.size:
                self._tables.popitem(last=False)

    def __len__(self) -> int:
        return len(self._tables)

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()
            self._asked.clear()


#: At most 8 tables (32 MiB); keys asked for once are remembered 64 deep.
_KEPT = _KeptTables(size=8, history=64)


def _phasor_blocks(
    positions: np.ndarray, inv_freq: np.ndarray, block_rows: int
) -> Iterator[tuple[int, int, np.ndarray]]:
    r"""``(start, stop, table)`` per block of rows, as :func:`_trig.phasor_blocks` yields them; the caller must not
    write into a block.

    A table of at most :data:`_KEPT_TABLE_ELEMENTS` entries asked for a second time is kept (:data:`_KEPT`), as
    inference code keeps its cos/sin cache: a page calls with the same positions and frequencies on every move that
    does not change them (a new seed, a new scale), and the table was about a quarter of the rotation's time. A kept
    table holds the very blocks :func:`_trig.phasor_blocks` made, so it is the same numbers bit for bit (tested).
    """
    length = positions.shape[0]
    if length * inv_freq.shape[0] > _KEPT_TABLE_ELEMENTS:
        yield from _trig.phasor_blocks(positions, inv_freq, block_rows=block_rows)
        return
    key = (positions.astype(np.float64, copy=False).tobytes(), inv_freq.astype(np.float64, copy=False).tobytes())
    table = _KEPT.get(key)
    if table is not None:
        for start in range(0, length, block_rows):
            yield start, min(start + block_rows, length), table[start : start + block_rows]
        return
    kept = np.empty((length, inv_freq.shape[0]), dtype=np.complex128) if _KEPT.admits(key) else None
    for start, stop, block in _trig.phasor_blocks(positions, inv_freq, block_rows=block_rows):
        if kept is not None:
            kept[start:stop] = block
            block = kept[start:stop]  # the copy, just written, is in cache
        yield start, stop, block
    if kept is not None:  # only a table made whole: a caller that stopped early leaves nothing half made
        _KEPT.put(key, kept)


def _check_rows(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> None:
    length, dim, n = x.shape[-2], x.shape[-1], inv_freq.shape[0]
    if positions.shape[0] != length:
        raise PosEncError(f"positions must have one entry per row of x ({length}), got {positions.shape[0]}")
    if 2 * n > dim:
        raise PosEncError(f"inv_freq has {n} pairs but x has only {dim} dimensions (needs ≥ {2 * n})")


def _rotate(
    x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float, pairing: str
) -> np.ndarray:
    r"""Rotate each pair of x (…, L, d) as a complex number times :math:`a\,e^{\mathrm{i}m\theta}`.

    :math:`(x_1 + \mathrm{i}x_2)\,e^{\mathrm{i}m\theta}` is :math:`x'_1 = x_1\cos m\theta - x_2\sin m\theta`,
    :math:`x'_2 = x_1\sin m\theta + x_2\cos m\theta`. Rows go in blocks (see ``_trig.phasor_blocks``).
    """
    return _rotate_many((x,), positions, inv_freq, attention_factor, (pairing,))[0][0]


def _rotate_many(
    xs: tuple[np.ndarray, ...],
    positions: np.ndarray,
    inv_freq: np.ndarray,
    attention_factor: float,
    pairings: tuple[str, ...],
    *,
    pairs_adjacent: bool = False,
    scales: tuple[float, ...] | None = None,
    measure: bool = False,
) -> tuple[list[np.ndarray], list[float]]:
    r""":func:`_rotate` of several arrays at the same positions, each block of the cos/sin table made once.

    Returns the rotated arrays and, with ``measure``, the sum of the squares of each one's entries (NaN if it holds a
    NaN, inf if it holds an inf or the sum overflows), read while each block is in cache (without ``measure``, an
    empty list). ``scales`` multiplies each whole result (default 1), the dimensions that do not turn included.
    ``pairs_adjacent``: return each rotated pair in two adjacent columns, :math:`(x'_1, x'_2)` at (2i, 2i + 1),
    whatever the pairing (the columns beyond the rotated pairs stay where they are). A caller that only takes dot
    products between the results (:func:`rope_scores`) gets the same sums in another order, and "half" skips a copy:
    the pairs are written straight into the output as complex numbers and turned there.
    """
    for x in xs:
        _check_rows(x, positions, inv_freq)
    n = inv_freq.shape[0]
    scales = (1.0,) * len(xs) if scales is None else scales
    xs = tuple(np.ascontiguousarray(x) for x in xs)
    if len(xs) > 1 and len({(x.shape, x.dtype) for x in xs}) == 1:
        # One block for all the outputs: at L = 4096, d = 128 the rotation of q and k took 3.1–3.3 ms instead of
        # 6.5–7.9 ms (bench/bench_core.py's machine, glibc): two freed 4 MB arrays went back to the OS on every call
        # and their pages faulted in again on the next, where one 8 MB block stays with the process.
        outs = list(np.empty((len(xs), *xs[0].shape), dtype=xs[0].dtype))
    else:
        outs = [np.empty_like(x) for x in xs]
    for x, out in zip(xs, outs, strict=True):
        out[..., 2 * n :] = x[..., 2 * n :]  # partial rotary: the remaining dimensions pass through
    lead = max(x[..., 0, 0].size for x in xs)  # batch × heads
    block_rows = max(1, _BLOCK_ELEMENTS // (n * lead))
    squares = [0.0 for _ in xs]  # the sum of squares of each output's entries, block by block
    for start, stop, table in _phasor_blocks(positions, inv_freq, block_rows):
        if attention_factor != 1.0:
            table = table * attention_factor  # a new block: a kept table is shared between calls
        for which, (x, out, pairing, scale) in enumerate(zip(xs, outs, pairings, scales, strict=True)):
            complex_dtype = np.complex64 if x.dtype == np.float32 else np.complex128
            phasor = table.astype(complex_dtype, copy=False)
            src, dst = x[..., start:stop, :], out[..., start:stop, :]
            if pairing == "interleaved":  # pair i = (x_{2i}, x_{2i+1}) is a complex number in memory
                np.multiply(src[..., : 2 * n].view(complex_dtype), phasor, out=dst[..., : 2 * n].view(complex_dtype))
            elif pairs_adjacent:  # pair i = (x_i, x_{i+n}), written to columns (2i, 2i + 1) and turned in place
                dst[..., 0 : 2 * n : 2], dst[..., 1 : 2 * n : 2] = src[..., :n], src[..., n : 2 * n]
                dst[..., : 2 * n].view(complex_dtype)[...] *= phasor
            else:  # pair i = (x_i, x_{i+n})
                z = np.empty((*src.shape[:-1], n), dtype=complex_dtype)
                z.real, z.imag = src[..., :n], src[..., n : 2 * n]
                z *= phasor
                dst[..., :n], dst[..., n : 2 * n] = z.real, z.imag
            if scale != 1.0:
                dst *= scale
            if measure:  # the block is still in cache: one dot product (BLAS), a third of a max and a min
                flat = dst.reshape(-1) if dst.flags.c_contiguous else np.ravel(dst)
                squares[which] += float(flat @ flat)
    return outs, squares if measure else []


def _check_inv_freq(inv_freq: object) -> np.ndarray:
    inv_freq = as_array("inv_freq", inv_freq, ndim=1).astype(np.float64)
    if inv_freq.shape[0] == 0 or inv_freq.shape[0] > MAX_ROTARY_DIM // 2:
        raise PosEncError(f"inv_freq must have 1 … {MAX_ROTARY_DIM // 2} entries, got {inv_freq.shape[0]}")
    if np.any(inv_freq < MIN_INV_FREQ) or np.any(inv_freq > MAX_INV_FREQ):
        raise PosEncError(f"inv_freq must be in [{MIN_INV_FREQ:g}, {MAX_INV_FREQ:g}] radians per token")
    return inv_freq


def _check_positions(positions: object, *, name: str = "positions") -> np.ndarray:
    positions = as_array(name, positions, ndim=1).astype(np.float64)
    if positions.shape[0] == 0 or positions.shape[0] > MAX_ELEMENTS:
        raise PosEncError(f"{name} must hold 1 … {MAX_ELEMENTS} positions, got {positions.shape[0]}")
    if np.max(np.abs(positions)) > 2.0**53:
        raise PosEncError(f"{name} must have magnitude ≤ 2^53 (exact in float64)")
    return positions
