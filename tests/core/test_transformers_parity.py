r"""posenc_core agrees with Hugging Face ``transformers`` (a real, independently maintained peer).

What is compared, and against which transformers code (5.x):

* RoPE frequencies: ``modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type](config, seq_len=...)`` and, for
  ``rope_type="default"``, the model's ``RotaryEmbedding.compute_default_rope_parameters`` — against
  ``posenc_core.rope_frequencies`` (arguments read off the standardised config), against
  ``posenc_core.rope_frequencies_from_config`` on the config.json dict a user would paste, and on
  ``config.to_dict()`` (what transformers 5 writes back out). Also the frequencies a live
  ``LlamaRotaryEmbedding`` switches to at run time for "dynamic" and "longrope", which pins down what
  ``seq_len`` means (max position + 1).
* RoPE rotation: Llama's ``apply_rotary_pos_emb`` / ``rotate_half`` (half pairing), GPT-NeoX's partial-rotary
  version and GPT-J's ``rotate_every_two`` (interleaved pairing), in float64, plus one end-to-end float32 run.
* T5 buckets: ``T5Attention._relative_position_bucket`` (exact integers) and ``T5Attention.compute_bias``.
* ALiBi: BLOOM's ``_get_alibi_slopes`` and ``build_alibi_tensor``.
* Sinusoidal tables: DistilBERT (interleaved) and Marian (concatenated).

Tolerances. transformers computes ``inv_freq`` in float32 (``torch.arange(...).float()``, ``base ** (...)``),
so frequencies agree to float32 precision only: the exponent 2i/d is rounded to float32 and ``base ** x``
amplifies that by ln(base) ≈ 9–14, giving relative differences up to ~5e-7 for the bases used here. We
compare inv_freq with ``rtol=2e-6`` (float32 eps is 1.2e-7). ``attention_factor`` is plain Python float64 on
both sides, so it is compared to 1e-12. Bucket indices are integers and must be identical.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
import transformers
from transformers import (
    DeepseekV3Config,
    Gemma3TextConfig,
    GPTJConfig,
    GPTNeoXConfig,
    LlamaConfig,
    Phi3Config,
    T5Config,
)
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.bloom.modeling_bloom import _get_alibi_slopes, build_alibi_tensor
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3RotaryEmbedding
from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings
from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding
from transformers.models.gpt_neox.modeling_gpt_neox import GPTNeoXRotaryEmbedding
from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb as neox_apply_rotary_pos_emb
from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply_rotary_pos_emb
from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply_rotary_pos_emb
from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding
from transformers.models.phi3.modeling_phi3 import Phi3RotaryEmbedding
from transformers.models.t5.modeling_t5 import T5Attention

import posenc_core as pc

INV_FREQ_RTOL = 2e-6  # transformers' float32 inv_freq vs our float64 (see module docstring)
FACTOR_REL = 1e-12  # attention_factor: Python floats on both sides
# rope types transformers registers that are not part of posenc_core's contract (docs/design.md):
# "proportional" is Gemma-4's zero-padded partial RoPE, not a context-extension method.
NOT_IN_CONTRACT = {"proportional"}

FAMILIES = {
    "llama": (LlamaConfig, LlamaRotaryEmbedding),
    "gpt_neox": (GPTNeoXConfig, GPTNeoXRotaryEmbedding),
    "phi3": (Phi3Config, Phi3RotaryEmbedding),
    "deepseek_v3": (DeepseekV3Config, DeepseekV3RotaryEmbedding),
}

_RNG = np.random.default_rng(1234)
SHORT32 = [round(float(v), 6) for v in _RNG.uniform(1.0, 1.3, size=32)]
LONG32 = [round(float(v), 6) for v in _RNG.uniform(1.0, 50.0, size=32)]
SHORT48 = [round(float(v), 6) for v in _RNG.uniform(1.0, 1.1, size=48)]
LONG48 = [round(float(v), 6) for v in _RNG.uniform(1.0, 60.0, size=48)]

# (id, family, config.json as a user would paste it, seq_len)
ROPE_CASES = [
    (
        "default-qwen3-like-head-dim",
        "llama",
        {
            "hidden_size": 2048,
            "num_attention_heads": 32,
            "head_dim": 128,
            "max_position_embeddings": 40960,
            "rope_theta": 1000000.0,
        },
        None,
    ),
    (
        "default-rope-parameters",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 16,
            "max_position_embeddings": 4096,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        },
        None,
    ),
    (
        "default-no-theta",
        "llama",
        {"hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 2048},
        None,
    ),
    (
        "default-pythia-rotary-pct",
        "gpt_neox",
        {
            "hidden_size": 512,
            "num_attention_heads": 8,
            "max_position_embeddings": 2048,
            "rotary_pct": 0.25,
            "rotary_emb_base": 10000,
        },
        None,
    ),
    (
        "default-neox-half-base-20000",
        "gpt_neox",
        {
            "hidden_size": 256,
            "num_attention_heads": 4,
            "max_position_embeddings": 2048,
            "rotary_pct": 0.5,
            "rotary_emb_base": 20000,
        },
        None,
    ),
    (
        "default-mistral-rope-scaling-null",
        "llama",
        {
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "max_position_embeddings": 32768,
            "rope_theta": 1000000.0,
            "rope_scaling": None,
        },
        None,
    ),
    (
        "dynamic-phi2-partial-rotary",
        "llama",
        {
            "hidden_size": 2560,
            "num_attention_heads": 32,
            "partial_rotary_factor": 0.4,
            "max_position_embeddings": 2048,
            "rope_theta": 10000.0,
            "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
        },
        5000,
    ),
    (
        "linear-legacy-type",
        "llama",
        {
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "max_position_embeddings": 8192,
            "rope_theta": 10000.0,
            "rope_scaling": {"type": "linear", "factor": 2.0},
        },
        None,
    ),
    (
        "linear-rope-parameters",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 16384,
            "rope_parameters": {"rope_type": "linear", "factor": 4.0, "rope_theta": 500000.0},
        },
        None,
    ),
    (
        "dynamic-init",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "rope_scaling": {"type": "dynamic", "factor": 2.0},
        },
        None,
    ),
    (
        "dynamic-short",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "rope_scaling": {"type": "dynamic", "factor": 2.0},
        },
        1000,
    ),
    (
        "dynamic-at-max",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "rope_scaling": {"type": "dynamic", "factor": 2.0},
        },
        4096,
    ),
    (
        "dynamic-long",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
        },
        10000,
    ),
    (
        "dynamic-long-theta5e5",
        "llama",
        {
            "hidden_size": 512,
            "num_attention_heads": 8,
            "max_position_embeddings": 2048,
            "rope_theta": 500000.0,
            "rope_scaling": {"rope_type": "dynamic", "factor": 8.0},
        },
        40000,
    ),
    (
        "yarn-qwen2.5-legacy",
        "llama",
        {
            "hidden_size": 3584,
            "num_attention_heads": 28,
            "max_position_embeddings": 32768,
            "rope_theta": 1000000.0,
            "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
        },
        None,
    ),
    (
        "yarn-d128-s8",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 32768,
            "rope_parameters": {
                "rope_type": "yarn",
                "factor": 8.0,
                "original_max_position_embeddings": 4096,
                "rope_theta": 10000.0,
            },
        },
        None,
    ),
    (
        "yarn-deepseek-mscale",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 16,
            "head_dim": 64,
            "max_position_embeddings": 163840,
            "rope_theta": 10000,
            "rope_scaling": {
                "type": "yarn",
                "factor": 40,
                "original_max_position_embeddings": 4096,
                "beta_fast": 32,
                "beta_slow": 1,
                "mscale": 1.0,
                "mscale_all_dim": 0.707,
            },
        },
        None,
    ),
    (
        "yarn-deepseek-v3-mscale-equal",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 16,
            "head_dim": 64,
            "max_position_embeddings": 163840,
            "rope_theta": 10000,
            "rope_scaling": {
                "type": "yarn",
                "factor": 40,
                "original_max_position_embeddings": 4096,
                "beta_fast": 32,
                "beta_slow": 1,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
            },
        },
        None,
    ),
    (
        "yarn-gpt-oss-no-truncate",
        "llama",
        {
            "hidden_size": 2880,
            "num_attention_heads": 64,
            "head_dim": 64,
            "max_position_embeddings": 131072,
            "rope_theta": 150000,
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 32.0,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "truncate": False,
                "original_max_position_embeddings": 4096,
            },
        },
        None,
    ),
    (
        "yarn-explicit-attention-factor",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 32768,
            "rope_theta": 10000.0,
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 8.0,
                "original_max_position_embeddings": 4096,
                "attention_factor": 0.8,
            },
        },
        None,
    ),
    (
        "yarn-betas",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 32768,
            "rope_theta": 1000000.0,
            "rope_scaling": {
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 8192,
                "beta_fast": 16.0,
                "beta_slow": 2.0,
            },
        },
        None,
    ),
    (
        "yarn-high-clamped-small-base",
        "llama",
        {
            "hidden_size": 32,
            "num_attention_heads": 4,
            "max_position_embeddings": 4000,
            "rope_theta": 10.0,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1000},
        },
        None,
    ),
    (
        "yarn-original-from-max-position",
        "llama",
        {
            "hidden_size": 512,
            "num_attention_heads": 8,
            "max_position_embeddings": 8192,
            "rope_theta": 10000.0,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0},
        },
        None,
    ),
    (
        "yarn-partial-rotary",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 8192,
            "rope_theta": 10000.0,
            "partial_rotary_factor": 0.5,
            "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048},
        },
        None,
    ),
    (
        "llama3.1-8b",
        "llama",
        {
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "max_position_embeddings": 131072,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
        },
        None,
    ),
    (
        "llama3.2-1b",
        "llama",
        {
            "hidden_size": 2048,
            "num_attention_heads": 32,
            "head_dim": 64,
            "max_position_embeddings": 131072,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "factor": 32.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
        },
        None,
    ),
    (
        "llama3-llama4-scout-equal-bands",
        "llama",
        {
            "hidden_size": 5120,
            "num_attention_heads": 40,
            "head_dim": 128,
            "max_position_embeddings": 10485760,
            "rope_theta": 500000.0,
            "rope_scaling": {
                "factor": 16.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 1.0,
                "original_max_position_embeddings": 8192,
                "rope_type": "llama3",
            },
        },
        None,
    ),
    (
        "llama3-other-bands",
        "llama",
        {
            "hidden_size": 1024,
            "num_attention_heads": 8,
            "max_position_embeddings": 8192,
            "rope_theta": 10000.0,
            "rope_parameters": {
                "rope_type": "llama3",
                "factor": 4.0,
                "low_freq_factor": 2.0,
                "high_freq_factor": 8.0,
                "original_max_position_embeddings": 2048,
                "rope_theta": 10000.0,
            },
        },
        None,
    ),
    (
        "longrope-short-init",
        "llama",
        {
            "hidden_size": 256,
            "num_attention_heads": 4,
            "max_position_embeddings": 65536,
            "rope_theta": 10000.0,
            "rope_scaling": {
                "rope_type": "longrope",
                "factor": 16.0,
                "original_max_position_embeddings": 4096,
                "short_factor": SHORT32,
                "long_factor": LONG32,
            },
        },
        None,
    ),
    (
        "longrope-short-at-original",
        "llama",
        {
            "hidden_size": 256,
            "num_attention_heads": 4,
            "max_position_embeddings": 65536,
            "rope_theta": 10000.0,
            "rope_scaling": {
                "rope_type": "longrope",
                "factor": 16.0,
                "original_max_position_embeddings": 4096,
                "short_factor": SHORT32,
                "long_factor": LONG32,
            },
        },
        4096,
    ),
    (
        "longrope-long-past-original",
        "llama",
        {
            "hidden_size": 256,
            "num_attention_heads": 4,
            "max_position_embeddings": 65536,
            "rope_theta": 10000.0,
            "rope_scaling": {
                "rope_type": "longrope",
                "factor": 16.0,
                "original_max_position_embeddings": 4096,
                "short_factor": SHORT32,
                "long_factor": LONG32,
            },
        },
        4097,
    ),
    (
        "longrope-explicit-attention-factor",
        "llama",
        {
            "hidden_size": 256,
            "num_attention_heads": 4,
            "max_position_embeddings": 65536,
            "rope_theta": 10000.0,
            "rope_scaling": {
                "rope_type": "longrope",
                "factor": 16.0,
                "original_max_position_embeddings": 4096,
                "attention_factor": 1.25,
                "short_factor": SHORT32,
                "long_factor": LONG32,
            },
        },
        20000,
    ),
    (
        "longrope-phi3-mini-128k-short",
        "phi3",
        {
            "hidden_size": 3072,
            "num_attention_heads": 32,
            "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "rope_scaling": {"type": "longrope", "short_factor": SHORT48, "long_factor": LONG48},
        },
        None,
    ),
    (
        "longrope-phi3-mini-128k-long",
        "phi3",
        {
            "hidden_size": 3072,
            "num_attention_heads": 32,
            "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "rope_scaling": {"type": "longrope", "short_factor": SHORT48, "long_factor": LONG48},
        },
        8192,
    ),
    (
        "longrope-phi3-top-level-original-wins",
        "phi3",
        {
            "hidden_size": 3072,
            "num_attention_heads": 32,
            "max_position_embeddings": 131072,
            "original_max_position_embeddings": 4096,
            "rope_theta": 10000.0,
            "rope_scaling": {
                "type": "longrope",
                "short_factor": SHORT48,
                "long_factor": LONG48,
                "original_max_position_embeddings": 2048,
            },
        },
        3000,
    ),
    (
        "yarn-deepseek-v3-qk-rope-head-dim",
        "deepseek_v3",
        {
            "hidden_size": 7168,
            "num_attention_heads": 128,
            "qk_rope_head_dim": 64,
            "qk_nope_head_dim": 128,
            "v_head_dim": 128,
            "max_position_embeddings": 163840,
            "rope_theta": 10000,
            "rope_scaling": {
                "beta_fast": 32,
                "beta_slow": 1,
                "factor": 40,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
                "original_max_position_embeddings": 4096,
                "type": "yarn",
            },
        },
        None,
    ),
]
CASE_IDS = [case[0] for case in ROPE_CASES]
CASE_ARGS = [case[1:] for case in ROPE_CASES]


def hf_config(family: str, config_json: dict):
    config_class, _ = FAMILIES[family]
    return config_class(**copy.deepcopy(config_json))  # transformers mutates nested dicts it is given


def hf_rope(family: str, config, seq_len):
    """(inv_freq float64 array, attention_factor) exactly as the model's rotary embedding initialises them."""
    _, rotary_class = FAMILIES[family]
    rope_type = config.rope_parameters["rope_type"]
    if rope_type == "default":
        fn = rotary_class.compute_default_rope_parameters
    else:
        fn = ROPE_INIT_FUNCTIONS[rope_type]
    inv_freq, attention_factor = fn(config, seq_len=seq_len)
    return inv_freq.double().numpy(), float(attention_factor)


