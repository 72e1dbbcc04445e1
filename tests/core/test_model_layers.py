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
from transformers import Gemma3TextConfig, Llama4TextConfig, SmolLM3Config
from transformers.models.llama4.modeling_llama4 import Llama4TextAttention
from transformers.models.ministral3.modeling_ministral3 import get_llama_4_attn_scale
from transformers.models.smollm3.modeling_smollm3 import SmolLM3Attention

import posenc_core as pc


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
    (code,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/model_layers.md", "exec"), {})
    said = [line[2:] for line in code.splitlines() if re.match(r"# \d", line)]
    assert out.getvalue().splitlines()[: len(said)] == said
