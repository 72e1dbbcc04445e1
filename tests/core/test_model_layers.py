r"""``model_layers``: a config.json read as a whole model, layer by layer, against what transformers builds from it.

The peers: transformers' config classes (their ``__post_init__`` derives ``layer_types`` and ``no_rope_layers`` from
the intervals, the way a checkpoint's model is built), the attention modules' own ``use_rope`` flags, and Mistral 3's
``get_llama_4_attn_scale``; the query temperature is also checked against a loop written from its formula.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import (
    Gemma2Config,
    Gemma3TextConfig,
    Gemma4TextConfig,
    Llama4TextConfig,
    Ministral3Config,
    SmolLM3Config,
)
from transformers.models.llama4.modeling_llama4 import Llama4TextAttention
from transformers.models.ministral3.modeling_ministral3 import get_llama_4_attn_scale
from transformers.models.smollm3.modeling_smollm3 import SmolLM3Attention

import posenc_core as pc
from posenc_core.rope_scaling.config import split_layer_types


def as_json(config) -> dict:
    """What a reader pastes: the config serialised by transformers itself."""
    return json.loads(config.to_json_string())


def test_gemma3_alternates_five_sliding_layers_with_one_global_layer():
    config = Gemma3TextConfig()
    layers = pc.model_layers(as_json(config))
    assert len(layers) == config.num_hidden_layers
    assert [layer.attention_type for layer in layers] == config.layer_types
    for layer in layers:
        sliding = layer.attention_type == "sliding_attention"
        assert layer.rotates
        assert layer.window == (config.sliding_window if sliding else None)
        assert layer.base == config.rope_parameters[layer.attention_type]["rope_theta"]
        assert layer.rotary_dim == config.head_dim
    kinds = pc.distinct_layer_types(layers)
    assert [(kind.index, kind.layer_type) for kind in kinds] == [(0, "sliding_attention"), (5, "full_attention")]


@pytest.mark.parametrize(
    ("config_class", "attention_class"), [(Llama4TextConfig, Llama4TextAttention), (SmolLM3Config, SmolLM3Attention)]
)
def test_nope_layers_are_the_layers_transformers_builds_without_rope(config_class, attention_class):
    config = config_class(num_hidden_layers=8, hidden_size=64, num_attention_heads=4, num_key_value_heads=2)
    layers = pc.model_layers(as_json(config))
    built = [bool(attention_class(config, index).use_rope) for index in range(config.num_hidden_layers)]
    assert [layer.rotates for layer in layers] == built == [True, True, True, False] * 2
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    for layer in layers:
        assert (layer.layer_type == "nope") == (not layer.rotates)
        assert (layer.frequencies is None) == (not layer.rotates)
        assert layer.rotary_dim == (head_dim if layer.rotates else 0)


def test_nope_layers_follow_the_interval_when_the_list_is_absent():
    config = {"num_hidden_layers": 12, "head_dim": 64, "no_rope_layer_interval": 3}
    rotates = [layer.rotates for layer in pc.model_layers(config)]
    assert rotates == [index % 3 != 2 for index in range(12)]


def test_llama4_rope_layers_attend_in_chunks_and_nope_layers_see_everything_with_a_temperature():
    config = Llama4TextConfig(num_hidden_layers=8, hidden_size=64, num_attention_heads=4, num_key_value_heads=2)
    layers = pc.model_layers(as_json(config))
    for layer in layers:
        if layer.rotates:
            assert (layer.attention_type, layer.window, layer.temperature) == (
                "chunked_attention",
                config.attention_chunk_size,
                None,
            )
        else:
            assert (layer.attention_type, layer.window) == ("full_attention", None)
            assert layer.temperature == pc.QueryTemperature(
                "attn_temperature_tuning", config.attn_scale, config.floor_scale, 1
            )
    assert len(pc.distinct_layer_types(layers)) == 2


def _llama4_temperature_loop(positions, *, attn_scale, floor_scale):
    """Llama 4's query scale, one position at a time: log(floor((p + 1) / floor_scale) + 1) · attn_scale + 1."""
    return [math.log(math.floor((p + 1) / floor_scale) + 1) * attn_scale + 1 for p in positions]


