r"""Temperatures against length: SSMax (Nakanishi 2025) against its definition and Su's log n, Llama 4's query scale
against transformers' formula, and the shared entropy of the toy head."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_core import (
    PosEncError,
    QueryTemperature,
    attention_entropy,
    entropy_by_length,
    length_temperatures,
    log_length_scale,
    mean_entropy,
    softmax,
    ssmax_scale,
)

LLAMA4 = QueryTemperature(source="attn_temperature_tuning", beta=0.1, length=8192, shift=1)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10**6), st.floats(0.05, 2.0))
def test_ssmax_is_a_power_of_n(n: int, s: float) -> None:
    # SSMax_j = n^{s z_j} / Σ_k n^{s z_k}, the paper's definition, against softmax(s ln n · z)
    z = np.linspace(-1.0, 1.0, 7)
    powers = np.array([float(n) ** (s * v) for v in z])
    assert np.max(np.abs(powers / powers.sum() - softmax(ssmax_scale([n], s=s)[0] * z))) < 1e-12


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 10**6), st.integers(2, 10**6))
def test_ssmax_with_s_one_over_ln_l_is_su_log_n(n: int, length: int) -> None:
    got = ssmax_scale([n], s=1 / math.log(length))
    assert abs(got[0] - log_length_scale([n], training_length=length)[0]) < 1e-12


def test_llama4_multiplier_is_transformers_formula() -> None:
    n = np.array([1, 8191, 8192, 8193, 16384, 10**6])
    got = length_temperatures(n, training_length=8192, temperature=LLAMA4, ssmax_s=0.1).llama4
    # Llama4TextAttention: log1p(floor((cache_position + 1) / floor_scale)) * attn_scale + 1, at cache_position n − 1
    want = [math.log1p(math.floor((p + 1.0) / 8192)) * 0.1 + 1.0 for p in n - 1]
    assert np.max(np.abs(got - want)) < 1e-15
    assert got[0] == got[1] == 1.0 and got[2] > 1.0  # 1 until the query at position 8 191


def test_yarn_multiplier_is_mu_squared_past_the_training_length() -> None:
    got = length_temperatures([4096, 8192, 65536], training_length=8192, temperature=LLAMA4, ssmax_s=0.1).yarn
    assert got[0] == got[1] == 1.0
    assert abs(got[2] - (0.1 * math.log(8) + 1) ** 2) < 1e-15


def test_entropy_by_length_is_mean_entropy_with_its_factors() -> None:
    n = np.array([64, 512, 4096])
    curves = entropy_by_length(n, training_length=512, queries=8)
    assert np.array_equal(curves.log_n, mean_entropy(n, log_length_scale(n, training_length=512), queries=8))
    assert np.array_equal(curves.plain, mean_entropy(n, np.ones(3), queries=8))


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 5000))
def test_a_zero_factor_gives_uniform_attention(n: int) -> None:
    assert abs(mean_entropy([n], [0.0], queries=2)[0] - math.log(n)) < 1e-12
    assert abs(attention_entropy(np.zeros(n)) - math.log(n)) < 1e-12


@pytest.mark.parametrize(
    ("argument", "call"),
    [
        ("s", lambda: ssmax_scale([4], s=-1.0)),
        ("lengths", lambda: ssmax_scale([0], s=1.0)),
        ("factors", lambda: mean_entropy([4, 8], [1.0])),
        ("temperature", lambda: length_temperatures([4], training_length=8, temperature=None, ssmax_s=0.1)),
        ("training_length", lambda: length_temperatures([4], training_length=1, temperature=LLAMA4, ssmax_s=0.1)),
    ],
)
def test_bad_arguments_are_refused_by_name(argument, call) -> None:
    with pytest.raises(PosEncError, match=argument):
        call()
