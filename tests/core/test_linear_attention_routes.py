r"""Linear attention without the N × N matrix, for the encodings that are not per token.

* :func:`posenc_core.toeplitz_matmul` against the definition :math:`y_i = \sum_j c_{j-i} x_j`, written as a loop;
* :func:`posenc_core.toeplitz_linear_attention` (Luo et al. 2021, arXiv:2106.12566) against kernelised attention
  written pair by pair;
* :func:`posenc_core.alibi_linear_attention`'s decayed running totals against the same loop with
  :math:`e^{-m|i-j|}` (Press et al. 2021), causal and bidirectional, and at lengths where the factorised
  :math:`e^{-mi}e^{mj}` overflows;
* :func:`posenc_core.bias_route_residual`, page 10's check, for every seed and length a reader could pick;
* what the rank does not decide: bidirectional ALiBi's logits have full rank at the default tolerance and at most d
  at 1e-3, though they need no N × N matrix.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_core as pc


def _naive_kernel_attention(phi_q, phi_k, v, factor) -> np.ndarray:
    r""":math:`o_i = \sum_j f(i, j)\,\phi(q_i)\cdot\phi(k_j)\,v_j / \sum_j f(i, j)\,\phi(q_i)\cdot\phi(k_j)`, pair by
    pair (Katharopoulos et al. 2020, eq. 4, with a pair factor f)."""
    n = phi_q.shape[0]
    out = np.zeros((n, v.shape[1]))
    for i in range(n):
        num, den = np.zeros(v.shape[1]), 0.0
        for j in range(n):
            w = factor(i, j) * float(phi_q[i] @ phi_k[j])
            num += w * v[j]
            den += w
        out[i] = num / den
    return out


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), cols=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_toeplitz_matmul_is_the_sum_over_diagonals(n: int, cols: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    c, x = rng.standard_normal(2 * n - 1), rng.standard_normal((n, cols))
    naive = np.array([[sum(c[j - i + n - 1] * x[j, b] for j in range(n)) for b in range(cols)] for i in range(n)])
    scale = np.abs(c).max() * np.abs(x).sum(axis=0).max()  # a bound on every |y_i|
    for method in pc.TOEPLITZ_METHODS:
        assert np.max(np.abs(pc.toeplitz_matmul(c, x, method=method) - naive)) <= 1e-13 * scale


def test_toeplitz_matmul_refuses_the_wrong_number_of_diagonals() -> None:
    with pytest.raises(pc.PosEncError, match="2N - 1"):
        pc.toeplitz_matmul(np.ones(4), np.ones((3, 2)))


@pytest.mark.parametrize("causal", [True, False])
def test_toeplitz_linear_attention_matches_the_pairwise_loop(causal: bool) -> None:
    rng = np.random.default_rng(7)
    n, d, dv = 23, 4, 3
    phi_q, phi_k = pc.elu_feature_map(rng.standard_normal((2, n, d)))
    v = rng.standard_normal((n, dv))
    bias = rng.standard_normal(2 * n - 1)  # a T5-like scalar per offset j − i

    def factor(i: int, j: int) -> float:
        return 0.0 if causal and j > i else math.exp(bias[j - i + n - 1])

    naive = _naive_kernel_attention(phi_q, phi_k, v, factor)
    for method in pc.TOEPLITZ_METHODS:
        out = pc.toeplitz_linear_attention(phi_q, phi_k, v, bias, causal=causal, method=method)
        np.testing.assert_allclose(out, naive, rtol=0, atol=1e-12 * np.abs(naive).max())


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("slope", [0.0, 1 / 256, 0.5, 4.0])
def test_alibi_decayed_totals_match_the_pairwise_loop(causal: bool, slope: float) -> None:
    rng = np.random.default_rng(3)
    n, d, dv = 19, 4, 2
    q, k = rng.standard_normal((2, n, d))
    v = rng.standard_normal((n, dv))

    def factor(i: int, j: int) -> float:  # e^(−m|i − j|): the softmax weight's ALiBi factor
        return 0.0 if causal and j > i else math.exp(-slope * abs(i - j))

    naive = _naive_kernel_attention(pc.elu_feature_map(q), pc.elu_feature_map(k), v, factor)
    for method in pc.ALIBI_LINEAR_METHODS:
        out = pc.alibi_linear_attention(q, k, v, slope=slope, causal=causal, method=method)
        np.testing.assert_allclose(out, naive, rtol=0, atol=1e-12 * np.abs(naive).max())


def test_alibi_bidirectional_decay_equals_its_toeplitz_fft() -> None:
    r"""Two routes for :math:`e^{-m|i-j|}`: one decayed pass each way, and the FFT of its diagonals."""
    rng = np.random.default_rng(11)
    n, slope = 300, 1 / 16
    q, k = rng.standard_normal((2, n, 8))
    v = rng.standard_normal((n, 5))
    offsets = np.arange(-(n - 1), n)
    by_fft = pc.toeplitz_linear_attention(
        pc.elu_feature_map(q), pc.elu_feature_map(k), v, -slope * np.abs(offsets), causal=False
    )
    by_decay = pc.alibi_linear_attention(q, k, v, slope=slope, causal=False)
    assert np.max(np.abs(by_fft - by_decay)) <= 1e-12 * np.max(np.abs(by_decay))


def test_alibi_decayed_totals_stay_finite_where_the_factorised_form_overflows() -> None:
    r""":math:`e^{mj}` overflows float64 past mj ≈ 709.8; the recurrence multiplies by :math:`e^{-m} \le 1` and
    agrees with the pairwise :math:`e^{-m|i-j|}` at a length where it would."""
    n, slope = 1600, 0.5
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.exp(slope * (n - 1)))  # the key factor e^(m j) of e^(−m i)·e^(m j)
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((2, n, 4))
    v = rng.standard_normal((n, 3))
    decay = pc.alibi_linear_attention(q, k, v, slope=slope)
    pairwise = pc.alibi_linear_attention(q, k, v, slope=slope, method="pairwise")
    assert np.all(np.isfinite(decay))
    assert np.max(np.abs(decay - pairwise)) <= 1e-12 * np.max(np.abs(pairwise))


@pytest.mark.parametrize("seed", [0, 1, 2, 12345, 2**32 - 1])
@pytest.mark.parametrize("length", [16, 97, 128])
def test_every_bias_route_gives_the_dense_result(seed: int, length: int) -> None:
    r"""Page 10's check for other seeds and lengths: every fast route is the dense N × N result up to rounding."""
    for encoding in pc.COMPARED:
        route = pc.LINEAR_ROUTES[encoding]
        if route == "per_token":
            continue
        methods = ("decay", "fft") if route == "decay" else ("fft",)
        for causal in (True, False):
            for method in methods:
                residual = pc.bias_route_residual(encoding, length, causal=causal, method=method, seed=seed)
                assert residual < 1e-9, (encoding, causal, method, residual)


