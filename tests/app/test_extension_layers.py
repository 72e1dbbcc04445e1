r"""A model layer by layer: the strip of its decoder layers (page 9 for every preset, page 7 for pasted configs of
today's models) and page 7's wavelengths of each kind of layer, in both languages; the layer selectors follow the model.

The pasted configs are transformers' own ``Gemma3TextConfig()`` and ``Llama4TextConfig()`` serialised to JSON
(``tests/app/configs/``, written by the pinned release; a test re-serialises them when transformers is installed).
Expected layer counts and patterns are read from the configs' own fields, never from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from drawn import sent_charts

from posenc_core import PosEncError
from posenc_ui.frame import widget_key
from posenc_ui.i18n import t
from posenc_ui.lesson import PageRefusal
from posenc_ui.lessons.extension import figures_layers as figs
from posenc_ui.lessons.extension.layers import PARAMS, preset_layers, rotating_kinds
from posenc_ui.lessons.extension.view import VIEW
from posenc_ui.lessons.today.view import VIEW as TODAY
from posenc_ui.presets import PRESET_IDS, load_presets, rotating_preset_ids
from posenc_ui.state import FollowingChoiceParam, defaults

SCRIPT = "pages/7_Context_extension.py"
CONFIGS = Path(__file__).with_name("configs")
GEMMA3 = json.loads((CONFIGS / "gemma3_text_defaults.json").read_text())
LLAMA4 = json.loads((CONFIGS / "llama4_text_defaults.json").read_text())

#: Presets the core cannot read yet, each with what it lacks (empty: the core reads every preset).
NOT_YET: dict[str, str] = {}


def values(**changes) -> dict:
    return {**defaults(VIEW.params), **changes}


def today_values(**changes) -> dict:
    r"""Page 9's values: it draws a preset's strip (page 7 draws a pasted config's)."""
    return {**defaults(TODAY.params), **changes}


def titles(at) -> list[str]:
    return [chart["figure"]["layout"]["title"]["text"] for chart in sent_charts(at)]


# --- the figure builders, on made-up layers -----------------------------------------------------------------------


def test_the_strip_has_one_cell_per_layer_coloured_by_kind_and_nope_is_grey_and_short() -> None:
    kinds = np.array([0, 0, 0, 1, 0, 0, 0, 1])  # three rotating layers, then one without RoPE, twice
    fig = figs.layer_strip(
        kinds, ["rope", "nope"], [True, False], [f"layer {i}" for i in range(8)], title="x", lang="en"
    )
    assert [list(bar.x) for bar in fig.data] == [[0, 1, 2, 4, 5, 6], [3, 7]]
    assert sum(len(bar.x) for bar in fig.data) == 8
    assert set(fig.data[0].y) == {1.0} and set(fig.data[1].y) == {figs.NOPE_HEIGHT} and figs.NOPE_HEIGHT < 1
    assert fig.data[0].marker.color == figs.KIND_COLOURS[0] and fig.data[1].marker.color == figs.NOPE_COLOUR
    assert fig.layout.showlegend  # even one kind is named
    assert list(fig.data[1].customdata) == ["layer 3", "layer 7"]  # each cell's own hover text
    assert tuple(fig.layout.xaxis.range) == (-0.5, 7.5)


def test_kind_colours_skip_the_grey_of_no_position_for_layers_that_rotate() -> None:
    assert figs.kind_colours([True, False, True]) == [figs.KIND_COLOURS[0], figs.NOPE_COLOUR, figs.KIND_COLOURS[1]]


# --- every preset -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preset_id",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[p])) if p in NOT_YET else p
        for p in PRESET_IDS
    ],
)
def test_every_preset_draws_its_strip_with_one_cell_per_layer(preset_id: str) -> None:
    preset = load_presets()[preset_id]
    count = preset.values.get("num_hidden_layers", preset.values.get("n_layer"))
    fig = TODAY.figures["layers"](today_values(model=preset_id), "en")
    assert sum(len(bar.x) for bar in fig.data) == count
    assert f"{count} layers" in fig.layout.title.text
    if preset_id in NO_ROPE:
        with pytest.raises(PageRefusal):
            VIEW.figures["layer_wavelengths"](values(model=preset_id), "zh")
    else:
        assert VIEW.figures["layer_wavelengths"](values(model=preset_id), "zh").layout.title.text


