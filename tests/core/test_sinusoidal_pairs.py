r"""One sinusoidal pair shifted by k, in both orders, and the slow pairs' flat columns, against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_core as pc

ANGLES = st.floats(-50.0, 50.0)


@settings(max_examples=80, deadline=None)
@given(p=ANGLES, k=ANGLES, theta=st.floats(1e-4, 1.0))
def test_the_pair_shift_lands_on_the_shifted_pair_in_either_order(p: float, k: float, theta: float) -> None:
    r"""sin((p+k)θ) = sin pθ cos kθ + cos pθ sin kθ and cos((p+k)θ) = cos pθ cos kθ − sin pθ sin kθ, entry by entry;
    the angles are at most 100 rad, so each side rounds to ~100·2⁻⁵³."""
    orders = {"sin_cos": lambda a: [math.sin(a), math.cos(a)], "cos_sin": lambda a: [math.cos(a), math.sin(a)]}
    for order, pair in orders.items():
        shifted = pc.pair_shift_matrix(k, theta, order=order) @ pair(p * theta)
        assert np.allclose(shifted, pair((p + k) * theta), atol=1e-12)
        assert pc.pair_shift_gap(pc.pair_shift_matrix(k, theta, order=order), p, k, theta, order=order) < 1e-12


@settings(max_examples=80, deadline=None)
@given(p=ANGLES, k=ANGLES, theta=st.floats(1e-4, 1.0))
def test_the_two_published_slips_miss_by_closed_forms(p: float, k: float, theta: float) -> None:
    r"""The (sin, cos) matrix on a (cos, sin) pair turns by −kθ instead of +kθ: it misses by |e^{−ikθ} − e^{ikθ}| =
    2|sin kθ|. Dropping θ turns by k instead of kθ: it misses by 2|sin((k − kθ)/2)|."""
    flipped = pc.pair_shift_gap(pc.pair_shift_matrix(k, theta), p, k, theta, order="cos_sin")
    assert flipped == pytest.approx(2 * abs(math.sin(k * theta)), abs=1e-11)
    no_theta = pc.pair_shift_gap(pc.pair_shift_matrix(k, 1.0), p, k, theta)
    assert no_theta == pytest.approx(2 * abs(math.sin((k - k * theta) / 2)), abs=1e-11)


@pytest.mark.parametrize(("length", "dim", "base"), [(50, 128, 1e4), (128, 128, 1e4), (512, 64, 1e3), (4, 8, 1e4)])
def test_slow_pairs_are_those_that_turn_under_the_angle(length: int, dim: int, base: float) -> None:
    r"""Written from the definition: pair i is slow when (L − 1)·base^(−2i/d) ≤ 0.1; its columns hold sin and cos of
    p·ω_i for p < L."""
    omegas = [base ** (-2 * i / dim) for i in range(dim // 2)]
    slow = [i for i, w in enumerate(omegas) if (length - 1) * w <= 0.1]
    got = pc.sinusoidal_slow_pairs(length, dim, base=base)
    assert (got.first, got.count) == ((slow[0], len(slow)) if slow else (dim // 2, 0))
    if slow:
        sin_max = max(abs(math.sin(p * omegas[i])) for i in slow for p in range(length))
        cos_gap = max(abs(1 - math.cos(p * omegas[i])) for i in slow for p in range(length))
        assert got.sin_max == pytest.approx(sin_max, rel=1e-12) and got.cos_gap == pytest.approx(cos_gap, rel=1e-9)
        assert got.sin_max <= math.sin(0.1) and got.cos_gap <= 1 - math.cos(0.1)


@settings(max_examples=40, deadline=None)
@given(half=st.integers(1, 16), m=st.integers(0, 5000), n=st.integers(0, 5000))
def test_row_vectors_compose_to_r_m_minus_n(half: int, m: int, n: int) -> None:
    r"""R_m R_nᵀ = R_{m−n}; its gap to R_{n−m} is max_i 2|sin((m − n)θ_i)| (the two differ only in the sign of sin)."""
    inv_freq = pc.rope_inv_freq(2 * half)
    right, wrong = pc.row_vector_gaps(m, n, inv_freq)
    assert right <= (abs(m) + abs(n) + abs(m - n)) * 2.0**-52 + 1e-15
    expected = max(2 * abs(math.sin((m - n) * t)) for t in inv_freq)
    assert wrong == pytest.approx(expected, abs=(abs(m) + abs(n) + abs(m - n)) * 2.0**-51 + 1e-15)


@pytest.mark.parametrize(("dim", "offset"), [(2, 1), (16, 5), (64, 37)])
def test_one_matrix_shifts_a_full_table_but_not_its_sines_alone(dim: int, offset: int) -> None:
    r"""With sin and cos, M_k exists (residual ~ rounding). With sines only, row p = 0 is all zeros, so any M maps it
    to 0, while row k holds sin(kω_i): the residual is at least max_i |sin(kω_i)|."""
    table = pc.sinusoidal(256, dim)
    assert pc.linear_shift_residual(table, offset) < 1e-10
    sines = table[:, 0::2]
    floor = max(abs(math.sin(offset * w)) for w in pc.sinusoidal_inv_freq(dim))
    assert pc.linear_shift_residual(sines, offset) >= floor - 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_position_survives_depth_only_through_the_residual_stream(seed: int) -> None:
    r"""The page's claim, on three seeds (eight measured: kept 0.48–0.57 of the input's R², lost ≤ 0.06): after 12
    random blocks a linear probe still reads at least 40 % of what it read at the input with residual connections,
    and at most 0.1 of R² from block 6 on without them."""
    table = pc.sinusoidal(1024, 64)
    kept = pc.residual_stream_probe(table, layers=12, seed=seed)
    lost = pc.residual_stream_probe(table, layers=12, residual=False, seed=seed)
    assert kept[0] == lost[0] and 0.3 < kept[0] < 1.0  # the same input; word vectors blur it
    assert kept[-1] >= 0.4 * kept[0] and lost[6:].max() <= 0.1
    assert np.all(kept <= 1.0) and np.all(lost <= 1.0)
