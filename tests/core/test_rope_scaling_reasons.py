r"""The reasons behind the context-extension methods (Su's posts on kexue.fm, YaRN §3.4): base-β digits and each
method's divisor per pair, attention entropy and the logit factors that hold it, ReRoPE's clipped positions — each
against a loop or a closed form written here."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc_core import PosEncError, rope_frequencies
from posenc_core.errors import ERROR_FIELDS
from posenc_core.rope_scaling import (
    attention_entropy,
    entropy_by_length,
    frequency_divisors,
    log_length_scale,
    ntk_divisors,
    rerope_relative_positions,
    rerope_scores,
)

try:  # tests/core as a package (tests/__init__.py present) or as a plain rootdir-inserted folder
    from . import naive
except ImportError:
    import naive

# --- base-β digits and divisors ------------------------------------------------------------------------------------


def position_digits(n: int, *, base: int, digits: int) -> list[int]:
    r"""The base-β digits of ``n``, least significant first, as page 7's words define them:
    :math:`\lfloor n/\beta^i\rfloor \bmod \beta` (Su 2023, 「RoPE是一种β进制编码」), in exact integers."""
    return [n // base**i % base for i in range(digits)]


@given(st.integers(0, 10**12), st.integers(2, 40))
def test_the_pages_digits_rebuild_the_position(n: int, base: int) -> None:
    digits = position_digits(n, base=base, digits=40)
    assert sum(int(d) * base**i for i, d in enumerate(digits)) == n
    assert all(0 <= d < base for d in digits)


def test_digits_of_2023_in_base_10_least_significant_first() -> None:
    assert position_digits(2023, base=10, digits=5) == [3, 2, 0, 2, 0]


def test_ntk_divides_pair_0_by_1_and_the_last_pair_by_exactly_s() -> None:
    for dim, s in [(128, 8.0), (64, 40.0), (4, 2.0)]:
        div = ntk_divisors(dim, factor=s)
        assert div[0] == 1.0 and math.isclose(div[-1], s, rel_tol=1e-14)
        assert np.all(np.diff(div) > 0)


def test_ntk_divisors_are_the_ratio_of_the_registry_frequencies() -> None:
    plain = rope_frequencies(128).inv_freq
    ntk = rope_frequencies(128, rope_scaling={"rope_type": "ntk", "factor": 8.0}).inv_freq
    closed = [8.0 ** (2 * i / 126) for i in range(64)]  # b' = b·s^{d/(d−2)} ⇒ θ_i/θ'_i = s^{2i/(d−2)}
    np.testing.assert_allclose(frequency_divisors(plain, ntk), closed, rtol=1e-12)
    np.testing.assert_allclose(ntk_divisors(128, factor=8.0), closed, rtol=1e-14)


def test_pi_divides_every_pair_by_s_and_yarn_stays_between_1_and_s() -> None:
    plain = rope_frequencies(128).inv_freq
    pi = rope_frequencies(128, rope_scaling={"rope_type": "linear", "factor": 8.0}).inv_freq
    yarn = rope_frequencies(
        128, rope_scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
    ).inv_freq
    np.testing.assert_allclose(frequency_divisors(plain, pi), 8.0, rtol=1e-14)
    div = frequency_divisors(plain, yarn)
    assert np.all(div >= 1 - 1e-12) and np.all(div <= 8 + 1e-12)
    assert np.allclose(div[:21], 1.0) and np.allclose(div[46:], 8.0)  # docs/references.md: 0–20 kept, ≥ 46 θ/s


# --- entropy -------------------------------------------------------------------------------------------------------


def _entropy_loop(row: list[float]) -> float:
    z = math.fsum(math.exp(x) for x in row)
    return -math.fsum(math.exp(x) / z * math.log(math.exp(x) / z) for x in row)


@pytest.mark.parametrize("n", [1, 2, 7, 4096])
def test_uniform_logits_have_entropy_ln_n(n: int) -> None:
    assert math.isclose(float(attention_entropy(np.full(n, 3.5))), math.log(n), rel_tol=1e-13, abs_tol=1e-15)


def test_hand_worked_two_keys() -> None:
    h = float(attention_entropy([0.0, math.log(3.0)]))  # p = (1/4, 3/4)
    assert math.isclose(h, -(0.25 * math.log(0.25) + 0.75 * math.log(0.75)), rel_tol=1e-14)


def test_entropy_matches_a_loop_row_by_row() -> None:
    logits = np.random.default_rng(3).normal(0.0, 2.0, (5, 33))
    np.testing.assert_allclose(attention_entropy(logits), [_entropy_loop(list(r)) for r in logits], rtol=1e-12)


def test_entropy_survives_huge_logits() -> None:
    assert float(attention_entropy([1e300, 0.0])) == 0.0


def test_log_length_scale_is_log_base_l() -> None:
    np.testing.assert_allclose(log_length_scale([512, 4096, 64], training_length=512), [1.0, 4 / 3, 2 / 3])


def test_entropy_curves_rise_with_n_and_the_log_n_factor_holds_them() -> None:
    lengths = [64, 512, 4096, 32768]
    c = entropy_by_length(lengths, training_length=512, queries=8)
    assert np.all(np.diff(c.plain) > 0)  # more keys, flatter attention
    np.testing.assert_array_equal(c.plain[:2], c.yarn[:2])  # s = max(1, n/L) = 1: YaRN changes nothing up to L
    assert c.plain[1] == c.log_n[1]  # κ = log_L L = 1
    assert abs(c.log_n[2] - c.log_n[1]) < 0.5 * (c.plain[2] - c.plain[1])  # at most half the rise
    z = 3.0 * np.random.default_rng(0).standard_normal((8, 32768))
    kappa = (0.1 * math.log(8) + 1) ** 2
    direct = np.mean([_entropy_loop(list(kappa * row[:4096])) for row in z])
    assert math.isclose(c.yarn[2], direct, rel_tol=1e-10)


# --- ReRoPE --------------------------------------------------------------------------------------------------------


def test_rerope_clips_relative_positions_at_the_window() -> None:
    r = np.arange(-10, 11)
    np.testing.assert_array_equal(rerope_relative_positions(r, window=4), [max(-4, min(4, x)) for x in r])


def test_rerope_two_passes_equal_the_clipped_rotation_loop() -> None:
    n, d, w = 12, 8, 5
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, n, d))
    inv_freq = naive.rope_inv_freq(d)
    got = rerope_scores(q, k, inv_freq, window=w, pairing="interleaved", scale=1.0)
    for i in range(n):
        for j in range(n):
            if j > i:
                assert got[i, j] == -np.inf
                continue
            r = max(-w, j - i)  # clip(j − i, −w, w) for a past key
            expected = float(q[i] @ naive.rope_rotation_matrix(r, inv_freq) @ k[j])  # q_iᵀ R_r k_j
            assert math.isclose(got[i, j], expected, rel_tol=1e-10, abs_tol=1e-12)


def test_rerope_with_a_window_longer_than_the_text_is_plain_rope() -> None:
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((2, 6, 4))
    inv_freq = naive.rope_inv_freq(4)
    plain = naive.rope_scores(q, k, inv_freq, range(6), range(6), pairing="half")
    got = rerope_scores(q, k, inv_freq, window=6)
    lower = np.tril_indices(6)
    np.testing.assert_allclose(got[lower], plain[lower], rtol=1e-12)


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda: ntk_divisors(5, factor=2.0), "not_even"),
        (lambda: ntk_divisors(128, factor=0.5), "too_small"),
        (lambda: frequency_divisors([1.0, 0.1], [1.0]), "invalid"),
        (lambda: attention_entropy([]), "invalid"),
        (lambda: log_length_scale([0], training_length=512), "invalid"),
        (lambda: entropy_by_length([10], training_length=512, std=0.0), "not_above"),
        (lambda: rerope_relative_positions([1], window=0), "too_small"),
        (lambda: rerope_scores(np.ones((3, 4)), np.ones((2, 4)), [1.0, 0.01], window=2), "invalid"),
    ],
)
def test_bad_arguments_raise_posenc_error_with_a_known_code(call, code: str) -> None:
    with pytest.raises(PosEncError) as info:
        call()
    assert info.value.code == code and code in ERROR_FIELDS
