r"""The core behind page 9, "Position in today's models": NoPE's causal probe, MLA's fold, p-RoPE against partial
RoPE, M-RoPE's scores and axes, and what each kind of layer sees.

Each formula is checked against a loop written from its paper, against a published number, or as an invariant over
every seed a reader can pick (hypothesis), with bounds set from measured margins (see each test).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import posenc_core as pc

PRESETS = Path(__file__).resolve().parents[2] / "assets" / "presets"


def _preset(name: str) -> dict:
    data = json.loads((PRESETS / f"{name}.json").read_text())
    return {key: entry["value"] for key, entry in data["values"].items()}


# ------------------------------------------------------------------------------------------------ NoPE


def test_uniform_causal_average_equals_the_mean_of_the_first_t_vectors():
    x = np.random.default_rng(3).standard_normal((2, 9, 5))
    y = pc.uniform_attention_average(x, causal=True)
    for s in range(2):
        for t in range(9):
            expected = [sum(x[s, j, c] for j in range(t + 1)) / (t + 1) for c in range(5)]
            assert np.allclose(y[s, t], expected, atol=1e-14)
    y_all = pc.uniform_attention_average(x, causal=False)
    assert np.allclose(y_all, x.mean(axis=1, keepdims=True), atol=1e-14)


def test_uniform_causal_average_is_softmax_attention_with_equal_scores_under_the_mask():
    """Uniform weights are softmax of equal scores: attention with q = 0 and the causal mask gives the same output."""
    x = np.random.default_rng(4).standard_normal((11, 6))
    out, _ = pc.attention(np.zeros((11, 6)), x, x, causal=True)
    assert np.allclose(out, pc.uniform_attention_average(x), atol=1e-13)


def test_square_norm_of_the_causal_average_falls_as_one_over_t():
    """E‖y_t‖²/d = 1/t for x ~ N(0, I_d). With S = 4096 sequences and d = 16 the mean at each t has relative standard
    deviation √(2/(dS)) ≈ 0.0055 (χ²), so 0.04 is over 7 of them."""
    probe = pc.nope_position_probe(64, 16, sequences=4096, seed=0)
    assert np.allclose(probe.mean_square_norm * probe.positions, 1.0, rtol=0.04)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(16, 1024), dim=st.integers(16, 256))
def test_the_probe_reads_position_under_the_mask_for_every_seed(seed, length, dim):
    """The page's claim, at every slider setting (L 16–1024, d 16–256) and seed: R² ≥ 0.7 and a norm slope within
    0.1 of −1. Measured at d = 16 (the narrowest, the worst: at d = 32 the worst R² is 0.852) over all 100 seeds the
    slider offers and every L it offers (16 … 1024 in steps of 16): R² ≥ 0.747 and |slope + 1| ≤ 0.076, both at
    L = 16; the expected R² at L = 16 is 1 − ψ′(d/2)/Var(log t) ≈ 0.84. tests/app/test_today.py checks every seed at
    the corners."""
    probe = pc.nope_position_probe(length, dim, seed=seed)
    assert probe.r2 >= 0.7
    assert abs(probe.slope + 1.0) <= 0.1


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(2, 512), dim=st.integers(1, 64))
def test_without_the_mask_the_probe_reads_nothing_for_every_seed(seed, length, dim):
    """Every position of a sequence averages the same vectors, and each sequence holds every t once: the fitted slope
    is 0 and R² is 0 up to rounding (not a statistical statement: exact)."""
    probe = pc.nope_position_probe(length, dim, causal=False, seed=seed)
    assert abs(probe.r2) <= 1e-9
    assert np.ptp(probe.median) <= 1e-9 * probe.median.max()


def test_the_probe_band_holds_its_median():
    probe = pc.nope_position_probe(128, 32, seed=5)
    assert np.all(probe.low <= probe.median) and np.all(probe.median <= probe.high)


def test_bad_probe_arguments_raise_posenc_error():
    with pytest.raises(pc.PosEncError, match="length"):
        pc.nope_position_probe(1, 8)
    with pytest.raises(pc.PosEncError, match="dim"):
        pc.nope_position_probe(8, 0)
    with pytest.raises(pc.PosEncError, match="sequences"):
        pc.nope_position_probe(8, 8, sequences=1)


def test_the_norms_walk_is_the_walk_of_drawn_vectors_split_along_and_across():
    """The identity behind the probe's draw (posenc_core.nope._running_squares), checked on vectors drawn and
    summed: with z_t = x_t · c_{t−1}/‖c_{t−1}‖ and ‖w_t‖² = ‖x_t‖² − z_t², ‖c_t‖² = (‖c_{t−1}‖ + z_t)² + ‖w_t‖² at
    every step."""
    x = np.random.default_rng(11).standard_normal((3, 40, 7))
    c = np.cumsum(x, axis=1)
    for s in range(3):
        for t in range(1, 40):
            previous = c[s, t - 1]
            along = x[s, t] @ previous / np.linalg.norm(previous)
            across = x[s, t] @ x[s, t] - along**2
            assert math.isclose((np.linalg.norm(previous) + along) ** 2 + across, c[s, t] @ c[s, t], rel_tol=1e-12)


@pytest.mark.parametrize("dim", [1, 3, 16])
def test_the_norms_walk_has_the_law_of_summed_gaussian_vectors(dim):
    """For c_t a sum of t vectors N(0, I_d): E R_t = d·t, and Cov(R_s, R_t) = Var R_s = 2d·s² for s ≤ t (the steps
    after s are independent of c_s and enter ‖c_t‖² with zero-mean cross terms). S = 40,960 walks. The sample mean of
    R_t/(d·t) has standard deviation √(2/(dS)) ≤ 0.0070 (d = 1); a sample covariance, the mean of S products, has the
    standard error of that mean (the products' own spread over √S, by the central limit theorem). Both within six."""
    from posenc_core.nope import _running_squares

    length = 24
    running = np.concatenate([_running_squares(length, dim, 4096, seed)[0] for seed in range(10)])  # (S, L)
    sequences, t = len(running), np.arange(1.0, length + 1)
    assert np.allclose(running.mean(axis=0) / (dim * t), 1.0, atol=6 * math.sqrt(2 / (dim * sequences)))
    centred = running - running.mean(axis=0)
    for s, later in [(0, 0), (3, 3), (3, 20), (11, 23), (23, 23)]:
        products = centred[:, s] * centred[:, later]
        error = products.std() / math.sqrt(sequences)
        assert abs(products.mean() - 2 * dim * t[s] ** 2) <= 6 * error, (s, later)


# ------------------------------------------------------------------------------------------------- MLA


def _rotate_half_loop(x: np.ndarray, position: float, base: float) -> np.ndarray:
    """RoPE on one vector by a loop over pairs (i, i + d/2), θ_i = base^(−2i/d) (RoFormer §3.2, NeoX pairing)."""
    d = x.shape[0]
    out = x.copy()
    for i in range(d // 2):
        theta = base ** (-2.0 * i / d)
        c, s = math.cos(position * theta), math.sin(position * theta)
        out[i] = c * x[i] - s * x[i + d // 2]
        out[i + d // 2] = s * x[i] + c * x[i + d // 2]
    return out


def _fold_residual_loop(length: int, latent: int, head: int, rope: int, base: float, seed: int):
    """The three residuals from loops: the same draws, in the same order, as the core function's docstring states."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((length, head))
    c = rng.standard_normal((length, latent))
    w = rng.standard_normal((head, latent)) / np.sqrt(latent)
    q_r = rng.standard_normal((length, rope))
    k_r = rng.standard_normal((length, rope))
    plain, rotated, full, cached, design = [], [], [], [], []
    for m in range(length):
        for n in range(length):
            key = w @ c[n]
            plain.append(q[m] @ key)
            rotated.append(_rotate_half_loop(q[m], m, base) @ _rotate_half_loop(key, n, base))
            small = _rotate_half_loop(q_r[m], m, base) @ _rotate_half_loop(k_r[n], n, base)
            full.append(q[m] @ key + small)
            cached.append((w.T @ q[m]) @ c[n] + small)
            design.append(np.outer(q[m], c[n]).ravel())
    design = np.array(design)

    def best(scores):
        scores = np.array(scores)
        fit = design @ np.linalg.lstsq(design, scores, rcond=None)[0]
        return np.linalg.norm(fit - scores) / np.linalg.norm(scores)

    return best(plain), best(rotated), np.linalg.norm(np.array(cached) - full) / np.linalg.norm(full)


def test_mla_fold_residuals_equal_the_loop():
    fold = pc.mla_fold_residuals(16, latent_dim=3, head_dim=4, rope_dim=2, base=100.0, seed=7)
    plain, rotated, decoupled = _fold_residual_loop(16, 3, 4, 2, 100.0, 7)
    assert fold.plain < 1e-12 and plain < 1e-12
    assert fold.rotated == pytest.approx(rotated, rel=1e-9)
    assert fold.decoupled < 1e-12 and decoupled < 1e-12


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(16, 64))
def test_rope_blocks_the_fold_and_the_decoupled_key_does_not_for_every_seed(seed, length):
    """The page's claim at its sliders (L 16–64, d_h = d_c = 8, 4 rotary dimensions, base 10⁴): the fold without RoPE
    and the decoupled route are exact to 1e-12; with RoPE the best fixed matrix misses by ≥ 0.1 of the scores' norm.
    Measured over all 100 seeds the slider offers at every length it offers (16 … 64 in steps of 8): plain ≤ 5.9e-15,
    decoupled ≤ 2.6e-16, rotated ≥ 0.285 (L = 16, seed 12); tests/app/test_today.py checks every one of them."""
    fold = pc.mla_fold_residuals(length, latent_dim=8, head_dim=8, rope_dim=4, base=10000.0, seed=seed)
    assert fold.plain <= 1e-12
    assert fold.decoupled <= 1e-12
    assert fold.rotated >= 0.1


def test_mla_fold_refuses_too_few_score_pairs():
    with pytest.raises(pc.PosEncError, match="score pairs"):
        pc.mla_fold_residuals(16, latent_dim=32, head_dim=32)


def test_deepseek_v3_caches_576_values_per_token_against_32768_for_multi_head_attention():
    """DeepSeek-V2 Table 1: MLA caches (d_c + d_h^R) per token per layer, ≈ (9/2)·d_h with d_c = 4·d_h and
    d_h^R = d_h/2 (exact here); MHA caches 2·n_h·d_h. DeepSeek-V3: d_c 512, d_h^R 64, 128 heads of 128."""
    cache = pc.mla_kv_cache(_preset("deepseek_v3"))
    assert (cache.latent, cache.rope_key, cache.mla) == (512, 64, 576)
    assert cache.mla == 9 * 128 // 2
    assert cache.mha == 2 * 128 * 128 == 32768
    assert cache.mha_same_heads == 128 * (128 + 64 + 128) == 40960
    assert cache.ratio == pytest.approx(32768 / 576)
    assert round(cache.ratio, 1) == 56.9


def test_mla_kv_cache_refuses_a_config_without_mla():
    with pytest.raises(pc.PosEncError, match="kv_lora_rank"):
        pc.mla_kv_cache({"num_attention_heads": 32, "head_dim": 128})


# ---------------------------------------------------------------------------------- p-RoPE and partial RoPE


def _wavelengths_loop(head_dim: int, base: float, p: float, proportional: bool) -> list[float]:
    """Barbero et al. 2024 (p-RoPE): the first p·d/2 pairs of the full head's spectrum θ_i = b^(−2i/d), the rest not
    turning; NeoX's partial_rotary_factor: a whole spectrum over the first p·d dimensions, θ_i = b^(−2i/(p·d))."""
    rotary = int(p * head_dim)
    out = []
    for i in range(rotary // 2):
        exponent = 2 * i / head_dim if proportional else 2 * i / rotary
        out.append(2 * math.pi * base**exponent)
    return out


def test_gemma_4_p_rope_keeps_wavelengths_up_to_188_where_partial_rope_would_reach_5_1_million():
    """Issue 36: head_dim 512, p = 0.25, base 10⁶: the slowest turning pair's wavelength ≈ 188 against ≈ 5.1 M."""
    proportional = pc.rope_frequencies(
        512, base=1e6, rope_scaling={"rope_type": "proportional"}, partial_rotary_factor=0.25
    ).inv_freq
    partial = pc.rope_frequencies(512, base=1e6, partial_rotary_factor=0.25).inv_freq
    turning = proportional[proportional > 0]
    p_loop = _wavelengths_loop(512, 1e6, 0.25, proportional=True)
    n_loop = _wavelengths_loop(512, 1e6, 0.25, proportional=False)
    assert np.allclose(pc.rope_wavelengths(turning), p_loop, rtol=1e-12)
    assert np.allclose(pc.rope_wavelengths(partial), n_loop, rtol=1e-12)
    assert len(p_loop) == len(n_loop) == 64
    assert round(p_loop[-1]) == 188
    assert round(n_loop[-1] / 1e6, 1) == 5.1
    assert np.count_nonzero(proportional == 0) == 256 - 64  # the slow pairs are dropped, not squeezed


# ----------------------------------------------------------------------------------------------- M-RoPE


def _axis_loop(i: int, section: list[int], interleaved: bool) -> int:
    """Qwen2-VL: pairs in t, h, w blocks; Qwen3-VL: pair i reads h if i % 3 == 1 and i < 3·s_h, w if i % 3 == 2 and
    i < 3·s_w, t otherwise."""
    if not interleaved:
        return 0 if i < section[0] else (1 if i < section[0] + section[1] else 2)
    if i % 3 == 1 and i < 3 * section[1]:
        return 1
    if i % 3 == 2 and i < 3 * section[2]:
        return 2
    return 0


@settings(max_examples=40, deadline=None)
@given(
    offsets=st.lists(st.tuples(*[st.integers(-500, 500)] * 3), min_size=1, max_size=12),
    interleaved=st.booleans(),
)
def test_mrope_offset_scores_equal_the_loop(offsets, interleaved):
    section = [24, 20, 20] if interleaved else [16, 24, 24]
    inv_freq = pc.rope_inv_freq(128, base=1e6)
    got = pc.mrope_offset_scores(np.array(offsets).T, inv_freq, section, interleaved=interleaved)
    for k, delta in enumerate(offsets):
        expected = sum(math.cos(delta[_axis_loop(i, section, interleaved)] * inv_freq[i]) for i in range(64)) / 64
        assert got[k] == pytest.approx(expected, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    dt=st.integers(-300, 300),
    dh=st.lists(st.integers(-500, 500), min_size=1, max_size=9),
    dw=st.lists(st.integers(-500, 500), min_size=1, max_size=9),
    interleaved=st.booleans(),
)
def test_mrope_grid_scores_are_the_score_at_every_point_of_the_grid(dt, dh, dw, interleaved):
    """The grid made from two lines and a point (issue 46) against the loop over pairs at each (Δt, Δh, Δw). Each
    score is a mean of 64 cosines; the grid adds three of them, so the two differ by a few rounding errors of a
    number ≤ 3 in size: 1e-12 leaves a thousandfold margin."""
    section = [24, 20, 20] if interleaved else [16, 24, 24]
    inv_freq = pc.rope_inv_freq(128, base=1e6)
    got = pc.mrope_grid_scores(dt, dh, dw, inv_freq, section, interleaved=interleaved)
    assert got.shape == (len(dh), len(dw))
    for r, h in enumerate(dh):
        for c, w in enumerate(dw):
            delta = (dt, h, w)
            expected = sum(math.cos(delta[_axis_loop(i, section, interleaved)] * inv_freq[i]) for i in range(64)) / 64
            assert got[r, c] == pytest.approx(expected, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(delta=st.integers(-(10**4), 10**4))
def test_mrope_on_text_is_plain_rope(delta):
    """Text has t = h = w, so equal offsets on every axis give plain RoPE's all-ones curve, whatever the layout."""
    inv_freq = pc.rope_inv_freq(128, base=1e6)
    plain = pc.rope_decay_all_ones(np.array([abs(delta)]), inv_freq)[0] / 64  # Σ cos(Δθ_i) over the 64 pairs
    for section, interleaved in (([16, 24, 24], False), ([24, 20, 20], True)):
        got = pc.mrope_offset_scores(np.full((3, 1), delta), inv_freq, section, interleaved=interleaved)[0]
        assert got == pytest.approx(plain, abs=1e-12)


def test_qwen2_vl_gives_time_the_fastest_pairs_and_qwen3_vl_every_axis_both_ends():
    inv_freq = pc.rope_inv_freq(128, base=1e6)
    wavelengths = [2 * math.pi * 1e6 ** (2 * i / 128) for i in range(64)]
    contiguous = pc.mrope_axis_wavelengths(inv_freq, [16, 24, 24])
    assert contiguous[0] == pytest.approx([wavelengths[0], wavelengths[15], 16])
    assert contiguous[2] == pytest.approx([wavelengths[40], wavelengths[63], 24])
    interleaved = pc.mrope_axis_wavelengths(inv_freq, [24, 20, 20], interleaved=True)
    by_loop = {axis: [i for i in range(64) if _axis_loop(i, [24, 20, 20], True) == axis] for axis in range(3)}
    for axis in range(3):
        picked = by_loop[axis]
        assert interleaved[axis] == pytest.approx([wavelengths[picked[0]], wavelengths[picked[-1]], len(picked)])
    assert by_loop[0][-1] == 63  # time holds the slowest pair under the interleaved layout


# ------------------------------------------------------------------------------------------- layer reach


def test_llama_4_scout_every_fourth_layer_is_nope_and_sees_the_whole_context():
    config = _preset("llama4_scout")
    reach = pc.layer_reach(pc.model_layers(config), context_length=config["max_position_embeddings"])
    nope_loop = sum(1 for flag in config["no_rope_layers"] if flag == 0)
    by_kind = {r.rotates: r for r in reach}
    assert by_kind[False].count == nope_loop == 12
    assert by_kind[False].span == 262144 and by_kind[False].pairs == 0
    assert by_kind[True].count == 36 and by_kind[True].span == 8192


def test_smollm3_every_fourth_layer_is_nope():
    config = _preset("smollm3_3b")
    layers = pc.model_layers(config)
    assert [layer.index for layer in layers if not layer.rotates] == [i for i in range(36) if (i + 1) % 4 == 0]


def test_gemma_and_gpt_oss_strips_follow_the_rules_transformers_writes_their_layer_types_with():
    """transformers 5.23.0: Gemma 3 and Gemma 4 make layer i global when (i + 1) % 6 == 0 (Gemma 4 also forces the last
    layer global); gpt-oss alternates from a sliding layer. Gemma 3: sliding base 10⁴ with a 1,024 window, global base
    10⁶ with linear s = 8; Gemma 4's global layers turn 64 of 256 pairs (p-RoPE, p = 0.25) at base 10⁶."""
    gemma3 = pc.model_layers(_preset("gemma3_27b"))
    assert [layer.index for layer in gemma3 if layer.window is None] == [i for i in range(62) if (i + 1) % 6 == 0]
    assert {(layer.base, layer.window, layer.factor) for layer in gemma3} == {(1e4, 1024, 1.0), (1e6, None, 8.0)}
    gemma4 = pc.model_layers(_preset("gemma4_26b"))
    wanted = [i for i in range(30) if (i + 1) % 6 == 0 or i == 29]
    assert [layer.index for layer in gemma4 if layer.window is None] == wanted == [5, 11, 17, 23, 29]
    for layer in gemma4:
        if layer.window is None:
            assert (layer.rope_type, layer.base, layer.head_dim) == ("proportional", 1e6, 512)
            assert np.count_nonzero(layer.frequencies.inv_freq) == 64 and layer.frequencies.inv_freq.size == 256
    gpt_oss = pc.model_layers(_preset("gpt_oss_120b"))
    assert [layer.window for layer in gpt_oss] == [128 if i % 2 == 0 else None for i in range(36)]


def test_layer_reach_counts_the_pairs_that_turn_within_the_window_by_a_loop():
    """transformers 5.23.0's sliding-window mask keeps keys n with m − 1024 < n ≤ m: 1,024 keys, distances 0 … 1,023;
    a pair completes a turn when some distance in view reaches its wavelength 2π·b^(2i/d) (b = 10⁴, d = 128)."""
    config = _preset("gemma3_27b")
    reach = pc.layer_reach(pc.model_layers(config), context_length=131072)
    sliding = next(r for r in reach if r.layer_type == "sliding_attention")
    distances = [m - n for m in range(1024) for n in range(m - 1023, m + 1) if n >= 0]
    longest = max(distances)
    turning = sum(1 for i in range(64) if 2 * math.pi * 10000.0 ** (2 * i / 128) <= longest)
    assert (sliding.span, sliding.turning, sliding.pairs) == (1024, turning, 64)
    assert longest == 1023 and turning == 36
    assert sum(r.count for r in reach) == 62


def test_layer_reach_needs_a_whole_wavelength_of_distance_for_a_turn():
    """A made-up layer whose window equals a pair's wavelength rounded up: λ ≤ w − 1 turns, λ in (w − 1, w] does not.
    Base 4, d = 4: θ = (1, 1/2), λ = (2π, 4π) ≈ (6.28, 12.57); a window of 13 sees distances up to 12 (< 4π)."""
    config = {"head_dim": 4, "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1, "rope_theta": 4.0}
    layers = pc.model_layers(config)
    (short,) = pc.layer_reach(layers, context_length=13)
    (long,) = pc.layer_reach(layers, context_length=14)
    assert (short.pairs, short.turning) == (2, 1)
    assert (long.pairs, long.turning) == (2, 2)


def test_layer_reach_refuses_what_is_not_model_layers():
    with pytest.raises(pc.PosEncError):
        pc.layer_reach(None, context_length=10)


@pytest.mark.parametrize(("dim", "causal"), [(1, True), (4, True), (4, False), (32, True)])
def test_the_probes_norms_are_those_of_uniform_attentions_output_on_drawn_vectors(dim: int, causal: bool) -> None:
    r"""The probe draws the norms' own walk (issue 46: drawing the vectors was most of a move's cost); its mean
    ‖y_t‖²/d must be what ``uniform_attention_average`` gives on vectors drawn and averaged. Both are means over 4,096
    sequences of a χ²_d/(d·t) (with the mask; χ²_d/(d·L) at every t without), each with relative standard deviation
    √(2/(4096·d)), so their ratio is 1 within six times √2 of it."""
    from posenc_core.nope import nope_position_probe, uniform_attention_average

    length, sequences = 32, 4096
    probe = nope_position_probe(length, dim, sequences=sequences, causal=causal, seed=3)
    x = np.random.default_rng(4).standard_normal((sequences, length, dim))
    y = uniform_attention_average(x, causal=causal)
    drawn = np.sum(y * y, axis=-1).mean(axis=0) / dim
    bound = 6 * math.sqrt(2) * math.sqrt(2 / (sequences * dim))
    np.testing.assert_allclose(probe.mean_square_norm / drawn, 1.0, atol=bound)


@settings(max_examples=40, deadline=None)
@given(length=st.integers(2, 40), dim=st.integers(1, 12), seed=st.integers(0, 2**32 - 1), sequences=st.integers(2, 9))
def test_both_probes_from_one_draw_equal_the_two_probes_to_the_last_bit(
    length: int, dim: int, seed: int, sequences: int
) -> None:
    r"""Page 9 draws both probes from one draw (issue 46: the draw was most of a move's cost): every number must be
    that of the two separate calls, bit for bit."""
    pair = pc.nope_position_probes(length, dim, sequences=sequences, seed=seed)
    for causal, probe in zip((True, False), pair, strict=True):
        alone = pc.nope_position_probe(length, dim, sequences=sequences, causal=causal, seed=seed)
        for got, expected in zip(probe, alone, strict=True):
            np.testing.assert_array_equal(got, expected)