def assert_same_frequencies(got, want_inv, want_factor):
    assert isinstance(got, pc.RopeFrequencies)
    got_inv = np.asarray(got.inv_freq)
    assert got_inv.shape == want_inv.shape
    np.testing.assert_allclose(got_inv, want_inv, rtol=INV_FREQ_RTOL, atol=0)
    assert got.attention_factor == pytest.approx(want_factor, rel=FACTOR_REL, abs=0)


def test_transformers_is_the_version_these_parity_cases_were_written_against():
    assert int(transformers.__version__.split(".")[0]) >= 5


def test_parity_cases_cover_every_transformers_rope_type_in_the_contract():
    hf_types = (set(ROPE_INIT_FUNCTIONS) | {"default"}) - NOT_IN_CONTRACT
    assert hf_types <= set(pc.ROPE_TYPES)
    covered = {hf_config(family, cfg).rope_parameters["rope_type"] for family, cfg, _ in CASE_ARGS}
    assert covered == hf_types


@pytest.mark.parametrize(("family", "config_json", "seq_len"), CASE_ARGS, ids=CASE_IDS)
def test_rope_frequencies_from_pasted_config_json_match_transformers(family, config_json, seq_len):
    want_inv, want_factor = hf_rope(family, hf_config(family, config_json), seq_len)
    got = pc.rope_frequencies_from_config(copy.deepcopy(config_json), seq_len=seq_len)
    assert_same_frequencies(got, want_inv, want_factor)


