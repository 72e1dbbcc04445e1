r"""posenc_core equals the naive loop transcriptions of the papers (tests/core/naive.py) over grids.

Everything here is float64 against float64: the tolerance is 1e-12 absolute unless a comment says why not.
The grids deliberately include the awkward cases: length 1, odd head counts, Lq ≠ Lk (queries are the last
Lq keys), dims that are not powers of two, partial rotary, non-arithmetic positions and tables long enough
(≥ 64 rows) to take the library's fast cos/sin path.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc_core as pc

try:  # tests/core as a package (tests/__init__.py present) or as a plain rootdir-inserted folder
    from . import naive
except ImportError:
    import naive

ATOL = 1e-12
RNG_SEED = 20240611


def close(got, want, atol=ATOL, rtol=0.0):
    np.testing.assert_allclose(
        np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64), rtol=rtol, atol=atol
    )


@pytest.fixture
def rng():
    return np.random.default_rng(RNG_SEED)


# -------------------------------------------------------------------------------------- sinusoidal


@pytest.mark.parametrize("length", [1, 7, 64, 65, 200])
@pytest.mark.parametrize("dim", [2, 6, 64, 130])
@pytest.mark.parametrize("base", [10000.0, 100.0, 2.5, 1e6])
@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_sinusoidal_equals_vaswani_formula_in_both_layouts(length, dim, base, layout):
    got = pc.sinusoidal(length, dim, base=base, layout=layout)
    assert got.shape == (length, dim)
    assert got.dtype == np.float64
    close(got, naive.sinusoidal(length, dim, base, layout))


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_sinusoidal_long_table_equals_formula_in_every_row(layout):
    """5000 rows: long enough for any blocking of the library's fast cos/sin path to show at a seam."""
    got = pc.sinusoidal(5000, 64, layout=layout)
    # angles reach 5000 rad: rounding p·ω alone costs ~5000·2^-53 ≈ 6e-13 per element
    close(got, naive.sinusoidal(5000, 64, 10000.0, layout), atol=1e-11)


def test_sinusoidal_default_layout_is_interleaved_with_sin_in_even_columns():
    got = pc.sinusoidal(5, 8)
    close(got, naive.sinusoidal(5, 8, 10000.0, "interleaved"))
    close(got[:, 0], np.sin(np.arange(5.0)))  # ω_0 = 1
    close(got[:, 1], np.cos(np.arange(5.0)))


@pytest.mark.parametrize("layout", ["interleaved", "concat"])
def test_sinusoidal_float32_is_float32_and_rounds_the_float64_table(layout):
    got = pc.sinusoidal(70, 16, layout=layout, dtype=np.float32)
    assert got.dtype == np.float32
    close(got, naive.sinusoidal(70, 16, 10000.0, layout), atol=1e-6)


@pytest.mark.parametrize("dim", [2, 8, 128, 130])
@pytest.mark.parametrize("base", [10000.0, 500.0])
def test_sinusoidal_inv_freq_equals_base_to_minus_two_i_over_d(dim, base):
    close(pc.sinusoidal_inv_freq(dim, base=base), naive.sinusoidal_inv_freq_power(dim, base), atol=0, rtol=1e-13)


@pytest.mark.parametrize("dim", [2, 8, 128, 130])
@pytest.mark.parametrize("base", [10000.0, 500.0, 1e6])
@pytest.mark.parametrize(
    ("form", "oracle"),
    [("exp", naive.sinusoidal_inv_freq_exp), ("power", naive.sinusoidal_inv_freq_power)],
)
def test_sinusoidal_inv_freq_each_form_equals_its_formula(dim, base, form, oracle):
    # exp(−2i·ln b/d) rounds differently from b^(−2i/d): a few ulps of an exponent up to ln b ≈ 14
    close(pc.sinusoidal_inv_freq(dim, base=base, form=form), oracle(dim, base), atol=0, rtol=1e-13)


@pytest.mark.parametrize("offset", [0, 1, 5, -3, 37, 0.5, 1000])
@pytest.mark.parametrize("dim", [2, 8, 34])
@pytest.mark.parametrize("base", [10000.0, 10.0])
def test_sinusoidal_shift_matrix_equals_angle_addition_derivation(offset, dim, base):
    close(pc.sinusoidal_shift_matrix(offset, dim, base=base), naive.sinusoidal_shift_matrix(offset, dim, base))


@pytest.mark.parametrize("offset", [1, 4, 29])
def test_naive_shift_matrix_moves_the_naive_table_by_offset(offset):
    """Sanity of the oracle itself: PE[p + k] = M_k · PE[p] on the naive table."""
    table = naive.sinusoidal(40, 12, 10000.0, "interleaved")
    m = naive.sinusoidal_shift_matrix(offset, 12, 10000.0)
    for p in range(40 - offset):
        close(m @ table[p], table[p + offset], atol=1e-12)


