r"""Page 9 (position in today's models): its figures and live checks without a browser, every claim at every seed the
sliders offer, and the page itself through AppTest in both languages, with bad links answered by a message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest

import posenc_core.nope as core_nope
from posenc_ui.frame import widget_key
from posenc_ui.lesson import PageRefusal
from posenc_ui.lessons.today.media import (
    LAYOUTS,
    axis_words,
    cache_words,
    check_decoupled,
    check_plain,
    check_rotated,
    grid_words,
)
from posenc_ui.lessons.today.view import VIEW, check_norm, check_probe, prope_words, reach_words
from posenc_ui.presets import PRESET_IDS, load_presets
from posenc_ui.state import defaults

SCRIPT = "pages/9_Todays_models.py"
DEFAULTS = defaults(VIEW.params)
SEEDS = range(VIEW.param("seed").lo, VIEW.param("seed").hi + 1)
MLA_SEEDS = range(VIEW.param("mla_seed").lo, VIEW.param("mla_seed").hi + 1)


def values(**changes) -> dict:
    return {**DEFAULTS, **changes}


@pytest.mark.parametrize("model", PRESET_IDS)
def test_every_preset_draws_its_strip_and_reach_and_the_check_holds(model: str) -> None:
    v = values(model=model)
    strip = VIEW.figures["layers"](v, "en")
    layers = load_presets()[model].config()
    expected = (
        layers.get("num_hidden_layers")
        or layers.get("n_layer")  # GPT-2
        or layers.get("text_config", {}).get("num_hidden_layers")
    )
    assert sum(len(bar.x) for bar in strip.data) == expected
    if load_presets()[model].missing:  # e.g. Phi-3's LongRoPE factors: its long-context wavelengths are unknown
        with pytest.raises(PageRefusal, match="not bundled"):
            VIEW.figures["reach"](v, "zh")
        with pytest.raises(PageRefusal):
            VIEW.checks["reach"](v)
        assert reach_words(v, "en") == {"list": ""}  # the figure's refusal says why, once
        return
    VIEW.figures["reach"](v, "zh")
    assert VIEW.checks["reach"](v).passed


def test_the_reach_reads_each_layer_at_the_models_whole_context(monkeypatch) -> None:
    r"""A dynamic rope_type turns with other frequencies once the sequence passes its original length, and the reach
    is of the whole context, so it must use those. A made-up preset: Llama 2's head with dynamic NTK s = 4 and a
    16,384-token context (transformers: base · (s·ℓ/L − (s − 1))^(d/(d−2)) for ℓ > L = max_position_embeddings = 4,096),
    so at ℓ = 16,384 the slowest pair's wavelength is 2π · (10⁴ · 13^(128/126))^(126/128)."""
    from types import SimpleNamespace

    from posenc_ui.lessons.today import view

    config = {
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_hidden_layers": 2,
        "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {"rope_type": "dynamic", "factor": 4.0},
    }
    fake = SimpleNamespace(config=lambda: config, missing=())
    monkeypatch.setattr(view, "load_presets", lambda: {"audit_dynamic_ntk": fake})
    monkeypatch.setattr(view, "_context", lambda model: 16384)
    words = reach_words(values(model="audit_dynamic_ntk"), "en")["list"]
    longest = 2 * np.pi * (10000.0 * 13.0 ** (128 / 126)) ** (126 / 128)
    assert f"to {longest:,.0f} tokens" in words
    assert "to 54,410 tokens" not in words  # the short-context wavelength (2π · 10⁴^(126/128))


def test_llama_4_reach_names_twelve_nope_layers_that_see_the_whole_context() -> None:
    words = reach_words(values(model="llama4_scout"), "en")["list"]
    assert "no RoPE, 12 layers): sees at most 262,144 keys" in words
    assert "(chunked_attention, 36 layers): sees at most 8,192 keys" in words


def test_p_rope_words_quote_188_against_5_1_million_at_gemma_4_p_quarter() -> None:
    r"""Issue 36's published pair of numbers as the page prints them (tests/core/test_todays_models.py: both)."""
    words = prope_words(values(proportion=0.25), "en")
    assert words["slow_p"] == "188"
    assert round(float(words["slow_n"].replace(",", "")) / 1e6, 1) == 5.1  # 5,063,256 tokens: ≈ 5.1 M
    assert words["turning"] == "64" and words["pairs"] == "256"


