r"""CoPE (Golovneva et al. 2024, eqs. 3–5) and stick-breaking attention (Tan et al. 2024, eq. 1) against loops written
from the papers, with the limits the page shows: every gate open counts tokens; equal break points give a geometric,
ALiBi-like fall with distance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from posenc_core import PosEncError, cope_bias, cope_positions, stick_breaking_weights


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def square(max_side: int = 10):
    return st.integers(1, max_side).flatmap(lambda n: hnp.arrays(np.float64, (n, n), elements=st.floats(-6, 6)))


def loop_positions(z: np.ndarray) -> np.ndarray:
    n = z.shape[0]
    p = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            p[i, j] = sum(sigmoid(z[i, k]) for k in range(j, i + 1))  # p_ij = Σ_{k=j}^{i} σ(q_i·k_k)
    return p


@settings(max_examples=40, deadline=None)
@given(square())
def test_cope_positions_count_the_open_gates(z: np.ndarray) -> None:
    got = cope_positions(z)
    assert np.max(np.abs(got - loop_positions(z))) < 1e-12  # sums of ≤ 10 terms in (0, 1)
    n = z.shape[0]
    i, j = np.tril_indices(n)
    assert np.all(got[i, j] > 0) and np.all(got[i, j] <= i - j + 1)
    assert np.all(np.diff(got, axis=1)[np.tril_indices(n, -1)] < 0)  # farther keys, larger positions


def test_every_gate_open_counts_tokens() -> None:
    p = cope_positions(np.full((6, 6), 60.0))  # σ(60) = 1 to float64's precision
    i, j = np.tril_indices(6)
    assert np.array_equal(p[i, j], (i - j + 1).astype(float))


def loop_bias(p: np.ndarray, z: np.ndarray) -> np.ndarray:
    out = np.zeros_like(p)
    for i in range(p.shape[0]):
        for j in range(p.shape[1]):
            lo, hi = math.floor(p[i, j]), math.ceil(p[i, j])
            w = p[i, j] - lo
            out[i, j] = w * z[i, hi] + (1 - w) * z[i, lo]  # the paper's eq. (5), one entry at a time
    return out


@settings(max_examples=40, deadline=None)
@given(square(8), st.integers(0, 2**16))
def test_cope_bias_interpolates_the_integer_position_logits(z: np.ndarray, seed: int) -> None:
    n = z.shape[0]
    p = cope_positions(z, max_position=n)
    logits = np.random.default_rng(seed).standard_normal((n, n + 1))
    assert np.max(np.abs(cope_bias(p, logits) - loop_bias(p, logits))) < 1e-12


@pytest.mark.parametrize("attend_current", [False, True])
@settings(max_examples=30, deadline=None)
@given(z=square())
def test_stick_breaking_matches_the_papers_product(z: np.ndarray, attend_current: bool) -> None:
    n = z.shape[0]
    want = np.zeros((n, n))
    for i in range(n):
        last = i if attend_current else i - 1
        for j in range(last + 1):
            keep = 1.0
            for k in range(j + 1, last + 1):  # j < k < i (or ≤ i with the current token)
                keep *= 1 - sigmoid(z[i, k])
            want[i, j] = sigmoid(z[i, j]) * keep
    got = stick_breaking_weights(z, attend_current=attend_current)
    assert np.max(np.abs(got - want)) < 1e-12
    # the stick left over is the product of every (1 − β): rows sum to one minus it, never above 1
    for i in range(n):
        last = i if attend_current else i - 1
        left = math.prod(1 - sigmoid(z[i, k]) for k in range(last + 1))
        assert abs(got[i].sum() - (1 - left)) < 1e-12


def test_equal_break_points_fall_geometrically_with_distance() -> None:
    beta = sigmoid(-1.0)
    a = stick_breaking_weights(np.full((9, 9), -1.0))
    for i in range(1, 9):
        for j in range(i):
            assert abs(a[i, j] - beta * (1 - beta) ** (i - j - 1)) < 1e-15


@pytest.mark.parametrize(
    ("argument", "call"),
    [
        ("gate_logits", lambda: cope_positions(np.zeros((2, 3)))),
        ("max_position", lambda: cope_positions(np.zeros((2, 2)), max_position=0)),
        ("positions", lambda: cope_bias(np.full((2, 2), 5.0), np.zeros((2, 3)))),
        ("position_logits", lambda: cope_bias(np.zeros((2, 2)), np.zeros((3, 3)))),
        ("logits", lambda: stick_breaking_weights(np.zeros(3))),
        ("attend_current", lambda: stick_breaking_weights(np.zeros((2, 2)), attend_current=1)),
    ],
)
def test_bad_arguments_are_refused_by_name(argument, call) -> None:
    with pytest.raises(PosEncError, match=argument):
        call()
