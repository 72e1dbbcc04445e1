r"""posenc_core.rope_scaling (per-pair analysis, NTK bases, temperatures) against independent derivations and
published numbers (docs/references.md), plus invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc_core import PosEncError, rope_frequencies, rope_inv_freq, yarn_regimes
from posenc_core.rope_scaling import (
    angle_coverage,
    dynamic_ntk_alpha,
    implied_base,
    longrope_attention_factor,
    ntk_base,
    pair_regimes,
    temperature_curves,
    unseen_angles,
    yarn_ramp_by_turns,
)


def theta(dim: int = 128, base: float = 10000.0) -> np.ndarray:
    return np.array([base ** (-2 * i / dim) for i in range(dim // 2)])  # straight from RoFormer eq. (15)


@pytest.mark.parametrize(("factor", "published"), [(2, 20221), (4, 40890), (8, 82685), (16, 167199)])
def test_ntk_base_matches_published_numbers(factor: int, published: int) -> None:
    assert round(ntk_base(10000.0, factor, 128)) == published


def test_llama2_yarn_at_8_is_21_25_18_like_yarn_regimes() -> None:
    scaled = rope_frequencies(
        128, rope_scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
    ).inv_freq
    codes = pair_regimes(theta(), scaled, factor=8)
    assert np.bincount(codes, minlength=3).tolist() == [21, 25, 18]
    assert np.array_equal(codes, yarn_regimes(128, original_max_position_embeddings=4096).regime)


def test_llama31_bands_are_28_kept_then_6_blended() -> None:
    scaling = {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }
    scaled = rope_frequencies(128, base=500000.0, rope_scaling=scaling).inv_freq
    codes = pair_regimes(theta(base=500000.0), scaled, factor=8)
    assert (codes[:29] == 0).all() and (codes[29:35] == 1).all() and (codes[35:] == 2).all()


def test_pi_interpolates_every_pair_and_ntk_keeps_first_and_interpolates_last() -> None:
    linear = pair_regimes(theta(), theta() / 4, factor=4)
    ntk = pair_regimes(theta(), theta(base=ntk_base(10000.0, 4, 128)), factor=4)
    assert (linear == 2).all()
    assert ntk[0] == 0 and ntk[-1] == 2 and (ntk[1:-1] == 1).all()


def test_dynamic_alpha_is_one_until_the_sequence_outgrows_l() -> None:
    assert dynamic_ntk_alpha(8, 100, 4096) == 1.0 == dynamic_ntk_alpha(8, 4096, 4096)
    assert dynamic_ntk_alpha(8, 8192, 4096) == 8 * 2 - 7
    scaled = rope_frequencies(
        128, rope_scaling={"rope_type": "dynamic", "factor": 8.0}, max_position_embeddings=4096, seq_len=8192
    ).inv_freq
    assert implied_base(scaled) == pytest.approx(10000.0 * 9 ** (128 / 126), rel=1e-12)


@given(st.sampled_from([4, 24, 64, 96, 128, 256]), st.floats(2.0, 1e7))
def test_implied_base_inverts_rope_inv_freq(dim: int, base: float) -> None:
    assert implied_base(rope_inv_freq(dim, base=base)) == pytest.approx(base, rel=1e-9)


def test_coverage_is_full_exactly_for_pairs_that_turn_once() -> None:
    th = theta()
    covered = angle_coverage(th, 4096)
    full = covered == 2 * math.pi
    assert np.array_equal(full, 4096 * th / (2 * math.pi) >= 1)
    assert np.allclose(covered[~full], 4096 * th[~full])


@given(st.integers(1, 64))
def test_pi_at_t_over_l_leaves_no_unseen_angle(stretch: int) -> None:
    assert np.max(unseen_angles(theta(), 4096, theta() / stretch, 4096 * stretch)) <= 1e-12


def test_plain_rope_past_l_meets_new_angles_only_on_slow_pairs() -> None:
    new = unseen_angles(theta(), 4096, theta(), 8 * 4096)
    turns = 4096 * theta() / (2 * math.pi)
    assert np.array_equal(new > 0, turns < 1)


def test_paper_ramp_ends_and_midpoint() -> None:
    ramp = yarn_ramp_by_turns(np.array([0.5, 1.0, 16.5, 32.0, 100.0]), beta_fast=32, beta_slow=1)
    assert ramp.tolist() == [1.0, 1.0, 0.5, 0.0, 0.0]


def test_temperature_curves_match_the_formulas() -> None:
    s = np.array([1.0, 8.0, 40.0])
    curves = temperature_curves(s, original_max_position_embeddings=4096, mscale=1.0, mscale_all_dim=1.0)
    assert curves.yarn[1] == pytest.approx(1.2079, abs=1e-4)  # docs/references.md
    assert np.allclose(curves.deepseek_rope, 1.0)
    assert curves.deepseek_softmax[2] == pytest.approx((0.1 * math.log(40) + 1) ** 2)
    assert curves.longrope[1] == pytest.approx(math.sqrt(1 + math.log(8) / math.log(4096)))
    assert longrope_attention_factor(8, original_max_position_embeddings=4096) == pytest.approx(curves.longrope[1])
    assert longrope_attention_factor(1, original_max_position_embeddings=4096) == 1.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: pair_regimes([1.0, 0.5], [1.0], factor=2),
        lambda: pair_regimes([1.0, 0.5], [1.0, -0.5], factor=2),
        lambda: pair_regimes([1.0, 0.5], [1.0, 0.5], factor=0.5),
        lambda: angle_coverage([1.0], -1),
        lambda: ntk_base(10000.0, 2, 2),
        lambda: ntk_base(1e300, 1e6, 4),
        lambda: dynamic_ntk_alpha(2, 0, 10),
        lambda: implied_base([1.0]),
        lambda: yarn_ramp_by_turns([1.0], beta_fast=1, beta_slow=2),
        lambda: yarn_ramp_by_turns([-1.0]),
        lambda: temperature_curves([0.5], original_max_position_embeddings=10),
        lambda: temperature_curves([2.0], original_max_position_embeddings=10, mscale=0.0),
        lambda: longrope_attention_factor(2, original_max_position_embeddings=1),
        lambda: unseen_angles([1.0], 4, [1.0, 2.0], 8),
    ],
)
def test_bad_arguments_raise_posenc_error(call) -> None:
    with pytest.raises(PosEncError):
        call()
