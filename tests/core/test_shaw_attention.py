r"""Shaw et al. 2018 attention with key- and value-side offsets, against eqs. (3)–(5) written pair by pair."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc_core as pc


def _shaw_loop(x, w_q, w_k, w_v, a_k, a_v, k):
    r"""e_ij = x_i W_Q (x_j W_K + a^K_ij)ᵀ / √d_k, α = softmax_j e, z_i = Σ_j α_ij (x_j W_V + a^V_ij)."""
    n, d_k = x.shape[0], w_q.shape[1]
    out = np.zeros((n, w_v.shape[1]))
    for i in range(n):
        e = np.array([(x[i] @ w_q) @ (x[j] @ w_k + a_k[min(max(j - i, -k), k) + k]) / math.sqrt(d_k) for j in range(n)])
        alpha = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
        out[i] = sum(alpha[j] * (x[j] @ w_v + a_v[min(max(j - i, -k), k) + k]) for j in range(n))
    return out


@pytest.mark.parametrize("method", pc.relative.SHAW_METHODS)
@pytest.mark.parametrize(("length", "k"), [(1, 0), (6, 2), (12, 3), (9, 16)])
def test_shaw_attention_matches_the_papers_equations(method: str, length: int, k: int) -> None:
    rng = np.random.default_rng(length * 31 + k)
    x = rng.standard_normal((length, 8))
    w_q, w_k = rng.standard_normal((2, 8, 4))
    w_v = rng.standard_normal((8, 5))
    a_k, a_v = rng.standard_normal((2 * k + 1, 4)), rng.standard_normal((2 * k + 1, 5))
    got = pc.shaw_attention(x, w_q, w_k, w_v, a_k, a_v, max_relative=k, method=method)
    assert np.allclose(got.output, _shaw_loop(x, w_q, w_k, w_v, a_k, a_v, k), atol=1e-12)
    assert np.allclose(got.weights.sum(axis=1), 1.0)
    no_values = pc.shaw_attention(x, w_q, w_k, w_v, a_k, np.zeros_like(a_v), max_relative=k, method=method)
    assert np.allclose(got.output - no_values.output, got.value_term, atol=1e-12)  # the value side's share


def test_without_offsets_shaw_attention_is_plain_attention() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((10, 6))
    w_q, w_k, w_v = rng.standard_normal((3, 6, 6))
    zeros = np.zeros((5, 6))
    shaw = pc.shaw_attention(x, w_q, w_k, w_v, zeros, zeros, max_relative=2)
    plain, _ = pc.attention(x @ w_q, x @ w_k, x @ w_v)
    assert np.allclose(shaw.output, plain, atol=1e-13) and shaw.value_share == 0.0


def test_the_value_share_is_the_value_terms_part_of_the_two() -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 4))
    w = rng.standard_normal((3, 4, 4))
    a_k, a_v = rng.standard_normal((2, 5, 4))
    got = pc.shaw_attention(x, *w, a_k, a_v, max_relative=2)
    offsets, content = np.linalg.norm(got.value_term), np.linalg.norm(got.output - got.value_term)
    assert got.value_share == pytest.approx(offsets / (offsets + content)) and 0 < got.value_share < 1
