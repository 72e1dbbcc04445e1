r"""The curves and checks the app draws, each one function of arrays.

* Why attention needs position: self-attention on token embeddings, and the permutation test
  (Vaswani et al. 2017 §3.5: "since our model contains no recurrence and no convolution …").
* Sinusoid similarity vs offset: :math:`PE_p \cdot PE_{p+k} = \sum_i \cos(k\omega_i)`, independent of p.
* RoPE long-range decay (Su et al. 2021, arXiv:2104.09864, §3.4.3): the bound, the all-ones curve and the
  random-vector band.
* Per-pair diagnostics for context extension: turns within the context :math:`r_i = L/\lambda_i` and YaRN's
  regimes (Peng et al. 2023, arXiv:2309.00071, §3.2).
* The periodicity question of the WeChat article 「Transformer位置编码问题」: when do *all* pairs come back to their
  start at once?

Curves over many distances are computed in chunks of about 2^19 entries, so 10^6 distances stay within a few tens
of MB whatever the dimension.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from . import _trig
from .alibi import alibi_bias
from .attention import attention
from .errors import PosEncError, as_array, as_choice, as_float, as_int, check_elements
from .learned import learned_table
from .rope import _check_inv_freq, apply_rope, rope_inv_freq
from .rope_scaling import yarn_correction_range, yarn_ramp
from .sinusoidal import sinusoidal, sinusoidal_inv_freq

__all__ = [
    "ENCODINGS",
    "REGIMES",
    "YarnRegimes",
    "neighbour_distances",
    "permutation_equivariance_residual",
    "projection_weights",
    "rope_decay_all_ones",
    "rope_decay_bound",
    "rope_decay_random",
    "rope_first_near_repeat",
    "rotations_in_context",
    "self_attention",
    "sinusoidal_similarity",
    "token_embeddings",
    "yarn_regimes",
]

#: How :func:`self_attention` can inject position.
ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi")
#: Names of the codes in :attr:`YarnRegimes.regime`.
REGIMES = ("kept", "blended", "interpolated")

_CHUNK_ELEMENTS = 2**19  # entries per chunk of a (distances × pairs) table: 4 MiB of float64
_MAX_DISTANCES = 10**7
_MAX_SAMPLES = 4096


# --- why attention needs position --------------------------------------------------------------------------------


def token_embeddings(tokens: Sequence[str], dim: int, *, seed: int = 0) -> np.ndarray:
    r"""(L, dim) standard-normal embeddings, one per token, equal for equal token text (a stand-in vocabulary)."""
    if isinstance(tokens, str) or not isinstance(tokens, Sequence) or not tokens:
        raise PosEncError(f"tokens must be a non-empty list of strings, got {tokens!r:.60}")
    if not all(isinstance(t, str) for t in tokens):
        raise PosEncError("tokens must all be strings")
    dim = as_int("dim", dim, lo=1, hi=65536)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    check_elements("token_embeddings", (len(tokens), dim))
    rows = [np.random.default_rng([seed, zlib.crc32(t.encode("utf-8"))]).standard_normal(dim) for t in tokens]
    return np.stack(rows)


def projection_weights(d_model: int, d_head: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Random ``(w_q, w_k, w_v)``, each (d_model, d_head) with entries N(0, 1/d_model): q and k keep unit scale."""
    d_model = as_int("d_model", d_model, lo=1, hi=65536)
    d_head = as_int("d_head", d_head, lo=1, hi=65536)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    check_elements("projection_weights", (3, d_model, d_head))
    w = np.random.default_rng([seed, 0x5EED]).standard_normal((3, d_model, d_head)) / math.sqrt(d_model)
    return w[0], w[1], w[2]


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


def self_attention(
    x: object,
    *,
    w_q: object,
    w_k: object,
    w_v: object,
    encoding: str = "none",
    base: float = 10000.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    r"""One attention head over the rows of x (L, d_model), with position injected as ``encoding`` says.

    "sinusoidal" and "learned" add a table to x before the projections (Vaswani 2017; BERT); "rope" rotates the
    projected q and k (RoFormer); "alibi" adds the symmetric bias :math:`-\tfrac12|i-j|` (ALiBi's first slope of 8
    heads, the non-causal form); "none" uses the embeddings alone. Returns ``(output (L, d_v), weights (L, L))``.
    """
    x = as_array("x", x, ndim=2)
    encoding = as_choice("encoding", encoding, ENCODINGS)
    length, d_model = x.shape
    w_q, w_k, w_v = (as_array(name, w, ndim=2) for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)))
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.shape[0] != d_model:
            raise PosEncError(f"{name} must have {d_model} rows (the width of x), got shape {w.shape}")
    if w_q.shape[1] != w_k.shape[1]:
        raise PosEncError(f"w_q and w_k must have the same number of columns, got {w_q.shape} and {w_k.shape}")
    if encoding == "sinusoidal":
        x = x + sinusoidal(length, d_model, base=base)
    elif encoding == "learned":
        x = x + learned_table(length, d_model, seed=seed)
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    bias = None
    if encoding == "rope":
        if q.shape[1] % 2:
            raise PosEncError(f"rope needs an even query/key width, got {q.shape[1]}")
        positions, inv_freq = np.arange(length, dtype=np.float64), rope_inv_freq(q.shape[1], base=base)
        q, k = apply_rope(q, positions, inv_freq), apply_rope(k, positions, inv_freq)
    elif encoding == "alibi":
        bias = alibi_bias(8, length, causal=False, heads=[0])[0]
    return attention(q, k, v, bias=bias)


