r"""Every number in docs/references.md "Numbers worth reproducing on the pages", reproduced by posenc_core.

Where a number is quoted rounded, the test asserts the rounding *and* the exact closed form it comes from,
so a value that is right to the quoted digits for the wrong reason still fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc_core as pc


def _regime_names(regimes) -> np.ndarray:
    """yarn_regimes().regime as names, whether it holds codes into REGIMES or the names themselves."""
    regime = np.asarray(regimes.regime)
    if np.issubdtype(regime.dtype, np.integer):
        return np.asarray(pc.rope_scaling.REGIMES)[regime]
    return regime.astype(str)


# -------------------------------------------------------------------------------------- RoPE decay


def test_rope_decay_bound_is_32_5_then_10_23_then_6_54_at_distances_0_100_256():
    """RoFormer §3.4.3, d = 128, base 10⁴: (1/64) Σ_j |S_j| ≈ 32.5, 10.2, 6.5 (docs/references.md)."""
    bound = pc.rope_decay_bound(np.array([0, 100, 256]), pc.rope_inv_freq(128, base=10000.0))
    assert bound[0] == pytest.approx(32.5, abs=1e-12)  # Σ_{j=1}^{64} j / 64 = 2080/64 exactly
    assert round(float(bound[1]), 2) == 10.23
    assert round(float(bound[2]), 2) == 6.54
    assert round(float(bound[1]), 1) == 10.2  # the rounding docs/references.md quotes
    assert round(float(bound[2]), 1) == 6.5


def test_rope_decay_bound_at_zero_is_half_of_pairs_plus_one():
    for dim in (2, 16, 128, 512):
        bound = pc.rope_decay_bound(np.array([0]), pc.rope_inv_freq(dim))
        assert bound[0] == pytest.approx((dim / 2 + 1) / 2, rel=1e-15)


def test_rope_all_ones_curve_starts_at_the_number_of_pairs_and_is_sum_of_cosines():
    inv = pc.rope_inv_freq(128, base=10000.0)
    curve = pc.rope_decay_all_ones(np.array([0, 100, 256]), inv)
    assert curve[0] == pytest.approx(64.0, abs=1e-12)
    for value, r in zip(curve, (0, 100, 256), strict=True):
        assert value == pytest.approx(math.fsum(math.cos(r * 10000.0 ** (-2 * i / 128)) for i in range(64)), abs=1e-11)


# --------------------------------------------------------------------------------------------- NTK


@pytest.mark.parametrize(("factor", "published"), [(2, 20221), (4, 40890), (8, 82685), (16, 167199)])
def test_ntk_aware_base_for_d128_matches_published_value(factor, published):
    """base' = 10⁴ · s^{128/126}; recovered from the returned frequencies: θ_63 = base'^{−126/128}."""
    freqs = pc.rope_frequencies(128, base=10000.0, rope_scaling={"rope_type": "ntk", "factor": float(factor)})
    new_base = float(freqs.inv_freq[-1]) ** (-128 / 126)
    assert new_base == pytest.approx(10000.0 * factor ** (128 / 126), rel=1e-12)
    assert round(new_base) == published
    assert freqs.attention_factor == 1.0


@pytest.mark.parametrize("factor", [2.0, 4.0, 8.0, 16.0])
def test_ntk_aware_keeps_the_fastest_pair_and_slows_the_slowest_by_exactly_factor(factor):
    plain = pc.rope_inv_freq(128)
    ntk = pc.rope_frequencies(128, rope_scaling={"rope_type": "ntk", "factor": factor}).inv_freq
    assert ntk[0] == 1.0
    assert ntk[-1] == pytest.approx(plain[-1] / factor, rel=1e-12)


# -------------------------------------------------------------------------------------------- YaRN

YARN_D128 = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}


def test_yarn_d128_s8_keeps_pairs_up_to_20_and_interpolates_from_46():
    freqs = pc.rope_frequencies(128, base=10000.0, rope_scaling=dict(YARN_D128), max_position_embeddings=32768)
    plain = pc.rope_inv_freq(128, base=10000.0)
    inv = freqs.inv_freq
    np.testing.assert_allclose(inv[:21], plain[:21], rtol=1e-15, atol=0)  # pairs 0 … 20 kept
    np.testing.assert_allclose(inv[46:], plain[46:] / 8.0, rtol=1e-15, atol=0)  # pairs 46 … 63 divided by s
    blended = slice(21, 46)
    assert np.all(inv[blended] < plain[blended])
    assert np.all(inv[blended] > plain[blended] / 8.0)


def test_yarn_d128_s8_attention_factor_is_1_2079():
    freqs = pc.rope_frequencies(128, base=10000.0, rope_scaling=dict(YARN_D128), max_position_embeddings=32768)
    assert freqs.attention_factor == pytest.approx(0.1 * math.log(8.0) + 1.0, rel=1e-15)
    assert round(freqs.attention_factor, 4) == 1.2079


def test_yarn_d128_s8_regimes_count_21_kept_25_blended_18_interpolated():
    regimes = pc.yarn_regimes(128, base=10000.0, original_max_position_embeddings=4096)
    names = _regime_names(regimes)
    assert names.shape == (64,)
    assert list(names[:21]) == ["kept"] * 21
    assert list(names[21:46]) == ["blended"] * 25
    assert list(names[46:]) == ["interpolated"] * 18
    ramp = np.asarray(regimes.ramp)
    np.testing.assert_allclose(ramp, np.clip((np.arange(64) - 20) / (46 - 20), 0, 1), rtol=0, atol=1e-15)


def test_yarn_correction_range_for_d128_is_20_to_46():
    """corr(β) = d·ln(L/(2πβ))/(2 ln b): corr(32) ≈ 20.94 → floor 20, corr(1) ≈ 45.03 → ceil 46."""
    corr = [128 * math.log(4096 / (2 * math.pi * beta)) / (2 * math.log(10000.0)) for beta in (32, 1)]
    assert math.floor(corr[0]) == 20
    assert math.ceil(corr[1]) == 46
    low, high = pc.rope_scaling.yarn_correction_range(128, base=10000.0, original_max_position_embeddings=4096)
    assert (low, high) == (20, 46)
    low, high = pc.rope_scaling.yarn_correction_range(
        128, base=10000.0, original_max_position_embeddings=4096, truncate=False
    )
    assert low == pytest.approx(corr[0], rel=1e-15)
    assert high == pytest.approx(corr[1], rel=1e-15)


# --------------------------------------------------------------------------------------- Llama 3.1

LLAMA31 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


def test_llama31_keeps_pairs_up_to_28_divides_from_35_and_blends_29_to_34():
    freqs = pc.rope_frequencies(128, base=500000.0, rope_scaling=dict(LLAMA31), max_position_embeddings=131072)
    plain = pc.rope_inv_freq(128, base=500000.0)
    inv = freqs.inv_freq
    np.testing.assert_allclose(inv[:29], plain[:29], rtol=1e-15, atol=0)
    np.testing.assert_allclose(inv[35:], plain[35:] / 8.0, rtol=1e-15, atol=0)
    assert np.all(inv[29:35] < plain[29:35])
    assert np.all(inv[29:35] > plain[29:35] / 8.0)
    assert freqs.attention_factor == 1.0


def test_llama31_band_edges_are_wavelengths_2048_and_8192():
    """Pair 28 turns in < 8192/4 tokens, pair 29 in more; pair 34 in < 8192, pair 35 in more."""
    lam = pc.rope_wavelengths(pc.rope_inv_freq(128, base=500000.0))
    assert lam[28] < 2048 < lam[29]
    assert lam[34] < 8192 < lam[35]


# ------------------------------------------------------------------------------------------- ALiBi


def test_alibi_12_heads_are_powers_of_two_then_odd_half_powers():
    exponents = [-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5]
    np.testing.assert_allclose(pc.alibi_slopes(12), [2.0**e for e in exponents], rtol=1e-15, atol=0)


def test_alibi_8_heads_are_one_half_to_one_256th_and_one_head_is_2_to_minus_8():
    np.testing.assert_allclose(pc.alibi_slopes(8), [2.0 ** -(k + 1) for k in range(8)], rtol=1e-15, atol=0)
    np.testing.assert_allclose(pc.alibi_slopes(1), [2.0**-8], rtol=1e-15, atol=0)


# ------------------------------------------------------------------------------------ RoPE periods


def test_rope_periods_d512_are_6_28_then_628_3_then_60611():
    periods = pc.rope_wavelengths(pc.rope_inv_freq(512, base=10000.0))
    assert periods.shape == (256,)  # i runs 0 … 255: there is no T_256
    assert periods[0] == pytest.approx(2 * math.pi, rel=1e-15)
    assert round(float(periods[0]), 2) == 6.28
    assert periods[128] == pytest.approx(200 * math.pi, rel=1e-13)  # 2π·10000^{1/2}
    assert round(float(periods[128]), 1) == 628.3
    assert periods[255] == pytest.approx(2 * math.pi * 10000.0 ** (510 / 512), rel=1e-13)
    assert round(float(periods[255])) == 60611


def test_published_periods_316_23_and_15811_39_are_not_what_the_formula_gives():
    """The article 「从零学习大模型--旋转位置编码」 prints 6.28 / 316.23 / 15 811.39 for i = 0 / 128 / 256: only
    the first is right."""
    periods = pc.rope_wavelengths(pc.rope_inv_freq(512, base=10000.0))
    assert not np.isclose(periods[128], 316.23, rtol=1e-2)
    assert not np.isclose(periods[255], 15811.39, rtol=1e-2)
    assert not np.any(np.isclose(periods, 316.23, rtol=1e-3))
    assert not np.any(np.isclose(periods, 15811.39, rtol=1e-3))


# ---------------------------------------------------------------------------------- sinusoid forms


@pytest.mark.parametrize("dim", [4, 128, 512])
@pytest.mark.parametrize("base", [10000.0, 500.0])
def test_sinusoid_exp_form_equals_power_form(dim, base):
    """exp(−2i·ln(base)/d) and base^(−2i/d) are the same numbers (both appear in mmmwhy's
    「Transformer 中的 position embedding 的设计」)."""
    i = np.arange(dim // 2)
    exp_form = np.exp(-2 * i * math.log(base) / dim)
    power_form = base ** (-2 * i / dim)
    np.testing.assert_allclose(exp_form, power_form, rtol=1e-13, atol=0)
    library_exp = pc.sinusoidal_inv_freq(dim, base=base, form="exp")
    library_power = pc.sinusoidal_inv_freq(dim, base=base, form="power")
    np.testing.assert_allclose(library_exp, exp_form, rtol=1e-13, atol=0)
    np.testing.assert_allclose(library_power, power_form, rtol=1e-13, atol=0)
    np.testing.assert_allclose(library_exp, library_power, rtol=1e-13, atol=0)
    np.testing.assert_allclose(pc.sinusoidal_inv_freq(dim, base=base), power_form, rtol=1e-13, atol=0)
    table = pc.sinusoidal(50, dim, base=base)
    angles = np.arange(50)[:, None] * exp_form[None, :]
    np.testing.assert_allclose(table[:, 0::2], np.sin(angles), rtol=0, atol=1e-13)
    np.testing.assert_allclose(table[:, 1::2], np.cos(angles), rtol=0, atol=1e-13)