#: Presets with no RoPE in any layer (their wavelength chart is refused with the page's reason), and why.
NO_ROPE = {
    "gpt2": "learned absolute positions, added to the input (its preset's note)",
    "jamba_v0_1": "Mamba layers and attention without position (its preset's note)",
}


# --- models without RoPE, and hybrids ------------------------------------------------------------------------------

#: Published config.json fields (GPT-2: openai-community/gpt2; T5: google-t5/t5-small; BLOOM: bigscience/bloom-560m).
GPT2 = {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_positions": 1024}
T5 = {
    "model_type": "t5",
    "num_layers": 6,
    "d_model": 512,
    "d_kv": 64,
    "num_heads": 8,
    "relative_attention_num_buckets": 32,
}
BLOOM = {"model_type": "bloom", "n_layer": 24, "hidden_size": 1024, "n_head": 16}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("config", "count", "page", "words"),
    [
        (GPT2, 12, "Learned_absolute", {"en": "learned absolute positions, 1,024 of them", "zh": "共 1,024 个"}),
        (T5, 6, "Relative", {"en": "32 distance buckets", "zh": "32 个距离桶"}),
        (BLOOM, 24, "ALiBi", {"en": "ALiBi", "zh": "ALiBi"}),
    ],
)
def test_a_pasted_model_without_rope_says_how_it_places_position_and_links_its_page(config, count, page, words, lang):
    fig = VIEW.figures["pasted_layers"](values(config=json.dumps(config)), lang)
    (bar,) = fig.data  # one kind of layer: every layer the same
    assert len(bar.x) == count and set(bar.y) == {figs.HEIGHTS["attention"]}
    name = bar.name.replace("<br>", " ")
    assert words[lang] in name.replace("<br>", "")
    assert f'href="{page}?lang={lang}"' in bar.name  # the page that teaches it
    title = t("extension.fig_layers", lang, model=t("extension.pasted_model", lang), layers=count, rotating=0)
    assert fig.layout.title.text.replace("<br>", "").replace(" ", "") == title.replace(" ", "")  # 0 layers with RoPE
    with pytest.raises(PageRefusal) as refused:  # its frequencies: refused as a model without RoPE, whatever it lacks
        VIEW.figures["pasted"](values(config=json.dumps(config)), lang)
    assert refused.value.key == "extension.no_layer_rotates"


