r"""rope_scores checks overflow on its (L, d) inputs (Cauchy–Schwarz bound), not on its (Lq, Lk) result: the bound
must never let an overflow through, and scores under it must equal a naive loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc_core as pc


def _naive(q: np.ndarray, k: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    n = inv_freq.shape[0]

    def rotate(x: np.ndarray, m: int) -> np.ndarray:
        out = x.copy()
        for i in range(n):
            c, s = math.cos(m * inv_freq[i]), math.sin(m * inv_freq[i])
            out[i], out[i + n] = x[i] * c - x[i + n] * s, x[i] * s + x[i + n] * c
        return out

    lk = k.shape[0]
    return np.array([[rotate(q[a], a) @ rotate(k[b], b) for b in range(lk)] for a in range(q.shape[0])])


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