def test_llama4_query_temperature_equals_the_loop_written_from_its_formula():
    positions = [0, 1, 8190, 8191, 8192, 16382, 16383, 100_000, 10**7]
    temperature = pc.QueryTemperature("attn_temperature_tuning", 0.1, 8192, 1)
    want = _llama4_temperature_loop(positions, attn_scale=0.1, floor_scale=8192)
    np.testing.assert_allclose(pc.query_temperature(temperature, positions), want, rtol=1e-15, atol=0)
    assert temperature.at([8190, 8191])[0] == 1.0  # position 8191 is the first with ⌊(p + 1)/8192⌋ = 1
    assert temperature.at([8191])[0] == pytest.approx(1 + 0.1 * math.log(2), rel=1e-15)


def test_mistral3_query_temperature_equals_transformers_get_llama_4_attn_scale():
    config = {
        "num_hidden_layers": 2,
        "head_dim": 128,
        "max_position_embeddings": 262144,
        "rope_parameters": {
            "rope_type": "yarn",
            "rope_theta": 1000000.0,
            "factor": 16.0,
            "original_max_position_embeddings": 16384,
            "llama_4_scaling_beta": 0.1,
        },
    }
    layers = pc.model_layers(config)
    temperature = layers[0].temperature
    assert temperature == pc.QueryTemperature("llama_4_scaling_beta", 0.1, 16384, 0)
    positions = torch.tensor([[0, 1, 16383, 16384, 40000, 262143]])
    want = get_llama_4_attn_scale(positions, 0.1, 16384).double().numpy().ravel()  # (1, 1, L, 1)
    np.testing.assert_allclose(temperature.at(positions[0].numpy()), want, rtol=1e-6, atol=0)
    # the frequencies are the yarn ones without the temperature key
    plain = pc.rope_frequencies_from_config(
        {**config, "rope_parameters": {k: v for k, v in config["rope_parameters"].items() if "beta" not in k}}
    )
    np.testing.assert_array_equal(layers[0].frequencies.inv_freq, plain.inv_freq)


def test_a_config_split_by_layer_type_names_the_kinds_in_words_when_read_as_one():
    with pytest.raises(pc.PosEncError) as err:
        pc.rope_frequencies_from_config(as_json(Gemma3TextConfig()))
    assert err.value.code == "rope_per_layer_type"
    assert "sliding_attention" in err.value.fields["kinds"] and "full_attention" in err.value.fields["kinds"]


def test_a_config_without_a_layer_count_is_one_layer():
    (layer,) = pc.model_layers({"head_dim": 64, "rope_theta": 10000.0})
    assert (layer.index, layer.layer_type, layer.rotates, layer.rotary_dim) == (0, "full_attention", True, 64)


def test_a_vision_language_config_is_read_through_its_text_config():
    text = as_json(Gemma3TextConfig(num_hidden_layers=6))
    layers = pc.model_layers({"model_type": "gemma3", "text_config": text, "vision_config": {"hidden_size": 32}})
    assert [layer.attention_type for layer in layers] == text["layer_types"]


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"num_hidden_layers": 3, "head_dim": 8, "layer_types": ["full_attention"]}, "layer_types has 1 entries"),
        ({"num_hidden_layers": 2, "head_dim": 8, "no_rope_layers": [1, 2]}, "no_rope_layers[1]"),
        ({"num_hidden_layers": 10**6, "head_dim": 8}, "num_hidden_layers"),
    ],
)
def test_bad_layer_descriptions_are_refused_naming_the_field(config, words):
    with pytest.raises(pc.PosEncError, match=words.replace("[", r"\[").replace("]", r"\]")):
        pc.model_layers(config)


def test_the_per_layer_example_in_docs_runs_and_prints_what_it_says():
    text = (Path(__file__).resolve().parents[2] / "docs" / "model_layers.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 3
    for code in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "docs/model_layers.md", "exec"), {})
        said = [line[2:] for line in code.splitlines() if re.match(r"# [\d\[]", line)]
        assert out.getvalue().splitlines()[: len(said)] == said