@pytest.mark.parametrize(("family", "config_json", "seq_len"), CASE_ARGS, ids=CASE_IDS)
def test_rope_frequencies_from_transformers_to_dict_match_transformers(family, config_json, seq_len):
    config = hf_config(family, config_json)
    want_inv, want_factor = hf_rope(family, config, seq_len)
    got = pc.rope_frequencies_from_config(config.to_dict(), seq_len=seq_len)
    assert_same_frequencies(got, want_inv, want_factor)


@pytest.mark.parametrize(("family", "config_json", "seq_len"), CASE_ARGS, ids=CASE_IDS)
def test_rope_frequencies_with_explicit_arguments_match_transformers(family, config_json, seq_len):
    config = hf_config(family, config_json)
    want_inv, want_factor = hf_rope(family, config, seq_len)
    params = dict(config.rope_parameters)
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    scaling = {k: v for k, v in params.items() if k not in ("rope_theta", "partial_rotary_factor")}
    got = pc.rope_frequencies(
        head_dim,
        base=float(params["rope_theta"]),
        rope_scaling=scaling,
        max_position_embeddings=config.max_position_embeddings,
        seq_len=seq_len,
        partial_rotary_factor=float(params.get("partial_rotary_factor", 1.0)),
    )
    assert_same_frequencies(got, want_inv, want_factor)


