r"""The bias-structure functions against loop transcriptions, independent derivations and published numbers:
relative (Toeplitz measure, T5 max_exact), alibi (closed-form slopes, key-only bias, receptive field), attention
(weights, random logits) and compare (the cross term).

* Toeplitz measure: a dictionary of diagonals built entry by entry; every relative bias in the library has spread 0.
* Cross term: the double sum :math:`\sum_{a,b} p_{m,a} (W_Q W_K^\top)_{ab} p_{n,b}`; with :math:`W_Q W_K^\top = I`
  and sinusoids it equals :math:`\sum_i \cos((n - m)\omega_i)` (angle-difference formula), a Toeplitz matrix.
* ALiBi: the key-only bias against the paper's, softmax row by row (hypothesis), and against BLOOM's
  ``build_alibi_tensor``; slopes split at the closest power of two as in the authors' ``get_slopes``.
* T5: max_exact is where ``t5_relative_bucket`` stops giving every distance its own bucket (Raffel et al. 2020).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import posenc_core as pc
from posenc_core import (
    alibi_closest_power_of_two,
    alibi_key_only_bias,
    alibi_receptive_field,
    alibi_slope_exponents,
    attention_weights,
    diagonal_spread,
    position_cross_scores,
    random_logits,
    t5_max_exact,
    toeplitz_deviation,
)

PROP = settings(max_examples=60, deadline=None)


def naive_diagonal_spread(a: np.ndarray) -> np.ndarray:
    r"""max − min of each diagonal c − r, collected entry by entry."""
    diagonals: dict[int, list[float]] = defaultdict(list)
    rows, cols = a.shape
    for r in range(rows):
        for c in range(cols):
            diagonals[c - r].append(float(a[r, c]))
    out = []
    for delta in range(-(rows - 1), cols):
        values = diagonals[delta]
        out.append(0.0 if max(values) == min(values) else max(values) - min(values))
    return np.array(out)


def naive_softmax_rows(scores: np.ndarray) -> np.ndarray:
    out = np.zeros_like(scores)
    for r, row in enumerate(scores):
        keep = np.isfinite(row)
        e = [math.exp(x - max(row[keep])) for x in row[keep]]
        out[r, keep] = np.array(e) / sum(e)
    return out


# --- Toeplitz ------------------------------------------------------------------------------------------------------


@PROP
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 9), st.integers(1, 9)), elements=st.floats(-5, 5)))
def test_diagonal_spread_equals_the_entry_by_entry_definition(a):
    np.testing.assert_allclose(diagonal_spread(a), naive_diagonal_spread(a), rtol=0, atol=1e-12)


@PROP
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_a_matrix_built_from_its_offset_is_toeplitz_and_a_perturbed_one_is_not(rows, cols, seed):
    rng = np.random.default_rng(seed)
    by_offset = rng.standard_normal(rows + cols - 1)
    a = by_offset[np.arange(cols)[None, :] - np.arange(rows)[:, None] + rows - 1]
    assert toeplitz_deviation(a) == 0.0
    if min(rows, cols) >= 2:  # the main diagonal has two entries: change one
        a[0, 0] += 0.5
        assert toeplitz_deviation(a) == pytest.approx(0.5)


def test_masked_diagonals_count_as_constant_and_half_masked_ones_do_not():
    bias = pc.alibi_bias(8, 5)[0]  # −inf above the diagonal, every diagonal all −inf or all finite
    assert toeplitz_deviation(bias) == 0.0
    bias[0, 0] = -np.inf
    assert toeplitz_deviation(bias) == np.inf


@pytest.mark.parametrize(("lq", "lk"), [(1, 1), (7, 7), (3, 11), (16, 40)])
def test_every_relative_bias_of_the_library_is_toeplitz(lq, lk):
    weights = np.random.default_rng(0).standard_normal((3, 2 * 4 + 1))
    assert toeplitz_deviation(pc.shaw_relative_bias(weights[0], lq, lk, max_relative=4)) == 0.0
    assert toeplitz_deviation(pc.shaw_relative_index(lq, lk, max_relative=2)) == 0.0
    assert toeplitz_deviation(pc.t5_bucket_matrix(lq, lk, bidirectional=True, num_buckets=8, max_distance=20)) == 0.0
    for causal in (True, False):
        for head in pc.alibi_bias(12, lq, lk, causal=causal):
            assert toeplitz_deviation(head) == 0.0


def test_key_only_alibi_is_not_toeplitz_although_its_softmax_rows_are_the_papers():
    assert toeplitz_deviation(alibi_key_only_bias(8, 6)[0]) == pytest.approx(0.5 * 5)  # m·j along the main diagonal


@pytest.mark.parametrize("bad", [np.array([[np.nan]]), np.array([[np.inf, 0.0]]), np.zeros(3), "x", np.empty((0, 2))])
def test_diagonal_spread_refuses_bad_matrices(bad):
    with pytest.raises(pc.PosEncError):
        diagonal_spread(bad)


# --- the cross term of additive encodings ------------------------------------------------------------------------


def test_cross_scores_equal_the_double_sum():
    rng = np.random.default_rng(1)
    table, w_q, w_k = rng.standard_normal((5, 4)), rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    m_matrix = w_q @ w_k.T
    want = np.array(
        [
            [sum(table[m, a] * m_matrix[a, b] * table[n, b] for a in range(4) for b in range(4)) for n in range(5)]
            for m in range(5)
        ]
    )
    np.testing.assert_allclose(position_cross_scores(table, w_q, w_k), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("length", "dim"), [(8, 4), (32, 32), (100, 64)])
def test_sinusoids_through_identity_projections_give_the_cosine_sum_of_the_offset(length, dim):
    table = pc.sinusoidal(length, dim)
    scores = position_cross_scores(table, np.eye(dim), np.eye(dim))
    omega = 10000.0 ** (-np.arange(0, dim, 2) / dim)
    offset = np.arange(length)[None, :] - np.arange(length)[:, None]
    want = np.cos(offset[..., None] * omega).sum(axis=-1)  # sin a sin b + cos a cos b = cos(b − a)
    np.testing.assert_allclose(scores, want, rtol=0, atol=1e-11)
    assert toeplitz_deviation(scores) < 1e-11


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_projections_make_the_positional_score_depend_on_absolute_positions(seed):
    table = pc.sinusoidal(32, 32)
    w_q, w_k, _ = pc.projection_weights(32, 32, seed=seed)
    scores = position_cross_scores(table, w_q, w_k)
    assert toeplitz_deviation(scores) > 0.5  # O(1): the same offset scores differently at different places
    assert toeplitz_deviation(position_cross_scores(table, w_q, w_q)) > 0.5  # even W_Q = W_K does not help


def test_cross_scores_refuse_mismatched_shapes():
    with pytest.raises(pc.PosEncError, match="d_model = 4"):
        position_cross_scores(np.ones((3, 4)), np.ones((5, 2)), np.ones((5, 2)))
    with pytest.raises(pc.PosEncError):
        position_cross_scores(np.ones((3, 4)), np.ones((4, 2)), np.ones((4, 3)))


# --- T5 -------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("bidirectional", "num_buckets", "want"), [(True, 32, 8), (False, 32, 16), (True, 64, 16)])
def test_t5_max_exact_matches_t5_defaults(bidirectional, num_buckets, want):
    assert t5_max_exact(bidirectional=bidirectional, num_buckets=num_buckets) == want


@PROP
@given(st.booleans(), st.integers(4, 80), st.integers(0, 400))
def test_distances_below_max_exact_get_one_bucket_each(bidirectional, num_buckets, extra):
    max_exact = t5_max_exact(bidirectional=bidirectional, num_buckets=num_buckets)
    max_distance = max_exact + 1 + extra
    past = -np.arange(max_exact + 1)  # keys in the past: bucket = distance while exact
    buckets = pc.t5_relative_bucket(
        past, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    assert np.array_equal(buckets[:max_exact], np.arange(max_exact))
    assert buckets[max_exact] == max_exact  # the log part is ⌊log(1)⌋ = 0 at exactly max_exact


# --- ALiBi ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_heads", [1, 2, 3, 8, 12, 20, 96, 128, 4095])
def test_slopes_split_at_the_closest_power_of_two(n_heads):
    c = alibi_closest_power_of_two(n_heads)
    assert c == 2 ** math.floor(math.log2(n_heads)) and c <= n_heads < 2 * c
    slopes = pc.alibi_slopes(n_heads)
    # the reference multiplies start^h: a few ulps off 2^(−8h/c)
    np.testing.assert_allclose(slopes[:c], 2.0 ** (-8.0 * np.arange(1, c + 1) / c), rtol=1e-13)
    np.testing.assert_allclose(
        slopes[c:], 2.0 ** (-8.0 * np.arange(1, 2 * c + 1, 2)[: n_heads - c] / (2 * c)), rtol=1e-13
    )


@pytest.mark.parametrize("n_heads", [1, 5, 8, 12, 20, 96, 127, 128, 4096])
def test_closed_form_exponents_give_the_reference_slopes(n_heads):
    np.testing.assert_allclose(2.0 ** -alibi_slope_exponents(n_heads), pc.alibi_slopes(n_heads), rtol=1e-13)


def test_twelve_heads_take_the_published_slopes():
    want = [2.0**-e for e in (1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5)]  # docs/references.md, "ALiBi"
    np.testing.assert_allclose(pc.alibi_slopes(12), want, rtol=1e-13)
    assert alibi_closest_power_of_two(12) == 8
    assert list(alibi_slope_exponents(12)) == [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]


def test_key_only_bias_is_slope_times_key_position_with_the_future_masked():
    bias = alibi_key_only_bias(8, 3, 5, heads=[0, 7])
    for h, m in enumerate((0.5, 1 / 256)):
        for r in range(3):
            i = 5 - 3 + r  # queries are the last positions
            for j in range(5):
                assert bias[h, r, j] == (m * j if j <= i else -np.inf)


@PROP
@given(
    n_heads=st.integers(1, 40),
    lq=st.integers(1, 12),
    extra=st.integers(0, 8),
    seed=st.integers(0, 2**32 - 1),
    std=st.floats(0.0, 20.0),
)
def test_paper_and_key_only_alibi_give_identical_causal_softmax_rows(n_heads, lq, extra, seed, std):
    lk = lq + extra
    logits = random_logits(lq, lk, std=std, seed=seed)
    paper = attention_weights(logits, bias=pc.alibi_bias(n_heads, lq, lk))
    key_only = attention_weights(logits, bias=alibi_key_only_bias(n_heads, lq, lk))
    assert np.max(np.abs(paper - key_only)) < 1e-13
    past = ~pc.causal_mask(lq, lk)
    key_only_past = np.where(past, alibi_key_only_bias(n_heads, lq, lk), 0.0)
    gap = np.where(past, key_only_past - np.where(past, pc.alibi_bias(n_heads, lq, lk), 0.0), np.nan)
    assert np.nanmax(np.nanmax(gap, axis=-1) - np.nanmin(gap, axis=-1)) < 1e-9  # a constant per row: m·i


def test_key_only_bias_equals_bloom_build_alibi_tensor():
    torch = pytest.importorskip("torch")
    bloom = pytest.importorskip("transformers.models.bloom.modeling_bloom")
    n_heads, length = 12, 9
    mask = torch.ones(1, length, dtype=torch.int64)
    theirs = bloom.build_alibi_tensor(mask, n_heads, torch.float64).reshape(n_heads, length).numpy()  # (H, Lk)
    ours = alibi_key_only_bias(n_heads, length)[:, -1, :]  # the last query row sees every key
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)  # BLOOM's slopes are float32


@pytest.mark.parametrize("n_heads", [8, 12, 20, 96])
@pytest.mark.parametrize("threshold", [0.5, 1.0, 4.0])
def test_receptive_field_is_where_the_bias_reaches_minus_threshold(n_heads, threshold):
    slopes = pc.alibi_slopes(n_heads)
    field = alibi_receptive_field(slopes, threshold=threshold)
    np.testing.assert_allclose(-slopes * field, -threshold, rtol=1e-14)
    assert np.all(np.diff(field) > 0) or n_heads & (n_heads - 1)  # power of two: slopes fall, fields grow
    assert alibi_receptive_field(pc.alibi_slopes(8), threshold=1.0)[0] == 2.0  # m = 1/2: one unit at distance 2


@pytest.mark.parametrize(
    ("slopes", "threshold"), [([0.5, 0.0], 1.0), ([-1.0], 1.0), ([0.5], 0.0), ([0.5], np.nan), ([5e-324], 1e10)]
)
def test_receptive_field_refuses_bad_arguments(slopes, threshold):
    with pytest.raises(pc.PosEncError):
        alibi_receptive_field(slopes, threshold=threshold)


# --- logits and weights ---------------------------------------------------------------------------------------------


def test_random_logits_are_reproducible_and_scaled():
    a = random_logits(300, 200, std=2.0, seed=3)
    assert a.shape == (300, 200) and np.array_equal(a, random_logits(300, 200, std=2.0, seed=3))
    assert abs(a.std() - 2.0) < 0.05 and not np.array_equal(a, random_logits(300, 200, std=2.0, seed=4))
    assert random_logits(4).shape == (4, 4)


@PROP
@given(st.integers(1, 8), st.integers(0, 6), st.integers(0, 2**32 - 1), st.booleans())
def test_attention_weights_equal_a_row_by_row_softmax(lq, extra, seed, causal):
    lk = lq + extra
    logits = random_logits(lq, lk, std=3.0, seed=seed)
    bias = pc.alibi_bias(4, lq, lk, causal=False)[1]
    scores = logits + bias
    if causal:
        scores = np.where(pc.causal_mask(lq, lk), -np.inf, scores)
    got = attention_weights(logits, bias=bias, causal=causal)
    np.testing.assert_allclose(got, naive_softmax_rows(scores), rtol=0, atol=1e-14)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=0, atol=1e-14)


def test_attention_weights_broadcast_heads_over_one_logit_matrix():
    logits = random_logits(5, seed=0)
    weights = attention_weights(logits, bias=pc.alibi_bias(8, 5, heads=[0, 3, 7]))
    assert weights.shape == (3, 5, 5)
    np.testing.assert_array_equal(np.triu(weights[1], 1), 0.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: attention_weights(np.ones((2, 3)), bias=np.ones((4, 4))),
        lambda: attention_weights(np.ones((2, 2)), bias=np.array([[np.inf, 0.0], [0.0, 0.0]])),
        lambda: attention_weights(np.ones((2, 2)), bias=np.full((2, 2), -np.inf)),
        lambda: attention_weights(np.full((1, 2), 1e308), bias=np.full((1, 2), 1e308)),
        lambda: random_logits(2, std=-1.0),
        lambda: alibi_key_only_bias(8, 4, heads=[8]),
        lambda: alibi_key_only_bias(8, 2**15, 2**15),
        lambda: t5_max_exact(num_buckets=3),
        lambda: alibi_closest_power_of_two(0),
    ],
)
def test_bad_arguments_raise_posenc_error(call):
    with pytest.raises(pc.PosEncError):
        call()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("where", [(0, 0), (2, 1), (0, 2)])  # (0, 2) lies in the future: the causal mask covers it
@pytest.mark.parametrize("causal", [False, True])
def test_a_nan_or_inf_is_refused_by_its_name_wherever_it_sits(bad, where, causal):
    # softmax reads nan and +inf off each row's maximum, attention_weights off the maximum of logits + bias: one
    # reduction each, not a pass per kind. Each refusal still names its argument, even under the causal mask.
    x = np.zeros((3, 3))
    x[where] = bad
    with pytest.raises(pc.PosEncError, match="x must not contain nan or"):
        pc.softmax(x)
    with pytest.raises(pc.PosEncError, match="bias must not contain nan or"):
        attention_weights(np.zeros((3, 3)), bias=x, causal=causal)
    with pytest.raises(pc.PosEncError, match="logits must be finite"):
        attention_weights(x, bias=np.zeros((3, 3)), causal=causal)
    with pytest.raises(pc.PosEncError, match="overflow float64"):  # finite logits and bias, an infinite sum
        attention_weights(np.where(x == 0, 1e308, 0.0), bias=np.full((3, 3), 1e308), causal=causal)


# --- hostile inputs: only PosEncError, never NaN ------------------------------------------------------------------

hostile = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=5), elements=st.floats(allow_nan=True)),
    st.lists(st.integers(-3, 3), max_size=4),
)
small = st.integers(1, 12)
matrices = hnp.arrays(np.float64, st.tuples(small, small), elements=st.floats(-1e300, 1e300))


def either(valid):
    return st.one_of(valid, valid, hostile)


CALLS = {
    "diagonal_spread": lambda d: diagonal_spread(d.draw(either(matrices))),
    "toeplitz_deviation": lambda d: toeplitz_deviation(d.draw(either(matrices))),
    "position_cross_scores": lambda d: position_cross_scores(
        d.draw(either(matrices)), d.draw(either(matrices)), d.draw(either(matrices))
    ),
    "t5_max_exact": lambda d: t5_max_exact(
        bidirectional=d.draw(either(st.booleans())), num_buckets=d.draw(either(st.integers(0, 200)))
    ),
    "alibi_closest_power_of_two": lambda d: alibi_closest_power_of_two(d.draw(either(st.integers(0, 5000)))),
    "alibi_slope_exponents": lambda d: alibi_slope_exponents(d.draw(either(st.integers(0, 5000)))),
    "alibi_key_only_bias": lambda d: alibi_key_only_bias(
        d.draw(either(small)),
        d.draw(either(small)),
        d.draw(either(st.none() | small)),
        heads=d.draw(either(st.none() | st.lists(st.integers(-1, 12), max_size=3))),
    ),
    "alibi_receptive_field": lambda d: alibi_receptive_field(
        d.draw(either(hnp.arrays(np.float64, small, elements=st.floats(-1, 1e300)))),
        threshold=d.draw(either(st.floats(-1, 1e300))),
    ),
    "random_logits": lambda d: random_logits(
        d.draw(either(small)),
        d.draw(either(st.none() | small)),
        std=d.draw(either(st.floats(0, 1e6))),
        seed=d.draw(either(st.integers(0, 2**32))),
    ),
    "attention_weights": lambda d: attention_weights(
        d.draw(either(matrices)), bias=d.draw(either(st.none() | matrices)), causal=d.draw(either(st.booleans()))
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_hostile_arguments_raise_only_posenc_error(name, data):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"):
            try:
                result = CALLS[name](data)
            except pc.PosEncError as exc:
                assert str(exc)
                return
    assert not np.isnan(np.asarray(result, dtype=np.float64)).any()


BIAS_STRUCTURE = {
    "alibi_closest_power_of_two",
    "alibi_key_only_bias",
    "alibi_receptive_field",
    "alibi_slope_exponents",
    "attention_weights",
    "diagonal_spread",
    "position_cross_scores",
    "random_logits",
    "t5_max_exact",
    "toeplitz_deviation",
}


def test_every_bias_structure_function_is_fuzzed():
    assert set(CALLS) == BIAS_STRUCTURE <= set(pc.__all__)
