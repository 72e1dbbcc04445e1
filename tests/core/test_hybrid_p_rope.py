r"""The 2025 designs the lab trains, in the core: the hybrid RoPE / NoPE stack's layer pattern and score matrices,
and p-RoPE's score matrix (Compare's), each against a loop written from its source."""

from __future__ import annotations

import math

import naive
import numpy as np
import pytest

import posenc_core as pc
from posenc_core import FAMILIES, PosEncError, hybrid_rope_layers, hybrid_scores, position_score_matrix
from posenc_core.families import P_ROPE_FRACTION, p_rope_inv_freq


@pytest.mark.parametrize("n_layers", [4, 5, 8, 12, 36, 48])
def test_from_four_layers_the_hybrid_is_transformers_smollm3_and_llama4_rule(n_layers: int) -> None:
    r"""``no_rope_layers`` of transformers' own config classes (1 = the layer rotates), the peer."""
    transformers = pytest.importorskip("transformers")
    smol = transformers.SmolLM3Config(num_hidden_layers=n_layers)
    llama4 = transformers.Llama4TextConfig(num_hidden_layers=n_layers)
    got = hybrid_rope_layers(n_layers).astype(int).tolist()
    assert got == list(smol.no_rope_layers) == list(llama4.no_rope_layers)


def test_a_stack_shorter_than_one_interval_keeps_the_groups_shape() -> None:
    r"""Two layers: RoPE first, no position last (the lab's); three: RoPE, RoPE, none. The rule alone would rotate
    every layer of these."""
    assert hybrid_rope_layers(2).tolist() == [True, False]
    assert hybrid_rope_layers(3).tolist() == [True, True, False]
    assert all((i + 1) % 4 != 0 for i in range(3))  # what the plain rule gives: no NoPE layer at all


def _loop_plain_scores(q: np.ndarray, k: np.ndarray) -> np.ndarray:
    d = q.shape[1]
    return np.array(
        [
            [math.fsum(q[i, t] * k[j, t] for t in range(d)) / math.sqrt(d) for j in range(k.shape[0])]
            for i in range(len(q))
        ]
    )


def test_hybrid_scores_rotate_on_rope_layers_only() -> None:
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((9, 8)), rng.standard_normal((9, 8))
    positions = list(range(9))
    inv_freq = naive.rope_inv_freq(8)
    got = hybrid_scores(q, k, np.asarray(inv_freq), n_layers=4)
    rotated = naive.rope_scores(q, k, inv_freq, positions, positions)
    plain = _loop_plain_scores(q, k)
    for layer, want in enumerate([rotated, rotated, rotated, plain]):  # layer 4 of 4 carries no position
        np.testing.assert_allclose(got[layer], want, rtol=0, atol=1e-12)
    assert not np.allclose(rotated, plain)  # the two kinds of layer differ on these q, k


def test_hybrid_refuses_a_single_layer_and_mismatched_q_k() -> None:
    with pytest.raises(PosEncError, match="n_layers"):
        hybrid_rope_layers(1)
    with pytest.raises(PosEncError, match="same shape"):
        hybrid_scores(np.ones((3, 4)), np.ones((2, 4)), np.ones(2), n_layers=2)


@pytest.mark.parametrize(("head_dim", "p"), [(8, P_ROPE_FRACTION), (64, 0.25), (64, 0.75), (10, 0.5)])
def test_p_rope_frequencies_are_the_papers(head_dim: int, p: float) -> None:
    want = naive.rope_proportional(head_dim, 10000.0, p)
    np.testing.assert_allclose(p_rope_inv_freq(head_dim, p=p), want, rtol=1e-15, atol=0)
    assert sum(t > 0 for t in want) == int(p * head_dim // 2)


def test_p_rope_score_matrix_is_rope_with_the_slowest_pairs_standing_still() -> None:
    r"""Compare's p-RoPE matrix: the same q and k at every position, rotated by the loop at p-RoPE's frequencies; at
    d = 8 and p = 0.75 the fourth pair does not turn, so its part of q·k is the same at every distance."""
    length, dim, seed = 12, 8, 2
    got = position_score_matrix("p_rope", length, dim=dim, seed=seed)
    rope = position_score_matrix("rope", length, dim=dim, seed=seed)
    x = pc.token_embeddings(["token"], dim, seed=seed)  # Compare's one content vector and head (families._content)
    w_q, w_k, _ = pc.projection_weights(dim, dim, seed=seed)
    q, k = x @ w_q, x @ w_k
    positions = list(range(length))
    want = naive.rope_scores(
        np.repeat(q, length, 0),
        np.repeat(k, length, 0),
        naive.rope_proportional(dim, 10000.0, 0.75),
        positions,
        positions,
    )
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert not np.allclose(got, rope)  # a pair fewer turns: a different matrix
    assert FAMILIES["p_rope"].kind == "rotation"