DYNAMIC = {
    "hidden_size": 512,
    "num_attention_heads": 8,
    "max_position_embeddings": 2048,
    "rope_theta": 10000.0,
    "rope_scaling": {"rope_type": "dynamic", "factor": 4.0},
}
LONGROPE = {
    "hidden_size": 256,
    "num_attention_heads": 4,
    "max_position_embeddings": 65536,
    "rope_theta": 10000.0,
    "rope_scaling": {
        "rope_type": "longrope",
        "factor": 16.0,
        "original_max_position_embeddings": 4096,
        "short_factor": SHORT32,
        "long_factor": LONG32,
    },
}


@pytest.mark.parametrize(
    ("config_json", "last_position"),
    [
        (DYNAMIC, 100),
        (DYNAMIC, 2047),
        (DYNAMIC, 2048),
        (DYNAMIC, 6000),
        (LONGROPE, 4095),
        (LONGROPE, 4096),
        (LONGROPE, 9000),
    ],
)
def test_runtime_frequencies_of_llama_rotary_embedding_match_seq_len_as_last_position_plus_one(
    config_json, last_position
):
    """transformers' dynamic / longrope update runs with seq_len = max(position_ids) + 1."""
    config = hf_config("llama", config_json)
    rotary = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, 1, 2, config.hidden_size // config.num_attention_heads)
    rotary(x, torch.tensor([[0, last_position]]))
    got = pc.rope_frequencies_from_config(copy.deepcopy(config_json), seq_len=last_position + 1)
    np.testing.assert_allclose(got.inv_freq, rotary.inv_freq.double().numpy(), rtol=INV_FREQ_RTOL, atol=0)
    assert got.attention_factor == pytest.approx(float(rotary.attention_scaling), rel=FACTOR_REL)


