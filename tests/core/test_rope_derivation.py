r"""RoPE's derivation steps, 2-D (axial) RoPE and RoPE in linear attention, against loops written from the papers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_core as pc

EPS = 2.0**-52


def _rotate_pair(x0: float, x1: float, angle: float) -> tuple[float, float]:
    return x0 * math.cos(angle) - x1 * math.sin(angle), x0 * math.sin(angle) + x1 * math.cos(angle)


@settings(max_examples=60, deadline=None)
@given(
    half=st.integers(1, 32),
    base=st.floats(2.0, 1e6),
    m=st.floats(-1e4, 1e4),
    n=st.floats(-1e4, 1e4),
    seed=st.integers(0, 2**16),
)
def test_rope_rotation_is_orthogonal_unimodular_and_composes(half, base, m, n, seed) -> None:
    r"""Bounds: an entry of RᵀR is cos² + sin² (a few ulp of 1); R_mᵀR_n against R_{n−m} differs by the rounding of
    the angles mθ, nθ and (n−m)θ, each at most |angle|·2⁻⁵³ with θ ≤ 1, plus a few ulp of the products."""
    inv_freq = pc.rope_inv_freq(2 * half, base=base)
    x = np.random.default_rng(seed).standard_normal(2 * half)
    checks = pc.rotation_checks(x, m, n, inv_freq)
    assert checks.orthogonality <= 4 * EPS and checks.determinant <= 4 * half * EPS
    assert checks.norm_change <= 8 * half * EPS * np.linalg.norm(x)
    assert checks.composition <= (abs(m) + abs(n) + abs(n - m)) * EPS + 8 * EPS


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 64), m=st.integers(-5000, 5000), n=st.integers(-5000, 5000), seed=st.integers(0, 2**16))
def test_the_checks_taken_block_by_block_equal_the_full_matrix_products(half, m, n, seed) -> None:
    r"""The library multiplies the 2×2 blocks; here the (d, d) matrices are multiplied whole. The off-diagonal blocks
    of each product are exact zeros, so the two differ only in how the two products inside a block round: a few ulp
    of the entries, which are at most 2 in size (cos·cos + sin·sin and the like)."""
    inv_freq = pc.rope_inv_freq(2 * half)
    x = np.random.default_rng(seed).standard_normal(2 * half)
    r_m, r_n = pc.rope_rotation_matrix(m, inv_freq), pc.rope_rotation_matrix(n, inv_freq)
    checks = pc.rotation_checks(x, m, n, inv_freq)
    whole_orthogonality = np.max(np.abs(r_m.T @ r_m - np.eye(2 * half)))
    whole_composition = np.max(np.abs(r_m.T @ r_n - pc.rope_rotation_matrix(n - m, inv_freq)))
    assert abs(checks.orthogonality - whole_orthogonality) <= 4 * EPS
    assert abs(checks.composition - whole_composition) <= 4 * EPS
    assert checks.norm_change == abs(np.linalg.norm(r_m @ x) - np.linalg.norm(x))
    right, wrong = pc.row_vector_gaps(m, n, inv_freq)
    product = r_m @ r_n.T
    assert abs(right - np.max(np.abs(product - pc.rope_rotation_matrix(m - n, inv_freq)))) <= 4 * EPS
    assert abs(wrong - np.max(np.abs(product - pc.rope_rotation_matrix(n - m, inv_freq)))) <= 4 * EPS


def test_an_entry_outside_the_blocks_counts_in_the_residuals() -> None:
    r"""The block-by-block products hold only for block-diagonal matrices: an entry outside the 2×2 blocks is reported,
    not skipped (the library's own matrices have none; this one is made by hand)."""
    from posenc_core.rope.derivation import _blocks

    inv_freq = pc.rope_inv_freq(6)
    clean = pc.rope_rotation_matrix(3.0, inv_freq)
    (blocks,), outside = _blocks(clean.copy())
    assert outside == 0.0 and blocks.shape == (3, 2, 2)
    assert np.array_equal(blocks[1], clean[2:4, 2:4])
    stray = clean.copy()
    stray[0, 5] = -0.25
    assert _blocks(stray)[1] == 0.25


def test_the_two_dimensional_case_is_a_rotation_by_m_theta() -> None:
    r"""d = 2, θ = 1: q = (1, 0) at m, k = (0, 1) at n score −cos m·sin n + sin m·cos n = sin(m − n)."""
    for m, n in [(0.0, 1.0), (3.0, -2.0), (100.0, 7.5)]:
        rq = pc.rope_rotation_matrix(m, [1.0]) @ [1.0, 0.0]
        rk = pc.rope_rotation_matrix(n, [1.0]) @ [0.0, 1.0]
        assert rq @ rk == pytest.approx(math.sin(m - n), abs=1e-13)
        assert pc.complex_form_residual([1.0, 0.0], [0.0, 1.0], m, n, [1.0]) < 1e-13


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 32), m=st.floats(-1e3, 1e3), n=st.floats(-1e3, 1e3), seed=st.integers(0, 2**16))
def test_the_complex_form_equals_the_real_rotation(half, m, n, seed) -> None:
    r"""Bound: both sides sum d/2 products of size |q_i||k_i|; the angles (m−n)θ against mθ, nθ round by at most
    (|m| + |n| + |m − n|)·2⁻⁵³ each, so the gap is at most that times Σ|q_i||k_i|, plus a few ulp per term."""
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, 2 * half))
    inv_freq = pc.rope_inv_freq(2 * half)
    scale = float(np.sum(np.hypot(q[0::2], q[1::2]) * np.hypot(k[0::2], k[1::2])))
    bound = ((abs(m) + abs(n) + abs(m - n)) * EPS + 16 * EPS) * scale
    assert pc.complex_form_residual(q, k, m, n, inv_freq) <= bound