def _shift_residual_loop(table: np.ndarray, shift: np.ndarray, offset: int) -> float:
    """The residual's definition entry by entry, in Python floats: each block of M_k applied to each row's pair."""
    length, dim = table.shape
    worst = max(sum(abs(shift[r, c]) for c in range(dim) if c // 2 != r // 2) for r in range(dim))
    for p in range(length - offset):
        for i in range(dim // 2):
            s, c = float(table[p, 2 * i]), float(table[p, 2 * i + 1])
            a, b = float(shift[2 * i, 2 * i]), float(shift[2 * i, 2 * i + 1])
            c2, d = float(shift[2 * i + 1, 2 * i]), float(shift[2 * i + 1, 2 * i + 1])
            worst = max(worst, abs(table[p + offset, 2 * i] - (a * s + b * c)))
            worst = max(worst, abs(table[p + offset, 2 * i + 1] - (c2 * s + d * c)))
    return float(worst)


@pytest.mark.parametrize(
    "length, dim, offset", [(1, 2, 0), (40, 12, 3), (130, 34, 1), (300, 6, 299), (9, 64, 5), (1100, 64, 7)]
)
@pytest.mark.parametrize("kind", ["true M_k", "any blocks"])
def test_sinusoidal_shift_residual_equals_its_loop_definition_bit_for_bit(length, dim, offset, kind, rng):
    # Blocks of rows (512 at d = 64: 1,100 rows cross two block edges) and a pair swap (i·conj) instead of strided
    # columns: the same products and sums, so the same float64 value, for a true M_k on the table (rounding only) and
    # for any table and 2 × 2 blocks (negative entries too). Zero outside the blocks, so the largest entry decides the
    # residual, not a row sum's order of addition.
    if kind == "true M_k":
        table, shift = pc.sinusoidal(length, dim), pc.sinusoidal_shift_matrix(offset, dim)
    else:
        pair = np.arange(dim) // 2
        table = rng.standard_normal((length, dim))
        shift = np.where(pair[:, None] == pair[None, :], rng.standard_normal((dim, dim)), 0.0)
    assert pc.sinusoidal_shift_residual(table, shift, offset) == _shift_residual_loop(table, shift, offset)


@pytest.mark.parametrize("offsets", [[0, 1, 2, 50, 199], [7]])
def test_sinusoidal_similarity_equals_dot_product_of_naive_rows(offsets):
    dim = 16
    table = naive.sinusoidal(260, dim, 10000.0, "interleaved")
    want = [math.fsum(table[3, c] * table[3 + k, c] for c in range(dim)) for k in offsets]
    close(pc.sinusoidal_similarity(np.array(offsets), dim), want)


# ---------------------------------------------------------------------------------------- relative

SHAPES = [(1, 1), (5, 5), (3, 8), (1, 9), (7, 7), (8, 13), (2, 30)]


@pytest.mark.parametrize(("query_length", "key_length"), SHAPES)
def test_relative_positions_are_key_minus_query_with_queries_right_aligned(query_length, key_length):
    got = pc.relative_positions(query_length, key_length)
    assert got.shape == (query_length, key_length)
    np.testing.assert_array_equal(got, naive.relative_positions(query_length, key_length))


def test_relative_positions_default_key_length_is_query_length():
    np.testing.assert_array_equal(pc.relative_positions(6), naive.relative_positions(6, 6))


@pytest.mark.parametrize(("query_length", "key_length"), SHAPES)
@pytest.mark.parametrize("max_relative", [1, 2, 3, 5, 16])
def test_shaw_index_is_clipped_key_minus_query_plus_k(query_length, key_length, max_relative):
    got = pc.shaw_relative_index(query_length, key_length, max_relative=max_relative)
    assert got.shape == (query_length, key_length)
    assert np.issubdtype(got.dtype, np.integer)
    np.testing.assert_array_equal(got, naive.shaw_relative_index(query_length, key_length, max_relative))


@pytest.mark.parametrize(("query_length", "key_length"), [(4, 4), (3, 9), (1, 6)])
@pytest.mark.parametrize("max_relative", [1, 3])
@pytest.mark.parametrize("heads", [None, 1, 3])
def test_shaw_bias_gathers_weights_by_clipped_offset(rng, query_length, key_length, max_relative, heads):
    shape = (2 * max_relative + 1,) if heads is None else (heads, 2 * max_relative + 1)
    weights = rng.normal(size=shape)
    got = pc.shaw_relative_bias(weights, query_length, key_length, max_relative=max_relative)
    want = naive.shaw_relative_bias(weights, query_length, key_length, max_relative)
    assert got.shape == want.shape
    close(got, want, atol=0)


def test_shaw_bias_default_key_length_is_query_length(rng):
    weights = rng.normal(size=(2, 5))
    close(pc.shaw_relative_bias(weights, 6, max_relative=2), naive.shaw_relative_bias(weights, 6, 6, 2), atol=0)


T5_CONFIGS = [
    (True, 32, 128),
    (False, 32, 128),
    (True, 64, 256),
    (False, 16, 64),
    (True, 8, 20),
    (True, 128, 1024),
    (False, 10, 17),
    (True, 6, 6),
]


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), T5_CONFIGS)
def test_t5_bucket_equals_mesh_tf_logic_exactly(bidirectional, num_buckets, max_distance):
    rel = np.arange(-700, 701)
    got = pc.t5_relative_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    assert got.shape == rel.shape
    assert np.issubdtype(got.dtype, np.integer)
    want = [naive.t5_relative_bucket(int(r), bidirectional, num_buckets, max_distance) for r in rel]
    np.testing.assert_array_equal(got, want)


def test_t5_bucket_keeps_the_shape_of_a_2d_input_and_uses_t5_defaults():
    rel = np.array([[-200, -9, 0], [3, 17, 5000]])
    got = pc.t5_relative_bucket(rel)
    want = [[naive.t5_relative_bucket(int(r)) for r in row] for row in rel]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("query_length", "key_length"), [(1, 1), (9, 9), (4, 40), (1, 300)])