GEMMA3 = {
    "hidden_size": 640,
    "num_attention_heads": 4,
    "head_dim": 256,
    "max_position_embeddings": 32768,
    "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
}


@pytest.mark.parametrize("layer_type", ["full_attention", "sliding_attention"])
def test_rope_frequencies_per_layer_type_match_transformers_gemma3(layer_type):
    """transformers 5 nests rope_parameters by layer type (Gemma 3: linear ×8 global, plain 10⁴ local)."""
    config = Gemma3TextConfig(**copy.deepcopy(GEMMA3))
    rope_type = config.rope_parameters[layer_type]["rope_type"]
    if rope_type == "default":
        fn = Gemma3RotaryEmbedding.compute_default_rope_parameters
    else:
        fn = ROPE_INIT_FUNCTIONS[rope_type]
    want_inv, want_factor = fn(config, layer_type=layer_type)
    got = pc.rope_frequencies_from_config(config.to_dict(), layer_type=layer_type)
    assert_same_frequencies(got, want_inv.double().numpy(), float(want_factor))


@pytest.mark.parametrize("source", ["config.json", "to_dict"])
def test_rope_frequencies_from_gpt_j_config_match_its_sinusoidal_positions(source):
    """GPT-J names its sizes n_embd / n_head and rotates only the first rotary_dim dims of each head.

    Its angle table is cat(sin(p·θ), cos(p·θ)) from ``create_sinusoidal_positions``; row p = 1 gives θ back.
    """
    config_json = {"n_embd": 256, "n_head": 4, "rotary_dim": 16, "n_positions": 2048}
    config = GPTJConfig(**copy.deepcopy(config_json))
    table = create_sinusoidal_positions(2, config.rotary_dim).double()
    half = config.rotary_dim // 2
    want_inv = torch.atan2(table[1, :half], table[1, half:]).numpy()
    config_dict = config_json if source == "config.json" else config.to_dict()
    got = pc.rope_frequencies_from_config(copy.deepcopy(config_dict))
    assert_same_frequencies(got, want_inv, 1.0)


