r"""rope_scores checks overflow on its (L, d) inputs (Cauchy–Schwarz bound), not on its (Lq, Lk) result: the bound
must never let an overflow through, and scores under it must equal a naive loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

import posenc_core as pc


def _naive(q: np.ndarray, k: np.ndarray, inv_freq: np.ndarray, q_pos=None, k_pos=None) -> np.ndarray:
    """(R_m q_a)·(R_n k_b) for every row pair, pair i = (x_i, x_{i+n}) turned with math.cos / math.sin; positions
    default to the row numbers."""
    n = inv_freq.shape[0]
    q_pos = range(q.shape[0]) if q_pos is None else q_pos
    k_pos = range(k.shape[0]) if k_pos is None else k_pos

    def rotate(x: np.ndarray, m: float) -> np.ndarray:
        out = x.copy()
        for i in range(n):
            c, s = math.cos(m * inv_freq[i]), math.sin(m * inv_freq[i])
            out[i], out[i + n] = x[i] * c - x[i + n] * s, x[i] * s + x[i + n] * c
        return out

    rows = zip(q, q_pos, strict=True)
    return np.array([[rotate(qa, m) @ rotate(kb, p) for kb, p in zip(k, k_pos, strict=True)] for qa, m in rows])


@pytest.mark.parametrize("size", [1.0, 1e100, 1e150])
def test_scores_under_the_bound_equal_a_naive_loop(size):
    rng = np.random.default_rng(3)
    q, k = size * rng.standard_normal((5, 8)), size * rng.standard_normal((5, 8))
    inv_freq = pc.rope_inv_freq(8)
    got = pc.rope_scores(q, k, inv_freq, scale=1.0)
    np.testing.assert_allclose(got, _naive(q, k, inv_freq), rtol=1e-12, atol=0)


def test_an_overflow_past_the_bound_is_still_refused():
    q, k = np.zeros((3, 4)), np.zeros((3, 4))
    q[:, 0], k[:, 0] = 1e200, 1e200  # the bound fails (1e400), and q·k does overflow: the result is checked
    with pytest.raises(pc.PosEncError, match="overflow"):
        pc.rope_scores(q, k, pc.rope_inv_freq(4), scale=1.0, query_positions=[0, 0, 0], key_positions=[0, 0, 0])


def test_inputs_past_the_bound_whose_scores_are_finite_are_answered():
    q, k = np.zeros((2, 4)), np.zeros((2, 4))
    q[:, 0], k[:, 1] = 1e200, 1e200  # the bound fails, but every score is 0·… = 0 at position 0
    got = pc.rope_scores(q, k, pc.rope_inv_freq(4), scale=1.0, query_positions=[0, 0], key_positions=[0, 0])
    assert np.all(np.isfinite(got))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("which", ["q", "k"])
def test_a_nan_or_inf_input_is_refused_by_name(bad, which):
    # rope_scores reads finiteness off the rotated rows, not off its inputs: the refusal must still name the input.
    q, k = np.ones((4, 8)), np.ones((4, 8))
    (q if which == "q" else k)[2, 5] = bad
    with pytest.raises(pc.PosEncError, match=f"{which} must be finite"):
        pc.rope_scores(q, k, pc.rope_inv_freq(8))


@pytest.mark.parametrize("shared_positions", [True, False])
def test_the_scale_multiplies_the_dimensions_that_do_not_turn_too(shared_positions):
    # The scale is applied to the rotated query rows, partial rotary's pass-through columns included: against
    # s · (R_m q)ᵀ(R_n k) from the naive loop on the turning half plus the plain product of the rest.
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((5, 12)), rng.standard_normal((5, 12))
    inv_freq = pc.rope_inv_freq(8)  # 4 pairs turn: dimensions 0–7; 8–11 pass through
    positions = np.arange(5.0) if shared_positions else np.arange(5.0) + 3.0
    got = pc.rope_scores(q, k, inv_freq, query_positions=positions, key_positions=np.arange(5.0))
    rotated = _naive(q[:, :8], k[:, :8], inv_freq, positions, np.arange(5.0))
    expected = (rotated + q[:, 8:] @ k[:, 8:].T) / math.sqrt(12)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@settings(max_examples=300, deadline=None)
@given(
    dtype=hst.sampled_from([np.float32, np.float64]),
    q_reach=hst.floats(-0.5, 1.0),
    k_reach=hst.floats(-0.5, 1.0),
    seed=hst.integers(0, 2**16),
    scale=hst.sampled_from([None, 1.0, 1e3]),
)
def test_scores_come_back_finite_or_are_refused_in_either_dtype(dtype, q_reach, k_reach, seed, scale):
    # The bound is taken against the scores' own dtype: float32 scores past ~3.4e38 were returned as inf (the bound
    # was float64's). Entries of magnitude 10^(reach · the dtype's largest exponent): products span its whole range.
    top = np.log10(np.finfo(dtype).max) - 1.0
    rng = np.random.default_rng(seed)
    q = (rng.standard_normal((6, 8)) * 10.0 ** (q_reach * top)).astype(dtype)
    k = (rng.standard_normal((6, 8)) * 10.0 ** (k_reach * top)).astype(dtype)
    try:
        got = pc.rope_scores(q, k, pc.rope_inv_freq(8), scale=scale)
    except pc.PosEncError as err:
        assert "overflow" in str(err) or "must be finite" in str(err), str(err)
        return
    assert got.dtype == dtype and np.all(np.isfinite(got))


def test_float32_scores_that_overflow_float32_are_refused_as_float32():
    q = np.full((4, 8), 1e20, dtype=np.float32)  # each score ~8e40: finite in float64, not in float32
    with pytest.raises(pc.PosEncError, match="overflow float32"):
        pc.rope_scores(q, q, pc.rope_inv_freq(8), scale=1.0)