#: google/recurrentgemma-2b's config.json (gated; its fields as published), with transformers' block_types, which the
#: checkpoint stores as ``_block_types`` and transformers 5.23.0 does not read (its default is the same cycle).
RECURRENTGEMMA = {
    "model_type": "recurrent_gemma",
    "num_hidden_layers": 26,
    "hidden_size": 2560,
    "num_attention_heads": 10,
    "head_dim": 256,
    "partial_rotary_factor": 0.5,
    "rope_theta": 10000.0,
    "attention_window_size": 2048,
    "block_types": ["recurrent", "recurrent", "attention"],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_recurrentgemma_draws_its_recurrent_layers_low_and_black_and_its_attention_in_a_window(lang: str) -> None:
    blocks = RECURRENTGEMMA["block_types"]
    expected_attention = [i for i in range(26) if blocks[i % len(blocks)] == "attention"]
    fig = VIEW.figures["pasted_layers"](values(config=json.dumps(RECURRENTGEMMA)), lang)
    recurrent, attention = fig.data
    assert list(attention.x) == expected_attention and len(recurrent.x) == 26 - len(expected_attention)
    assert set(recurrent.y) == {figs.BLOCK_HEIGHT} and recurrent.marker.color == figs.BLOCK_COLOURS["recurrent"]
    name = attention.name.replace("<br>", " ")
    assert "2,048" in name and "128/256" in name  # the window, and half the head turning


def test_jambas_four_attention_layers_see_no_position_and_the_rest_are_mamba() -> None:
    config = load_presets()["jamba_v0_1"].config()
    period, offset = config["attn_layer_period"], config["attn_layer_offset"]
    expected_attention = [i for i in range(config["num_hidden_layers"]) if i % period == offset]
    fig = TODAY.figures["layers"](today_values(model="jamba_v0_1"), "en")
    by_height = {bar.y[0]: list(bar.x) for bar in fig.data}
    assert by_height[figs.HEIGHTS["attention"]] == expected_attention == [4, 12, 20, 28]
    assert len(by_height[figs.BLOCK_HEIGHT]) == 28
    assert "0 with RoPE" in fig.layout.title.text.replace("<br>", " ")


def test_smollm3s_every_fourth_layer_has_no_rope() -> None:
    layers = preset_layers("smollm3_3b")
    flags = load_presets()["smollm3_3b"].values["no_rope_layers"]  # 1 = rotates, as transformers reads it
    assert [layer.rotates for layer in layers] == [bool(flag) for flag in flags]
    fig = TODAY.figures["layers"](today_values(model="smollm3_3b"), "en")
    nope = next(bar for bar in fig.data if bar.marker.color == figs.NOPE_COLOUR)
    assert list(nope.x) == [i for i, flag in enumerate(flags) if flag == 0]


def test_gpt_oss_alternates_a_128_token_window_and_full_attention() -> None:
    layer_types = load_presets()["gpt_oss_120b"].values["layer_types"]
    layers = preset_layers("gpt_oss_120b")
    assert [layer.window for layer in layers] == [128 if k == "sliding_attention" else None for k in layer_types]
    assert rotating_kinds(layers) == ("sliding_attention", "full_attention")


def _checkpoint_only(preset_id: str, derived: tuple[str, ...]) -> dict:
    r"""The preset's config without the fields transformers derives when it loads the checkpoint (the preset's note
    says which): the checkpoint's config.json alone."""
    return {key: value for key, value in load_presets()[preset_id].config().items() if key not in derived}


def test_gemma3_has_five_local_layers_to_one_global() -> None:
    preset = load_presets()["gemma3_27b"].values
    pattern, count = preset["sliding_window_pattern"], preset["num_hidden_layers"]
    full = [i for i in range(count) if (i + 1) % pattern == 0]  # transformers' Gemma3TextConfig rule
    layers = preset_layers("gemma3_27b")
    assert [i for i, layer in enumerate(layers) if layer.window is None] == full
    assert {layer.base for layer in layers if layer.window is not None} == {preset["rope_local_base_freq"]}
    assert {(layer.base, layer.factor) for layer in layers if layer.window is None} == {
        (preset["rope_theta"], preset["rope_scaling"]["factor"])
    }


def test_gemma3_checkpoint_alone_is_read_as_transformers_loads_it() -> None:
    from posenc_core import model_layers

    alone = model_layers(_checkpoint_only("gemma3_27b", ("layer_types", "rope_parameters")))
    assert [layer.window for layer in alone] == [layer.window for layer in preset_layers("gemma3_27b")]
    assert [layer.base for layer in alone] == [layer.base for layer in preset_layers("gemma3_27b")]


def test_llama4_scout_rotating_layers_attend_within_8192_token_chunks() -> None:
    preset = load_presets()["llama4_scout"].values
    for layer, flag in zip(preset_layers("llama4_scout"), preset["no_rope_layers"], strict=True):
        assert layer.window == (preset["attention_chunk_size"] if flag else None) and layer.rotates == bool(flag)


def test_llama4_checkpoint_alone_is_read_as_transformers_loads_it() -> None:
    from posenc_core import model_layers

    alone = model_layers(_checkpoint_only("llama4_scout", ("layer_types",)))
    assert [layer.window for layer in alone] == [layer.window for layer in preset_layers("llama4_scout")]


# --- the layer selectors ------------------------------------------------------------------------------------------


def test_a_layer_selector_keeps_its_value_while_the_model_has_that_kind_and_falls_back_to_the_first() -> None:
    layer = next(p for p in PARAMS if p.name == "layer")
    assert isinstance(layer, FollowingChoiceParam)
    assert layer.clamp("sliding_attention", {"model": "gpt_oss_120b"}) == "sliding_attention"
    assert layer.clamp("full_attention", {"model": "gpt_oss_120b"}) == "full_attention"
    assert layer.clamp("sliding_attention", {"model": "llama2_7b"}) == "full_attention"  # Llama 2 has no other
    assert layer.clamp("nope", {"model": "smollm3_3b"}) == "full_attention"  # a NoPE layer has no frequencies
    # Gemma 4's global layers turn only some pairs (proportional RoPE): the lesson's methods draw its sliding ones
    assert layer.clamp("full_attention", {"model": "gemma4_26b"}) == "sliding_attention"


def test_gemma4_global_layers_turn_a_quarter_of_a_512_wide_head() -> None:
    preset = load_presets()["gemma4_26b"].values
    full = preset["rope_parameters"]["full_attention"]
    layers = [layer for layer in preset_layers("gemma4_26b") if layer.window is None]
    assert layers and {layer.head_dim for layer in layers} == {preset["global_head_dim"]}
    assert {layer.rotary_dim for layer in layers} == {int(preset["global_head_dim"] * full["partial_rotary_factor"])}


def test_the_lesson_draws_the_kind_of_layer_picked() -> None:
    sliding = VIEW.figures["wavelengths"](values(model="gpt_oss_120b", layer="sliding_attention", method="model"), "en")
    full = VIEW.figures["wavelengths"](values(model="gpt_oss_120b", layer="full_attention", method="model"), "en")
    assert sliding.layout.title.text and full.layout.title.text
    assert np.allclose(sliding.data[0].y, full.data[0].y)  # gpt-oss rotates both kinds alike: same frequencies


# --- the page, in both languages ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_page_draws_the_wavelengths_of_every_preset_it_offers_and_no_strip(open_page, lang: str) -> None:
    at = open_page(SCRIPT, lang=lang)
    for preset_id in rotating_preset_ids():  # GPT-2 and Jamba, without RoPE, are page 9's (tests/app/test_presets.py)
        at.selectbox(key=widget_key("extension", "model")).set_value(preset_id).run()
        assert not at.exception and not at.error, (preset_id, [e.value for e in [*at.exception, *at.error]])
        name = t(f"extension.model.{preset_id}", lang)
        wavelengths = t("extension.fig_layer_wavelengths", lang, model=name).replace(" ", "")
        drawn = [title.replace("<br>", "").replace(" ", "") for title in titles(at)]
        assert wavelengths in drawn, (preset_id, drawn)
        layers = preset_layers(preset_id)
        strip = t("extension.fig_layers", lang, model=name, layers=len(layers), rotating=sum(x.rotates for x in layers))
        assert strip.replace(" ", "") not in drawn  # the preset's strip is page 9's


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("config", "rotating_type"), [(GEMMA3, "sliding_attention"), (LLAMA4, "chunked_attention")])
def test_a_pasted_gemma3_or_llama4_config_draws_its_layers(open_page, lang: str, config: dict, rotating_type) -> None:
    at = open_page(SCRIPT, lang=lang)
    at.text_area(key=widget_key("extension", "config")).set_value(json.dumps(config, indent=2)).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    count = config["num_hidden_layers"]
    strip = next(
        c["figure"]
        for c in sent_charts(at)
        if c["figure"]["layout"]["title"]["text"].startswith(t("extension.pasted_model", lang))
        and c["figure"]["data"][0]["type"] == "bar"
    )
    assert sum(len(bar["customdata"]) for bar in strip["data"]) == count  # x travels as a typed array
    selector = at.selectbox(key=widget_key("extension", "pasted_layer"))
    assert rotating_type in selector.options
    for option in selector.options:  # every kind that rotates can be drawn
        at.selectbox(key=widget_key("extension", "pasted_layer")).set_value(option).run()
        assert not at.exception and not at.error
        assert any(option in title for title in titles(at))