def permutation_equivariance_residual(
    x: object,
    permutation: object,
    *,
    w_q: object,
    w_k: object,
    w_v: object,
    encoding: str = "none",
    base: float = 10000.0,
    seed: int = 0,
) -> float:
    r""":math:`\max |f(Px) - P f(x)|` for the attention layer f of :func:`self_attention`.

    Zero up to rounding (~1e-16) when ``encoding="none"``: shuffling the tokens only shuffles the outputs, so the
    layer cannot tell "公司收购了竞争对手" from "竞争对手收购了公司". Any real encoding makes it large.
    """
    x = as_array("x", x, ndim=2)
    perm = as_array("permutation", permutation, ndim=1, integer=True)
    if perm.shape[0] != x.shape[0] or not np.array_equal(np.sort(perm), np.arange(x.shape[0])):
        raise PosEncError(f"permutation must be a rearrangement of 0 … {x.shape[0] - 1}")
    weights = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "encoding": encoding, "base": base, "seed": seed}
    out, _ = self_attention(x, **weights)
    out_shuffled, _ = self_attention(x[perm], **weights)
    return float(np.max(np.abs(out_shuffled - out[perm])))


# --- sinusoids and RoPE: curves over distance ---------------------------------------------------------------------


def sinusoidal_similarity(offsets: object, dim: int, *, base: float = 10000.0) -> np.ndarray:
    r""":math:`PE_p \cdot PE_{p+k} = \sum_i \cos(k\,\omega_i)` for each offset k — the same for every p."""
    offsets = _check_distances(offsets, "offsets")
    omega = sinusoidal_inv_freq(dim, base=base)
    return _reduce_in_chunks(offsets, omega, lambda e: e.real.sum(axis=1))


def rope_decay_bound(distances: object, inv_freq: object) -> np.ndarray:
    r"""Su's relative upper bound on :math:`|q_m \cdot k_n|` at distance r = n − m (RoFormer §3.4.3).

    .. math::
        \frac{1}{d/2}\sum_{j=1}^{d/2} |S_j|, \qquad S_j = \sum_{l=0}^{j-1} e^{\,\mathrm{i}\,r\,\theta_l}.

    It starts at (d/2 + 1)/2 (32.5 for d = 128) and decays with r: the paper's "long-term decay".
    """
    distances = _check_distances(distances)
    inv_freq = _check_inv_freq(inv_freq)

    def bound(phasors: np.ndarray) -> np.ndarray:
        partial_sums = np.cumsum(phasors, axis=1)  # S_j = Σ_{l<j} e^{i r θ_l}, j = 1 … d/2
        return np.abs(partial_sums).mean(axis=1)

    return _reduce_in_chunks(distances, inv_freq, bound)


