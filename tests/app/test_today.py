r"""Page 9 (position in today's models): its figures and live checks without a browser, every claim at every seed the
sliders offer, and the page itself through AppTest in both languages, with bad links answered by a message."""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest

from posenc_ui.lessons.today.media import LAYOUTS, axis_words, cache_words, check_rotated, grid_words
from posenc_ui.lessons.today.view import VIEW, check_probe, prope_words, reach_words
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
    expected = layers.get("num_hidden_layers") or layers.get("text_config", {}).get("num_hidden_layers")
    assert sum(len(bar.x) for bar in strip.data) == expected
    VIEW.figures["reach"](v, "zh")
    assert VIEW.checks["reach"](v).passed


def test_llama_4_reach_names_twelve_nope_layers_that_see_the_whole_context() -> None:
    words = reach_words(values(model="llama4_scout"), "en")["list"]
    assert "no RoPE, 12 layers): at most 262,144 keys back" in words
    assert "(chunked_attention, 36 layers): at most 8,192 keys back" in words


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


@pytest.mark.parametrize(("length", "dim"), [(16, 16), (1024, 16), (16, 256)])
def test_the_probe_claim_holds_for_every_seed_the_slider_offers(length: int, dim: int) -> None:
    r"""The narrowest head (d = 16) is the worst case (tests/core/test_todays_models.py measures the margins)."""
    for seed in SEEDS:
        assert check_probe(values(length=length, dim=dim, seed=seed)).passed, seed


@pytest.mark.parametrize("length", range(16, 65, 8))
def test_rope_blocks_the_fold_for_every_seed_and_length_the_sliders_offer(length: int) -> None:
    for seed in MLA_SEEDS:
        assert check_rotated(values(mla_length=length, mla_seed=seed)).passed, seed


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
    from pathlib import Path

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
