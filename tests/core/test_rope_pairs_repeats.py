r"""posenc_core.rope's pairings and near repeats against independent derivations: loops written from the formulas,
Hugging Face's weight-conversion permutation, and the numbers the page and the articles it cites quote."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_core as pc
from posenc_core import pairing_permutation, rope_near_repeats, rope_scores_mixed_pairing
from posenc_core.rope.curves import _returns

PROP = settings(max_examples=60, deadline=None)
half_dims = st.integers(min_value=1, max_value=64)
bases = st.floats(min_value=10.0, max_value=1e7)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def rotate_naive(x: np.ndarray, position: float, inv_freq: np.ndarray, pairing: str) -> np.ndarray:
    r"""One vector, one position, written from the rotation formula pair by pair with math.cos / math.sin."""
    n, out = len(inv_freq), x.astype(float).copy()
    for i, theta in enumerate(inv_freq):
        a, b = (2 * i, 2 * i + 1) if pairing == "interleaved" else (i, i + n)
        c, s = math.cos(position * theta), math.sin(position * theta)
        out[a], out[b] = x[a] * c - x[b] * s, x[a] * s + x[b] * c
    return out


def hf_permute(w: np.ndarray, n_heads: int) -> np.ndarray:
    r"""``permute`` of transformers' convert_llama_weights_to_hf.py, in NumPy: Meta's (interleaved) rows of W_q / W_k
    reordered for ``rotate_half``. ``w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(...)``."""
    dim1, dim2 = w.shape
    return w.reshape(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(0, 2, 1, 3).reshape(dim1, dim2)


def near_repeat_naive(inv_freq: np.ndarray, tolerance: float, max_distance: int) -> int | None:
    r"""The first r whose every angle r·θ_i is within ``tolerance`` of a multiple of 2π, by a plain loop."""
    for r in range(1, max_distance + 1):
        if all(abs(math.remainder(r * theta, 2 * math.pi)) <= tolerance for theta in inv_freq):
            return r
    return None


# ------------------------------------------------------------------------------------------------ pairing permutation


@PROP
@given(half_dim=half_dims, base=bases, seed=seeds, length=st.integers(1, 40))
def test_interleaved_rope_is_half_split_rope_in_permuted_dimensions(half_dim, base, seed, length) -> None:
    dim = 2 * half_dim
    rng = np.random.default_rng(seed)
    x, positions = rng.standard_normal((length, dim)), rng.uniform(-1e4, 1e4, length)
    inv_freq, perm = pc.rope_inv_freq(dim, base=base), pairing_permutation(dim)
    interleaved = pc.apply_rope(x, positions, inv_freq, pairing="interleaved")
    half = pc.apply_rope(x[:, perm], positions, inv_freq, pairing="half")
    # the same pairs turned by the same angles; only the memory layout of the complex product differs (≤ 1 ulp)
    np.testing.assert_allclose(interleaved[:, perm], half, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(half[:, np.argsort(perm)], interleaved, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize(("dim", "n_heads"), [(8, 1), (128, 1), (64, 4)])
def test_pairing_permutation_is_hugging_face_llama_conversion_per_head(dim: int, n_heads: int) -> None:
    w = np.random.default_rng(0).standard_normal((dim * n_heads, 5))
    per_head = np.concatenate([h * dim + pairing_permutation(dim) for h in range(n_heads)])
    np.testing.assert_array_equal(hf_permute(w, n_heads), w[per_head])


def test_pairing_permutation_small_case_and_validation() -> None:
    assert pairing_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert pairing_permutation(2).tolist() == [0, 1]  # one pair: the conventions coincide
    for bad in (0, 3, -2, 2.5, "8", None):
        with pytest.raises(pc.PosEncError, match="dim"):
            pairing_permutation(bad)


# ------------------------------------------------------------------------------------------------ mixed pairings


@settings(max_examples=40, deadline=None)
@given(half_dim=half_dims, base=bases, seed=seeds, pairing=st.sampled_from(["half", "interleaved"]))
def test_mixed_pairing_with_one_pairing_is_rope_scores(half_dim, base, seed, pairing) -> None:
    rng = np.random.default_rng(seed)
    q, k = rng.standard_normal((5, 2 * half_dim)), rng.standard_normal((7, 2 * half_dim))
    inv_freq = pc.rope_inv_freq(2 * half_dim, base=base)
    got = rope_scores_mixed_pairing(q, k, inv_freq, query_pairing=pairing, key_pairing=pairing)
    np.testing.assert_allclose(got, pc.rope_scores(q, k, inv_freq, pairing=pairing), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("query_pairing", "key_pairing"), [("half", "interleaved"), ("interleaved", "half")])
def test_mixed_pairing_scores_match_a_loop_and_are_not_relative(query_pairing: str, key_pairing: str) -> None:
    rng = np.random.default_rng(2)
    dim, length = 16, 12
    inv_freq = pc.rope_inv_freq(dim)
    q, k = rng.standard_normal(dim), rng.standard_normal(dim)  # the same vectors at every position
    got = rope_scores_mixed_pairing(
        np.tile(q, (length, 1)),
        np.tile(k, (length, 1)),
        inv_freq,
        query_pairing=query_pairing,
        key_pairing=key_pairing,
        scale=1.0,
    )
    expected = np.array(
        [
            [rotate_naive(q, m, inv_freq, query_pairing) @ rotate_naive(k, n, inv_freq, key_pairing) for n in range(12)]
            for m in range(length)
        ]
    )
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert pc.toeplitz_deviation(got) > 0.1  # the score now depends on m and n, not on n − m alone
    same = pc.rope_scores(np.tile(q, (length, 1)), np.tile(k, (length, 1)), inv_freq, pairing=key_pairing)
    assert pc.toeplitz_deviation(same) < 1e-12


def test_mixed_pairing_validates_each_pairing_by_name() -> None:
    q = np.ones((2, 4))
    inv = pc.rope_inv_freq(4)
    with pytest.raises(pc.PosEncError, match="query_pairing"):
        rope_scores_mixed_pairing(q, q, inv, query_pairing="rotate_half", key_pairing="half")
    with pytest.raises(pc.PosEncError, match="key_pairing"):
        rope_scores_mixed_pairing(q, q, inv, query_pairing="half", key_pairing=None)
    with pytest.raises(pc.PosEncError, match="last dimension"):
        rope_scores_mixed_pairing(q, np.ones((2, 6)), inv, query_pairing="half", key_pairing="half")


# ------------------------------------------------------------------------------------------------ near repeats


def test_thirty_degrees_per_token_repeats_at_twelve_as_the_wechat_article_says() -> None:
    """The clock of the WeChat article 「Transformer位置编码问题」: 30° per token is back after 12 tokens."""
    assert rope_near_repeats([math.pi / 6], tolerance=1e-9, max_distance=100) == (12,)
    # a second pair turning 1 rad per token tells position 12 from position 0
    alone, together = rope_near_repeats([math.pi / 6, 1.0], tolerance=0.1, max_distance=10**4)
    assert alone == 12 and together > 12


@pytest.mark.parametrize(("dim", "base", "tolerance"), [(128, 1e4, 0.1), (64, 5e5, 0.05), (512, 1e7, 0.5)])
def test_near_repeats_equal_a_dense_search_of_each_prefix(dim: int, base: float, tolerance: float) -> None:
    inv_freq = pc.rope_inv_freq(dim, base=base)
    got = rope_near_repeats(inv_freq, tolerance=tolerance, max_distance=10**6)
    assert len(got) == dim // 2
    for k in range(1, 7):
        assert got[k - 1] == dense_first_return(inv_freq[:k], tolerance, 10**6)


def dense_first_return(inv_freq: np.ndarray, tolerance: float, max_distance: int) -> int | None:
    r"""The first r in 1 … max_distance with :math:`\cos(r\theta_i) \ge \cos(\text{tolerance})` for every pair,
    testing every r (in chunks), with no sieve and no windows."""
    threshold = math.cos(tolerance)
    for start in range(1, max_distance + 1, 2**16):
        r = np.arange(start, min(start + 2**16, max_distance + 1), dtype=np.float64)
        hits = np.flatnonzero(np.all(np.cos(np.multiply.outer(r, inv_freq)) >= threshold, axis=1))
        if hits.size:
            return int(r[hits[0]])
    return None


def test_near_repeats_for_d128_base_1e4() -> None:
    r"""Pinned so a change shows: pair 0 turns 1 rad per token, 44 rad = 7 turns + 0.018 rad."""
    got = rope_near_repeats(pc.rope_inv_freq(128), tolerance=0.1, max_distance=10**6)
    assert got[:5] == (44, 1219, 28689, 326311, None)
    assert set(got[4:]) == {None}


@settings(max_examples=40, deadline=None)
@given(
    inv_freq=st.lists(st.floats(0.01, 3.0), min_size=1, max_size=4),
    tolerance=st.floats(0.05, 1.0),
    max_distance=st.integers(1, 3000),
)
def test_near_repeats_match_a_plain_loop_and_never_decrease(inv_freq, tolerance, max_distance) -> None:
    got = rope_near_repeats(inv_freq, tolerance=tolerance, max_distance=max_distance)
    for k in range(1, len(inv_freq) + 1):
        expected = near_repeat_naive(inv_freq[:k], tolerance, max_distance)
        # a distance right at the tolerance may land on either side of it in rounding: accept a loop that says so
        if got[k - 1] != expected:
            r = got[k - 1] if got[k - 1] is not None else expected
            margin = min(abs(tolerance - abs(math.remainder(r * t, 2 * math.pi))) for t in inv_freq[:k])
            assert margin < 1e-9
    found = [r for r in got if r is not None]
    assert found == sorted(found) and got[: len(found)] == tuple(found)  # None only after every found entry


@settings(max_examples=300, deadline=None)
@given(
    theta=st.one_of(st.floats(1e-9, 3.5), st.floats(1e-30, 1e-6)),
    tolerance=st.one_of(st.floats(1e-12, 1e-3), st.floats(1e-3, math.pi)),
    start=st.integers(1, 10**7),
    length=st.integers(1, 5000),
)
def test_enumerated_windows_find_exactly_what_testing_every_distance_finds(theta, tolerance, start, length) -> None:
    r"""The sieve's shortcut for the first pair changes the work, never the answer (tiny tolerances included)."""
    threshold = math.cos(tolerance)
    fast = _returns(start, start + length, theta, tolerance, threshold)
    dense = _returns(start, start + length, theta, tolerance, threshold, dense=True)
    np.testing.assert_array_equal(fast, dense)


