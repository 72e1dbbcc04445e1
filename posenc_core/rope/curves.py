r"""What RoPE's rotations add up to over distance: the long-range decay of RoFormer §3.4.3, and the first distance
at which a set of rotating pairs comes back to where it started.

* **Decay.** :func:`rope_decay_bound` is Su's bound, :func:`rope_decay_all_ones` the score of aligned vectors and
  :func:`rope_decay_random` the mean and spread over random q, k (no decay in expectation). Computed in chunks, so
  10^6 distances stay within a few tens of MB whatever the dimension.
* **Near repeats.** One pair turning 30° per token is back where it started after 12 tokens (the clock of
  the WeChat article 「Transformer位置编码问题」). With several pairs all of them have to come back at once;
  :func:`rope_near_repeats` finds the first such distance for the first 1, 2, 3 … pairs in one pass.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _trig
from ..errors import PosEncError, as_float, as_int, check_elements
from .rotation import _check_inv_freq

__all__ = ["RopeDecayTable", "rope_decay_all_ones", "rope_decay_bound", "rope_decay_random", "rope_near_repeats"]

#: Distances searched per block by :func:`rope_near_repeats`: 512 KiB of float64, whatever the number of pairs.
_BLOCK_DISTANCES = 2**16
#: The first block is small: with a loose tolerance every pair comes back almost at once and the search ends there.
_FIRST_BLOCK = 2**10
#: Radians added to each window of :func:`_returns`: more than the rounding of cos near a tolerance down to 0.
_ANGLE_SLACK = 1e-7
_MAX_SAMPLES = 4096


# --- long-range decay (RoFormer §3.4.3) -----------------------------------------------------------------------------


def rope_decay_bound(distances: object, inv_freq: object) -> np.ndarray:
    r"""Su's relative upper bound on :math:`|q_m \cdot k_n|` at distance r = n − m (RoFormer §3.4.3).

    .. math::
        \frac{1}{d/2}\sum_{j=1}^{d/2} |S_j|, \qquad S_j = \sum_{l=0}^{j-1} e^{\,\mathrm{i}\,r\,\theta_l}.

    It starts at (d/2 + 1)/2 (32.5 for d = 128) and decays with r: the paper's "long-term decay".
    """
    distances = _trig.check_distances(distances)
    inv_freq = _check_inv_freq(inv_freq)
    return _trig.reduce_in_chunks(distances, inv_freq, _bound)


def _bound(phasors: np.ndarray) -> np.ndarray:
    partial_sums = np.cumsum(phasors, axis=1)  # S_j = Σ_{l<j} e^{i r θ_l}, j = 1 … d/2
    return np.abs(partial_sums).mean(axis=1)


def _all_ones(phasors: np.ndarray) -> np.ndarray:
    return phasors.real.sum(axis=1)


def rope_decay_all_ones(distances: object, inv_freq: object) -> np.ndarray:
    r""":math:`\sum_i \cos(r\,\theta_i)`: the RoPE score at distance r when every pair of q and k is (1, 0).

    (An all-ones real vector, pairs (1, 1), scores exactly twice this.) It oscillates and decays on average.
    """
    distances = _trig.check_distances(distances)
    inv_freq = _check_inv_freq(inv_freq)
    return _trig.reduce_in_chunks(distances, inv_freq, _all_ones)


def rope_decay_random(
    distances: object,
    inv_freq: object,
    *,
    n_samples: int = 256,
    seed: int = 0,
    same_vector: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean and standard deviation over random q, k ~ N(0, I) of the RoPE score :math:`q^\top R_{r} k`.

    For independent q and k the mean is 0 at every distance and the spread is :math:`\sqrt{d}` at every distance:
    no decay at all in expectation, unlike the all-ones curve. With ``same_vector=True`` (k = q) the mean is
    :math:`2\sum_i\cos(r\theta_i)`, the all-ones curve again: the "decay" is a property of aligned vectors.
    """
    distances = _trig.check_distances(distances)
    inv_freq = _check_inv_freq(inv_freq)
    n_samples, seed, same_vector = _random_args(n_samples, seed, same_vector)
    check_elements("rope_decay_random(distances × n_samples)", (distances.shape[0], n_samples))
    a, b = _pair_weights(inv_freq.shape[0], n_samples, seed, same_vector)
    mean = np.empty(distances.shape[0])
    std = np.empty(distances.shape[0])
    for start, stop, phasors in _trig.chunks(distances, inv_freq, width=max(inv_freq.shape[0], n_samples)):
        mean[start:stop], std[start:stop] = _moments(phasors, a, b)
    return mean, std


