r"""Hypothesis properties of :mod:`posenc_core`: the invariants each paper's argument rests on.

Every expectation below is derived from the mathematics in docs/design.md and docs/references.md, never from the code
under test: rotations preserve norms and compose by subtracting angles, sinusoid tables shift by a fixed matrix, T5
buckets are monotone in distance, ALiBi's two bias forms differ by a per-row constant, and every context-extension
scheme stays between "unchanged" and "divided by the factor".
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import posenc_core as pc

PROP = settings(max_examples=100, deadline=None)
FEW = settings(max_examples=40, deadline=None)

seeds = st.integers(min_value=0, max_value=2**32 - 1)
half_dims = st.integers(min_value=1, max_value=32)  # dim / 2
bases = st.floats(min_value=10.0, max_value=1e6)
positions_small = st.integers(min_value=0, max_value=10_000)
factors = st.floats(min_value=1.0, max_value=64.0)


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _half_to_interleaved_index(dim: int) -> np.ndarray:
    r"""idx with x_half = x_inter[..., idx]: half dim i ↔ interleaved 2i, half dim i + d/2 ↔ interleaved 2i + 1."""
    return np.concatenate([np.arange(0, dim, 2), np.arange(1, dim, 2)])


def _direct_rope_half(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    r"""Straight from the paper, half pairing: (x_i, x_{i+d/2}) → rotated by +p·θ_i, float64 np.cos / np.sin."""
    angles = np.outer(positions, inv_freq)  # (L, d/2)
    cos, sin = np.cos(angles), np.sin(angles)
    h = inv_freq.shape[0]
    x1, x2 = x[..., :h], x[..., h : 2 * h]
    out = x.copy()
    out[..., :h] = x1 * cos - x2 * sin
    out[..., h : 2 * h] = x2 * cos + x1 * sin
    return out


# ---------------------------------------------------------------------------------------------------------------- RoPE


@PROP
@given(
    seed=seeds,
    h=half_dims,
    length=st.integers(1, 80),
    base=bases,
    pairing=st.sampled_from(["half", "interleaved"]),
)
def test_rope_preserves_the_norm_of_every_pair_and_vector(seed, h, length, base, pairing):
    dim = 2 * h
    rng = _rng(seed)
    x = rng.normal(size=(length, dim))
    positions = rng.integers(0, 100_000, size=length).astype(np.float64)
    inv_freq = pc.rope_inv_freq(dim, base=base)
    y = pc.apply_rope(x, positions, inv_freq, pairing=pairing)
    assert y.shape == x.shape
    if pairing == "half":
        pair_norm = lambda a: np.hypot(a[..., :h], a[..., h:])  # noqa: E731
    else:
        pair_norm = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])  # noqa: E731
    np.testing.assert_allclose(pair_norm(y), pair_norm(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)


@PROP
@given(
    seed=seeds,
    h=half_dims,
    length=st.integers(1, 130),
    base=bases,
    pairing=st.sampled_from(["half", "interleaved"]),
)
def test_rope_at_position_zero_is_the_identity(seed, h, length, base, pairing):
    x = _rng(seed).normal(size=(2, length, 2 * h))
    y = pc.apply_rope(x, np.zeros(length), pc.rope_inv_freq(2 * h, base=base), pairing=pairing)
    np.testing.assert_array_equal(y, x)


@PROP
@given(
    seed=seeds,
    h=half_dims,
    m=positions_small,
    n=positions_small,
    base=bases,
    pairing=st.sampled_from(["half", "interleaved"]),
)
def test_rope_scores_depend_only_on_relative_position(seed, h, m, n, base, pairing):
    dim = 2 * h
    rng = _rng(seed)
    q, k = rng.normal(size=(1, dim)), rng.normal(size=(1, dim))
    inv_freq = pc.rope_inv_freq(dim, base=base)
    rot = lambda v, p: pc.apply_rope(v, np.array([float(p)]), inv_freq, pairing=pairing)  # noqa: E731
    score_mn = float(np.sum(rot(q, m) * rot(k, n)))
    score_0d = float(np.sum(rot(q, 0) * rot(k, n - m)))
    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert abs(score_mn - score_0d) <= 1e-9 * scale


@FEW
@given(
    seed=seeds,
    h=half_dims,
    length=st.integers(64, 300),
    m0=st.integers(0, 50_000),
    n0=st.integers(0, 50_000),
    pairing=st.sampled_from(["half", "interleaved"]),
)
def test_rope_score_matrix_depends_only_on_relative_position_on_long_progressions(seed, h, length, m0, n0, pairing):
    # Long arithmetic progressions take the angle-addition fast path; the shift property must survive it.
    dim = 2 * h
    rng = _rng(seed)
    q, k = rng.normal(size=dim), rng.normal(size=dim)
    inv_freq = pc.rope_inv_freq(dim)
    ar = np.arange(length, dtype=np.float64)
    qs, ks = np.tile(q, (length, 1)), np.tile(k, (length, 1))
    s_abs = (
        pc.apply_rope(qs, m0 + ar, inv_freq, pairing=pairing) @ pc.apply_rope(ks, n0 + ar, inv_freq, pairing=pairing).T
    )
    s_rel = (
        pc.apply_rope(qs, ar, inv_freq, pairing=pairing)
        @ pc.apply_rope(ks, (n0 - m0) + ar, inv_freq, pairing=pairing).T
    )
    scale = np.linalg.norm(q) * np.linalg.norm(k)
    assert np.max(np.abs(s_abs - s_rel)) <= 1e-9 * scale


@PROP
@given(seed=seeds, h=half_dims, length=st.integers(1, 130), base=bases, start=st.integers(0, 200_000))
def test_rope_half_and_interleaved_pairings_agree_after_permuting_dimensions(seed, h, length, base, start):
    dim = 2 * h
    x_inter = _rng(seed).normal(size=(length, dim))
    idx = _half_to_interleaved_index(dim)
    positions = start + np.arange(length, dtype=np.float64)
    inv_freq = pc.rope_inv_freq(dim, base=base)
    y_inter = pc.apply_rope(x_inter, positions, inv_freq, pairing="interleaved")
    y_half = pc.apply_rope(x_inter[..., idx], positions, inv_freq, pairing="half")
    np.testing.assert_allclose(y_half, y_inter[..., idx], rtol=0, atol=1e-12)


@PROP
@given(h=half_dims, a=st.integers(-5000, 5000), b=st.integers(-5000, 5000), base=bases)
def test_rope_rotation_matrix_is_orthogonal_with_det_one_and_composes_by_difference(h, a, b, base):
    inv_freq = pc.rope_inv_freq(2 * h, base=base)
    ra, rb = pc.rope_rotation_matrix(a, inv_freq), pc.rope_rotation_matrix(b, inv_freq)
    eye = np.eye(2 * h)
    assert ra.shape == (2 * h, 2 * h)
    np.testing.assert_allclose(ra.T @ ra, eye, atol=1e-12)
    assert abs(np.linalg.det(ra) - 1.0) < 1e-9
    np.testing.assert_allclose(ra.T @ rb, pc.rope_rotation_matrix(b - a, inv_freq), atol=1e-9)


@PROP
@given(seed=seeds, h=half_dims, p=st.integers(0, 10_000), base=bases)
def test_rope_rotation_matrix_is_apply_rope_with_interleaved_pairs(seed, h, p, base):
    inv_freq = pc.rope_inv_freq(2 * h, base=base)
    x = _rng(seed).normal(size=(1, 2 * h))
    via_matrix = (pc.rope_rotation_matrix(p, inv_freq) @ x[0])[None]
    np.testing.assert_allclose(
        via_matrix, pc.apply_rope(x, np.array([float(p)]), inv_freq, pairing="interleaved"), atol=1e-10
    )


@PROP
@given(
    seed=seeds,
    h=half_dims,
    length=st.integers(1, 100),
    a=st.floats(0.1, 4.0),
    pairing=st.sampled_from(["half", "interleaved"]),
)
def test_rope_attention_factor_scales_the_rotated_vector(seed, h, length, a, pairing):
    rng = _rng(seed)
    x = rng.normal(size=(length, 2 * h))
    positions = rng.integers(0, 10_000, size=length).astype(np.float64)
    inv_freq = pc.rope_inv_freq(2 * h)
    scaled = pc.apply_rope(x, positions, inv_freq, pairing=pairing, attention_factor=a)
    np.testing.assert_allclose(
        scaled, a * pc.apply_rope(x, positions, inv_freq, pairing=pairing), rtol=1e-12, atol=1e-12
    )


@FEW
@given(
    seed=seeds,
    h=half_dims,
    length=st.integers(64, 1500),
    start=st.integers(100_001, 1_000_000),
    step=st.sampled_from([1.0, 2.0, 3.0, 0.5, 0.25]),
    base=bases,
)
def test_rope_fast_path_agrees_with_direct_float64_evaluation_far_from_origin(seed, h, length, start, step, base):
    dim = 2 * h
    x = _rng(seed).uniform(-1.0, 1.0, size=(length, dim))
    positions = start + step * np.arange(length, dtype=np.float64)
    inv_freq = pc.rope_inv_freq(dim, base=base)
    fast = pc.apply_rope(x, positions, inv_freq, pairing="half")
    np.testing.assert_allclose(fast, _direct_rope_half(x, positions, inv_freq), rtol=0, atol=1e-9)
    np.testing.assert_allclose(pc.rope_angles(positions, inv_freq), np.outer(positions, inv_freq), rtol=1e-15, atol=0)


@PROP
@given(
    seed=seeds,
    h=st.integers(2, 32),
    data=st.data(),
    length=st.integers(1, 100),
    pairing=st.sampled_from(["half", "interleaved"]),
)
def test_rope_partial_rotary_leaves_the_dimensions_past_the_rotary_ones_unchanged(seed, h, data, length, pairing):
    dim = 2 * h
    n_rot = data.draw(st.integers(1, h - 1), label="rotary pairs")
    inv_freq = pc.rope_inv_freq(2 * n_rot)
    rng = _rng(seed)
    x = rng.normal(size=(length, dim))
    positions = rng.integers(0, 10_000, size=length).astype(np.float64)
    y = pc.apply_rope(x, positions, inv_freq, pairing=pairing)
    np.testing.assert_array_equal(y[..., 2 * n_rot :], x[..., 2 * n_rot :])
    # ... and the rotary ones are exactly apply_rope on the rotary slice alone.
    np.testing.assert_allclose(
        y[..., : 2 * n_rot],
        pc.apply_rope(x[..., : 2 * n_rot], positions, inv_freq, pairing=pairing),
        atol=1e-15,
    )


# ---------------------------------------------------------------------------------------------------------- sinusoidal


@PROP
@given(h=half_dims, base=bases, p=st.integers(0, 500), k=st.integers(0, 500))
def test_sinusoidal_shift_matrix_maps_position_p_to_p_plus_k(h, base, p, k):
    dim = 2 * h
    table = pc.sinusoidal(p + k + 1, dim, base=base)
    m = pc.sinusoidal_shift_matrix(k, dim, base=base)
    np.testing.assert_allclose(m @ table[p], table[p + k], rtol=0, atol=1e-12)


@PROP
@given(h=half_dims, base=bases, k=st.integers(-10_000, 10_000))
def test_sinusoidal_shift_matrix_is_orthogonal(h, base, k):
    m = pc.sinusoidal_shift_matrix(k, 2 * h, base=base)
    np.testing.assert_allclose(m.T @ m, np.eye(2 * h), rtol=0, atol=1e-12)
    np.testing.assert_allclose(m @ m.T, np.eye(2 * h), rtol=0, atol=1e-12)


@PROP
@given(h=half_dims, base=bases, length=st.integers(1, 300))
def test_sinusoidal_concat_layout_is_a_column_permutation_of_interleaved(h, base, length):
    dim = 2 * h
    inter = pc.sinusoidal(length, dim, base=base, layout="interleaved")
    concat = pc.sinusoidal(length, dim, base=base, layout="concat")
    np.testing.assert_array_equal(concat, inter[:, _half_to_interleaved_index(dim)])


@PROP
@given(h=half_dims, base=bases, length=st.integers(1, 3000))
def test_sinusoidal_values_lie_in_minus_one_to_one(h, base, length):
    table = pc.sinusoidal(length, 2 * h, base=base)
    assert table.shape == (length, 2 * h)
    assert np.all(np.isfinite(table))
    assert np.all(np.abs(table) <= 1.0)


@PROP
@given(h=half_dims, base=bases, k=st.integers(0, 200), length=st.integers(1, 300))
def test_sinusoidal_dot_product_depends_only_on_offset_and_matches_similarity_curve(h, base, k, length):
    dim = 2 * h
    table = pc.sinusoidal(length + k, dim, base=base)
    dots = np.einsum("pd,pd->p", table[:length], table[k : k + length])  # PE_p · PE_{p+k}
    # sin(pω)sin((p+k)ω) + cos(pω)cos((p+k)ω) = cos(kω) for each pair, ω_i = base^(−2i/d) (Vaswani et al. 2017, §3.5)
    expected = math.fsum(math.cos(k * base ** (-2 * i / dim)) for i in range(h))
    assert float(np.asarray(pc.sinusoidal_similarity([k], dim, base=base)).reshape(-1)[0]) == pytest.approx(
        expected, abs=1e-10
    )
    np.testing.assert_allclose(dots, np.full(length, dots[0]), rtol=0, atol=1e-10)
    np.testing.assert_allclose(dots, expected, rtol=0, atol=1e-10)


#: The unit roundoff of float64, and the most ulps NumPy's float64 sin/cos may err by (its SIMD kernels claim ≤ 4;
#: glibc's are within 1). An ulp of a value below 1 is at most U.
U = 2.0**-53
SIN_COS_ULPS = 4


def _shift_residual_bound(length: int, offset: int) -> float:
    r"""An upper bound on :math:`\max_p \lVert PE_{p+k} - M_k PE_p \rVert_\infty` from rounding alone (derived here).

    Exact values satisfy the identity exactly, for the computed ω̃ too (table and matrix share it), so only rounding
    is left. With ω ≤ 1 (ω_0 = base⁰ = 1, the fastest pair):

    - an angle x·ω rounds by at most U·x·ω, and cos/sin of it err by at most that plus SIN_COS_ULPS·U;
    - a table entry at position p is e^{iα}·e^{iβ} with α + β = p·ω (the split in ``_trig``): each factor's parts
      err by δ_α, δ_β as above, a part of the product by (|cos|+|sin|)(δ_α + δ_β) ≤ √2(δ_α + δ_β) plus 2U for its
      two products and one sum (|a·b| + |c·d| ≤ 1 for unit vectors), so
      e(p) = √2·U·(p + 2·SIN_COS_ULPS) + 2U (the direct evaluation used for short tables errs by less);
    - M_k's entries err by δ_M = U·(k + SIN_COS_ULPS), and M_k·PE_p adds √2·e(p) + √2·δ_M + 2U the same way;
    - the residual entry is the rounded difference of PE_{p+k} and M_k·PE_p, whose exact difference is 0.

    The worst row has p + k = L − 1. Second-order terms (U²·…) are covered by the factor (1 + 8U).
    """
    last, first = length - 1, length - 1 - offset

    def entry(p: int) -> float:
        return math.sqrt(2) * U * (p + 2 * SIN_COS_ULPS) + 2 * U

    matrix = U * (offset + SIN_COS_ULPS)
    return (entry(last) + math.sqrt(2) * (entry(first) + matrix) + 2 * U) * (1 + 8 * U)


@PROP
@given(h=half_dims, base=bases, length=st.integers(1, 400), k=st.integers(0, 500))
def test_sinusoidal_shift_residual_is_at_rounding_level(h, base, length, k):
    table = pc.sinusoidal(length, 2 * h, base=base)
    shift = pc.sinusoidal_shift_matrix(k, 2 * h, base=base)
    residual = pc.sinusoidal_shift_residual(table, shift, k)
    if k >= length:  # no pair of rows to compare
        assert residual == 0.0
        return
    assert residual <= _shift_residual_bound(length, k)
    # The plain matrix product computes each entry as a·x + b·y too (the off-block zeros add exactly nothing), with
    # another order of rounding: each side errs by ≤ 2U (|a·x| + |b·y| ≤ 1), and the difference rounds once more.
    direct = np.max(np.abs(table[k:] - table[: length - k] @ shift.T))
    assert residual == pytest.approx(direct, rel=0, abs=5 * U)


@PROP
@given(h=half_dims, base=bases, length=st.integers(2, 400))
def test_sinusoidal_neighbour_distance_is_the_same_at_every_position(h, base, length):
    # ‖PE_{p+1} − PE_p‖² = Σ_i 2 − 2 cos ω_i, whatever p: the table moves at constant speed
    dim = 2 * h
    dist = np.asarray(pc.neighbour_distances(pc.sinusoidal(length, dim, base=base)))
    omega = pc.sinusoidal_inv_freq(dim, base=base)
    assert dist.shape == (length - 1,)
    np.testing.assert_allclose(dist, math.sqrt(np.sum(2.0 - 2.0 * np.cos(omega))), rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------------------------------------------------------ T5


t5_buckets = st.sampled_from([4, 8, 16, 32, 64, 128])


@st.composite
def t5_params(draw):
    nb = draw(t5_buckets)
    bidirectional = draw(st.booleans())
    max_exact = nb // 4 if bidirectional else nb // 2
    max_distance = draw(st.integers(2 * max_exact, 4096))
    return nb, bidirectional, max_exact, max_distance


def _t5(r, nb, bidirectional, max_distance):
    return np.asarray(
        pc.t5_relative_bucket(np.asarray(r), bidirectional=bidirectional, num_buckets=nb, max_distance=max_distance)
    )


@PROP
@given(params=t5_params(), extra=st.integers(0, 3))
def test_t5_buckets_lie_in_range(params, extra):
    nb, bidirectional, _, max_distance = params
    span = (extra + 2) * max_distance
    r = np.arange(-span, span + 1)
    b = _t5(r, nb, bidirectional, max_distance)
    assert b.shape == r.shape
    assert np.issubdtype(b.dtype, np.integer)
    assert b.min() >= 0 and b.max() < nb


@PROP
@given(params=t5_params())
def test_t5_buckets_are_exact_below_max_exact(params):
    nb, bidirectional, max_exact, max_distance = params
    d = np.arange(max_exact)
    np.testing.assert_array_equal(_t5(-d, nb, bidirectional, max_distance), d)  # past keys: bucket = |r|
    if bidirectional:
        np.testing.assert_array_equal(_t5(d[1:], nb, bidirectional, max_distance), nb // 2 + d[1:])


@PROP
@given(params=t5_params())
def test_t5_buckets_are_monotone_non_decreasing_in_distance_within_each_sign(params):
    nb, bidirectional, _, max_distance = params
    d = np.arange(0, 3 * max_distance + 2)
    past = _t5(-d, nb, bidirectional, max_distance)
    assert np.all(np.diff(past) >= 0)
    future = _t5(d, nb, bidirectional, max_distance)
    assert np.all(np.diff(future[1:]) >= 0)
    # saturation: every distance ≥ max_distance shares the last bucket of its half
    assert past[-1] == past[max_distance]


@PROP
@given(params=t5_params(), r=st.integers(-(10**6), 10**6))
def test_t5_future_keys_take_the_upper_half_bidirectional_and_bucket_zero_unidirectional(params, r):
    nb, bidirectional, _, max_distance = params
    b = int(_t5(np.array([r]), nb, bidirectional, max_distance)[0])
    if bidirectional:
        assert (b >= nb // 2) == (r > 0)
    elif r > 0:
        assert b == 0


# ---------------------------------------------------------------------------------------------------------------- Shaw


@PROP
@given(lq=st.integers(1, 60), extra=st.integers(0, 30), k=st.integers(1, 40))
def test_shaw_index_is_a_clipped_toeplitz_matrix_in_zero_to_2k(lq, extra, k):
    lk = lq + extra
    idx = np.asarray(pc.shaw_relative_index(lq, lk, max_relative=k))
    assert idx.shape == (lq, lk)
    assert idx.min() >= 0 and idx.max() <= 2 * k
    np.testing.assert_array_equal(idx[1:, 1:], idx[:-1, :-1])  # constant along diagonals
    i = np.arange(lq)[:, None] + (lk - lq)  # queries are the last Lq positions
    j = np.arange(lk)[None, :]
    rel = j - i
    np.testing.assert_array_equal(idx[rel >= k], 2 * k)
    np.testing.assert_array_equal(idx[rel <= -k], 0)
    np.testing.assert_array_equal(idx, np.clip(rel, -k, k) + k)


# --------------------------------------------------------------------------------------------------------------- ALiBi


@PROP
@given(seed=seeds, n_heads=st.integers(1, 16), length=st.integers(1, 40), d=st.integers(1, 16))
def test_alibi_distance_bias_and_key_only_bias_give_identical_causal_softmax_rows(seed, n_heads, length, d):
    rng = _rng(seed)
    q, k, v = rng.normal(size=(length, d)), rng.normal(size=(length, d)), rng.normal(size=(length, d))
    slopes = np.asarray(pc.alibi_slopes(n_heads))
    bias = pc.alibi_bias(n_heads, length, causal=True)  # −m·(i − j), −inf above the diagonal
    key_only = slopes[:, None, None] * np.arange(length, dtype=np.float64)[None, None, :]  # m·j
    key_only = np.broadcast_to(key_only, (n_heads, length, length))
    out_a, w_a = pc.attention(q, k, v, bias=bias, causal=True)
    out_b, w_b = pc.attention(q, k, v, bias=key_only, causal=True)
    np.testing.assert_allclose(w_a, w_b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out_a, out_b, rtol=0, atol=1e-10)
    # the same holds for softmax applied by hand to the masked logits
    mask = np.triu(np.ones((length, length), dtype=bool), 1)
    logits = np.where(mask, -np.inf, (q @ k.T) / math.sqrt(d))
    np.testing.assert_allclose(
        pc.softmax(logits + bias), pc.softmax(np.where(mask, -np.inf, logits + key_only)), atol=1e-12
    )


@PROP
@given(log2_heads=st.integers(0, 8))
def test_alibi_slopes_strictly_decrease_for_power_of_two_heads(log2_heads):
    slopes = np.asarray(pc.alibi_slopes(2**log2_heads))
    assert slopes.shape == (2**log2_heads,)
    assert np.all(np.diff(slopes) < 0)


@PROP
@given(n_heads=st.integers(1, 300))
def test_alibi_slopes_lie_strictly_between_zero_and_one(n_heads):
    slopes = np.asarray(pc.alibi_slopes(n_heads))
    assert slopes.shape == (n_heads,)
    assert np.all(slopes > 0) and np.all(slopes < 1)


# ------------------------------------------------------------------------------------------------- context extension


head_dims = st.integers(2, 128).map(lambda n: 2 * n)  # even, ≥ 4


def _freqs(dim, base, rope_scaling=None, **kw):
    return pc.rope_frequencies(dim, base=base, rope_scaling=rope_scaling, **kw)


@PROP
@given(dim=head_dims, base=bases, s=factors, seed=seeds, length=st.integers(1, 200))
def test_linear_scaling_equals_dividing_positions_by_the_factor(dim, base, s, seed, length):
    p = np.sort(_rng(seed).uniform(0, 50_000, size=length))
    default = _freqs(dim, base).inv_freq
    linear = _freqs(dim, base, {"rope_type": "linear", "factor": s})
    np.testing.assert_allclose(
        pc.rope_angles(p / s, default), pc.rope_angles(p, linear.inv_freq), rtol=1e-12, atol=1e-12
    )
    assert linear.attention_factor == 1.0


@PROP
@given(dim=head_dims, base=bases, s=factors)
def test_ntk_keeps_the_fastest_frequency_and_divides_the_slowest_by_the_factor(dim, base, s):
    default = _freqs(dim, base).inv_freq
    ntk = _freqs(dim, base, {"rope_type": "ntk", "factor": s}).inv_freq
    assert ntk.shape == default.shape
    np.testing.assert_allclose(ntk[0], default[0], rtol=1e-14)
    np.testing.assert_allclose(ntk[-1], default[-1] / s, rtol=1e-10)
    # base' = base·s^(dim/(dim−2)), so the whole table is that of the new base
    np.testing.assert_allclose(ntk, pc.rope_inv_freq(dim, base=base * s ** (dim / (dim - 2))), rtol=1e-10)


@PROP
@given(dim=head_dims, base=bases, s=factors, mpe=st.integers(1, 200_000), data=st.data())
def test_dynamic_ntk_equals_default_while_the_sequence_fits(dim, base, s, mpe, data):
    seq_len = data.draw(st.integers(1, mpe), label="seq_len")
    default = _freqs(dim, base)
    dynamic = _freqs(dim, base, {"rope_type": "dynamic", "factor": s}, max_position_embeddings=mpe, seq_len=seq_len)
    np.testing.assert_allclose(dynamic.inv_freq, default.inv_freq, rtol=1e-12)


@PROP
@given(
    dim=head_dims,
    base=bases,
    s=factors,
    original=st.integers(16, 200_000),
    betas=st.tuples(st.floats(1.0, 128.0), st.floats(0.01, 1.0)),
    truncate=st.booleans(),
)
def test_yarn_frequencies_lie_between_default_over_factor_and_default(dim, base, s, original, betas, truncate):
    beta_fast, beta_slow = betas
    default = _freqs(dim, base).inv_freq
    yarn = _freqs(
        dim,
        base,
        {
            "rope_type": "yarn",
            "factor": s,
            "original_max_position_embeddings": original,
            "beta_fast": beta_fast,
            "beta_slow": beta_slow,
            "truncate": truncate,
        },
    )
    tol = 1e-12 * default
    assert np.all(yarn.inv_freq <= default + tol)
    assert np.all(yarn.inv_freq >= default / s - tol)
    assert yarn.attention_factor >= 1.0


def _llama3(dim, base, factor, low, high, original):
    scaling = {
        "rope_type": "llama3",
        "factor": factor,
        "low_freq_factor": low,
        "high_freq_factor": high,
        "original_max_position_embeddings": original,
    }
    return _freqs(dim, base, scaling).inv_freq


llama3_bands = st.tuples(st.floats(0.5, 4.0), st.floats(1.1, 8.0)).map(lambda t: (t[0], t[0] * t[1]))


@PROP
@given(
    half=st.integers(4, 64),
    factor=st.floats(1.0, 32.0),
    band=llama3_bands,
    original=st.integers(2048, 131_072),
    data=st.data(),
    edge=st.sampled_from(["high", "low"]),
)
def test_llama3_scaling_is_continuous_at_both_band_edges(half, factor, band, original, data, edge):
    # Pick the base that puts pair i's wavelength 2π·base^(2i/d) exactly on an edge, then nudge it either way:
    # a continuous rule changes pair i by a relative amount of the nudge, a jump would change it by up to `factor`.
    low, high = band
    dim = 2 * half
    i = data.draw(st.integers(max(1, half // 2), half - 1), label="pair index")
    edge_wavelength = original / (high if edge == "high" else low)
    assume(edge_wavelength > 2 * math.pi * 1.01)
    base = (edge_wavelength / (2 * math.pi)) ** (dim / (2 * i))
    assume(1.0 < base < 1e12)
    eps = 1e-9
    below = _llama3(dim, base * (1 - eps), factor, low, high, original)[i]
    above = _llama3(dim, base * (1 + eps), factor, low, high, original)[i]
    at = _llama3(dim, base, factor, low, high, original)[i]
    assert abs(above - below) <= 1e-6 * at
    default_i = base ** (-2 * i / dim)  # θ_i = base^(−2i/d), RoFormer (Su et al. 2021) §3.2
    # at the edge the blend equals the value of the neighbouring band: kept at the high edge, divided at the low one
    expected = default_i if edge == "high" else default_i / factor
    np.testing.assert_allclose(at, expected, rtol=1e-6)


@PROP
@given(
    dim=head_dims,
    base=st.floats(10.0, 1e7),
    factor=st.floats(1.0, 32.0),
    band=llama3_bands,
    original=st.integers(256, 131_072),
)
def test_llama3_frequencies_are_non_increasing_and_between_default_over_factor_and_default(
    dim, base, factor, band, original
):
    low, high = band
    default = pc.rope_inv_freq(dim, base=base)
    scaled = _llama3(dim, base, factor, low, high, original)
    assert np.all(np.diff(scaled) <= 1e-15 * scaled[:-1])
    assert np.all(scaled <= default * (1 + 1e-12))
    assert np.all(scaled >= default / factor * (1 - 1e-12))
    wavelength = 2 * np.pi / default
    kept = wavelength < original / high
    divided = wavelength > original / low
    np.testing.assert_allclose(scaled[kept], default[kept], rtol=1e-12)
    np.testing.assert_allclose(scaled[divided], default[divided] / factor, rtol=1e-12)


# ------------------------------------------------------------------------------------------------- softmax, attention


finite_logits = st.floats(-1e3, 1e3, allow_nan=False)


@PROP
@given(seed=seeds, rows=st.integers(1, 20), cols=st.integers(1, 40), spread=st.floats(0.0, 500.0))
def test_softmax_rows_are_distributions(seed, rows, cols, spread):
    x = _rng(seed).normal(scale=spread, size=(rows, cols))
    p = pc.softmax(x)
    assert p.shape == x.shape
    assert np.all(p >= 0) and np.all(p <= 1)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


@PROP
@given(seed=seeds, rows=st.integers(1, 10), cols=st.integers(1, 30), c=st.floats(-1e4, 1e4))
def test_softmax_is_invariant_to_adding_a_constant(seed, rows, cols, c):
    x = _rng(seed).normal(scale=10.0, size=(rows, cols))
    np.testing.assert_allclose(pc.softmax(x + c), pc.softmax(x), rtol=1e-9, atol=1e-12)


@PROP
@given(seed=seeds, rows=st.integers(1, 10), cols=st.integers(1, 30), data=st.data())
def test_softmax_of_an_all_minus_inf_row_is_an_error(seed, rows, cols, data):
    x = _rng(seed).normal(size=(rows, cols))
    x[data.draw(st.integers(0, rows - 1), label="row")] = -np.inf
    with pytest.raises(pc.PosEncError):
        pc.softmax(x)


@PROP
@given(seed=seeds, rows=st.integers(1, 10), cols=st.integers(2, 30), data=st.data())
def test_softmax_gives_masked_entries_zero_weight(seed, rows, cols, data):
    x = _rng(seed).normal(size=(rows, cols))
    masked = _rng(seed + 1).random(size=(rows, cols)) < 0.5
    masked[:, data.draw(st.integers(0, cols - 1))] = False  # keep one key per row
    p = pc.softmax(np.where(masked, -np.inf, x))
    assert np.all(p[masked] == 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)


def _weights(seed, d):
    rng = _rng(seed)
    return {name: rng.normal(scale=1 / math.sqrt(d), size=(d, d)) for name in ("w_q", "w_k", "w_v")}


@PROP
@given(seed=seeds, length=st.integers(2, 24), h=st.integers(1, 16), data=st.data())
def test_attention_without_position_is_permutation_equivariant(seed, length, h, data):
    d = 2 * h
    x = _rng(seed).normal(size=(length, d))
    perm = np.asarray(data.draw(st.permutations(range(length)), label="permutation"))
    residual = pc.permutation_equivariance_residual(x, perm, encoding="none", **_weights(seed + 1, d))
    assert residual < 1e-12


@PROP
@given(seed=seeds, length=st.integers(2, 24), h=st.integers(2, 16), data=st.data())
def test_attention_with_sinusoidal_positions_is_not_permutation_equivariant(seed, length, h, data):
    d = 2 * h
    x = _rng(seed).normal(size=(length, d))
    perm = np.asarray(data.draw(st.permutations(range(length)), label="permutation"))
    assume(not np.array_equal(perm, np.arange(length)))
    residual = pc.permutation_equivariance_residual(x, perm, encoding="sinusoidal", **_weights(seed + 1, d))
    assert residual > 1e-3