# ----------------------------------------------------------------------------------- RoPE rotation


def _inv_freq_torch(dim: int, base: float) -> torch.Tensor:
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))


@pytest.mark.parametrize("attention_factor", [1.0, 1.2079441541679836])
@pytest.mark.parametrize(("heads", "length", "dim"), [(3, 11, 16), (1, 1, 2), (2, 70, 64)])
def test_apply_rope_half_equals_llama_apply_rotary_pos_emb(attention_factor, heads, length, dim):
    gen = torch.Generator().manual_seed(0)
    batch = 2
    q = torch.randn(batch, heads, length, dim, dtype=torch.float64, generator=gen)
    k = torch.randn(batch, heads, length, dim, dtype=torch.float64, generator=gen)
    position_ids = torch.stack([torch.arange(length), 37 + torch.arange(length)])  # (B, L), distinct per batch
    inv = _inv_freq_torch(dim, 10000.0)
    freqs = position_ids[..., None].double() * inv  # (B, L, d/2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * attention_factor, emb.sin() * attention_factor
    q_hf, k_hf = llama_apply_rotary_pos_emb(q, k, cos, sin)
    for b in range(batch):
        pos = position_ids[b].double().numpy()
        for x, want in ((q, q_hf), (k, k_hf)):
            got = pc.apply_rope(x[b].numpy(), pos, inv.numpy(), pairing="half", attention_factor=attention_factor)
            np.testing.assert_allclose(got, want[b].numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("rotary_pct", [0.25, 0.5, 1.0])
def test_apply_rope_partial_half_equals_gpt_neox_apply_rotary_pos_emb(rotary_pct):
    gen = torch.Generator().manual_seed(1)
    head_dim, length = 32, 9
    rot = int(head_dim * rotary_pct)
    q = torch.randn(1, 4, length, head_dim, dtype=torch.float64, generator=gen)
    inv = _inv_freq_torch(rot, 10000.0)
    freqs = torch.arange(length, dtype=torch.float64)[None, :, None] * inv
    emb = torch.cat((freqs, freqs), dim=-1)
    q_hf, _ = neox_apply_rotary_pos_emb(q, q, emb.cos(), emb.sin())
    got = pc.apply_rope(q[0].numpy(), np.arange(length), inv.numpy(), pairing="half")
    np.testing.assert_allclose(got, q_hf[0].numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("length", "dim"), [(7, 8), (66, 64)])
def test_apply_rope_interleaved_equals_gpt_j_rotate_every_two(length, dim):
    gen = torch.Generator().manual_seed(2)
    heads = 3
    x = torch.randn(1, length, heads, dim, dtype=torch.float64, generator=gen)  # GPT-J layout (B, L, H, d)
    inv = _inv_freq_torch(dim, 10000.0)
    angles = torch.arange(length, dtype=torch.float64)[None, :, None] * inv  # (1, L, d/2)
    x_hf = gptj_apply_rotary_pos_emb(x, angles.sin(), angles.cos())
    got = pc.apply_rope(x[0].permute(1, 0, 2).numpy(), np.arange(length), inv.numpy(), pairing="interleaved")
    np.testing.assert_allclose(got, x_hf[0].permute(1, 0, 2).numpy(), rtol=0, atol=1e-12)


def test_llama_yarn_attention_end_to_end_float32_matches_core():
    """LlamaRotaryEmbedding (float32 cos/sin incl. attention_scaling) + apply_rotary_pos_emb vs the core.

    float32 angles p·θ for p < 64 carry absolute errors ~64·6e-8, so the comparison is at 1e-4.
    """
    config_json = {
        "hidden_size": 512,
        "num_attention_heads": 4,
        "max_position_embeddings": 32768,
        "rope_parameters": {
            "rope_type": "yarn",
            "factor": 8.0,
            "original_max_position_embeddings": 4096,
            "rope_theta": 10000.0,
        },
    }
    config = hf_config("llama", config_json)
    rotary = LlamaRotaryEmbedding(config)
    gen = torch.Generator().manual_seed(3)
    length = 64
    q = torch.randn(1, 4, length, 128, generator=gen)
    k = torch.randn(1, 4, length, 128, generator=gen)
    cos, sin = rotary(q, torch.arange(length)[None])
    q_hf, k_hf = llama_apply_rotary_pos_emb(q, k, cos, sin)
    freqs = pc.rope_frequencies_from_config(copy.deepcopy(config_json))
    for x, want in ((q, q_hf), (k, k_hf)):
        got = pc.apply_rope(
            x[0].double().numpy(),
            np.arange(length),
            freqs.inv_freq,
            pairing="half",
            attention_factor=freqs.attention_factor,
        )
        np.testing.assert_allclose(got, want[0].double().numpy(), rtol=0, atol=1e-4)
    logits_hf = (q_hf[0] @ k_hf[0].transpose(-1, -2)).double().numpy() / math.sqrt(128)
    logits = pc.rope_scores(
        q[0].double().numpy(),
        k[0].double().numpy(),
        freqs.inv_freq,
        query_positions=np.arange(length),
        key_positions=np.arange(length),
        attention_factor=freqs.attention_factor,
    )
    np.testing.assert_allclose(logits, logits_hf, rtol=0, atol=1e-3)


# ---------------------------------------------------------------------------------------------- T5

T5_CONFIGS = [
    (True, 32, 128),  # T5 encoder
    (False, 32, 128),  # T5 decoder
    (True, 64, 256),
    (False, 16, 64),
    (True, 8, 20),
    (False, 8, 20),
    (True, 128, 1024),
    (True, 10, 17),
    (False, 12, 40),
    (True, 6, 6),
]


@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), T5_CONFIGS)
def test_t5_bucket_equals_transformers_relative_position_bucket_exactly(bidirectional, num_buckets, max_distance):
    rel = np.concatenate([np.arange(-3000, 3001), [-(10**6), 10**6, -(2**31 - 1), 2**31 - 1, -65537, 65537]])
    want = T5Attention._relative_position_bucket(
        torch.from_numpy(rel), bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    ).numpy()
    got = pc.t5_relative_bucket(rel, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("query_length", "key_length"), [(1, 1), (6, 6), (3, 40), (1, 300), (20, 150)])