def test_llama4_pasted_has_a_nope_layer_every_fourth_with_its_temperature() -> None:
    from posenc_ui.lessons.extension.layers import pasted_layers

    layers = pasted_layers(json.dumps(LLAMA4))
    assert [layer.rotates for layer in layers] == [bool(flag) for flag in LLAMA4["no_rope_layers"]]
    assert all(layer.temperature is not None for layer in layers if not layer.rotates)


def test_the_fixtures_are_what_the_pinned_transformers_writes() -> None:
    transformers = pytest.importorskip("transformers")
    for config, cls in ((GEMMA3, transformers.Gemma3TextConfig), (LLAMA4, transformers.Llama4TextConfig)):
        assert json.loads(cls().to_json_string()) == config


def test_a_pasted_config_the_core_cannot_read_keeps_the_last_strip(open_page) -> None:
    at = open_page(SCRIPT, lang="zh")
    at.text_area(key=widget_key("extension", "config")).set_value(json.dumps(GEMMA3)).run()
    charts = len(sent_charts(at))
    broken = {**GEMMA3, "layer_types": ["sliding_attention"] * 3}  # fewer entries than layers
    at.text_area(key=widget_key("extension", "config")).set_value(json.dumps(broken)).run()
    assert not at.exception and at.error and len(sent_charts(at)) == charts
    with pytest.raises(PosEncError):
        from posenc_ui.lessons.extension.layers import pasted_layers

        pasted_layers(json.dumps(broken))