@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), T5_CONFIGS[:4])
def test_t5_bucket_matrix_buckets_key_minus_query(query_length, key_length, bidirectional, num_buckets, max_distance):
    got = pc.t5_bucket_matrix(
        query_length,
        key_length,
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    )
    want = naive.t5_bucket_matrix(query_length, key_length, bidirectional, num_buckets, max_distance)
    np.testing.assert_array_equal(got, want)


def test_t5_bucket_matrix_default_key_length_is_query_length():
    np.testing.assert_array_equal(pc.t5_bucket_matrix(12), naive.t5_bucket_matrix(12, 12))


# -------------------------------------------------------------------------------------------- RoPE


@pytest.mark.parametrize("dim", [2, 4, 6, 64, 128, 130])
@pytest.mark.parametrize("base", [10000.0, 500000.0, 1e6, 7.5])
def test_rope_inv_freq_equals_one_over_base_to_two_i_over_d(dim, base):
    got = pc.rope_inv_freq(dim, base=base)
    assert got.shape == (dim // 2,)
    close(got, naive.rope_inv_freq(dim, base), atol=0, rtol=1e-14)


@pytest.mark.parametrize(
    "positions", [np.arange(5), np.arange(100), np.array([3.0, 0.5, 17.25, 0.0]), np.arange(1000, 1070)]
)
def test_rope_angles_are_positions_outer_inv_freq(positions):
    inv = naive.rope_inv_freq(16, 10000.0)
    got = pc.rope_angles(positions, np.array(inv))
    assert got.shape == (len(positions), 8)
    close(got, naive.rope_angles(list(positions), inv), atol=0, rtol=1e-15)


def test_rope_wavelengths_are_two_pi_over_inv_freq():
    inv = naive.rope_inv_freq(64, 10000.0)
    close(pc.rope_wavelengths(np.array(inv)), naive.rope_wavelengths(inv), atol=0, rtol=1e-15)


APPLY_CASES = [
    # (x shape, dim rotated = 2n, positions kind)
    ((5, 8), 8, "arange"),
    ((3, 5, 8), 8, "arange"),
    ((2, 3, 4, 6), 6, "arange"),
    ((7, 16), 8, "arange"),  # partial rotary: only the first 8 dims rotate
    ((2, 6, 10), 4, "scattered"),
    ((80, 12), 12, "arange"),  # ≥ 64 rows: the fast trig path
    ((2, 70, 8), 6, "offset"),  # long arithmetic progression far from 0
    ((1, 4), 4, "arange"),
]


def _positions(kind, length):
    if kind == "arange":
        return np.arange(length, dtype=np.float64)
    if kind == "offset":
        return 1000.0 + 3.0 * np.arange(length)
    return np.array([5.0, 3.0, 100.0, 0.0, 7.5, 1.0, 64.0, 2.0, 9.0, 11.0][:length])


@pytest.mark.parametrize(("shape", "rot_dim", "kind"), APPLY_CASES)
@pytest.mark.parametrize("pairing", ["half", "interleaved"])
@pytest.mark.parametrize("attention_factor", [1.0, 1.2079441541679836])
def test_apply_rope_rotates_each_pair_by_position_times_theta(rng, shape, rot_dim, kind, pairing, attention_factor):
    x = rng.normal(size=shape)
    positions = _positions(kind, shape[-2])
    inv = naive.rope_inv_freq(rot_dim, 10000.0)
    got = pc.apply_rope(x, positions, np.array(inv), pairing=pairing, attention_factor=attention_factor)
    assert got.shape == x.shape
    want = naive.apply_rope(x, list(positions), inv, pairing, attention_factor)
    # angles up to ~1200 rad: float64 angle rounding alone is ~1200·2^-53 ≈ 1.3e-13 per element
    close(got, want, atol=1e-11 if kind == "offset" else ATOL)


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
@pytest.mark.parametrize("positions", [7.0 + 0.5 * np.arange(3000), np.arange(4097.0)[::-1]])
def test_apply_rope_long_sequences_equal_naive_rotation_in_every_row(rng, pairing, positions):
    x = rng.normal(size=(len(positions), 16))
    inv = naive.rope_inv_freq(16, 10000.0)
    got = pc.apply_rope(x, positions, np.array(inv), pairing=pairing)
    # angles up to ~4100 rad: float64 rounding of p·θ alone is ~5e-13
    close(got, naive.apply_rope(x, list(positions), inv, pairing, 1.0), atol=1e-11)


def test_apply_rope_defaults_to_half_pairing_and_unit_attention_factor(rng):
    x = rng.normal(size=(4, 6))
    inv = naive.rope_inv_freq(6, 10000.0)
    got = pc.apply_rope(x, np.arange(4), np.array(inv))
    close(got, naive.apply_rope(x, [0, 1, 2, 3], inv, "half", 1.0))


def test_apply_rope_passes_dims_beyond_the_rotary_part_through_unchanged(rng):
    x = rng.normal(size=(9, 20))
    got = pc.apply_rope(x, np.arange(9), np.array(naive.rope_inv_freq(8, 100.0)), pairing="half", attention_factor=1.3)
    np.testing.assert_array_equal(got[:, 8:], x[:, 8:])


@pytest.mark.parametrize("position", [0, 1, 7, 123.5, -4])
@pytest.mark.parametrize("dim", [2, 8, 14])
def test_rope_rotation_matrix_is_block_diagonal_roformer_matrix(position, dim):
    inv = naive.rope_inv_freq(dim, 10000.0)
    close(pc.rope_rotation_matrix(position, np.array(inv)), naive.rope_rotation_matrix(position, inv))


@pytest.mark.parametrize(("query_length", "key_length"), [(4, 4), (3, 7), (1, 5)])
@pytest.mark.parametrize("pairing", ["half", "interleaved"])
@pytest.mark.parametrize("scale", [None, 1.0, 0.3])
def test_rope_scores_equal_dot_products_of_rotated_vectors(rng, query_length, key_length, pairing, scale):
    d = 8
    q = rng.normal(size=(query_length, d))
    k = rng.normal(size=(key_length, d))
    inv = naive.rope_inv_freq(d, 10000.0)
    qpos = rng.integers(0, 50, size=query_length).astype(float)
    kpos = rng.integers(0, 50, size=key_length).astype(float)
    got = pc.rope_scores(
        q,
        k,
        np.array(inv),
        query_positions=qpos,
        key_positions=kpos,
        pairing=pairing,
        attention_factor=1.1,
        scale=scale,
    )
    want = naive.rope_scores(q, k, inv, list(qpos), list(kpos), pairing, 1.1, scale)
    close(got, want)


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
@pytest.mark.parametrize(("d", "pairs"), [(8, 4), (10, 3), (2, 1)])  # (10, 3): partial rotary, 4 dims do not turn
def test_rope_offset_scores_are_the_scores_of_q_at_zero_and_k_at_each_offset(rng, pairing, d, pairs):
    """The loop rotates q at position 0 and k at every offset r, scalar by scalar, and sums with fsum. The offsets
    run up to 5000 and hold a gap, so they are not one arithmetic progression: the table is made both ways."""
    q, k = rng.normal(size=(1, d)), rng.normal(size=(1, d))
    inv = naive.rope_inv_freq(2 * pairs, 500.0)
    for offsets in (np.arange(-40.0, 41.0), np.array([-5000.0, -3.0, 0.0, 0.5, 7.0, 4999.0])):
        got = pc.rope_offset_scores(q[0], k[0], np.array(inv), offsets, pairing=pairing)
        want = naive.rope_scores(q, np.repeat(k, len(offsets), axis=0), inv, [0.0], list(offsets), pairing, 1.0, 1.0)[0]
        close(got, want, atol=1e-11)  # angles up to 5000 rad, each cos/sin within ~5000·2⁻⁵³ of the loop's


@pytest.mark.parametrize(("query_length", "key_length"), [(5, 5), (2, 6)])
def test_rope_scores_default_positions_put_queries_on_the_last_keys(rng, query_length, key_length):
    d = 6
    q = rng.normal(size=(query_length, d))
    k = rng.normal(size=(key_length, d))
    inv = naive.rope_inv_freq(d, 10000.0)
    kpos = list(range(key_length))
    qpos = [naive.query_position(r, query_length, key_length) for r in range(query_length)]
    close(pc.rope_scores(q, k, np.array(inv)), naive.rope_scores(q, k, inv, qpos, kpos))


def test_rope_scores_broadcast_over_heads(rng):
    q = rng.normal(size=(3, 4, 8))
    k = rng.normal(size=(3, 4, 8))
    inv = naive.rope_inv_freq(8, 10000.0)
    got = pc.rope_scores(q, k, np.array(inv), query_positions=np.arange(4), key_positions=np.arange(4))
    for h in range(3):
        close(got[h], naive.rope_scores(q[h], k[h], inv, [0, 1, 2, 3], [0, 1, 2, 3]))


# ------------------------------------------------------------------------------------ RoPE scaling

RNG_FACTORS = np.random.default_rng(7)
SHORT8 = [float(v) for v in RNG_FACTORS.uniform(1.0, 1.5, size=8)]
LONG8 = [float(v) for v in RNG_FACTORS.uniform(1.0, 40.0, size=8)]
SHORT32 = [float(v) for v in RNG_FACTORS.uniform(1.0, 1.2, size=32)]
LONG32 = [float(v) for v in RNG_FACTORS.uniform(1.0, 60.0, size=32)]

SCALING_CASES = [
    # (id, head_dim, base, rope_scaling, max_position_embeddings, seq_len, partial_rotary_factor)
    ("none", 64, 10000.0, None, None, None, 1.0),
    ("default", 128, 500000.0, {"rope_type": "default"}, None, None, 1.0),
    ("default-partial", 64, 10000.0, None, None, None, 0.25),
    ("linear2", 64, 10000.0, {"rope_type": "linear", "factor": 2.0}, None, None, 1.0),
    ("linear-legacy-type", 128, 10000.0, {"type": "linear", "factor": 4.0}, None, None, 1.0),
    ("linear-partial", 96, 1e6, {"rope_type": "linear", "factor": 8.0}, None, None, 0.5),
    ("ntk2", 128, 10000.0, {"rope_type": "ntk", "factor": 2.0}, None, None, 1.0),
    ("ntk16", 64, 500000.0, {"rope_type": "ntk", "factor": 16.0}, None, None, 1.0),
    ("dynamic-none", 64, 10000.0, {"rope_type": "dynamic", "factor": 4.0}, 2048, None, 1.0),
    ("dynamic-short", 64, 10000.0, {"rope_type": "dynamic", "factor": 4.0}, 2048, 1000, 1.0),
    ("dynamic-equal", 64, 10000.0, {"rope_type": "dynamic", "factor": 4.0}, 2048, 2048, 1.0),
    ("dynamic-long", 64, 10000.0, {"rope_type": "dynamic", "factor": 4.0}, 2048, 5000, 1.0),
    ("dynamic-long2", 128, 500000.0, {"rope_type": "dynamic", "factor": 2.0}, 4096, 65536, 1.0),
    ("dynamic-partial", 64, 10000.0, {"rope_type": "dynamic", "factor": 2.0}, 1024, 3000, 0.5),
    (
        "yarn8",
        128,
        10000.0,
        {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096},
        32768,
        None,
        1.0,
    ),
    (
        "yarn2",
        64,
        10000.0,
        {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 2048},
        4096,
        None,
        1.0,
    ),
    (
        "yarn-betas",
        128,
        1e6,
        {
            "rope_type": "yarn",
            "factor": 4.0,
            "original_max_position_embeddings": 8192,
            "beta_fast": 16.0,
            "beta_slow": 2.0,
        },
        32768,
        None,
        1.0,
    ),
    (
        "yarn-mscale",
        64,
        10000.0,
        {
            "rope_type": "yarn",
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "mscale": 1.0,
            "mscale_all_dim": 0.707,
        },
        163840,
        None,
        1.0,
    ),
    (
        "yarn-mscale-equal",
        64,
        10000.0,
        {
            "rope_type": "yarn",
            "factor": 40.0,
            "original_max_position_embeddings": 4096,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
        },
        163840,
        None,
        1.0,
    ),
    (
        "yarn-attention-factor",
        128,
        10000.0,
        {
            "rope_type": "yarn",
            "factor": 8.0,
            "original_max_position_embeddings": 4096,
            "attention_factor": 0.75,
        },
        32768,
        None,
        1.0,
    ),
    (
        "yarn-no-truncate",
        128,
        150000.0,
        {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096, "truncate": False},
        131072,
        None,
        1.0,
    ),
    (
        "yarn-partial",
        128,
        10000.0,
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048},
        8192,
        None,
        0.5,
    ),
    (
        "yarn-low-equals-high",
        8,
        10000.0,
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4},
        16,
        None,
        1.0,
    ),
    (
        "yarn-high-clamped-to-d-minus-1",
        8,
        10.0,
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1000},
        4000,
        None,
        1.0,
    ),
    ("yarn-original-from-max", 64, 10000.0, {"rope_type": "yarn", "factor": 4.0}, 4096, None, 1.0),
    (
        "llama3.1",
        128,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        131072,
        None,
        1.0,
    ),
    (
        "llama3.2",
        64,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 32.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
        131072,
        None,
        1.0,
    ),
    (
        "llama3-other",
        128,
        10000.0,
        {
            "rope_type": "llama3",
            "factor": 4.0,
            "low_freq_factor": 2.0,
            "high_freq_factor": 8.0,
            "original_max_position_embeddings": 2048,
        },
        8192,
        None,
        1.0,
    ),
    (
        "longrope-none",
        16,
        10000.0,
        {
            "rope_type": "longrope",
            "short_factor": SHORT8,
            "long_factor": LONG8,
            "original_max_position_embeddings": 4096,
        },
        131072,
        None,
        1.0,
    ),
    (
        "longrope-at-original",
        16,
        10000.0,
        {
            "rope_type": "longrope",
            "short_factor": SHORT8,
            "long_factor": LONG8,
            "original_max_position_embeddings": 4096,
        },
        131072,
        4096,
        1.0,
    ),
    (
        "longrope-past-original",
        16,
        10000.0,
        {
            "rope_type": "longrope",
            "short_factor": SHORT8,
            "long_factor": LONG8,
            "original_max_position_embeddings": 4096,
        },
        131072,
        4097,
        1.0,
    ),
    (
        "longrope-factor",
        64,
        10000.0,
        {
            "rope_type": "longrope",
            "short_factor": SHORT32,
            "long_factor": LONG32,
            "original_max_position_embeddings": 4096,
            "factor": 16.0,
        },
        131072,
        9000,
        1.0,
    ),
    (
        "longrope-attention-factor",
        64,
        10000.0,
        {
            "rope_type": "longrope",
            "short_factor": SHORT32,
            "long_factor": LONG32,
            "original_max_position_embeddings": 4096,
            "attention_factor": 1.5,
        },
        131072,
        100,
        1.0,
    ),
    (
        "longrope-partial",
        128,
        10000.0,
        {
            "rope_type": "longrope",
            "short_factor": SHORT32,
            "long_factor": LONG32,
            "original_max_position_embeddings": 2048,
        },
        8192,
        9000,
        0.5,
    ),
]


