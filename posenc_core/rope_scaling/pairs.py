r"""What a context-extension method does to each RoPE pair: its regime, its angles, its base and its temperature.

A model trained on L tokens has seen pair i only at angles :math:`m\theta_i` for :math:`0 \le m < L`, i.e. on the
arc :math:`[0, \min(2\pi, L\theta_i))` of its circle. A pair that turns many times within L
(:math:`r_i = L/\lambda_i \gg 1`) has seen every angle; a pair with :math:`r_i < 1` has seen only part of its
circle, and running at T > L tokens shows it angles it never saw. The methods of :mod:`posenc_core.rope_scaling`
change :math:`\theta_i` per pair:

* **regime** (:func:`pair_regimes`): a pair is *kept* (θ unchanged), *interpolated* (θ/s, the whole factor) or
  *blended* (anything else) — the classification YaRN (Peng et al. 2023, arXiv:2309.00071, §3.2) states for its
  own ramp, applied to the frequencies of any method;
* **angles** (:func:`angle_coverage`, :func:`unseen_angles`): the arc each pair covers, and how much of the target
  length's arc lies outside the training arc;
* **turns** (:func:`rotations_in_context`, :func:`yarn_regimes`): :math:`r_i = L/\lambda_i`, and the pairs YaRN
  keeps, blends or interpolates, computed in the pair index as implementations do;
* **base** (:func:`implied_base`): NTK-aware scaling (bloc97 2023) and dynamic NTK (emozilla 2023) change only the
  base, :math:`b' = b\,\alpha^{d/(d-2)}`, which the slowest pair gives back;
* **ramp against r** (:func:`yarn_ramp_by_turns`): the paper's γ(r), next to the pair-index ramp implementations use;
* **temperature** (:func:`temperature_curves`): YaRN's :math:`0.1\ln s + 1`, DeepSeek's mscale ratio and softmax
  factor, LongRoPE's :math:`\sqrt{1 + \ln s/\ln L}` (Ding et al. 2024, arXiv:2402.13753).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import PosEncError, as_array, as_float, as_int
from ..rope.rotation import _check_inv_freq
from .formulas import MAX_FACTOR, longrope_attention_factor, yarn_correction_range, yarn_mscale, yarn_ramp

__all__ = [
    "REGIMES",
    "TemperatureCurves",
    "YarnRegimes",
    "angle_coverage",
    "implied_base",
    "pair_regimes",
    "regime_counts",
    "rotations_in_context",
    "temperature_curves",
    "unseen_angles",
    "unseen_pair_count",
    "yarn_ramp_by_turns",
    "yarn_regimes",
]

#: Names of the codes in :attr:`YarnRegimes.regime`.
REGIMES = ("kept", "blended", "interpolated")

_MAX_CURVE_POINTS = 100_000  # temperature curves are drawn, not tabulated: a few hundred points suffice


# --- turns and YaRN's split of the pairs ------------------------------------------------------------------------


def check_scaled_inv_freq(inv_freq: object, scaled_inv_freq: object) -> tuple[np.ndarray, np.ndarray]:
    r"""(θ, θ′) as float64 arrays of one shape, θ′ > 0: the frequencies before and after a scaling."""
    theta = _check_inv_freq(inv_freq)
    scaled = as_array("scaled_inv_freq", scaled_inv_freq, ndim=1).astype(np.float64, copy=False)
    if scaled.shape != theta.shape:
        raise PosEncError(f"scaled_inv_freq must have the shape of inv_freq {theta.shape}, got {scaled.shape}")
    if np.any(scaled <= 0):
        raise PosEncError("scaled_inv_freq must be positive (radians per token)")
    return theta, scaled


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


# --- which pairs a method kept, interpolated or blended ----------------------------------------------------------


def pair_regimes(inv_freq: object, scaled_inv_freq: object, *, factor: float, rtol: float = 1e-9) -> np.ndarray:
    r"""Per pair, 0 *kept* (:math:`\theta'_i = \theta_i`), 2 *interpolated* (:math:`\theta'_i = \theta_i/s`) or 1
    *blended* (anything else), as int8 codes into :data:`REGIMES`.

    Works for any method: PI interpolates every pair, NTK-aware keeps pair 0, interpolates the last pair exactly and
    blends the rest, YaRN and Llama 3 have three bands. Equality is relative, within ``rtol``; when s = 1 "kept"
    wins. Paper: Peng et al. 2023, arXiv:2309.00071, §3.2 (the three cases of "NTK-by-parts").
    """
    theta, scaled = check_scaled_inv_freq(inv_freq, scaled_inv_freq)
    factor = as_float("factor", factor, ge=1.0, le=MAX_FACTOR)
    rtol = as_float("rtol", rtol, ge=0.0, le=0.5)
    ratio = scaled / theta  # 1 → kept, 1/s → interpolated
    kept = np.abs(ratio - 1.0) <= rtol
    interpolated = np.abs(ratio * factor - 1.0) <= rtol
    return np.where(kept, 0, np.where(interpolated, 2, 1)).astype(np.int8)


def regime_counts(regime: object) -> np.ndarray:
    r"""How many pairs are kept, blended and interpolated: the (3,) int64 counts of the codes 0, 1, 2 of
    :data:`REGIMES` in ``regime`` (from :func:`pair_regimes` or :func:`yarn_regimes`)."""
    codes = as_array("regime", regime, ndim=1, integer=True, allow_empty=True)
    if codes.size and (codes.min() < 0 or codes.max() >= len(REGIMES)):
        raise PosEncError(f"regime must hold codes 0 … {len(REGIMES) - 1} (kept, blended, interpolated)")
    return np.bincount(codes, minlength=len(REGIMES))


# --- angles seen in training and at the target length ------------------------------------------------------------


def angle_coverage(inv_freq: object, length: float) -> np.ndarray:
    r"""The arc of angles pair i reaches over positions :math:`0 \le m < L`: :math:`\min(2\pi, L\,\theta_i)` radians.

    A pair with :math:`r_i = L\theta_i/2\pi \ge 1` has covered its whole circle; the others only
    :math:`[0, L\theta_i)`. (The supremum L·θ, not (L − 1)·θ: with it, PI at s = T/L maps T onto exactly the
    training arc.)
    """
    theta = _check_inv_freq(inv_freq)
    length = as_float("length", length, gt=0.0, le=2.0**53)
    return np.minimum(2.0 * math.pi, length * theta)


def unseen_angles(train_inv_freq: object, train_length: float, test_inv_freq: object, test_length: float) -> np.ndarray:
    r"""Per pair, radians of the test arc outside the training arc,
    :math:`\max(0,\ c_i^{\text{test}} - c_i^{\text{train}})`.

    With :math:`c = \min(2\pi, L\theta)` from :func:`angle_coverage`. Zero means every angle the pair takes at
    ``test_length`` was seen during training (on the training frequencies); anything above zero is out of
    distribution — the failure PI, NTK, YaRN and Llama 3 each try to avoid (Chen et al. 2023, arXiv:2306.15595, §2).
    """
    train = angle_coverage(train_inv_freq, train_length)
    test = as_array("test_inv_freq", test_inv_freq, ndim=1)
    if test.shape != train.shape:
        raise PosEncError(f"test_inv_freq must have the shape of train_inv_freq {train.shape}, got {test.shape}")
    return np.maximum(0.0, angle_coverage(test, test_length) - train)


def unseen_pair_count(
    train_inv_freq: object,
    train_length: float,
    test_inv_freq: object,
    test_length: float,
    *,
    atol: float = 1e-9,
) -> int:
    r"""How many pairs meet an angle at ``test_length`` they never met in training:
    :math:`\#\{i : \text{unseen}_i > \text{atol}\}`, with :func:`unseen_angles` (radians; ``atol`` absorbs rounding)."""
    atol = as_float("atol", atol, ge=0.0, le=math.pi)
    unseen = unseen_angles(train_inv_freq, train_length, test_inv_freq, test_length)
    return int(np.count_nonzero(unseen > atol))


# --- the base a set of frequencies implies, and YaRN's ramp as the paper writes it ----------------------------------


def implied_base(inv_freq: object) -> float:
    r"""The base b that gives these frequencies if they are plain RoPE ones, read off the slowest pair:
    :math:`\theta_{n-1} = b^{-2(n-1)/d}` with d = 2n, so :math:`b = \theta_{n-1}^{-d/(2(n-1))}`.

    Exact for default, NTK-aware and dynamic NTK frequencies (they only change the base); a way to check a base
    readout against the frequencies actually computed.
    """
    theta = _check_inv_freq(inv_freq)
    n = theta.shape[0]
    if n < 2:
        raise PosEncError("inv_freq needs at least 2 pairs to imply a base")
    return float(theta[-1] ** (-(2 * n) / (2.0 * (n - 1))))


def yarn_ramp_by_turns(turns: object, *, beta_fast: float = 32.0, beta_slow: float = 1.0) -> np.ndarray:
    r"""The paper's interpolation weight as a function of turns r: :math:`1 - \gamma(r)`, with
    :math:`\gamma(r) = 0` for :math:`r < \alpha`, 1 for :math:`r > \beta`, :math:`(r - \alpha)/(\beta - \alpha)` between
    (α = ``beta_slow``, β = ``beta_fast``).

    Peng et al. 2023, arXiv:2309.00071, eq. (18)–(19): :math:`h(\theta) = (1-\gamma)\,\theta/s + \gamma\,\theta`. The
    implementations instead ramp linearly in the *pair index* between rounded bounds
    (:func:`~posenc_core.rope_scaling.yarn_ramp`) — linear in :math:`\ln r`, not in r.
    """
    r = as_array("turns", turns, allow_empty=True).astype(np.float64, copy=False)
    if np.any(r < 0):
        raise PosEncError("turns must be ≥ 0")
    beta_fast = as_float("beta_fast", beta_fast, gt=0.0)
    beta_slow = as_float("beta_slow", beta_slow, gt=0.0)
    if beta_fast <= beta_slow:
        raise PosEncError(f"beta_fast ({beta_fast:g}) must be > beta_slow ({beta_slow:g})")
    gamma = np.clip((r - beta_slow) / (beta_fast - beta_slow), 0.0, 1.0)
    return 1.0 - gamma


# --- temperature ------------------------------------------------------------------------------------------------------


class TemperatureCurves(NamedTuple):
    """Each method's factor on cos and sin (logits scale by its square) at every s, and DeepSeek's softmax factor."""

    yarn: np.ndarray  # 0.1·ln s + 1
    deepseek_rope: np.ndarray  # mscale(s, mscale) / mscale(s, mscale_all_dim): what multiplies cos and sin
    deepseek_softmax: np.ndarray  # mscale(s, mscale_all_dim)²: what multiplies 1/√d for every dimension
    longrope: np.ndarray  # √(1 + ln s / ln L)


def temperature_curves(
    factors: object,
    *,
    original_max_position_embeddings: int,
    mscale: float = 1.0,
    mscale_all_dim: float = 1.0,
) -> TemperatureCurves:
    r"""The attention temperatures of YaRN, DeepSeek-V2/V3 and LongRoPE at each extension factor s ≥ 1.

    YaRN multiplies cos and sin by :math:`\mu(s) = 0.1\ln s + 1` (Peng et al. 2023, eq. (22)), so logits grow by
    :math:`\mu^2`. DeepSeek splits it: cos and sin get :math:`\mu(s, m)/\mu(s, m_{\text{all}})` (1 when the two are
    equal, as in V3), and the softmax scale :math:`1/\sqrt d` of *every* dimension gets :math:`\mu(s, m_{\text{all}})^2`
    (transformers' ``yarn_apply_mscale``), where :math:`\mu(s, m) = 0.1\,m\ln s + 1`. LongRoPE's is
    :math:`\sqrt{1 + \ln s/\ln L}`. Each curve calls the formula its rope_type uses (:mod:`.formulas`).
    """
    s = as_array("factors", factors, ndim=1).astype(np.float64, copy=False)
    if s.shape[0] > _MAX_CURVE_POINTS:
        raise PosEncError(f"factors may hold at most {_MAX_CURVE_POINTS:,} values, got {s.shape[0]:,}")
    if np.any(s < 1.0) or np.any(s > MAX_FACTOR):
        raise PosEncError(f"factors must lie in [1, {MAX_FACTOR:g}]")
    mscale = as_float("mscale", mscale, gt=0.0, le=1e3)  # both > 0: the case in which DeepSeek splits the factor
    mscale_all_dim = as_float("mscale_all_dim", mscale_all_dim, gt=0.0, le=1e3)
    length = as_int("original_max_position_embeddings", original_max_position_embeddings, lo=2, hi=2**40)

    def mu(m: float) -> np.ndarray:
        return np.array([yarn_mscale(v, m) for v in s])

    all_dim = mu(mscale_all_dim)
    return TemperatureCurves(
        yarn=mu(1.0),
        deepseek_rope=mu(mscale) / all_dim,
        deepseek_softmax=all_dim**2,
        longrope=np.array([longrope_attention_factor(v, original_max_position_embeddings=length) for v in s]),
    )