@pytest.mark.parametrize(("bidirectional", "num_buckets", "max_distance"), T5_CONFIGS[:4])
def test_t5_bucket_matrix_equals_t5_compute_bias_with_cached_queries(
    query_length, key_length, bidirectional, num_buckets, max_distance
):
    """compute_bias with an embedding whose value is its bucket id returns the bucket matrix itself."""
    config = T5Config(
        d_model=8,
        d_kv=4,
        num_heads=1,
        relative_attention_num_buckets=num_buckets,
        relative_attention_max_distance=max_distance,
        is_decoder=not bidirectional,
    )
    attention = T5Attention(config, has_relative_attention_bias=True, layer_idx=0)
    with torch.no_grad():
        attention.relative_attention_bias.weight[:, 0] = torch.arange(num_buckets, dtype=torch.float32)
        want = attention.compute_bias(query_length, key_length, past_seen_tokens=key_length - query_length)
    want = want[0, 0].round().long().numpy()
    got = pc.t5_bucket_matrix(
        query_length,
        key_length,
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    )
    np.testing.assert_array_equal(got, want)


# ------------------------------------------------------------------------------------------- ALiBi

ALIBI_RTOL = 1e-6  # BLOOM raises a float32 base to integer powers: relative error grows to ~5e-7 at 64 heads


@pytest.mark.parametrize("n_heads", range(1, 65))
def test_alibi_slopes_equal_bloom_slopes(n_heads):
    want = _get_alibi_slopes(n_heads, torch.device("cpu")).double().numpy()
    np.testing.assert_allclose(pc.alibi_slopes(n_heads), want, rtol=ALIBI_RTOL, atol=0)