@pytest.mark.parametrize("proportion", VIEW.param("proportion").options)
def test_partial_ropes_slowest_pair_never_turns_within_the_context_at_every_p(proportion: float) -> None:
    r"""The p-RoPE paragraph says so at every p the slider offers."""
    words = prope_words(values(proportion=proportion), "en")
    assert float(words["slow_n"].replace(",", "")) > float(words["context"].replace(",", ""))
    assert float(words["slow_p"].replace(",", "")) < float(words["context"].replace(",", ""))
    assert VIEW.checks["prope"](values(proportion=proportion)).passed


@pytest.mark.parametrize(("length", "dim"), [(16, 16), (48, 16), (1024, 16), (16, 256)])
def test_the_probe_and_slope_claims_hold_for_every_seed_the_slider_offers(length: int, dim: int) -> None:
    r"""The narrowest head (d = 16) is the worst case: R² is lowest and the slope strays most at L = 16
    (tests/core/test_todays_models.py gives the margins measured over every L and seed)."""
    for seed in SEEDS:
        v = values(length=length, dim=dim, seed=seed)
        assert check_probe(v).passed, seed
        assert check_norm(v).passed, seed


@pytest.mark.parametrize("length", range(16, 65, 8))
def test_the_three_fold_checks_hold_for_every_seed_and_length_the_sliders_offer(length: int) -> None:
    for seed in MLA_SEEDS:
        v = values(mla_length=length, mla_seed=seed)
        assert check_rotated(v).passed and check_plain(v).passed and check_decoupled(v).passed, seed


def test_axis_words_give_qwen2_vl_time_the_fast_end_and_qwen3_vl_time_the_slow_end() -> None:
    words = axis_words(values(), "en")
    number = lambda key: float(words[key].replace(",", ""))  # noqa: E731
    assert number("qwen2_t_high") < number("qwen2_w_low")  # contiguous: time's slowest is faster than width's fastest
    assert number("qwen3_t_high") > number("qwen2_t_high")  # interleaved: time reaches the slow end
    assert len(LAYOUTS) == 2


def test_cache_words_quote_576_against_32768() -> None:
    words = cache_words(values(), "en")
    assert (words["mla"], words["mha"], words["ratio"]) == ("576", "32,768", "56.9")


def test_every_check_holds_at_the_slider_ends() -> None:
    ends = {}
    for name in ("length", "dim", "seed", "image_rows", "image_cols", "frames", "span", "mla_length", "mla_seed"):
        param = VIEW.param(name)
        ends[name] = (param.lo, param.hi)
    for pick in (0, 1):
        v = values(**{name: pair[pick] for name, pair in ends.items()})
        for name, check in VIEW.checks.items():
            assert check(v).passed, (name, pick)


def test_payload_at_max_settings_stays_under_1_mb() -> None:
    v = values(length=1024, dim=256, image_rows=8, image_cols=8, frames=6, span=16384, mla_length=64)
    for name, build in VIEW.figures.items():
        assert len(pio.to_json(build(v, "en"), validate=False)) < 1_000_000, name


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_renders_in_both_languages_and_every_check_passes(open_page, lang: str) -> None:
    at = open_page(SCRIPT, lang=lang)
    assert not at.exception
    assert not at.error
    boxes = [box.value for box in at.success]
    assert sum(line.startswith("✓") for box in boxes for line in box.split("\n\n")) >= len(VIEW.checks)
    text = " ".join(md.value for md in at.markdown)
    assert ("NoPE" in text) and (("causal mask" in text) if lang == "en" else ("因果掩码" in text))


def test_a_bad_link_gives_a_message_not_a_traceback(open_page) -> None:
    at = open_page(SCRIPT, lang="en", params={"length": "abc", "model": "gpt-7", "proportion": "9", "mla_seed": "-4"})
    assert not at.exception
    assert at.warning  # the frame says which values it could not use
    assert not at.error


def test_the_page_words_have_the_same_keys_and_placeholders_in_both_languages() -> None:
    import re

    folder = Path(__file__).resolve().parents[2] / "posenc_ui" / "lessons" / "today"
    en, zh = (json.loads((folder / f"words.{lang}.json").read_text()) for lang in ("en", "zh"))
    assert set(en) == set(zh)
    field = re.compile(r"(?<!\{)\{(\w+)\}(?!\})")
    for key in en:
        assert set(field.findall(en[key])) == set(field.findall(zh[key])), key


def test_builders_are_titled_in_both_languages() -> None:
    for name, build in VIEW.figures.items():
        en, zh = build(DEFAULTS, "en"), build(DEFAULTS, "zh")
        assert en.layout.title.text and zh.layout.title.text, name
        assert np.all([trace.type for trace in en.data] == [trace.type for trace in zh.data]), name


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_patch_grid_is_one_at_its_centre_and_even_in_the_offsets(layout: str) -> None:
    fig = VIEW.figures["grid"](values(layout=layout, extent=8, dt=0), "en")
    z = np.asarray(fig.data[0].z, dtype=float)
    assert z.shape == (17, 17) and z[8, 8] == pytest.approx(1.0, abs=1e-6)
    assert np.allclose(z, z[::-1, ::-1], atol=1e-6)  # cos is even: (Δh, Δw) and (−Δh, −Δw) score alike