def test_bias_route_refuses_per_token_encodings_and_foreign_methods() -> None:
    with pytest.raises(pc.PosEncError, match="encoding"):
        pc.bias_route_residual("rope", 16)
    with pytest.raises(pc.PosEncError, match="method"):
        pc.bias_route_residual("t5", 16, method="decay")


def test_rank_is_no_verdict_on_the_n_by_n_matrix() -> None:
    r"""At L = 2d: per-token logits have rank ≤ d; bidirectional ALiBi's have full rank at the default tolerance yet
    at most d at 1e-3, and the decayed totals reproduce it without the matrix (above)."""
    d, n = 64, 128
    for encoding in ("sinusoidal", "learned", "rope"):
        assert pc.numerical_rank(pc.position_score_matrix(encoding, n, dim=d)) <= d
    alibi = pc.position_score_matrix("alibi", n, dim=d)
    assert pc.numerical_rank(alibi) == n
    assert pc.numerical_rank(alibi, rtol=1e-3) <= d


def test_causal_alibi_factor_has_rank_one() -> None:
    r""":math:`e^{-m(i-j)} = e^{-mi}e^{mj}` (unmasked, at a length where it stays finite) is one outer product."""
    n, slope = 40, 0.5
    i = np.arange(n, dtype=np.float64)
    factor = np.exp(-slope * (i[:, None] - i[None, :]))
    assert pc.numerical_rank(factor) == 1