LLAMA4_SCOUT_TEXT = {  # the shape of Llama-4-Scout's text_config: no layer_types, an empty no_rope_layers
    "model_type": "llama4_text",
    "num_hidden_layers": 48,
    "hidden_size": 5120,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 10485760,
    "rope_theta": 500000.0,
    "rope_scaling": {
        "rope_type": "llama3",
        "factor": 16.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
    },
    "no_rope_layers": [],
    "attention_chunk_size": 8192,
    "attn_temperature_tuning": True,
    "floor_scale": 8192,
    "attn_scale": 0.1,
}
# a checkpoint's config.json names its base; without one, transformers takes the config class's default_theta, which
# posenc does not know per family (it assumes RoFormer's 10⁴)
SMOLLM3 = {
    "model_type": "smollm3",
    "num_hidden_layers": 12,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "rope_theta": 2e6,
}
GEMMA3_TEXT = {  # the shape of gemma-3-4b-it's text_config before transformers 5: flat RoPE, a local base, a pattern
    "model_type": "gemma3_text",
    "num_hidden_layers": 34,
    "hidden_size": 2560,
    "num_attention_heads": 8,
    "head_dim": 256,
    "max_position_embeddings": 131072,
    "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "sliding_window": 1024,
    "sliding_window_pattern": 6,
}
GEMMA2 = {
    "model_type": "gemma2",
    "num_hidden_layers": 6,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "head_dim": 64,
    "rope_theta": 1e4,
}


@pytest.mark.parametrize(
    ("raw", "config_class"),
    [
        (LLAMA4_SCOUT_TEXT, Llama4TextConfig),
        (SMOLLM3, SmolLM3Config),
        (GEMMA3_TEXT, Gemma3TextConfig),
        (GEMMA2, Gemma2Config),
    ],
)
def test_a_config_json_without_the_derived_fields_reads_as_transformers_derives_them(raw, config_class):
    r"""A checkpoint's config.json leaves out what the config class derives (Llama 4: NoPE every 4th layer, chunked
    attention on the others; Gemma 3: a global layer every 6th, its own base and scaling); model_layers derives the
    same: the layer types, which layers rotate, and each layer type's frequencies against the config transformers
    derives (read by rope_frequencies_from_config, which test_transformers_families holds to the rotary buffers)."""
    config = config_class(**{k: v for k, v in raw.items() if k != "model_type"})
    layers = pc.model_layers(raw)
    flags = getattr(config, "no_rope_layers", None) or [1] * config.num_hidden_layers
    assert [layer.rotates for layer in layers] == [bool(flag) for flag in flags]
    assert [layer.attention_type for layer in layers] == config.layer_types
    derived = as_json(config)
    for layer in pc.distinct_layer_types(layers):
        if layer.rotates:
            split = layer.attention_type if split_layer_types(derived) else None
            want = pc.rope_frequencies_from_config(derived, layer_type=split)
            np.testing.assert_array_equal(layer.frequencies.inv_freq, want.inv_freq)


def test_ministral3_defaults_give_every_layer_the_query_temperature_its_attention_applies():
    config = Ministral3Config(num_hidden_layers=3)
    layers = pc.model_layers(as_json(config))
    rope = config.rope_parameters
    beta, length = rope["llama_4_scaling_beta"], rope["original_max_position_embeddings"]
    want = pc.QueryTemperature("llama_4_scaling_beta", beta, length, 0)
    assert [layer.temperature for layer in layers] == [want] * 3
    positions = torch.arange(0, 3 * want.length, 997)[None]
    scale = get_llama_4_attn_scale(positions, want.beta, want.length).double().numpy().ravel()
    np.testing.assert_allclose(layers[0].temperature.at(positions[0].numpy()), scale, rtol=1e-6, atol=0)


def test_gemma4_global_head_dim_is_its_full_attention_layers_head():
    r"""Gemma 4's config.json gives global_head_dim; Gemma4TextConfig moves it into per_layer_config for the
    full_attention layers, which then turn a quarter (proportional RoPE) of a 512-wide head."""
    raw = {k: v for k, v in as_json(Gemma4TextConfig(num_hidden_layers=6)).items() if k != "per_layer_config"}
    raw["global_head_dim"] = 512
    derived = Gemma4TextConfig(**{k: v for k, v in raw.items() if k not in ("model_type", "transformers_version")})
    layers = pc.model_layers(raw)
    assert [layer.head_dim for layer in layers] == [
        derived.per_layer_config[i].head_dim for i in range(derived.num_hidden_layers)
    ]
    assert {layer.rotary_dim for layer in layers if layer.attention_type == "full_attention"} == {128}


