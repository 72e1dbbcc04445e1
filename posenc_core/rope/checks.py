r"""RoPE's claims measured on numbers: scores depend on n − m only, the two pairings are one rotation reordered,
each pair comes back after its period, and random vectors show no decay in expectation.

Each function returns the residual a page prints beside its figure (e.g. "max |q_m·k_n − q_0·k_{n−m}| = 3e-15 ✓").
Paper: Su et al. 2021, "RoFormer", arXiv:2104.09864, §3.2–3.4.3.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _trig
from ..errors import PosEncError, as_array, as_bool, as_int
from .curves import rope_decay_all_ones
from .rotation import _check_inv_freq, _check_positions, apply_rope, pairing_permutation, rope_scores

__all__ = [
    "pairing_residual",
    "rope_decay_random_expected",
    "rope_decay_random_z",
    "rope_period_gaps",
    "rope_relative_gaps",
]


def rope_relative_gaps(
    q: object, k: object, inv_freq: object, *, query_positions: object, key_positions: object
) -> np.ndarray:
    r""":math:`|q_{m_j} \cdot k_{n_j} - q_0 \cdot k_{n_j - m_j}|` for each pair of positions (raw dot products,
    scale 1), shape (J,): zero up to rounding, because :math:`(R_m q)^\top R_n k = q^\top R_{n-m} k` (RoFormer §3.2).

    ``q`` and ``k`` are single (d,) vectors; ``query_positions`` and ``key_positions`` the (J,) positions m_j, n_j.
    """
    q = as_array("q", q, ndim=1)
    k = as_array("k", k, ndim=1)
    m = _check_positions(query_positions, name="query_positions")
    n = _check_positions(key_positions, name="key_positions")
    if m.shape != n.shape:
        raise PosEncError(f"query_positions and key_positions must pair up, got {m.shape[0]} and {n.shape[0]}")
    qs, ks = np.broadcast_to(q, (m.shape[0], q.shape[0])), np.broadcast_to(k, (m.shape[0], k.shape[0]))
    direct = np.diagonal(rope_scores(qs, ks, inv_freq, query_positions=m, key_positions=n, scale=1.0))
    shifted = rope_scores(q[None], ks, inv_freq, query_positions=[0.0], key_positions=n - m, scale=1.0)[0]
    return np.abs(direct - shifted)


def pairing_residual(x: object, positions: object, inv_freq: object) -> float:
    r""":math:`\max |\operatorname{RoPE}_{\text{interleaved}}(x)[P] - \operatorname{RoPE}_{\text{half}}(x[P])|` with
    P = :func:`pairing_permutation`: 0 up to rounding, the two conventions being one rotation in two orders.

    ``x`` (L, d) rows at ``positions`` (L,). Paper: Su et al. 2021, eq. (13); Hugging Face ``rotate_half``.
    """
    x = as_array("x", x, ndim=2)
    perm = pairing_permutation(x.shape[1])
    interleaved = apply_rope(x, positions, inv_freq, pairing="interleaved")
    half = apply_rope(x[:, perm], positions, inv_freq, pairing="half")
    return float(np.max(np.abs(interleaved[:, perm] - half)))


def rope_period_gaps(x: object, inv_freq: object) -> np.ndarray:
    r"""For each pair i, how far pair i of x lands from where it started after :math:`T_i = 2\pi/\theta_i` tokens:
    :math:`\lVert (R_{T_i} x)_i - x_i \rVert`, shape (d/2,), interleaved pairs. Zero up to the rounding of
    :math:`T_i\theta_i` to :math:`2\pi` (~1e-12 for slow pairs).
    """
    x = as_array("x", x, ndim=1)
    inv_freq = _check_inv_freq(inv_freq)
    n = inv_freq.shape[0]
    periods = 2.0 * math.pi / inv_freq  # (n,)
    back = apply_rope(np.broadcast_to(x, (n, x.shape[0])), periods, inv_freq, pairing="interleaved")  # row i at T_i
    i = np.arange(n)
    return np.hypot(back[i, 2 * i] - x[2 * i], back[i, 2 * i + 1] - x[2 * i + 1])


def rope_decay_random_expected(distances: object, inv_freq: object, *, same_vector: bool) -> np.ndarray:
    r"""The expectation of :func:`~posenc_core.rope_decay_random`'s mean: 0 for independent q, k ~ N(0, I), and
    :math:`E[q^\top R_r q] = 2\sum_i \cos(r\theta_i)` (twice the all-ones curve) for k = q."""
    same_vector = as_bool("same_vector", same_vector)
    if same_vector:
        return 2.0 * rope_decay_all_ones(distances, inv_freq)
    distances = _trig.check_distances(distances)  # the same refusals either way, without the curve's cost
    _check_inv_freq(inv_freq)
    return np.zeros(distances.shape[0])


def rope_decay_random_z(mean: object, std: object, *, n_samples: int) -> np.ndarray:
    r"""How many standard errors each sample mean lies from 0: :math:`|\bar s| / (\sigma/\sqrt{S})`, shape of mean.

    For independent random q, k the expected score is 0 at every distance, so these stay a few units at most."""
    mean = as_array("mean", mean, ndim=1)
    std = as_array("std", std, ndim=1)
    if mean.shape != std.shape or np.any(std <= 0):
        raise PosEncError(f"std must be positive and shaped like mean {mean.shape}, got {std.shape}")
    n_samples = as_int("n_samples", n_samples, lo=2, hi=2**31)
    return np.abs(mean) / (std / math.sqrt(n_samples))
