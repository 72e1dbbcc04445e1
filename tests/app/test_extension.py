r"""Page 7: figures as pure functions, the numbers the text promises, refusals as lessons, the hardened paste box."""

from __future__ import annotations

import json

import numpy as np
import pytest
from drawn import sent_charts

from posenc_ui.i18n import t
from posenc_ui.lessons.extension import figures as figs
from posenc_ui.lessons.extension.models import preset_table
from posenc_ui.lessons.extension.view import VIEW, readouts
from posenc_ui.state import defaults

SCRIPT = "pages/7_Context_extension.py"


def values(**changes) -> dict:
    return {**defaults(VIEW.params), **changes}


def test_defaults_show_llama2_yarn_8_as_21_25_18() -> None:
    fig = VIEW.figures["regimes"](values(), "en")
    assert "21 / 25 / 18" in fig.layout.title.text
    assert [len(bar.x) for bar in fig.data] == [21, 25, 18]


def test_readouts_print_the_published_ntk_base() -> None:
    assert readouts(values())["ntk_base"] == "82,685"  # d = 128, b = 10⁴, s = 8 (docs/references.md)
    assert readouts(values(stretch=1))["alpha"] == "1.00"  # dynamic NTK does nothing up to L


def test_readouts_give_transformers_and_yarn_dynamic_scales_and_they_differ() -> None:
    r"""At ℓ = s·L, transformers' α = s·ℓ/L − (s − 1) is s² − s + 1 (57 at s = 8); YaRN §3.3's s = ℓ/L is 8."""
    shown = readouts(values(factor=8, stretch=8))
    assert (shown["alpha"], shown["yarn_scale"]) == ("57.00", "8.00")
    for s in (2, 3, 8, 64):  # every factor × stretch pair the sliders reach would be slow; these span them
        for stretch in (1, 2, 8, 64):
            shown = readouts(values(factor=s, stretch=stretch))
            alpha, yarn = float(shown["alpha"].replace(",", "")), float(shown["yarn_scale"].replace(",", ""))
            assert yarn == stretch  # §3.3: s = max(1, ℓ/L) with ℓ = stretch·L
            assert alpha == pytest.approx(s * stretch - (s - 1))  # transformers' arithmetic, written out
            assert alpha - yarn == pytest.approx((s - 1) * (stretch - 1))  # the gap the readout states


@pytest.mark.parametrize("method", ["linear", "ntk", "dynamic", "yarn", "llama3"])
@pytest.mark.parametrize("model", ["llama2_7b", "gpt_neox_20b", "deepseek_v3", "phi3_mini_128k"])
def test_every_method_draws_on_every_model_and_the_checks_hold(model: str, method: str) -> None:
    v = values(model=model, method=method, factor=16, stretch=16)
    for build in VIEW.figures.values():
        assert build(v, "zh").layout.title.text
    assert all(check(v).passed for check in VIEW.checks.values())


def test_ood_rings_go_red_without_a_method_and_pi_removes_all_red() -> None:
    plain = VIEW.figures["ood"](values(method="linear", factor=8, stretch=8), "en")
    assert "0 of 64" in plain.layout.annotations[1].text  # PI at s = T/L: nothing new
    assert "18 of 64 pairs" in plain.layout.annotations[0].text  # plain RoPE: the pairs with r < 1


def test_longrope_is_offered_with_phi3s_published_factors_and_nowhere_it_would_be_refused(open_page) -> None:
    from posenc_ui.lessons.extension.view import methods_of

    assert "longrope" in methods_of({"model": "phi3_mini_128k"})
    assert "longrope" not in methods_of({"model": "llama2_7b"})  # no published factors: not offered
    at = open_page(SCRIPT, lang="en", params={"method": "longrope", "model": "phi3_mini_128k"})
    assert not at.exception and not at.error
    assert "LongRoPE" in sent_charts(at)[0]["figure"]["layout"]["title"]["text"]
    at = open_page(SCRIPT, lang="en", params={"method": "longrope"})  # a link for Llama 2: the method falls back
    assert not at.exception and not at.error and sent_charts(at)


def test_phi3_as_published_divides_each_theta_by_its_long_factor_past_4096_tokens() -> None:
    r"""θ′ᵢ = θᵢ / long_factorᵢ beyond the original 4,096 tokens (Ding et al. 2024; transformers'
    ``_compute_longrope_parameters``); the factors are the preset's, θᵢ = 10⁴^(−2i/96) written out."""
    from posenc_ui.presets import load_presets

    long = np.asarray(load_presets()["phi3_mini_128k"].values["rope_scaling"]["long_factor"])
    fig = VIEW.figures["wavelengths"](values(model="phi3_mini_128k", method="model", stretch=8), "en")
    before, after = (np.asarray(trace.y, float) for trace in fig.data[:2])
    assert np.allclose(before, 2 * np.pi * 10_000.0 ** (np.arange(0, 96, 2) / 96))
    assert np.allclose(after, before * long)