@pytest.mark.parametrize("n_heads", [1, 5, 12, 16, 30, 64])
def test_bloom_alibi_tensor_is_slope_times_key_position(n_heads):
    length = 19
    want = build_alibi_tensor(torch.ones(1, length, dtype=torch.long), n_heads, torch.float32)  # (H, 1, L)
    got = pc.alibi_slopes(n_heads)[:, None, None] * np.arange(length)[None, None, :]
    np.testing.assert_allclose(got, want.double().numpy(), rtol=ALIBI_RTOL, atol=0)


@pytest.mark.parametrize("n_heads", [1, 6, 12, 33])
def test_alibi_bias_and_bloom_key_only_bias_give_the_same_causal_softmax(n_heads):
    """−m·(i − j) and BLOOM's +m·j differ by a per-row constant m·i, invisible to a causal softmax row."""
    length = 13
    rng = np.random.default_rng(n_heads)
    scores = rng.normal(size=(n_heads, length, length))
    bloom = build_alibi_tensor(torch.ones(1, length, dtype=torch.long), n_heads, torch.float32).double().numpy()
    future = np.triu(np.ones((length, length), dtype=bool), k=1)
    bloom_logits = np.where(future, -np.inf, scores + bloom)  # (H, 1, L) broadcast over query rows
    bloom_weights = np.exp(bloom_logits - bloom_logits.max(axis=-1, keepdims=True))
    bloom_weights /= bloom_weights.sum(axis=-1, keepdims=True)
    ours = pc.softmax(scores + pc.alibi_bias(n_heads, length, causal=True), axis=-1)
    np.testing.assert_allclose(ours, bloom_weights, rtol=0, atol=1e-6)


# -------------------------------------------------------------------------------------- sinusoidal

SINUSOID_ATOL = 2e-7  # both peers round a float64 table to float32


@pytest.mark.parametrize(("n_pos", "dim"), [(50, 32), (130, 64), (3, 2)])
def test_sinusoidal_interleaved_equals_distilbert_table(n_pos, dim):
    want = _create_sinusoidal_embeddings(n_pos, dim, torch.empty(n_pos, dim)).double().numpy()
    np.testing.assert_allclose(pc.sinusoidal(n_pos, dim, layout="interleaved"), want, rtol=0, atol=SINUSOID_ATOL)


@pytest.mark.parametrize(("n_pos", "dim"), [(50, 32), (130, 64), (3, 2)])
def test_sinusoidal_concat_equals_marian_table(n_pos, dim):
    want = MarianSinusoidalPositionalEmbedding(n_pos, dim).create_weight().double().numpy()
    np.testing.assert_allclose(pc.sinusoidal(n_pos, dim, layout="concat"), want, rtol=0, atol=SINUSOID_ATOL)


@pytest.mark.parametrize("seq_len", [None, 4096, 4097, 131072])
def test_phi3_mini_128k_preset_as_published_gives_transformers_longrope_frequencies(seq_len):
    r"""The preset bundles Phi-3-mini-128k-instruct's published 48 + 48 LongRoPE factors: transformers' own Phi3Config
    and ``_compute_longrope_parameters`` on that config must give the core's frequencies, short factors up to the
    original 4,096 tokens and long ones past it."""
    import json
    from pathlib import Path

    preset = json.loads((Path(__file__).parents[2] / "assets" / "presets" / "phi3_mini_128k.json").read_text())
    config_json = {name: entry["value"] for name, entry in preset["values"].items()}
    want_inv, want_factor = hf_rope("phi3", hf_config("phi3", config_json), seq_len)
    got = pc.rope_frequencies_from_config(copy.deepcopy(config_json), seq_len=seq_len)
    assert_same_frequencies(got, want_inv, want_factor)
    scaling = config_json["rope_scaling"]
    used = scaling["long_factor"] if seq_len is not None and seq_len > 4096 else scaling["short_factor"]
    plain = 1.0 / 10000.0 ** (np.arange(0, 96, 2) / 96)  # θ_i of the 96-dimensional head, written out
    np.testing.assert_allclose(got.inv_freq, plain / np.asarray(used), rtol=1e-12)