@pytest.mark.parametrize(
    ("config", "rotates"),
    [
        ({"model_type": "falcon", "num_hidden_layers": 2, "head_dim": 64, "alibi": True}, False),
        ({"model_type": "falcon", "num_hidden_layers": 2, "head_dim": 64, "alibi": False}, True),
        ({"model_type": "zamba2", "num_hidden_layers": 2, "head_dim": 64}, False),  # use_mem_rope False by default
        ({"model_type": "zamba2", "num_hidden_layers": 2, "head_dim": 64, "use_mem_rope": True}, True),
        ({"num_hidden_layers": 2, "head_dim": 64, "position_embedding_type": "nope"}, False),  # Granite hybrids
    ],
)
def test_models_that_turn_rope_off_in_a_flag_have_no_rotating_layer(config, rotates):
    r"""FalconConfig.rotary is ``not alibi``; Zamba2Attention rotates only with use_mem_rope; Granite hybrids build
    no rotary embedding unless position_embedding_type is "rope"."""
    assert {layer.rotates for layer in pc.model_layers(config)} == {rotates}


# --- the registries of layer and position kinds, and checkpoints in their own form ----------------------------------


def test_every_kind_names_a_registered_family_or_block():
    assert {kind.family for kind in pc.POSITION_KINDS.values()} - {None} <= set(pc.FAMILIES)
    from posenc_core.rope_scaling.layer_kinds import FAMILY_LAYOUTS, LAYER_TYPE_BLOCKS

    assert set(LAYER_TYPE_BLOCKS.values()) <= set(pc.BLOCK_KINDS)
    for layout in FAMILY_LAYOUTS.values():
        assert layout.position is None or layout.position in pc.POSITION_KINDS
        assert set(layout.blocks.values()) <= set(pc.BLOCK_KINDS)


#: Checkpoints' config.json fields as published (the reader must take them as transformers' config classes do).
GPT2 = {"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_positions": 1024}  # openai-community/gpt2
T5_SMALL = {  # google-t5/t5-small
    "model_type": "t5",
    "num_layers": 6,
    "d_model": 512,
    "d_kv": 64,
    "num_heads": 8,
    "relative_attention_num_buckets": 32,
}
BLOOM_560M = {"model_type": "bloom", "n_layer": 24, "hidden_size": 1024, "n_head": 16}  # bigscience/bloom-560m
NEMOTRON_H_8B = {  # nvidia/Nemotron-H-8B-Base-8K: one character a layer (M Mamba, * attention, - MLP)
    "model_type": "nemotron_h",
    "hybrid_override_pattern": "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
    "num_hidden_layers": 52,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "max_position_embeddings": 8192,
}


