r"""How large RoPE's base must be for a context length (Men et al. 2024, "Base of RoPE Bounds Context Length",
arXiv:2405.14591, §4).

For a query q and a key k = q + ε that is *similar* to it, the expected RoPE score minus the expected score of a
random key is proportional to

.. math::
    B_{m,\theta} = \sum_{i=0}^{d/2-1} \cos(m\,\theta_i),

the all-ones curve of RoFormer §3.4.3 (:func:`~posenc_core.rope.curves.rope_decay_all_ones`). While
:math:`B_{m,\theta} \ge 0` the head can still tell a similar token at distance m from a random one by the score
alone; the paper asks for this at every distance up to the context length L, and calls the smallest base that gives
it the lower bound of the base for L. B falls as m grows (the slow pairs have turned further), and it falls later
when the base is larger, so longer contexts need larger bases.

The condition is not monotone in the base: just above the smallest base that works there can be bases for which B
dips below 0 again before L (a fast pair and a slow one cancel at one distance). So the bound is found by scanning a
grid of bases from below, never by bisection, and the answer depends on the grid's resolution (tested).
"""

from __future__ import annotations

import numpy as np

from ..errors import PosEncError, as_array, as_int, check_elements
from .curves import rope_decay_all_ones
from .rotation import rope_inv_freq

__all__ = ["rope_base_lower_bound", "rope_similarity_reach"]

#: The longest context either function scans: 2^22 distances (a few seconds at d = 128).
MAX_REACH = 2**22
#: The most bases one call scans.
MAX_BASES = 4096
#: Distances evaluated per step of the scan, so a base that fails early stops early.
_STEP = 4096


def rope_similarity_reach(inv_freq: object, *, max_distance: int, still_pairs: int = 0) -> int:
    r"""The first distance m ≤ ``max_distance`` at which :math:`B_{m,\theta} = s + \sum_i \cos(m\theta_i) < 0`, or
    ``max_distance + 1`` if there is none: the head keeps similar tokens above random ones for distances < reach.

    Paper: Men et al. 2024, arXiv:2405.14591, §4 (the condition :math:`B_{m,\theta} \ge 0`). ``inv_freq`` are the
    θ_i of one head (scaled or not: a model's own frequencies go in as they are). s = ``still_pairs``: pairs of the
    same query–key score that never rotate, each adding cos 0 = 1 to the sum (Su's remark in 「Transformer升级之路：18、
    RoPE的底数选择原则」); a θ_i = 0 in ``inv_freq`` counts the same way. Multi-head latent attention adds an unrotated
    part of ``qk_nope_head_dim`` dimensions to each head's score (DeepSeek-V2, arXiv:2405.04434, §2.1.3): that many
    / 2 such pairs. Scanned in steps of 4 096 distances through
    :func:`~posenc_core.rope_decay_all_ones`, stopping at the first negative value.
    """
    inv_freq = as_array("inv_freq", inv_freq, ndim=1)
    if np.any(inv_freq < 0):
        raise PosEncError("inv_freq must be ≥ 0 (frequencies of the rotating pairs)")
    max_distance = as_int("max_distance", max_distance, lo=0, hi=MAX_REACH)
    still_pairs = as_int("still_pairs", still_pairs, lo=0, hi=1 << 20)
    check_elements("rope_similarity_reach(distances × pairs)", (max_distance + 1, inv_freq.shape[0]))
    turning = inv_freq[inv_freq > 0]
    # pairs at θ = 0 (p-RoPE's dropped pairs, MLA's unrotated part) add cos 0 = 1 each
    still = inv_freq.shape[0] - turning.shape[0] + still_pairs
    if turning.shape[0] == 0:
        return max_distance + 1
    for start in range(0, max_distance + 1, _STEP):
        m = np.arange(start, min(start + _STEP, max_distance + 1))
        below = np.flatnonzero(still + rope_decay_all_ones(m, turning) < 0)  # B_{m,θ} < 0
        if below.size:
            return int(m[below[0]])
    return max_distance + 1


def rope_base_lower_bound(context_lengths: object, *, head_dim: int, bases: object) -> np.ndarray:
    r"""For each context length L, the smallest base b in the increasing grid ``bases`` with
    :math:`B_{m,\theta} = \sum_i \cos(m\,b^{-2i/d}) \ge 0` for every m in {0, …, L − 1}; nan where no base of the
    grid gets there.

    Paper: Men et al. 2024, arXiv:2405.14591, §4 and its table of lower bounds at d = 128 (reprinted, with tighter
    values from a finer search, in Su 2024, 「Transformer升级之路：18、RoPE的底数选择原则」, kexue.fm/archives/10122).
    d = ``head_dim``. As the paper's authors did (Su's post says so), this inverts the question: for each base of the
    grid, from the smallest up, the reach (:func:`rope_similarity_reach`), and L's bound is the first base whose reach
    is ≥ L. The condition is not monotone in b (module text), so the result is a grid point, as fine as the grid.
    """
    lengths = as_array("context_lengths", context_lengths, ndim=1, integer=True)
    if lengths.min() < 1 or lengths.max() > MAX_REACH:
        raise PosEncError(
            f"context_lengths must lie in [1, {MAX_REACH}]",
            code="too_large" if lengths.max() > MAX_REACH else "too_small",
            name="context_lengths",
            value=int(lengths.max() if lengths.max() > MAX_REACH else lengths.min()),
            bound=MAX_REACH if lengths.max() > MAX_REACH else 1,
        )
    head_dim = as_int("head_dim", head_dim, lo=2, hi=1024, even=True)
    grid = as_array("bases", bases, ndim=1)
    if grid.shape[0] > MAX_BASES or np.any(grid <= 1.0) or np.any(np.diff(grid) <= 0):
        raise PosEncError(f"bases must be > 1, strictly increasing and at most {MAX_BASES} of them")
    out = np.full(lengths.shape[0], np.nan)
    longest = int(lengths.max())
    for base in grid:
        reach = rope_similarity_reach(rope_inv_freq(head_dim, base=float(base)), max_distance=longest - 1)
        out[np.isnan(out) & (lengths <= reach)] = base  # B ≥ 0 on 0 … reach − 1 ⊇ 0 … L − 1
        if not np.isnan(out).any():
            break
    return out