def rope_decay_all_ones(distances: object, inv_freq: object) -> np.ndarray:
    r""":math:`\sum_i \cos(r\,\theta_i)`: the RoPE score at distance r when every pair of q and k is (1, 0).

    (An all-ones real vector, pairs (1, 1), scores exactly twice this.) It oscillates and decays on average.
    """
    distances = _check_distances(distances)
    inv_freq = _check_inv_freq(inv_freq)
    return _reduce_in_chunks(distances, inv_freq, lambda e: e.real.sum(axis=1))


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
    distances = _check_distances(distances)
    inv_freq = _check_inv_freq(inv_freq)
    n_samples = as_int("n_samples", n_samples, lo=2, hi=_MAX_SAMPLES)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    if not isinstance(same_vector, bool):
        raise PosEncError(f"same_vector must be True or False, got {same_vector!r:.30}")
    check_elements("rope_decay_random(distances × n_samples)", (distances.shape[0], n_samples))
    rng = np.random.default_rng(seed)
    n = inv_freq.shape[0]
    q = rng.standard_normal((n_samples, n, 2))
    k = q if same_vector else rng.standard_normal((n_samples, n, 2))
    # pair i: q·R(rθ)k = (q1k1 + q2k2) cos rθ + (q2k1 − q1k2) sin rθ
    a = (q[..., 0] * k[..., 0] + q[..., 1] * k[..., 1]).T  # (n, S)
    b = (q[..., 1] * k[..., 0] - q[..., 0] * k[..., 1]).T  # (n, S)
    mean = np.empty(distances.shape[0])
    std = np.empty(distances.shape[0])
    rows = max(1, _CHUNK_ELEMENTS // max(n, n_samples))
    for start in range(0, distances.shape[0], rows):
        e = _trig.phasors(distances[start : start + rows], inv_freq)
        scores = e.real @ a + e.imag @ b  # (rows, S)
        mean[start : start + rows] = scores.mean(axis=1)
        std[start : start + rows] = scores.std(axis=1)
    return mean, std


def rope_first_near_repeat(inv_freq: object, *, tolerance: float = 0.1, max_distance: int = 10**6) -> int | None:
    r"""The smallest distance r ≥ 1 at which *every* pair is within ``tolerance`` radians of a full turn, or None.

    One pair turning 30° per token repeats at r = 12 (the worry of the WeChat article 「Transformer位置编码问题」).
    Pairs with incommensurate speeds almost never line up together, so with a realistic number of pairs no repeat
    occurs within ``max_distance``.
    """
    inv_freq = _check_inv_freq(inv_freq)
    tolerance = as_float("tolerance", tolerance, gt=0.0, le=math.pi)
    max_distance = as_int("max_distance", max_distance, lo=1, hi=_MAX_DISTANCES)
    threshold = math.cos(tolerance)  # |angle mod 2π| ≤ tol  ⇔  cos(angle) ≥ cos(tol)
    rows = max(1, _CHUNK_ELEMENTS // inv_freq.shape[0])
    for start in range(1, max_distance + 1, rows):
        stop = min(start + rows, max_distance + 1)
        cos = _trig.phasors(np.arange(start, stop, dtype=np.float64), inv_freq).real
        hits = np.flatnonzero(cos.min(axis=1) >= threshold)
        if hits.size:
            return int(start + hits[0])
    return None


# --- per-pair diagnostics for context extension ------------------------------------------------------------------


def rotations_in_context(inv_freq: object, context_length: float) -> np.ndarray:
    r"""Full turns each pair makes within L tokens, :math:`r_i = L/\lambda_i = L\,\theta_i/2\pi` (YaRN §3.2)."""
    inv_freq = _check_inv_freq(inv_freq)
    context_length = as_float("context_length", context_length, gt=0.0)
    return context_length * inv_freq / (2.0 * math.pi)


class YarnRegimes(NamedTuple):
    """YaRN's split of the pairs: ``ramp`` (0 keep … 1 interpolate), ``regime`` codes into :data:`REGIMES`."""

    ramp: np.ndarray  # (d/2,) float64
    regime: np.ndarray  # (d/2,) int8: 0 kept, 1 blended, 2 interpolated
    low: float  # last pair index that is kept
    high: float  # first pair index that is fully interpolated


def yarn_regimes(
    head_dim: int,
    *,
    base: float = 10000.0,
    original_max_position_embeddings: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> YarnRegimes:
    r"""Which pairs YaRN keeps, blends or interpolates, computed in the pair index as implementations do.

    The paper states the rule through :math:`r_i`: keep pairs with :math:`r_i > \beta_{\text{fast}}`, interpolate
    those with :math:`r_i < \beta_{\text{slow}}`; the code rounds the corresponding pair indices outward.
    """
    low, high = yarn_correction_range(
        head_dim,
        base=base,
        original_max_position_embeddings=original_max_position_embeddings,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
    )
    ramp = yarn_ramp(head_dim, low, high)
    regime = np.where(ramp <= 0.0, 0, np.where(ramp >= 1.0, 2, 1)).astype(np.int8)
    return YarnRegimes(ramp, regime, float(low), float(high))


# --- helpers ------------------------------------------------------------------------------------------------------


def _check_distances(distances: object, name: str = "distances") -> np.ndarray:
    distances = as_array(name, distances, ndim=1, allow_empty=True).astype(np.float64, copy=False)
    if distances.shape[0] > _MAX_DISTANCES:
        raise PosEncError(f"{name} may hold at most {_MAX_DISTANCES:,} values, got {distances.shape[0]:,}")
    if distances.size and np.max(np.abs(distances)) > 2.0**53:
        raise PosEncError(f"{name} must have magnitude ≤ 2^53")
    return distances


def _reduce_in_chunks(
    distances: np.ndarray, freqs: np.ndarray, reduce: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    r"""``reduce`` of the (rows, n) tables :math:`e^{\mathrm{i}\,r\,\omega_i}`, one chunk of distances at a time."""
    out = np.empty(distances.shape[0])
    rows = max(1, _CHUNK_ELEMENTS // freqs.shape[0])
    for start in range(0, distances.shape[0], rows):
        out[start : start + rows] = reduce(_trig.phasors(distances[start : start + rows], freqs))
    return out
