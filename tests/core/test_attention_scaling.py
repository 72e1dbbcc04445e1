r"""Why attention divides by √d_k (Vaswani et al. 2017, §3.2.1, footnote 4): q·k of independent standard-normal
components has variance d, so without the factor 1/√d its spread grows as √d and softmax saturates on one key."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc_core as pc

DIMS = (4, 16, 64, 256, 1024)


def test_the_spread_of_q_dot_k_grows_as_sqrt_d_and_the_scaled_one_stays_1() -> None:
    r"""Each spread is a standard deviation estimated from draws × keys = 4096 scores: its relative error is about
    1/√(2·4096) ≈ 1.1 %, so 6 % is over five standard errors."""
    out = pc.scaling_spread(DIMS, keys=16, draws=256, seed=3)
    assert np.allclose(out.spread, np.sqrt(DIMS), rtol=0.06)
    assert np.allclose(out.spread_scaled, 1.0, rtol=0.06)


def test_without_the_factor_softmax_saturates_and_with_it_it_does_not() -> None:
    out = pc.scaling_spread(DIMS, keys=16, draws=256, seed=0)
    assert np.all(np.diff(out.top_weight) > 0) and out.top_weight[-1] > 0.9  # one key takes nearly everything
    assert np.ptp(out.top_weight_scaled) < 0.05 and out.top_weight_scaled.max() < 0.35  # the same at every d


def test_scaling_spread_equals_a_loop_over_the_draws() -> None:
    r"""The same draws, scored one key at a time with plain Python sums."""
    out = pc.scaling_spread([8], keys=4, draws=3, seed=11)
    rng = np.random.default_rng(11)
    q, k = rng.standard_normal((3, 1, 8)), rng.standard_normal((3, 4, 8))
    scores = [[sum(q[b, 0, i] * k[b, j, i] for i in range(8)) for j in range(4)] for b in range(3)]
    tops = []
    for row in scores:
        scaled = [s / math.sqrt(8) for s in row]
        top = max(scaled)
        tops.append(max(math.exp(s - top) for s in scaled) / sum(math.exp(s - top) for s in scaled))
    assert out.spread[0] == pytest.approx(float(np.std(scores)), rel=1e-12)
    assert out.top_weight_scaled[0] == pytest.approx(sum(tops) / 3, rel=1e-12)


@pytest.mark.parametrize("kwargs", [{"dims": []}, {"dims": [0]}, {"dims": [8], "keys": 1}, {"dims": [8], "draws": 1}])
def test_bad_arguments_raise_posenc_error(kwargs) -> None:
    dims = kwargs.pop("dims")
    with pytest.raises(pc.PosEncError):
        pc.scaling_spread(dims, **kwargs)