@pytest.mark.parametrize(
    ("head_dim", "base", "rope_scaling", "max_position_embeddings", "seq_len", "partial_rotary_factor"),
    [case[1:] for case in SCALING_CASES],
    ids=[case[0] for case in SCALING_CASES],
)
def test_rope_frequencies_equal_naive_transcription(
    head_dim, base, rope_scaling, max_position_embeddings, seq_len, partial_rotary_factor
):
    got = pc.rope_frequencies(
        head_dim,
        base=base,
        rope_scaling=None if rope_scaling is None else dict(rope_scaling),
        max_position_embeddings=max_position_embeddings,
        seq_len=seq_len,
        partial_rotary_factor=partial_rotary_factor,
    )
    assert isinstance(got, pc.RopeFrequencies)
    want_inv, want_att = naive.rope_frequencies(
        head_dim, base, rope_scaling, max_position_embeddings, seq_len, partial_rotary_factor
    )
    assert got.inv_freq.shape == want_inv.shape
    close(got.inv_freq, want_inv, atol=0, rtol=1e-12)
    assert got.attention_factor == pytest.approx(want_att, rel=1e-14, abs=0)


def test_rope_frequencies_does_not_mutate_the_scaling_dict():
    scaling = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
    before = dict(scaling)
    pc.rope_frequencies(128, rope_scaling=scaling, max_position_embeddings=32768)
    assert scaling == before