@pytest.mark.parametrize("config", [GEMMA3, LLAMA4], ids=["gemma3", "llama4"])
def test_a_share_link_of_a_pasted_config_keeps_every_layer(config: dict) -> None:
    from posenc_ui.lessons.extension.layers import pasted_layers
    from posenc_ui.presets import ConfigTextParam

    param = ConfigTextParam("config", "{}")
    link = param.encode(json.dumps(config))
    assert len(link) < len(json.dumps(config))  # reduced to what decides position
    value, problem = param.parse(link, {})
    assert problem is None
    linked, pasted = pasted_layers(value), pasted_layers(json.dumps(config))
    assert len(linked) == len(pasted) and all(a.same_kind(b) for a, b in zip(linked, pasted, strict=True))


def test_qwen3_vl_names_its_pairs_split_among_time_height_and_width() -> None:
    section = load_presets()["qwen3_vl_8b"].values["rope_scaling"]["mrope_section"]
    fig = TODAY.figures["layers"](today_values(model="qwen3_vl_8b"), "en")
    assert " / ".join(map(str, section)) in fig.data[0].name and "interleaved" in fig.data[0].name


def test_the_errata_check_says_when_no_pair_is_under_one_turn() -> None:
    preset = load_presets()["gemma3_27b"].values
    dim, base, length = preset["head_dim"], preset["rope_local_base_freq"], preset["max_position_embeddings"]
    turns = length * base ** (-(dim - 2) / dim) / (2 * np.pi)  # the slowest sliding pair, from the paper's θ_i
    assert turns > 1
    check = VIEW.checks["errata_cycle"](values(model="gemma3_27b", layer="sliding_attention"))
    assert check.key == "extension.check_errata_none" and check.passed
    assert check.fmt["trained"] == f"{turns:.3f}"
    check = VIEW.checks["errata_cycle"](values(model="gemma3_27b", layer="full_attention"))
    assert check.key == "extension.check_errata_cycle" and check.passed  # base 10⁶: under one turn, interpolated


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_phi3s_layers_turn_with_its_published_short_factors_and_say_longrope(lang: str) -> None:
    # Phi-3-mini-128k's LongRoPE factors are in its preset: read without a sequence length its layers use the short
    # factors, θᵢ = 10⁴^(−2i/96) / short_factorᵢ (computed here from the formula), and the legend names longrope s = 32
    short = np.asarray(load_presets()["phi3_mini_128k"].values["rope_scaling"]["short_factor"])
    (layer,) = {layer.rope_type: layer for layer in preset_layers("phi3_mini_128k")}.values()
    assert np.allclose(layer.frequencies.inv_freq, 10_000.0 ** (-np.arange(0, 96, 2) / 96) / short)
    fig = TODAY.figures["layers"](today_values(model="phi3_mini_128k"), lang)
    names = [trace.name.replace("<br>", " " if lang == "en" else "") for trace in fig.data if trace.name]
    assert any("longrope s = 32" in name for name in names)
