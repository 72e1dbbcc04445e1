r"""Presets parse, carry a source for every value, and give the frequencies the formulas give; the paste box is safe."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from posenc_core import PosEncError, rope_frequencies_from_config
from posenc_core.rope_scaling import MAX_CONFIG_CHARS, parse_config_text
from posenc_ui import presets
from posenc_ui.presets import (
    PRESET_IDS,
    ConfigTextParam,
    load_presets,
    parse_preset,
    scaling_of,
    training_length,
    without_scaling,
)

#: Where a preset value may come from: the checkpoint on the Hugging Face hub, or (said so in its note) the pinned
#: transformers release's config defaults, which the checkpoint is loaded with where its config.json is silent.
CHECKPOINT = "https://huggingface.co/"
TRANSFORMERS_DEFAULTS = "https://github.com/huggingface/transformers/blob/v5.23.0/src/transformers/models/"
assert presets.TRANSFORMERS_DEFAULTS == TRANSFORMERS_DEFAULTS  # the pinned release (requirements.txt), nothing else


def theta(dim: int, base: float) -> np.ndarray:
    return np.array([base ** (-2.0 * i / dim) for i in range(dim // 2)])


@pytest.mark.parametrize("preset_id", PRESET_IDS)
def test_every_preset_parses_and_every_value_has_an_https_source(preset_id: str) -> None:
    preset = load_presets()[preset_id]
    assert preset.id == preset_id and preset.values
    assert set(preset.sources) == set(preset.values)
    assert preset.source.startswith(CHECKPOINT) and preset.source.endswith("config.json")
    assert all(src.startswith((CHECKPOINT, TRANSFORMERS_DEFAULTS)) for src in preset.sources.values())


@pytest.mark.parametrize("preset_id", PRESET_IDS)
def test_a_value_from_transformers_is_said_so_in_the_note(preset_id: str) -> None:
    preset = load_presets()[preset_id]
    from_defaults = [name for name, src in preset.sources.items() if src.startswith(TRANSFORMERS_DEFAULTS)]
    if from_defaults:
        assert "transformers" in preset.note and ("default" in preset.note or "loads" in preset.note)
        assert all(name in preset.note for name in from_defaults)  # each such field is named


def test_the_flagships_of_today_are_presets() -> None:
    names = {p.name for p in load_presets().values()}
    for family in (
        "Llama 4 Scout",
        "Gemma 3",
        "Gemma 4",
        "DeepSeek-V3",
        "Qwen3 8B",
        "Qwen3-VL",
        "gpt-oss",
        "Mistral Small 3",
        "SmolLM3",
    ):
        assert any(name.startswith(family) for name in names), family


def test_every_preset_records_its_layer_count() -> None:
    counts = {pid: p.values.get("num_hidden_layers", p.values.get("n_layer")) for pid, p in load_presets().items()}
    assert counts["gemma3_27b"] == 62 and counts["llama4_scout"] == 48 and counts["smollm3_3b"] == 36
    assert len(load_presets()["llama4_scout"].values["no_rope_layers"]) == 48
    assert len(load_presets()["gpt_oss_120b"].values["layer_types"]) == 36


@pytest.mark.parametrize(
    ("preset_id", "dim", "base"),
    [
        ("llama2_7b", 128, 1e4),
        ("codellama_7b", 128, 1e6),
        ("mistral_7b", 128, 1e4),
        ("gpt_neox_20b", 24, 1e4),
        ("phi3_mini_128k", 96, 1e4),
        ("deepseek_v3", 64, 1e4),
        ("qwen2_5_7b", 128, 1e6),
        ("llama3_1_8b", 128, 5e5),
    ],
)
def test_plain_frequencies_equal_the_formula(preset_id: str, dim: int, base: float) -> None:
    freqs = rope_frequencies_from_config(without_scaling(load_presets()[preset_id].config())).inv_freq
    assert np.allclose(freqs, theta(dim, base), rtol=1e-13, atol=0)


def test_llama31_keeps_fast_pairs_divides_slow_ones_by_8_and_blends_by_meta_formula() -> None:
    freqs = rope_frequencies_from_config(load_presets()["llama3_1_8b"].config()).inv_freq
    th = theta(128, 5e5)
    wavelength = 2 * math.pi / th
    assert freqs[0] == th[0] == 1.0 and freqs[-1] == pytest.approx(th[-1] / 8, rel=1e-13)
    i = int(np.flatnonzero((wavelength > 8192 / 4) & (wavelength < 8192))[0])
    smooth = (8192 / wavelength[i] - 1) / (4 - 1)
    assert freqs[i] == pytest.approx((1 - smooth) * th[i] / 8 + smooth * th[i], rel=1e-13)


def test_qwen_and_deepseek_yarn_attention_factors_and_ends() -> None:
    qwen = rope_frequencies_from_config(load_presets()["qwen2_5_7b"].config())
    assert qwen.attention_factor == pytest.approx(0.1 * math.log(4) + 1)
    assert qwen.inv_freq[0] == 1.0 and qwen.inv_freq[-1] == pytest.approx(theta(128, 1e6)[-1] / 4, rel=1e-13)
    deepseek = rope_frequencies_from_config(load_presets()["deepseek_v3"].config())
    assert deepseek.attention_factor == 1.0  # mscale = mscale_all_dim: the ratio is exactly 1
    assert deepseek.inv_freq.shape == (32,) and deepseek.inv_freq[-1] == pytest.approx(1e4 ** (-62 / 64) / 40)


def test_training_lengths_and_scalings() -> None:
    lengths = {pid: training_length(p.config()) for pid, p in load_presets().items()}
    assert lengths == {
        "llama2_7b": 4096,
        "codellama_7b": 16384,
        "llama3_1_8b": 8192,
        "mistral_7b": 32768,
        "qwen2_5_7b": 32768,
        "deepseek_v3": 4096,
        "phi3_mini_128k": 4096,
        "gpt_neox_20b": 2048,
        "llama4_scout": 8192,  # rope_scaling.original_max_position_embeddings
        "gemma3_27b": 131072,  # linear scaling records no original length: max_position_embeddings
        "gemma4_26b": 262144,
        "qwen3_8b": 40960,
        "qwen3_vl_8b": 262144,
        "gpt_oss_120b": 4096,  # YaRN from 4096
        "mistral_small_3_1": 131072,
        "smollm3_3b": 65536,
        "gpt2": 1024,  # n_positions: its learned table's rows
        "jamba_v0_1": 262144,
    }
    assert scaling_of(load_presets()["deepseek_v3"].config()) == ("yarn", 40.0)
    assert scaling_of(load_presets()["llama2_7b"].config()) == ("default", 1.0)


def test_phi3_bundles_its_48_short_and_48_long_longrope_factors() -> None:
    phi3 = load_presets()["phi3_mini_128k"]
    scaling = phi3.values["rope_scaling"]
    assert not phi3.missing and scaling["type"] == "longrope"
    assert len(scaling["short_factor"]) == len(scaling["long_factor"]) == 3072 // 32 // 2  # one per pair of d = 96
    # values quoted by independent copies of the published config.json (pairs 0, 17, 30 and 47)
    assert scaling["long_factor"][0] == 1.0700000524520874 and scaling["long_factor"][47] == 64.76000213623047
    assert scaling["long_factor"][17] == 19.809999465942383 and scaling["long_factor"][30] == 60.887386322021484
    assert scaling["short_factor"][0] == 1.1 and scaling["short_factor"][47] == 3.049999999999997
    assert scaling["short_factor"][30] == 2.0500000000000007
    assert (
        phi3.sources["rope_scaling"]
        == "https://huggingface.co/microsoft/Phi-3-mini-128k-instruct/blob/main/config.json"
    )
    assert scaling_of(phi3.config()) == ("longrope", 32.0)  # 131,072 / 4,096, transformers' rule


def test_malformed_preset_is_refused() -> None:
    good = json.loads((presets.PRESET_DIR / "llama2_7b.json").read_text())
    for broken in (
        {**good, "values": {}},
        {**good, "values": {"rope_theta": 10000.0}},
        {**good, "values": {"rope_theta": {"value": 1e4, "source": "file.txt"}}},
        [1, 2],
    ):
        with pytest.raises(PosEncError):
            parse_preset(broken)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ('{"rope_theta": 10000,}', "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"rope_theta": NaN}', "NaN"),
        ('{"a": ' * 9 + "1" + "}" * 9, "nests deeper"),
        ('{"a": ' + "[" * 50_000 + "]" * 50_000 + "}", "characters"),
        ('{"a": ' + "[" * 20_000 + "]" * 20_000 + "}", "nests deeper"),
        ('__import__("os").system("echo no")', "not valid JSON"),
    ],
)
def test_pasted_text_is_parsed_safely_or_refused_with_a_message(text: str, message: str) -> None:
    with pytest.raises(PosEncError, match=message):
        parse_config_text(text)


def test_size_cap_is_64_kb() -> None:
    assert MAX_CONFIG_CHARS == 65_536
    padded = json.dumps({"rope_theta": 10000.0, "pad": "x" * (MAX_CONFIG_CHARS - 40)})
    assert parse_config_text(padded)["rope_theta"] == 10000.0


def test_config_param_keeps_only_rope_fields_in_links_and_refuses_garbage() -> None:
    param = ConfigTextParam("config", "{}")
    full = json.dumps({"vocab_size": 32000, "rope_theta": 500000.0, "head_dim": 128})
    assert json.loads(param.encode(full)) == {"head_dim": 128, "rope_theta": 500000.0}
    value, problem = param.parse("🙃garbage", {})
    assert value == "{}" and problem is not None and problem.kind == "invalid"
    value, problem = param.parse(param.encode(full), {})
    assert problem is None and json.loads(value) == {"head_dim": 128, "rope_theta": 500000.0}


def test_page_7_offers_only_the_presets_whose_layers_rotate() -> None:
    r"""Page 7's figures all draw RoPE frequencies, so its picker leaves out GPT-2 (a learned table, Radford et al.
    2019) and Jamba v0.1 (attention without position, Lieber et al. 2024): offered there, each would end in a
    refusal. Page 9 draws both."""
    from posenc_ui.lessons.extension.view import VIEW as EXTENSION
    from posenc_ui.lessons.today.view import VIEW as TODAY
    from posenc_ui.presets import PRESET_IDS, rotating_preset_ids

    assert set(PRESET_IDS) - set(rotating_preset_ids()) == {"gpt2", "jamba_v0_1"}
    assert EXTENSION.param("model").options == rotating_preset_ids()
    assert TODAY.param("model").options == PRESET_IDS