# ------------------------------------------------------------------------------------------- ALiBi


@pytest.mark.parametrize("n_heads", [*range(1, 70), 96, 100, 128, 255])
def test_alibi_slopes_equal_press_get_slopes(n_heads):
    got = pc.alibi_slopes(n_heads)
    assert got.shape == (n_heads,)
    close(got, naive.alibi_slopes(n_heads), atol=0, rtol=1e-13)


@pytest.mark.parametrize("n_heads", [1, 3, 5, 8, 12])
@pytest.mark.parametrize(("query_length", "key_length"), [(1, 1), (6, 6), (3, 9), (1, 7)])
@pytest.mark.parametrize("causal", [True, False])
def test_alibi_bias_is_minus_slope_times_distance(n_heads, query_length, key_length, causal):
    got = pc.alibi_bias(n_heads, query_length, key_length, causal=causal)
    want = naive.alibi_bias(n_heads, query_length, key_length, causal)
    assert got.shape == want.shape
    close(got, want, atol=0, rtol=1e-13)


def test_alibi_bias_default_is_causal_and_square():
    close(pc.alibi_bias(4, 5), naive.alibi_bias(4, 5, 5, True), atol=0, rtol=1e-13)


@pytest.mark.parametrize("heads", [[0], [2, 0], [11, 3, 8], range(12)])
@pytest.mark.parametrize("causal", [True, False])
def test_alibi_bias_heads_selects_those_heads_of_the_full_set(heads, causal):
    got = pc.alibi_bias(12, 4, 6, causal=causal, heads=list(heads))
    close(got, naive.alibi_bias(12, 4, 6, causal, list(heads)), atol=0, rtol=1e-13)


