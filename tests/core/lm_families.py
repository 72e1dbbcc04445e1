r"""What the tests that build transformers' language models share: the families they enumerate (and those
transformers cannot build), how they find a model's decoder layers, and what kind of module mixes a layer's tokens.

``test_model_layers_transformers.py`` (each layer's block and position kind, on the meta device) and
``test_model_layers_windows.py`` (each layer's window and query temperature, from a tiny model run on the CPU) read
the same families the same way; this module is the one place that says how.
"""

from __future__ import annotations

import re

import torch
from transformers.models.auto import modeling_auto

_LAYER_LIST = re.compile(r"(^|\.)(layers|layer|h|blocks|block|attentions)$")
_RECURRENT = re.compile(
    r"Mamba|Mixer|Recurrent|Rglru|RgLru|Rwkv|RWKV|DeltaNet|DeltaAttention|LinearAttention|Lightning|LSTM|Lstm|Ssm"
)
_CONV = re.compile(r"ShortConv")
#: Module names of a model's vision / audio towers, which are not its decoder.
TOWER = re.compile(r"vision|audio|image|speech|depth|patcher|visual")


#: Families transformers itself cannot build from their default config (or the text config under it): named, why.
UNBUILT = {
    "cohere_compass_text": "KeyError 'full_attention' at its defaults",
    "dbrx": "DbrxAttentionConfig has no rope_theta at its defaults",
    "dots1": "torch.empty fails at its defaults",
    "gemma3n": "needs the timm library",
    "gemma4_assistant": "its config fails validate_architecture at its defaults",
    "gemma4_unified_assistant": "its layer types producing a cache do not match at its defaults",
    "hunyuan_v1_dense": "rope_theta is None at its defaults",
    "hunyuan_v1_moe": "rope_theta is None at its defaults",
    "lfm2_moe": "layer_types is None at its defaults",
    "ministral": "rope_theta is None at its defaults",
    "musicgen": "a composite config without the decoder's fields at its defaults",
    "musicgen_melody": "a composite config without the decoder's fields at its defaults",
    "nemotron": "head_dim is None at its defaults",
    "qwen4_exp": "its text config's head_dim is None at its defaults",
    "qwen4_exp_text": "head_dim is None at its defaults",
    "reformer": "ReformerModelWithLMHead needs is_decoder=True",
}

#: Families model_layers refuses, with why (its sentence says the same to a reader).
REFUSED = {
    "xlnet": "Transformer-XL's relative sinusoids with learned biases: not modelled",
    "cpmant": "CPM-Ant's segment-and-bucket relative bias: not modelled",
    "prophetnet": "ProphetNet's n-stream relative buckets beside a learned table: not modelled",
    "hrm_text": "one stack of layers run again in cycles: not one list of layers",
    "blt": "a byte-level local encoder and decoder around a global transformer: not modelled",
    "glm4_moe": "42 · 0.5 = 21 rotary dims at its defaults: odd (test_transformers_families.py)",
}


def language_model_classes() -> dict[str, str]:
    r"""Every ``model_type`` of transformers' causal-LM and sequence-to-sequence mappings → its model class name."""
    return {
        **modeling_auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
        **modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
    }


def class_prefix(model: torch.nn.Module) -> str:
    r"""The family's class prefix ("Llama" of LlamaForCausalLM), left out of its modules' names before matching."""
    return re.sub(r"(For|LMHead|WithLMHead|Model).*$", "", type(model).__name__)


def decoder_layers(model: torch.nn.Module) -> tuple[str, list[torch.nn.Module]]:
    r"""The decoder's layers: the longest ModuleList of layer modules outside a vision / audio tower, under "decoder"
    where the model has one (an encoder-decoder; a decoder-only BERT keeps its stack under "encoder")."""
    lists = [
        (name, module)
        for name, module in model.named_modules()
        if isinstance(module, torch.nn.ModuleList) and _LAYER_LIST.search(name) and len(module)
    ]
    lists = [(n, m) for n, m in lists if not TOWER.search(n)]
    decoder = [(n, m) for n, m in lists if "decoder" in n]
    if not lists:
        raise LookupError(f"no ModuleList of layers in {type(model).__name__}")
    name, layers = max(decoder or lists, key=lambda item: len(item[1]))
    return name, list(layers)


def module_kind(name: str, module: torch.nn.Module, prefix: str) -> str | None:
    r"""What one module inside a decoder layer is, by its class (``prefix`` left out: RecurrentGemma's attention is
    not recurrent, Kimi-Linear's full attention is not linear) and its name: "recurrent" (a recurrent / state-space /
    linear-attention mixer; RWKV's "self-attention" and xLSTM's layer are theirs), "self_attention",
    "cross_attention", "convolution", or None for anything else."""
    full = type(module).__name__
    kind = full.removeprefix(prefix)
    if _RECURRENT.search(kind) or (full.startswith(("Rwkv", "xLSTM")) and kind in ("SelfAttention", "Layer")):
        return "recurrent"
    if "Attention" in kind or re.search(r"MLA$", kind):
        if "Cross" in kind or re.search(r"encoder_attn|cross", name, flags=re.I):
            return "cross_attention"
        return "self_attention"
    if _CONV.search(kind):
        return "convolution"
    return None