def test_grid_words_tell_qwen3_vl_nearby_patches_apart_more_than_qwen2_vl() -> None:
    words = {key: float(value) for key, value in grid_words(values(), "en").items()}
    assert words["qwen3_h"] < words["qwen2_h"] and words["qwen3_w"] < words["qwen2_w"]
    assert words["qwen2_h"] < 1.0 and words["qwen2_w"] <= 1.0


def test_the_two_layouts_and_the_head_are_what_transformers_builds_and_the_words_quote_them() -> None:
    r"""The page's M-RoPE head (128 dimensions, base 10⁶) and its two layouts, against the rotary embeddings that
    transformers 5.23.0 builds from Qwen2-VL's and Qwen3-VL's default text configs, and the sections the prose and the
    axis figure's title quote."""
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLRotaryEmbedding
    from transformers.models.qwen3_vl.configuration_qwen3_vl import Qwen3VLTextConfig
    from transformers.models.qwen3_vl.modeling_qwen3_vl import Qwen3VLTextRotaryEmbedding

    from posenc_ui.lessons.today import media

    qwen2, qwen3 = Qwen2VLTextConfig(), Qwen3VLTextConfig()
    built = {
        "qwen2_vl_text": Qwen2VLRotaryEmbedding(qwen2),
        "qwen3_vl_text": Qwen3VLTextRotaryEmbedding(qwen3),
    }
    assert qwen2.rope_parameters["rope_theta"] == media.MROPE_BASE
    folder = Path(media.__file__).parent
    words = {lang: json.loads((folder / f"words.{lang}.json").read_text()) for lang in ("en", "zh")}
    for name, rotary in built.items():
        section, interleaved = media._layout(name)
        assert list(section) == rotary.mrope_section, name
        assert rotary.inv_freq.shape[0] == media.MROPE_HEAD // 2 == 64, name
        assert interleaved == (name == "qwen3_vl_text")
        for lang in words:
            for key in ("today.mrope_axes", "today.fig_axes"):
                assert str(rotary.mrope_section) in words[lang][key], (name, lang, key)


def test_a_move_of_the_probes_length_draws_its_random_values_once(open_page, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 46: the probe's draw of (64, L, d) normals was most of a move's cost at large settings, paid twice (with
    # and without the mask); both readings now come from one draw. Counts draws, not seconds.
    at = open_page(SCRIPT, lang="en", params={"dim": "240", "seed": "97"})
    draws: list[tuple] = []
    real = core_nope._running_squares

    def values(*args):
        draws.append(args)
        return real(*args)

    monkeypatch.setattr(core_nope, "_running_squares", values)
    at.slider(key=widget_key("today", "length")).set_value(1008).run()
    assert not at.exception
    assert draws == [(1008, 240, 64, 97)]


def test_the_probe_at_a_readers_settings_outlives_a_class_worth_of_other_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    r"""Issue 46: the probe costs up to a second to draw and weighs kilobytes; in the pool of big tables a class's
    traffic pushed it out, and every student's second visit drew again (page 9's round-2 p95: 3 s). After both
    bounded pools are flooded with more than they hold, the probe at the same settings is not drawn again."""
    from posenc_ui import memo as memo_module
    from posenc_ui.lessons.today import view as today_view

    draws: list[tuple] = []
    real = core_nope._running_squares
    monkeypatch.setattr(core_nope, "_running_squares", lambda *args: draws.append(args) or real(*args))
    v = {**values(), "length": 912, "dim": 176, "seed": 61}
    VIEW.checks["probe"](v)
    try:
        for i in range(600):  # 300 MB of tables and figures: more than SCRATCH and RESULTS hold together
            memo_module.SCRATCH[("flood", i)] = np.zeros(2**16)
            memo_module.RESULTS[("flood", i)] = np.zeros(2**16)
        memo_module.RESULTS.clear()  # the check's own result too: only the probe itself may be kept
        probe = today_view._probes_at.__wrapped__
        for key in [key for key in memo_module.DEAR if key[0] is not probe]:  # a check that cost 0.1 s is kept there
            del memo_module.DEAR[key]
        assert VIEW.checks["probe"](v).passed
    finally:
        memo_module.SCRATCH.clear()
        memo_module.RESULTS.clear()
    assert draws == [(912, 176, 64, 61)]