# --------------------------------------------------------------------------------------- attention


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_equals_exp_over_sum_with_max_subtracted(rng, axis):
    x = rng.normal(scale=30.0, size=(4, 5, 6))
    x[0, 0, :3] = -np.inf
    x[1, :, 2] = -np.inf
    x[2, 1, 1] = 700.0  # overflow without the max subtraction
    if axis != -1:
        x[np.isneginf(x)] = -50.0  # keep every slice along other axes finite
    close(pc.softmax(x, axis=axis), naive.softmax(x, axis=axis), atol=1e-15)


@pytest.mark.parametrize(("query_length", "key_length"), [(1, 1), (4, 4), (3, 7)])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("scale", [None, 0.5])
def test_attention_scores_equal_scaled_dot_products_plus_bias(rng, query_length, key_length, with_bias, scale):
    q = rng.normal(size=(query_length, 6))
    k = rng.normal(size=(key_length, 6))
    bias = rng.normal(size=(query_length, key_length)) if with_bias else None
    got = pc.attention_scores(q, k, bias=bias, scale=scale)
    close(got, naive.attention_scores(q, k, bias, scale))


@pytest.mark.parametrize(("query_length", "key_length"), [(1, 1), (5, 5), (2, 6), (1, 4)])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bias_kind", ["none", "random", "alibi"])
def test_attention_equals_softmax_of_masked_scores_times_values(rng, query_length, key_length, causal, bias_kind):
    heads, d, dv = 3, 4, 5
    q = rng.normal(size=(heads, query_length, d))
    k = rng.normal(size=(heads, key_length, d))
    v = rng.normal(size=(heads, key_length, dv))
    if bias_kind == "random":
        bias = rng.normal(size=(heads, query_length, key_length))
    elif bias_kind == "alibi":
        bias = naive.alibi_bias(heads, query_length, key_length, causal=False)
    else:
        bias = None
    out, weights = pc.attention(q, k, v, bias=bias, causal=causal)
    assert out.shape == (heads, query_length, dv)
    assert weights.shape == (heads, query_length, key_length)
    for h in range(heads):
        want_out, want_w = naive.attention(q[h], k[h], v[h], None if bias is None else bias[h], causal)
        close(weights[h], want_w)
        close(out[h], want_out)


