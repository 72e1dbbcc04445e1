r"""The closed-form pieces of the RoPE scalings, each written once: every rope_type, page and check calls these.

* NTK-aware base :math:`b' = b\,s^{d/(d-2)}` (:func:`ntk_base`) and dynamic NTK's ratio
  :math:`\alpha = s\,\ell/L - (s-1)` (:func:`dynamic_ntk_alpha`), and the YaRN paper's own dynamic scale
  :math:`s = \max(1, \ell/L)` (:func:`yarn_dynamic_scale`), which differs from it by :math:`(s-1)(\ell/L-1)`;
* YaRN's temperature :math:`0.1\,\mu\ln s + 1` (:func:`yarn_mscale`), the pair indices where its ramp starts and ends
  (:func:`yarn_correction_range`) and the ramp (:func:`yarn_ramp`);
* LongRoPE's factor :math:`\sqrt{1 + \ln s/\ln L}` (:func:`longrope_attention_factor`);
* transformers' rule for a missing ``factor``: :math:`s = L'/L`, max_position_embeddings over the original length
  (:func:`implied_factor`).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import PosEncError, as_bool, as_float, as_int
from ..rope import MAX_ROTARY_DIM

__all__ = [
    "MAX_FACTOR",
    "dynamic_ntk_alpha",
    "implied_factor",
    "longrope_attention_factor",
    "ntk_base",
    "ntk_exponent",
    "yarn_correction_range",
    "yarn_dynamic_scale",
    "yarn_mscale",
    "yarn_ramp",
]

#: Context extension ratios beyond this are not a model anyone runs (Llama 3.1 uses 8, DeepSeek-V3 40).
MAX_FACTOR = 1e6


def ntk_base(base: float, factor: float, dim: int) -> float:
    r"""NTK-aware base :math:`b' = b\,s^{d/(d-2)}`: pair 0 keeps :math:`\theta_0 = 1`, the last pair turns exactly
    s times slower. d is the rotary dimension.

    The one home of this formula: rope_type "ntk" uses it with s, "dynamic" with its α (:func:`dynamic_ntk_alpha`).
    Paper: bloc97 2023, "NTK-Aware Scaled RoPE"; Peng et al. 2023, arXiv:2309.00071, §3.1.
    """
    base = as_float("base", base, gt=1.0)
    # > 0, not ≥ 1: dynamic NTK's α = s·ℓ/L − (s − 1) rounds to just below 1 at ℓ = L; no cap: α grows with ℓ
    factor = as_float("factor", factor, gt=0.0)
    dim = as_int("dim", dim, lo=4, hi=MAX_ROTARY_DIM, even=True)
    try:
        out = base * factor ** ntk_exponent(dim)
    except OverflowError:  # a Python float's ** raises where NumPy's would give inf
        out = math.inf
    if not math.isfinite(out):
        raise PosEncError(f"base · factor^(d/(d−2)) = {base:g} · {factor:g}^… overflows float64")
    return out


def ntk_exponent(dim: int) -> float:
    r"""The exponent :math:`d/(d-2)` of NTK-aware scaling, :math:`b' = b\,s^{d/(d-2)}`: with it the last pair,
    :math:`\theta_{d/2-1} = b^{-(d-2)/d}`, turns exactly s times slower. d is the rotary dimension (even, ≥ 4).

    Paper: bloc97 2023, "NTK-Aware Scaled RoPE"; Peng et al. 2023, arXiv:2309.00071, §3.1.
    """
    dim = as_int("dim", dim, lo=4, hi=MAX_ROTARY_DIM, even=True)
    return dim / (dim - 2)


def dynamic_ntk_alpha(factor: float, seq_len: int, max_position_embeddings: int) -> float:
    r"""Dynamic NTK's effective ratio :math:`\alpha = s\,\ell/L - (s - 1)` with :math:`\ell = \max(\text{seq\_len}, L)`.

    1 (no change) up to L tokens, then growing with the sequence; the base is :math:`b\,\alpha^{d/(d-2)}`
    (emozilla 2023; transformers' ``_compute_dynamic_ntk_parameters``, L = ``max_position_embeddings``). The
    one home of this formula: rope_type "dynamic" calls it.
    """
    factor = as_float("factor", factor, ge=1.0, le=MAX_FACTOR)
    seq_len = as_int("seq_len", seq_len, lo=1, hi=2**40)
    length = as_int("max_position_embeddings", max_position_embeddings, lo=1, hi=2**40)
    return factor * max(seq_len, length) / length - (factor - 1.0)


def yarn_dynamic_scale(seq_len: int, original_max_position_embeddings: int) -> float:
    r"""The YaRN paper's dynamic scale :math:`s = \max(1, \ell/L)`: at ℓ tokens the scaling uses s = ℓ/L.

    Not what transformers' "dynamic" computes: :func:`dynamic_ntk_alpha` keeps the configured factor s and gives
    :math:`s\,\ell/L - (s-1)`, larger by :math:`(s-1)(\ell/L-1)`; at ℓ = s·L that is :math:`s^2 - s + 1` against s.
    Paper: Peng et al. 2023, arXiv:2309.00071, §3.3 (dynamic scaling, after emozilla 2023).
    """
    seq_len = as_int("seq_len", seq_len, lo=1, hi=2**40)
    length = as_int("original_max_position_embeddings", original_max_position_embeddings, lo=1, hi=2**40)
    return max(1.0, seq_len / length)


def longrope_attention_factor(factor: float, *, original_max_position_embeddings: int) -> float:
    r"""LongRoPE / Phi-3's factor on cos and sin, :math:`\sqrt{1 + \ln s / \ln L}` (1 for s ≤ 1).

    The one home of this formula: rope_type "longrope" and :func:`temperature_curves` both call it.
    Paper: Ding et al. 2024, arXiv:2402.13753; transformers' ``_compute_longrope_parameters``.
    """
    factor = as_float("factor", factor, gt=0.0, le=MAX_FACTOR)
    length = as_int("original_max_position_embeddings", original_max_position_embeddings, lo=2, hi=2**40)
    return 1.0 if factor <= 1.0 else math.sqrt(1.0 + math.log(factor) / math.log(length))


def yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    r"""YaRN's temperature :math:`0.1\,\mu\ln s + 1` (1 for s ≤ 1); Peng et al. 2023, eq. (22)."""
    scale = as_float("scale", scale, gt=0.0)
    mscale = as_float("mscale", mscale, ge=0.0)
    return 1.0 if scale <= 1.0 else 0.1 * mscale * math.log(scale) + 1.0


def yarn_correction_range(
    dim: int,
    *,
    base: float = 10000.0,
    original_max_position_embeddings: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> tuple[float, float]:
    r"""Pair indices (low, high) where pairs make ``beta_fast`` and ``beta_slow`` turns within the original length.

    Pair i turns :math:`r_i = L\theta_i/2\pi` times in L tokens; solving :math:`r_i = \beta` for i gives
    :math:`i(\beta) = d\,\ln(L/(2\pi\beta)) / (2\ln b)`. low = ⌊i(β_fast)⌋ and high = ⌈i(β_slow)⌉ (no rounding when
    ``truncate`` is False), clamped to [0, d − 1] — the clamp uses d, not d/2, exactly as every implementation does.
    """
    dim = as_int("dim", dim, lo=2, hi=MAX_ROTARY_DIM, even=True)
    base = as_float("base", base, gt=1.0)
    length = as_int("original_max_position_embeddings", original_max_position_embeddings, lo=1, hi=2**40)
    beta_fast = as_float("beta_fast", beta_fast, gt=0.0)
    beta_slow = as_float("beta_slow", beta_slow, gt=0.0)
    truncate = as_bool("truncate", truncate)

    def pair_index(turns: float) -> float:
        return dim * math.log(length / (turns * 2.0 * math.pi)) / (2.0 * math.log(base))

    low, high = pair_index(beta_fast), pair_index(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, dim - 1)


def yarn_ramp(dim: int, low: float, high: float) -> np.ndarray:
    r"""The (d/2,) blend :math:`\mathrm{clip}((i - \mathrm{low})/(\mathrm{high} - \mathrm{low}), 0, 1)`: 0 keeps θ_i."""
    dim = as_int("dim", dim, lo=2, hi=MAX_ROTARY_DIM, even=True)
    low = as_float("low", low)
    high = as_float("high", high)
    if high == low:
        high += 0.001  # the reference implementations' guard against 0/0
    return np.clip((np.arange(dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)


def implied_factor(
    factor: float | None, *, max_position_embeddings: int | None, original_max_position_embeddings: int
) -> float:
    r"""The extension ratio s: ``factor`` when given, else :math:`s = L'/L`, ``max_position_embeddings`` over
    ``original_max_position_embeddings`` — the rule transformers applies to YaRN and LongRoPE configs.

    A ratio below 1 would shrink the context and is an error; so is neither a factor nor a max_position_embeddings.
    Source: transformers' ``_compute_yarn_parameters`` and ``_compute_longrope_parameters`` (Phi-3's configs give no
    factor: 131072 / 4096 = 32).
    """
    if factor is not None:
        return as_float("factor", factor, ge=1.0, le=MAX_FACTOR)
    original = as_int("original_max_position_embeddings", original_max_position_embeddings, lo=1, hi=2**40)
    if max_position_embeddings is None:
        raise PosEncError(
            "rope_scaling needs 'factor' (the context extension ratio s ≥ 1), or max_position_embeddings to imply it"
        )
    longest = as_int("max_position_embeddings", max_position_embeddings, lo=1, hi=2**40)
    if longest < original:
        raise PosEncError(
            f"no 'factor' given, and max_position_embeddings / original_max_position_embeddings = {longest} / "
            f"{original} < 1 implies shrinking the context; give factor ≥ 1"
        )
    return longest / original