def test_broken_pasted_config_keeps_the_last_good_figure(open_page) -> None:
    at = open_page(SCRIPT, lang="en")
    charts = len(sent_charts(at))
    at.text_area(key="extension.config").set_value('{"rope_theta": 10000, "head_dim": 128,').run()
    assert not at.exception
    assert any("not valid JSON" in e.value for e in at.error)
    assert len(sent_charts(at)) == charts
    at.text_area(key="extension.config").set_value(
        json.dumps({"head_dim": 64, "max_position_embeddings": 2048, "rope_scaling": {"rope_type": "magic"}})
    ).run()
    assert any("rope_type" in e.value and "magic" in e.value for e in at.error)
    at.text_area(key="extension.config").set_value(json.dumps({"rope_theta": 10000})).run()
    assert any("max_position_embeddings" in e.value for e in at.error)
    at.text_area(key="extension.config").set_value(json.dumps({"max_position_embeddings": 4096})).run()
    assert any("head_dim" in e.value for e in at.error)
    assert len(sent_charts(at)) == charts


def test_pasted_phi3_style_longrope_config_is_drawn(open_page) -> None:
    config = {
        "hidden_size": 64,
        "num_attention_heads": 2,
        "max_position_embeddings": 1024,
        "original_max_position_embeddings": 128,
        "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 16, "long_factor": [4.0] * 16},
    }
    fig = VIEW.figures["pasted"](values(config=json.dumps(config)), "en")
    assert "longrope" in fig.layout.title.text
    before, after = (np.asarray(trace.y) for trace in fig.data)
    assert np.allclose(after, 4 * before)  # long factors above the original length: every wavelength × 4


def test_preset_table_links_every_value_of_phi3_including_its_longrope_factors() -> None:
    table = preset_table(values(model="phi3_mini_128k"), "en")
    assert table.count("https://huggingface.co/microsoft/Phi-3-mini-128k-instruct") == 7  # 7 values, each linked
    assert "64.76000213623047" in table and "not bundled" not in table


def test_builders_are_pure_and_titled() -> None:
    lam = np.geomspace(6.0, 5e4, 8)
    fig = figs.wavelengths(lam, lam * 2, length=4096, target=8192, title="x", after_name="y", lang="en")
    assert len(fig.layout.shapes) == 2 and fig.layout.yaxis.type == "log"
    rings = figs.angle_rings(np.full(4, 3.0), [("a", np.full(4, 6.0))], title="t", lang="zh")
    assert [trace.type for trace in rings.data] == ["barpolar"] * 3


def test_the_reasons_checks_pass_at_defaults_and_at_the_slider_ends() -> None:
    for changes in ({}, {"factor": 2, "window": 16}, {"factor": 64, "stretch": 64, "window": 1024}):
        for name in ("base_change", "entropy", "uniform", "rerope_angles", "rerope_passes"):
            check = VIEW.checks[name](values(**changes))
            assert check.passed, (name, changes, check.residual)


def test_ntk_divisors_run_from_1_to_s_while_pi_is_flat_at_s() -> None:
    fig = VIEW.figures["divisors"](values(factor=8), "en")
    by_name = {trace.name: np.asarray(trace.y) for trace in fig.data}
    assert np.allclose(by_name["PI (linear)"], 8.0)
    ntk = by_name["NTK-aware"]
    assert ntk[0] == 1.0 and abs(ntk[-1] - 8.0) < 1e-9


def test_entropy_rises_plain_and_su_factor_holds_it_at_the_training_length() -> None:
    check = VIEW.checks["entropy"](values(factor=8))
    assert float(check.fmt["plain"]) > 1.0 and abs(float(check.fmt["log_n"])) < 0.3


@pytest.mark.parametrize("factor", [2, 3, 4])
@pytest.mark.parametrize("seed", [*range(40), 2**31, 2**32 - 1])
def test_su_keeps_at_most_half_the_rise_for_every_seed_at_small_factors(factor: int, seed: int) -> None:
    r"""The entropy check's claim, for other draws: the mean over 256 queries is far enough from its 0.5 threshold (the
    expected share is below 0.1, its standard error about 0.1 at s = 2, the tightest case) that no seed tips it."""
    from posenc_ui.lessons.extension.reasons import entropy_changes

    rise = entropy_changes(factor, seed=seed)
    assert rise["plain"] > 0 and abs(rise["log_n"]) / rise["plain"] <= 0.5, (factor, seed, rise)


@pytest.mark.parametrize("factor", [8, 64])
@pytest.mark.parametrize("seed", [0, 1, 7, 2**32 - 1])
def test_su_keeps_at_most_half_the_rise_for_every_seed_at_large_factors(factor: int, seed: int) -> None:
    from posenc_ui.lessons.extension.reasons import entropy_changes

    rise = entropy_changes(factor, seed=seed)
    assert rise["plain"] > 1.0 and abs(rise["log_n"]) / rise["plain"] <= 0.5, (factor, seed, rise)