def test_gpt2_has_a_learned_table_of_1024_positions_and_no_rope():
    layers = pc.model_layers(GPT2)
    assert len(layers) == 12 and not any(layer.rotates for layer in layers)
    assert {(layer.block, layer.position, layer.positions, layer.head_dim) for layer in layers} == {
        ("attention", "learned_absolute", 1024, 768 // 12)
    }


def test_t5_and_bloom_are_a_bias_not_a_rotation():
    t5, bloom = pc.model_layers(T5_SMALL), pc.model_layers(BLOOM_560M)
    assert len(t5) == 6 and {(la.position, la.positions, la.head_dim) for la in t5} == {("relative_bias", 32, 64)}
    assert len(bloom) == 24 and {la.position for la in bloom} == {"alibi"} and not any(la.rotates for la in bloom)
    falcon_alibi = {"model_type": "falcon", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4}
    assert {la.position for la in pc.model_layers({**falcon_alibi, "alibi": True})} == {"alibi"}
    assert {la.position for la in pc.model_layers(falcon_alibi)} == {"rope"}  # FalconConfig: rotary unless alibi


def test_nemotron_h_reads_its_pattern_one_layer_a_character():
    pattern = NEMOTRON_H_8B["hybrid_override_pattern"]
    layers = pc.model_layers(NEMOTRON_H_8B)
    blocks = {"M": "recurrent", "*": "attention", "-": "mlp"}
    assert [layer.block for layer in layers] == [blocks[char] for char in pattern]
    attention = [layer for layer in layers if layer.block == "attention"]
    assert len(attention) == pattern.count("*") == 4 and {la.position for la in attention} == {"nope"}


def test_kimi_linear_reads_its_one_based_full_attention_layers():
    config = {
        "model_type": "kimi_linear",
        "num_hidden_layers": 8,
        "hidden_size": 256,
        "num_attention_heads": 4,
        "linear_attn_config": {"full_attn_layers": [4, 8], "kda_layers": [1, 2, 3, 5, 6, 7]},
    }
    layers = pc.model_layers(config)
    assert [layer.index for layer in layers if layer.block == "attention"] == [3, 7]  # 1-based 4 and 8
    assert {layer.position for layer in layers if layer.block == "attention"} == {"nope"}  # MLA without RoPE


def test_mllama_cross_attention_layers_carry_no_position():
    text = {"model_type": "mllama_text_model", "num_hidden_layers": 10, "hidden_size": 64, "num_attention_heads": 4}
    layers = pc.model_layers({"model_type": "mllama", "text_config": {**text, "cross_attention_layers": [3, 8]}})
    assert [layer.index for layer in layers if layer.block == "cross_attention"] == [3, 8]
    assert all(layer.rotates for layer in layers if layer.block == "attention")


def test_a_family_it_does_not_model_is_refused_with_a_sentence():
    with pytest.raises(pc.PosEncError, match="XLNet") as info:
        pc.model_layers({"model_type": "xlnet", "n_layer": 2, "d_model": 64, "n_head": 4})
    assert info.value.code == "not_modelled"


def test_gpt_neo_local_layers_attend_window_size_keys_and_global_ones_everything():
    # GPTNeoSelfAttention: a "local" layer removes tril(bias, -window_size), keeping i − window_size < j ≤ i
    from transformers import GPTNeoConfig

    config = GPTNeoConfig(num_layers=4, attention_types=[[["global", "local"], 2]], window_size=256)
    layers = pc.model_layers(as_json(config))
    assert [(layer.attention_type, layer.window) for layer in layers] == [
        ("full_attention", None),
        ("sliding_attention", 256),
    ] * 2
    raw = {k: v for k, v in as_json(config).items() if k != "attention_layers"}  # an older config.json
    assert [layer.window for layer in pc.model_layers(raw)] == [None, 256] * 2


def test_moshi_stores_a_sliding_window_its_mask_never_applies():
    # MoshiModel masks every layer with create_causal_mask; MoshiDecoderLayer.sliding_window is never read
    from transformers import MoshiConfig

    layers = pc.model_layers(as_json(MoshiConfig()))
    assert {(layer.attention_type, layer.window) for layer in layers} == {("full_attention", None)}


def test_inkling2_sliding_layers_read_sliding_window_size_and_its_global_layers_a_log_temperature():
    # Inkling2FullAttention: tau = 1 + alpha * ln(max(1, (p + 1)/n_floor)) on the non-sliding layers only
    from transformers import Inkling2TextConfig

    config = Inkling2TextConfig(num_hidden_layers=6, sliding_window_size=64, log_scaling_n_floor=100)
    layers = pc.model_layers(as_json(config))
    assert [layer.window for layer in layers] == [64] * 5 + [None]
    assert [layer.temperature for layer in layers[:5]] == [None] * 5
    temperature = layers[5].temperature
    assert temperature == pc.QueryTemperature("log_scaling_n_floor", config.log_scaling_alpha, 100, 1, "log")
    p = np.array([0, 98, 99, 1000, 10**6])
    want = [1 + config.log_scaling_alpha * math.log(max(1.0, (q + 1) / 100)) for q in p]
    np.testing.assert_allclose(temperature.at(p), want, rtol=1e-15, atol=0)


def test_beam_nope_layers_scale_their_queries_as_its_compute_attention_scaling():
    from transformers import BeamConfig
    from transformers.models.beam.modeling_beam import compute_attention_scaling

    layers = pc.model_layers(as_json(BeamConfig()))
    nope = [layer for layer in layers if not layer.rotates]
    assert nope and all(layer.temperature is not None for layer in nope)
    assert all(layer.temperature is None for layer in layers if layer.rotates)
    positions = torch.tensor([[0, 1, 2047, 4096, 100_000]])
    want = compute_attention_scaling(positions).flatten().numpy()  # float32
    np.testing.assert_allclose(nope[0].temperature.at(positions[0].numpy()), want, rtol=1e-6, atol=0)