def _random_args(n_samples: object, seed: object, same_vector: object) -> tuple[int, int, bool]:
    n_samples = as_int("n_samples", n_samples, lo=2, hi=_MAX_SAMPLES)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    if not isinstance(same_vector, bool):
        raise PosEncError(f"same_vector must be True or False, got {same_vector!r:.30}")
    return n_samples, seed, same_vector


def _pair_weights(n: int, n_samples: int, seed: int, same_vector: bool) -> tuple[np.ndarray, np.ndarray]:
    r"""(n, S) weights a, b of S random q, k: pair i scores :math:`a_i \cos r\theta_i + b_i \sin r\theta_i`."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n_samples, n, 2))
    k = q if same_vector else rng.standard_normal((n_samples, n, 2))
    # pair i: q·R(rθ)k = (q1k1 + q2k2) cos rθ + (q2k1 − q1k2) sin rθ
    a = (q[..., 0] * k[..., 0] + q[..., 1] * k[..., 1]).T  # (n, S)
    b = (q[..., 1] * k[..., 0] - q[..., 0] * k[..., 1]).T  # (n, S)
    return a, b


def _moments(phasors: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Σ_i a_i cos rθ_i + b_i sin rθ_i as one product: the complex table read as real numbers holds each pair's
    # (cos, sin) side by side, so the weights are laid out the same way. Against ``real @ a + imag @ b``, which copies
    # both strided halves first: 3.0 against 4.1 ms at 1,100 distances, d = 128 and 256 samples.
    weights = np.empty((2 * a.shape[0], a.shape[1]))  # (2n, S): a_0, b_0, a_1, b_1, …
    weights[0::2], weights[1::2] = a, b
    scores = np.ascontiguousarray(phasors).view(np.float64) @ weights  # (rows, S)
    return scores.mean(axis=1), scores.std(axis=1)


class RopeDecayTable:
    r"""The decay curves of one set of distances and frequencies, from one table of :math:`e^{\mathrm{i}\,r\theta_i}`
    made once and kept (read-only).

    The table is nearly all of each curve's work (at d = 256 and 1.1k distances, 5–6 ms of the 7 ms Su's bound
    takes). A page that draws the bound, the all-ones curve and random q, k over the same distances, and draws random
    q, k again for every seed, makes it once: :meth:`bound`, :meth:`all_ones` and :meth:`random` give the numbers
    of :func:`rope_decay_bound`, :func:`rope_decay_all_ones` and :func:`rope_decay_random` up to rounding (the
    functions evaluate the table chunk by chunk, and a chunk of evenly spaced distances is split for its sines
    differently from the whole: ~2e-12 at 9000 distances). The functions work for any number of distances; the
    table is held whole, so it is refused beyond :data:`MAX_TABLE` entries.
    """

    #: At most this many (distance, frequency) entries: 64 MB of complex128.
    MAX_TABLE = 2**22

    def __init__(self, distances: object, inv_freq: object) -> None:
        distances = _trig.check_distances(distances)
        inv_freq = _check_inv_freq(inv_freq)
        count = distances.shape[0] * inv_freq.shape[0]
        if count > self.MAX_TABLE:
            raise PosEncError(
                f"a decay table of {distances.shape[0]:,} distances × {inv_freq.shape[0]:,} frequencies would hold "
                f"{count:,} entries, above {self.MAX_TABLE:,}; use rope_decay_bound and its siblings, which work in "
                "chunks"
            )
        self.distances, self.inv_freq = distances.copy(), inv_freq.copy()
        self.phasors = _trig.phasors(distances, inv_freq)  # (R, n)
        for array in (self.distances, self.inv_freq, self.phasors):
            array.flags.writeable = False

    @property
    def nbytes(self) -> int:
        r"""What the table keeps in memory, in bytes."""
        return self.distances.nbytes + self.inv_freq.nbytes + self.phasors.nbytes

    def bound(self) -> np.ndarray:
        r""":func:`rope_decay_bound` of the table's distances and frequencies."""
        return _bound(self.phasors)

    def all_ones(self) -> np.ndarray:
        r""":func:`rope_decay_all_ones` of the table's distances and frequencies."""
        return _all_ones(self.phasors)

    def random(
        self, *, n_samples: int = 256, seed: int = 0, same_vector: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        r""":func:`rope_decay_random` of the table's distances and frequencies: mean and standard deviation."""
        n_samples, seed, same_vector = _random_args(n_samples, seed, same_vector)
        check_elements("RopeDecayTable.random(distances × n_samples)", (self.distances.shape[0], n_samples))
        return _moments(self.phasors, *_pair_weights(self.inv_freq.shape[0], n_samples, seed, same_vector))


# --- near repeats ---------------------------------------------------------------------------------------------------


def rope_near_repeats(inv_freq: object, *, tolerance: float = 0.1, max_distance: int = 10**6) -> tuple[int | None, ...]:
    r"""For k = 1 … n: the smallest distance r ≥ 1 at which each of the first k pairs is within ``tolerance``
    radians of a whole number of turns, :math:`\min_{i<k} \cos(r\,\theta_i) \ge \cos(\text{tolerance})`; None
    where no r ≤ ``max_distance`` qualifies.

    One pair turning 30° per token comes back at r = 12; pairs with incommensurate speeds almost never line up
    together. A distance that brings back k + 1 pairs brings back the first k, so the entries never decrease, and a
    sieve finds them all — the first pair keeps a fraction ≈ tolerance/π of the distances, the second pair filters
    only those, and so on. Memory stays at one block of distances whatever ``max_distance``.
    """
    inv_freq = _check_inv_freq(inv_freq)
    tolerance = as_float("tolerance", tolerance, gt=0.0, le=math.pi)
    max_distance = as_int("max_distance", max_distance, lo=1, hi=_trig.MAX_DISTANCES)
    # |r θ mod 2π| ≤ tolerance  ⇔  cos(r θ) ≥ cos(tolerance)   (tolerance ≤ π)
    threshold = math.cos(tolerance)
    first: list[int | None] = [None] * inv_freq.shape[0]
    found = 0
    start, block = 1, _FIRST_BLOCK
    while start <= max_distance and found < len(first):
        stop = min(start + block, max_distance + 1)
        r = _returns(start, stop, float(inv_freq[0]), tolerance, threshold)  # pair 0 back: the distances in the running
        for k, theta in enumerate(inv_freq):
            if k:
                r = r[np.cos(r * theta) >= threshold]  # those that also bring pair k back
            if r.size == 0:
                break
            if first[k] is None:
                first[k], found = int(r[0]), found + 1
        start, block = stop, min(2 * block, _BLOCK_DISTANCES)
    return tuple(first)


def _returns(
    start: int, stop: int, theta: float, tolerance: float, threshold: float, *, dense: bool = False
) -> np.ndarray:
    r"""The distances r in [start, stop) with :math:`\cos(r\theta) \ge` ``threshold`` (= cos ``tolerance``), ascending.

    A fast pair comes back only near :math:`r = 2\pi j/\theta`, so rather than evaluate every r the windows
    :math:`|r\theta - 2\pi j| \le` tolerance (widened by :data:`_ANGLE_SLACK`, beyond any rounding of the cosine
    test) are enumerated, and only the integers inside them are tested — about tolerance/π of the block instead of
    all of it. The test itself is the same, so both routes return the same distances.
    """
    if dense or theta / (2 * math.pi) + tolerance / math.pi >= 0.5:  # windows as long as the gaps: test every r
        r = np.arange(start, stop, dtype=np.float64)
        return r[np.cos(r * theta) >= threshold]
    reach = tolerance + _ANGLE_SLACK
    j = np.arange(math.floor((start * theta - reach) / (2 * math.pi)), math.ceil(stop * theta / (2 * math.pi)) + 1)
    lo = np.maximum(np.ceil((2 * math.pi * j - reach) / theta), start)  # window j: the integers lo … hi
    hi = np.minimum(np.floor((2 * math.pi * j + reach) / theta), stop - 1)
    counts = np.maximum(hi - lo + 1, 0).astype(np.int64)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)  # 0, 1, … within each window
    r = np.repeat(lo, counts) + offsets
    return r[np.cos(r * theta) >= threshold]
