r"""The core functions that took over what the pages computed, and the formulas now written once, against loops
written from their definitions, published numbers, and the code paths that use them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import posenc_core as pc
from posenc_lab.runs import Spread, extrapolation_rises


def test_ntk_exponent_is_d_over_d_minus_2_and_slows_the_last_pair_by_s() -> None:
    assert pc.ntk_exponent(128) == 128 / 126
    theta = pc.rope_inv_freq(128, base=10000.0 * 8 ** pc.ntk_exponent(128))
    assert theta[-1] == pytest.approx(pc.rope_inv_freq(128)[-1] / 8, rel=1e-12)
    with pytest.raises(pc.PosEncError, match="dim"):
        pc.ntk_exponent(2)


def test_rope_types_use_the_one_ntk_base_and_dynamic_alpha() -> None:
    ntk = pc.rope_frequencies(64, rope_scaling={"rope_type": "ntk", "factor": 4.0}).inv_freq
    stretched = 10000.0 * 4.0 ** (64 / 62)  # bloc97: base' = base·s^(d/(d−2)), written out
    np.testing.assert_allclose(ntk, [stretched ** (-2 * i / 64) for i in range(32)], rtol=1e-14, atol=0)
    assert pc.ntk_base(10000.0, 4.0, 64) == pytest.approx(stretched, rel=1e-15)
    dynamic = pc.rope_frequencies(
        64, rope_scaling={"rope_type": "dynamic", "factor": 4.0}, max_position_embeddings=1024, seq_len=3000
    ).inv_freq
    alpha = 4.0 * 3000 / 1024 - 3.0  # s·ℓ/L − (s − 1), written out
    assert pc.dynamic_ntk_alpha(4.0, 3000, 1024) == alpha
    dynamic_base = 10000.0 * alpha ** (64 / 62)
    np.testing.assert_allclose(dynamic, [dynamic_base ** (-2 * i / 64) for i in range(32)], rtol=1e-14, atol=0)


def test_longrope_factor_is_one_formula_in_the_type_and_the_temperature_curve() -> None:
    s, length = 32.0, 4096  # Phi-3 mini 128k: 131072 / 4096
    published = math.sqrt(1 + math.log(32) / math.log(4096))  # ≈ 1.1902
    assert pc.longrope_attention_factor(s, original_max_position_embeddings=length) == pytest.approx(published)
    assert published == pytest.approx(1.1902, abs=1e-4)
    curves = pc.temperature_curves(np.array([1.0, s]), original_max_position_embeddings=length)
    assert curves.longrope[0] == 1.0 and curves.longrope[1] == pytest.approx(published, rel=1e-15)
    ones = [1.0] * 32
    freqs = pc.rope_frequencies(
        64,
        rope_scaling={
            "rope_type": "longrope",
            "short_factor": ones,
            "long_factor": ones,
            "original_max_position_embeddings": length,
        },
        max_position_embeddings=131072,
    )
    assert freqs.attention_factor == pytest.approx(published, rel=1e-15)


@pytest.mark.parametrize(
    ("factor", "longest", "original", "expected"),
    [(None, 131072, 4096, 32.0), (8.0, 131072, 4096, 8.0), (None, 4096, 4096, 1.0), (40, None, 4096, 40.0)],
)
def test_implied_factor_is_factor_else_longest_over_original(factor, longest, original, expected) -> None:
    got = pc.rope_scaling.implied_factor(
        factor, max_position_embeddings=longest, original_max_position_embeddings=original
    )
    assert got == expected


def test_implied_factor_refuses_shrinking_or_nothing_to_imply_from() -> None:
    with pytest.raises(pc.PosEncError, match="shrinking"):
        pc.rope_scaling.implied_factor(None, max_position_embeddings=2048, original_max_position_embeddings=4096)
    with pytest.raises(pc.PosEncError, match="factor"):
        pc.rope_scaling.implied_factor(None, max_position_embeddings=None, original_max_position_embeddings=4096)


def test_config_reader_reads_training_length_and_scaling_as_transformers_does() -> None:
    phi3 = {
        "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0], "long_factor": [1.0]},
    }
    assert pc.config_training_length(phi3) == 4096
    assert pc.config_scaling(phi3) == ("longrope", 32.0)
    yarn = {
        "max_position_embeddings": 32768,
        "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192},
    }
    assert pc.config_training_length(yarn) == 8192 and pc.config_scaling(yarn) == ("yarn", 4.0)
    assert pc.config_training_length({"n_positions": 2048}) == 2048
    assert pc.config_training_length({"hidden_size": 64}) is None
    assert pc.config_scaling({"max_position_embeddings": 4096}) == ("default", 1.0)
    with pytest.raises(pc.PosEncError, match="original_max_position_embeddings"):
        pc.config_training_length({"original_max_position_embeddings": "long"})


def test_regime_counts_count_each_code() -> None:
    codes = np.array([0, 0, 1, 2, 2, 2], dtype=np.int8)
    assert pc.regime_counts(codes).tolist() == [sum(c == k for c in codes) for k in range(3)]
    # Llama 2 7B under YaRN at s = 8: 21 kept, 25 blended, 18 interpolated (docs/references.md)
    assert pc.regime_counts(pc.yarn_regimes(128, original_max_position_embeddings=4096).regime).tolist() == [21, 25, 18]
    with pytest.raises(pc.PosEncError, match="regime"):
        pc.regime_counts([0, 3])


def test_unseen_pair_count_counts_pairs_with_new_angles() -> None:
    theta = pc.rope_inv_freq(128)
    naive = sum(min(2 * math.pi, 16384 * t) - min(2 * math.pi, 4096 * t) > 1e-9 for t in theta)
    assert pc.unseen_pair_count(theta, 4096, theta, 16384) == naive > 0
    assert pc.unseen_pair_count(theta, 4096, theta / 4, 16384) == 0  # PI at s = T/L


def test_neighbour_cosine_means_split_at_the_trained_rows() -> None:
    table = np.random.default_rng(0).standard_normal((10, 6))
    cos = [float(table[p] @ table[p + 1] / np.linalg.norm(table[p]) / np.linalg.norm(table[p + 1])) for p in range(9)]
    inside, past = pc.neighbour_cosine_means(table, trained=4)
    assert inside == pytest.approx(sum(cos[:3]) / 3) and past == pytest.approx(sum(cos[3:]) / 6)
    with pytest.raises(pc.PosEncError, match="trained"):
        pc.neighbour_cosine_means(table, trained=10)


def test_trained_row_change_splits_row_distances() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 5))
    b = a.copy()
    b[:3] += rng.standard_normal((3, 5))  # rows 0 … 2 trained, the rest untouched
    change = pc.trained_row_change(a, b, trained=3)
    distances = [math.sqrt(sum((a[p, i] - b[p, i]) ** 2 for i in range(5))) for p in range(8)]
    assert change.moved_min == pytest.approx(min(distances[:3]))
    assert change.moved_mean == pytest.approx(sum(distances[:3]) / 3)
    assert change.untouched_max == 0.0
    assert change.mean_norm == pytest.approx(sum(math.sqrt(sum(x * x for x in row)) for row in a) / 8)


def test_extrapolation_rises_are_worst_band_past_l_minus_inside() -> None:
    def spread(mean: float) -> Spread:
        return Spread(mean, mean, mean)

    rows = {
        "rope": {"inside": spread(1.0), "2L": spread(1.5), "4L": spread(3.0)},
        "alibi": {"inside": spread(0.8), "2L": spread(0.9)},
    }
    assert extrapolation_rises(rows) == {"rope": 2.0, "alibi": pytest.approx(0.1)}
    with pytest.raises(pc.PosEncError, match="inside"):
        extrapolation_rises({"rope": {"inside": spread(1.0)}})


def test_pair_index_names_each_dimensions_pair_in_both_conventions() -> None:
    d = 8
    interleaved = [j // 2 for j in range(d)]  # pair i = (x_{2i}, x_{2i+1})
    half = [j if j < d // 2 else j - d // 2 for j in range(d)]  # pair i = (x_i, x_{i+d/2})
    assert pc.pair_index(d, pairing="interleaved").tolist() == interleaved
    assert pc.pair_index(d, pairing="half").tolist() == half


def _rotate_pair(x: float, y: float, angle: float) -> tuple[float, float]:
    return x * math.cos(angle) - y * math.sin(angle), x * math.sin(angle) + y * math.cos(angle)


def test_relative_gaps_are_rounding_and_match_a_loop_of_dot_products() -> None:
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((2, 16))
    theta = pc.rope_inv_freq(16)

    def score(m: float, n: float) -> float:  # interleaved pairs, rotated one by one (half pairing: same numbers)
        total = 0.0
        for i, t in enumerate(theta):
            qa, qb = _rotate_pair(q[i], q[i + 8], m * t)
            ka, kb = _rotate_pair(k[i], k[i + 8], n * t)
            total += qa * ka + qb * kb
        return total

    m, n = [5.0, 300.0, 1000.0], [2.0, 310.0, 40.0]
    gaps = pc.rope_relative_gaps(q, k, theta, query_positions=m, key_positions=n)
    naive = [abs(score(a, b) - score(0.0, b - a)) for a, b in zip(m, n, strict=True)]
    assert np.all(gaps < 1e-11) and np.allclose(gaps, naive, atol=1e-11)
    assert (
        abs(
            pc.rope_scores(q[None], k[None], theta, query_positions=[5.0], key_positions=[2.0], scale=1.0)[0, 0]
            - score(5.0, 2.0)
        )
        < 1e-12
    )


def test_pairing_residual_is_rounding_and_large_without_the_permutation() -> None:
    x = np.random.default_rng(3).standard_normal((4, 8))
    theta = pc.rope_inv_freq(8)
    assert pc.pairing_residual(x, np.arange(4.0), theta) < 1e-12
    wrong = np.max(
        np.abs(
            pc.apply_rope(x, np.arange(4.0), theta, pairing="interleaved")
            - pc.apply_rope(x, np.arange(4.0), theta, pairing="half")
        )
    )
    assert wrong > 0.1


def test_period_gaps_rotate_each_pair_one_full_turn() -> None:
    x = np.random.default_rng(4).standard_normal(8)
    theta = pc.rope_inv_freq(8)
    gaps = pc.rope_period_gaps(x, theta)
    for i, t in enumerate(theta):  # pair i after T_i = 2π/θ_i tokens, by hand
        a, b = _rotate_pair(x[2 * i], x[2 * i + 1], (2 * math.pi / t) * t)
        assert gaps[i] == pytest.approx(math.hypot(a - x[2 * i], b - x[2 * i + 1]), abs=1e-12)
    assert np.all(gaps < 1e-9)


def test_random_decay_expectation_and_z() -> None:
    theta = pc.rope_inv_freq(16)
    r = np.array([0.0, 3.0, 50.0])
    same = pc.rope_decay_random_expected(r, theta, same_vector=True)
    assert same == pytest.approx([2 * sum(math.cos(d * t) for t in theta) for d in r])
    assert pc.rope_decay_random_expected(r, theta, same_vector=False).tolist() == [0.0, 0.0, 0.0]
    for same_vector in (True, False):  # independent vectors expect 0 without computing a curve, and refuse the same
        with pytest.raises(pc.PosEncError, match="distances"):
            pc.rope_decay_random_expected([float("nan")], theta, same_vector=same_vector)
        with pytest.raises(pc.PosEncError, match="inv_freq"):
            pc.rope_decay_random_expected(r, [], same_vector=same_vector)
    z = pc.rope_decay_random_z(np.array([0.5, -1.0]), np.array([2.0, 4.0]), n_samples=16)
    assert z.tolist() == [0.5 / (2.0 / 4), 1.0 / (4.0 / 4)]
