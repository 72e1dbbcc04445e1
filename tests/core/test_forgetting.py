r"""Forgetting attention's bias (Lin et al. 2025, eqs. 5–6) against a loop over the gates, and its ALiBi limit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_core import PosEncError, alibi_bias, attention_weights, forget_gate_bias, log_forget_gates


def loop_bias(gates: list[float]) -> np.ndarray:
    r"""log F_ij = log of the product of the gates f_{j+1} … f_i, written as the paper's product, then −inf above."""
    n = len(gates)
    out = np.full((n, n), -np.inf)
    for i in range(n):
        for j in range(i + 1):
            product = 1.0
            for gate in gates[j + 1 : i + 1]:
                product *= gate
            out[i, j] = math.log(product)
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.05, 1.0), min_size=1, max_size=24))
def test_bias_is_the_log_of_the_gate_product(gates: list[float]) -> None:
    got = forget_gate_bias(np.log(gates))
    want = loop_bias(gates)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    # each entry sums at most 23 logs, each ≥ log 0.05 ≈ −3.0: a cumulative-sum difference is off by a few ulps of
    # the largest partial sum (≤ 24 · 3.0 = 72), so 1e-12 absolute leaves three orders of magnitude of room
    assert np.max(np.abs(got[finite] - want[finite]), initial=0.0) < 1e-12
    assert np.all(np.diag(got) == 0.0)


def test_constant_gate_is_alibi() -> None:
    r"""f = e^(−m) everywhere gives −m(i − j), ALiBi's causal bias at slope m (head 0 of 8 has m = 1/2)."""
    length, slope = 40, 0.5
    got = forget_gate_bias(np.full(length, -slope))
    want = alibi_bias(8, length, heads=[0])[0]
    lower = np.tril(np.ones((length, length), dtype=bool))
    assert np.max(np.abs(got[lower] - want[lower])) < 1e-12
    assert np.all(np.isneginf(got[~lower]))


def test_gates_that_never_forget_give_plain_causal_attention() -> None:
    rng = np.random.default_rng(3)
    scores = rng.standard_normal((12, 12))
    plain = attention_weights(scores, causal=True)
    gated = attention_weights(scores, bias=forget_gate_bias(np.zeros(12)), causal=True)
    assert np.max(np.abs(plain - gated)) < 1e-15


def test_log_gates_by_hand_and_batched() -> None:
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 7, 5)), rng.standard_normal((5, 3)), rng.standard_normal(3)
    got = log_forget_gates(x, w, b)
    assert got.shape == (2, 3, 7)
    for s in range(2):
        for h in range(3):
            for t in range(7):
                z = float(x[s, t] @ w[:, h] + b[h])
                assert got[s, h, t] == pytest.approx(math.log(1.0 / (1.0 + math.exp(-z))), rel=1e-13)
    assert np.all(np.isfinite(log_forget_gates(np.full((3, 1), 1e6), np.array([[-1.0]]))))  # z = −1e6: log σ ≈ −1e6


@pytest.mark.parametrize(
    "call",
    [
        lambda: forget_gate_bias(np.array([0.1, -0.2])),  # a gate above 1
        lambda: forget_gate_bias(np.array([np.nan])),
        lambda: log_forget_gates(np.ones((4, 3)), np.ones((2, 1))),  # d mismatch
        lambda: log_forget_gates(np.ones((4, 3)), np.ones((3, 2)), np.ones(3)),  # one b per head
    ],
)
def test_refusals(call) -> None:
    with pytest.raises(PosEncError):
        call()
