r"""posenc_core.compare: relative encodings give Toeplitz matrices, added ones do not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from posenc_core import FAMILIES, PosEncError
from posenc_core.compare import (
    COMPARED,
    position_score_matrix,
    toeplitz_residual,
)

# By kind, from the family registry: a pairwise bias or a rotation is relative, a code added to the input is not.
RELATIVE = [e for e in COMPARED if FAMILIES[e].kind in ("bias", "rotation")]
ADDED = [e for e in COMPARED if FAMILIES[e].kind == "added"]


def test_the_kinds_cover_the_textbook_split() -> None:
    assert {"shaw", "t5", "rope", "alibi"} <= set(RELATIVE) and {"sinusoidal", "learned"} <= set(ADDED)


@pytest.mark.parametrize("encoding", RELATIVE)
@pytest.mark.parametrize("length", [16, 97])
def test_relative_encodings_are_toeplitz(encoding: str, length: int) -> None:
    assert toeplitz_residual(position_score_matrix(encoding, length)) < 1e-12


@pytest.mark.parametrize("encoding", ADDED)
def test_added_encodings_are_not_toeplitz(encoding: str) -> None:
    assert toeplitz_residual(position_score_matrix(encoding, 64)) > 0.1


def test_rope_matrix_matches_a_naive_rotation_loop() -> None:
    length, dim = 12, 8
    scores = position_score_matrix("rope", length, dim=dim)
    from posenc_core import projection_weights, token_embeddings

    x = token_embeddings(["token"], dim)[0]
    w_q, w_k, _ = projection_weights(dim, dim)
    q, k = x @ w_q, x @ w_k
    theta = [10000.0 ** (-2 * i / dim) for i in range(dim // 2)]

    def rotate(v: np.ndarray, m: int) -> np.ndarray:  # half-split pairs (x_i, x_{i+d/2}), as HF
        out = v.copy()
        for i, th in enumerate(theta):
            a, b = v[i], v[i + dim // 2]
            out[i], out[i + dim // 2] = a * np.cos(m * th) - b * np.sin(m * th), a * np.sin(m * th) + b * np.cos(m * th)
        return out

    naive = np.array([[rotate(q, i) @ rotate(k, j) for j in range(length)] for i in range(length)]) / np.sqrt(dim)
    assert np.allclose(scores, naive, atol=1e-12)


@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=12), st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=12))
def test_any_toeplitz_matrix_has_zero_residual(column: list[float], row: list[float]) -> None:
    values = np.array([*column[::-1], *row[1:]])  # entry (i, j) = values[j − i + len(column) − 1]
    i, j = np.indices((len(column), len(row)))
    assert toeplitz_residual(values[j - i + len(column) - 1]) == 0.0


def test_residual_is_scale_free() -> None:
    a = np.random.default_rng(0).standard_normal((6, 6))
    assert toeplitz_residual(a) == pytest.approx(toeplitz_residual(1e-6 * a + 3.0))
    assert toeplitz_residual(np.full((4, 4), 7.0)) == 0.0


@pytest.mark.parametrize(
    "call",
    [
        lambda: position_score_matrix("bogus", 8),
        lambda: position_score_matrix("rope", 1),
        lambda: position_score_matrix("rope", 8, dim=7),
        lambda: toeplitz_residual([1.0, 2.0]),
        lambda: toeplitz_residual([[np.nan]]),
    ],
)
def test_bad_arguments_raise_posenc_error(call) -> None:
    with pytest.raises(PosEncError):
        call()


def test_compared_holds_the_six_textbook_encodings_absolute_first() -> None:
    assert set(COMPARED) >= {"sinusoidal", "learned", "shaw", "t5", "rope", "alibi"}
    assert COMPARED[:2] == ("sinusoidal", "learned")


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), rank=st.integers(0, 12), seed=st.integers(0, 2**16))
def test_numerical_rank_counts_the_independent_outer_products(rows: int, cols: int, rank: int, seed: int) -> None:
    r"""A sum of r random outer products has rank min(r, rows, cols); Gaussian factors are independent almost surely
    and far from singular at these sizes (smallest singular value ≫ 1e-10 of the largest)."""
    import posenc_core as pc

    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((rows, rank)) @ rng.standard_normal((rank, cols))
    assert pc.numerical_rank(matrix) == min(rank, rows, cols)


def test_per_token_encodings_factorise_and_pairwise_biases_do_not() -> None:
    r"""At L = 2d: added positions and RoPE score matrices have rank ≤ d; Shaw, T5 and ALiBi biases have rank L."""
    import posenc_core as pc

    ranks = {e: pc.numerical_rank(pc.position_score_matrix(e, 128, dim=64)) for e in pc.COMPARED}
    assert all(ranks[e] <= 64 for e in ("sinusoidal", "learned", "rope")), ranks
    assert all(ranks[e] == 128 for e in ("shaw", "t5", "alibi")), ranks