def test_near_repeats_validate_their_arguments() -> None:
    inv = pc.rope_inv_freq(8)
    for name, call in [
        ("tolerance", lambda: rope_near_repeats(inv, tolerance=0.0)),
        ("tolerance", lambda: rope_near_repeats(inv, tolerance=4.0)),
        ("max_distance", lambda: rope_near_repeats(inv, max_distance=0)),
        ("max_distance", lambda: rope_near_repeats(inv, max_distance=10**8)),
        ("inv_freq", lambda: rope_near_repeats([])),
        ("inv_freq", lambda: rope_near_repeats([math.inf])),
    ]:
        with pytest.raises(pc.PosEncError, match=name):
            call()


def test_near_repeats_stop_early_when_every_pair_is_back() -> None:
    r"""A loose tolerance brings everything back at once: even 10^7 distances and 32k pairs return at once."""
    inv = np.full(32768, 1e-6)
    assert rope_near_repeats(inv, tolerance=math.pi, max_distance=10**7) == (1,) * 32768


def test_pair_wavelengths_keep_each_pair_in_its_place_and_leave_gaps_where_none_turns() -> None:
    from posenc_core import PosEncError, pair_wavelengths

    inv_freq = [1.0, 0.5, 0.0, 0.0]  # a p-RoPE head: two pairs turn, two do not
    out = pair_wavelengths(inv_freq, pairs=6)
    expected = [2 * math.pi, 4 * math.pi] + [math.nan] * 4  # λ = 2π/θ, written out
    assert np.allclose(out, expected, equal_nan=True)
    with pytest.raises(PosEncError):
        pair_wavelengths(inv_freq, pairs=3)  # fewer slots than pairs