def _axial_loop(x: np.ndarray, rows: np.ndarray, cols: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    r"""Heo et al. 2024, RoPE-Axial, written pair by pair: first half by the row, second half by the column."""
    out = x.copy()
    half = 2 * len(inv_freq)
    for p in range(x.shape[0]):
        for i, theta in enumerate(inv_freq):
            out[p, 2 * i], out[p, 2 * i + 1] = _rotate_pair(x[p, 2 * i], x[p, 2 * i + 1], rows[p] * theta)
            a, b = half + 2 * i, half + 2 * i + 1
            out[p, a], out[p, b] = _rotate_pair(x[p, a], x[p, b], cols[p] * theta)
    return out


def test_axial_rope_matches_the_pairwise_loop() -> None:
    rows, cols = pc.patch_grid(3, 4)
    assert list(rows[:5]) == [0, 0, 0, 0, 1] and list(cols[:5]) == [0, 1, 2, 3, 0]  # raster order
    inv_freq = pc.rope_inv_freq(8, base=100.0)
    x = np.random.default_rng(1).standard_normal((12, 16))
    assert np.allclose(pc.apply_rope_2d(x, rows, cols, inv_freq), _axial_loop(x, rows, cols, inv_freq), atol=1e-13)


@pytest.mark.parametrize(("rows", "cols"), [(2, 3), (5, 5), (4, 9)])
def test_axial_scores_depend_only_on_the_offset_and_do_on_each_axis(rows: int, cols: int) -> None:
    rng = np.random.default_rng(rows * cols)
    q, k = rng.standard_normal((2, 16))
    inv_freq = pc.rope_inv_freq(8, base=100.0)
    assert pc.rope_2d_relative_residual(q, k, rows, cols, inv_freq) < 1e-12
    r, c = pc.patch_grid(rows, cols)
    n = r.shape[0]
    scores = pc.rope_2d_scores(np.broadcast_to(q, (n, 16)), np.broadcast_to(k, (n, 16)), r, c, inv_freq)
    assert abs(scores[0, 1] - scores[0, cols]) > 1e-3  # (Δr, Δc) = (0, 1) and (1, 0) score differently


def _linear_loop(q, k, v, inv_freq, causal: bool) -> np.ndarray:
    r"""RoFormer eq. (19), term by term: rotated features on top, unrotated features below."""
    phi = lambda x: np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))  # noqa: E731
    n_tokens = q.shape[0]
    out = np.zeros((n_tokens, v.shape[1]))
    for m in range(n_tokens):
        top, bottom = np.zeros(v.shape[1]), 0.0
        for n in range(n_tokens if not causal else m + 1):
            rq = pc.rope_rotation_matrix(m, inv_freq) @ phi(q[m])
            rk = pc.rope_rotation_matrix(n, inv_freq) @ phi(k[n])
            top += (rq @ rk) * v[n]
            bottom += phi(q[m]) @ phi(k[n])
        out[m] = top / bottom
    return out


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("method", pc.rope.LINEAR_METHODS)
def test_rope_linear_attention_matches_the_loop(method: str, causal: bool) -> None:
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((2, 9, 6))
    v = rng.standard_normal((9, 4))
    inv_freq = pc.rope_inv_freq(6)
    got = pc.rope_linear_attention(q, k, v, inv_freq, causal=causal, method=method)
    assert np.allclose(got, _linear_loop(q, k, v, inv_freq, causal), rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(length=st.integers(1, 40), half=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_running_totals_equal_the_pairwise_weights(length: int, half: int, seed: int) -> None:
    r"""The prefix sums reorder the same additions; the denominators are sums of positive terms (φ > 0), so the
    relative gap stays within a few hundred ulp for these sizes."""
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((2, length, 2 * half))
    v = rng.standard_normal((length, 3))
    inv_freq = pc.rope_inv_freq(2 * half)
    prefix = pc.rope_linear_attention(q, k, v, inv_freq)
    pairwise = pc.rope_linear_attention(q, k, v, inv_freq, method="pairwise")
    assert np.allclose(prefix, pairwise, rtol=1e-10, atol=1e-10 * np.abs(pairwise).max())