# ------------------------------------------------------------------------------------ decay curves

DECAY_INV = {
    "d128-b1e4": naive.rope_inv_freq(128, 10000.0),
    "d16-b100": naive.rope_inv_freq(16, 100.0),
    "d64-b5e5": naive.rope_inv_freq(64, 500000.0),
}


@pytest.mark.parametrize("which", list(DECAY_INV))
@pytest.mark.parametrize("distances", [np.arange(0, 300), np.array([0.0, 0.5, 2.25, 1000.0, 4096.0, -17.0])])
def test_rope_decay_bound_equals_mean_abs_partial_sums(which, distances):
    inv = DECAY_INV[which]
    got = pc.rope_decay_bound(distances, np.array(inv))
    assert got.shape == distances.shape
    close(got, naive.rope_decay_bound(list(distances), inv), atol=1e-10)


@pytest.mark.parametrize("which", list(DECAY_INV))
@pytest.mark.parametrize("distances", [np.arange(0, 300), np.array([0.0, 0.5, 2.25, 1000.0, 4096.0, -17.0])])
def test_rope_decay_all_ones_equals_sum_of_cosines(which, distances):
    inv = DECAY_INV[which]
    got = pc.rope_decay_all_ones(distances, np.array(inv))
    close(got, naive.rope_decay_all_ones(list(distances), inv), atol=1e-10)


def test_rope_decay_curves_are_right_across_chunk_boundaries():
    """9000 distances × 64 pairs is more than one of the library's chunks; every row must still be right."""
    inv = DECAY_INV["d128-b1e4"]
    distances = np.arange(0, 9000)
    close(pc.rope_decay_bound(distances, np.array(inv)), naive.rope_decay_bound(list(distances), inv), atol=1e-9)
    close(
        pc.rope_decay_all_ones(distances, np.array(inv)),
        naive.rope_decay_all_ones(list(distances), inv),
        atol=1e-9,
    )