def test_plain_entropy_rises_more_slowly_than_ln_n_without_levelling_off() -> None:
    r"""``extension.entropy``: from L to s·L the plain rise is below ln s, yet grows with every doubling of s."""
    import itertools
    import math

    from posenc_ui.lessons.extension.reasons import entropy_changes

    rises = [entropy_changes(s)["plain"] for s in (2, 4, 8, 16, 32, 64)]
    assert all(0.5 * math.log(s) < r < math.log(s) for s, r in zip((2, 4, 8, 16, 32, 64), rises, strict=True))
    assert all(b - a > 0.3 for a, b in itertools.pairwise(rises))  # ≥ 0.3 nats per doubling: no plateau


def test_entropy_text_names_the_query_counts_the_view_uses() -> None:
    from posenc_ui.i18n import t
    from posenc_ui.lessons.extension.reasons import CHECK_QUERIES, FIGURE_QUERIES

    for lang in ("en", "zh"):
        text = t("extension.entropy", lang)
        assert f"{FIGURE_QUERIES}" in text and f"{CHECK_QUERIES}" in text


def test_rerope_hands_rope_at_most_w() -> None:
    fig = VIEW.figures["seen"](values(window=256), "en")
    rerope = next(trace for trace in fig.data if trace.name.startswith("ReRoPE"))
    assert max(rerope.y) == 256.0


def test_ood_text_counts_ntk_red_and_every_method_leaves_red_below_t_over_l() -> None:
    r"""``extension.ood``: NTK-aware at s = T/L = 8 leaves 17 of Llama 2's 64 pairs red (the 18 that never finished a
    turn, less the slowest); with s = 8 < T/L = 16 every method leaves the plain count, 18."""
    ntk = VIEW.figures["ood"](values(method="ntk", factor=8, stretch=8), "en")
    assert "17 of 64" in ntk.layout.annotations[1].text
    for method in ("linear", "ntk", "yarn", "llama3"):
        short = VIEW.figures["ood"](values(method=method, factor=8, stretch=16), "en")
        assert "18 of 64" in short.layout.annotations[1].text


def test_regimes_text_names_each_count_in_the_order_the_check_gives_them() -> None:
    check = VIEW.checks["regimes"](values())
    assert (check.fmt["kept"], check.fmt["blended"], check.fmt["interpolated"]) == (21, 25, 18)
    assert "21 kept, 25 blended and 18 interpolated" in t("extension.regimes", "en")


@pytest.mark.slow  # 63 entropy means at up to 32 768 keys: about 20 s
def test_yarn_factor_oversharpens_the_toy_head_at_every_factor_on_the_slider() -> None:
    r"""``extension.entropy``: with YaRN's factor the check's mean entropy at s·L falls below its value at L for every
    s = 2 … 64, and by more at s = 64 than at s = 2."""
    from posenc_ui.lessons.extension.reasons import entropy_changes

    factor = VIEW.param("factor")
    changes = [entropy_changes(s)["yarn"] for s in range(factor.lo, factor.hi + 1)]
    assert max(changes) < 0 and changes[-1] < changes[0]


def test_the_models_chart_draws_gemma4s_global_head_as_page_9_does() -> None:
    r"""Gemma 4's global head: 512 dimensions, 256 pairs of which p = 0.25 turn (its fastest 64, θ_i = 10⁶^(−2i/512)
    written out here), the rest never turn. Page 7 must keep them in their place in the head — 64 turning pairs in the
    first quarter of the 2i/d axis, a gap after — exactly the curve page 9 draws for the same head at p = 0.25."""
    from posenc_ui.lessons.extension.models import models_figure
    from posenc_ui.lessons.today.view import VIEW as TODAY

    fig = models_figure(values(), "en")
    gemma = next(trace for trace in fig.data if trace.name == "Gemma 4 26B A4B" and trace.mode == "lines")
    x, y = np.asarray(gemma.x, float), np.asarray(gemma.y, float)
    assert x.shape == (256,) and np.isfinite(y).sum() == 64 and np.isnan(y[64:]).all()
    i = np.arange(64)
    assert np.allclose(y[:64], 2 * np.pi * 1e6 ** (2 * i / 512), rtol=1e-12)
    assert x[63] < 0.25 <= x[64]  # a quarter of the head, not the whole axis
    page9 = TODAY.figures["prope"]({**defaults(TODAY.params), "proportion": 0.25}, "en")
    proportional = np.asarray(page9.data[1].y, float)
    assert np.array_equal(np.isnan(proportional), np.isnan(y))
    assert np.allclose(proportional[:64], y[:64], rtol=1e-12)