@pytest.mark.parametrize("which", list(DECAY_INV))
@pytest.mark.parametrize("distances", [np.arange(0, 9000), np.array([0.0, 0.5, 2.25, 1000.0, 4096.0, -17.0])])
def test_a_decay_table_gives_the_curves_of_the_functions(which, distances):
    """One table for every curve: right against the loops, and the numbers the chunked functions give (9000
    distances span several of their chunks). Each row is reduced the same way; only the sines of evenly spaced
    distances are split differently over a chunk than over the whole table, each within ~1e-13 of the exact value,
    so the curves, sums of at most d/2 = 64 of them, agree to ~1e-11."""
    inv = np.array(DECAY_INV[which])
    table = pc.RopeDecayTable(distances, inv)
    close(table.bound(), naive.rope_decay_bound(list(distances), list(inv)), atol=1e-9)
    close(table.all_ones(), naive.rope_decay_all_ones(list(distances), list(inv)), atol=1e-9)
    close(table.bound(), pc.rope_decay_bound(distances, inv), atol=1e-11)
    close(table.all_ones(), pc.rope_decay_all_ones(distances, inv), atol=1e-11)
    for same_vector in (False, True):
        mean, std = table.random(n_samples=64, seed=7, same_vector=same_vector)
        want_mean, want_std = pc.rope_decay_random(distances, inv, n_samples=64, seed=7, same_vector=same_vector)
        close(mean, want_mean, atol=1e-10)  # scores of size ~√d·|q||k| ≈ 100, each pair's term within ~1e-11
        close(std, want_std, atol=1e-10)
    assert not table.phasors.flags.writeable and table.nbytes == table.phasors.nbytes + inv.nbytes + 8 * len(distances)


@pytest.mark.parametrize("same_vector", [False, True])
def test_random_decay_is_the_mean_and_spread_of_rotated_dot_products(same_vector):
    """rope_decay_random against its definition: draw the same S random q, k (the documented draw: an (S, d/2, 2)
    standard normal for q, then one for k unless k = q; pair i is the two numbers of row i), rotate k by r·θ_i pair by
    pair, take q · R_r k with math.cos / math.sin, and average over the samples (the population spread, ddof 0)."""
    inv = naive.rope_inv_freq(8, 10000.0)
    distances, samples, seed = [0.0, 1.0, 5.0, 37.0, 1000.5], 16, 3
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((samples, 4, 2))
    k = q if same_vector else rng.standard_normal((samples, 4, 2))
    want_mean, want_std = [], []
    for r in distances:
        scores = []
        for s in range(samples):
            total = 0.0
            for i, theta in enumerate(inv):
                c, sn = math.cos(r * theta), math.sin(r * theta)
                k1, k2 = k[s, i, 0] * c - k[s, i, 1] * sn, k[s, i, 0] * sn + k[s, i, 1] * c
                total += q[s, i, 0] * k1 + q[s, i, 1] * k2
            scores.append(total)
        mean = sum(scores) / samples
        want_mean.append(mean)
        want_std.append(math.sqrt(sum((x - mean) ** 2 for x in scores) / samples))
    for mean, std in (
        pc.rope_decay_random(np.array(distances), np.array(inv), n_samples=samples, seed=seed, same_vector=same_vector),
        pc.RopeDecayTable(np.array(distances), np.array(inv)).random(
            n_samples=samples, seed=seed, same_vector=same_vector
        ),
    ):
        close(mean, want_mean, atol=1e-12)
        close(std, want_std, atol=1e-12)


def test_a_decay_table_refuses_what_the_functions_refuse_and_a_table_too_large_to_hold():
    with pytest.raises(pc.PosEncError):
        pc.RopeDecayTable([0.0, math.nan], [1.0])
    with pytest.raises(pc.PosEncError):
        pc.RopeDecayTable([1.0, 2.0], [-1.0])
    with pytest.raises(pc.PosEncError):
        pc.RopeDecayTable([1.0], [1.0]).random(n_samples=1)
    rows = pc.RopeDecayTable.MAX_TABLE // 64 + 1
    with pytest.raises(pc.PosEncError, match="chunks"):
        pc.RopeDecayTable(np.arange(rows, dtype=np.float64), np.ones(64))  # refused before anything is allocated


@pytest.mark.parametrize("context_length", [1.0, 4096.0, 131072.0])
def test_rotations_in_context_are_length_over_wavelength(context_length):
    inv = naive.rope_inv_freq(64, 10000.0)
    want = [context_length / lam for lam in naive.rope_wavelengths(inv)]
    close(pc.rotations_in_context(np.array(inv), context_length), want, atol=0, rtol=1e-14)
