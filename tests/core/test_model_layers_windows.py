r"""Every decoder layer's window and query temperature, as a tiny copy of each transformers family attends, against
:func:`posenc_core.model_layers` on the same config.json.

The cases are found, not listed: every ``model_type`` of transformers' causal-LM and sequence-to-sequence mappings
(:mod:`lm_families`, shared with ``test_model_layers_transformers.py``). Each family's config class at its defaults
is made tiny (:func:`_tiny`): two heads of the default head size, a hidden size of two heads, MLPs and experts of a
few units, a vocabulary of 1,024, every layer kept (so the layer pattern is the released one), and every sliding
window or chunk it has (:data:`WINDOW_FIELDS`) set to :data:`W` = 3 keys, so that :data:`L` = 12 tokens cross it
four times. The model transformers builds from it runs on the CPU with ``attn_implementation="eager"``; a hook on
each self-attention module of each decoder layer keeps the attention weights it computed. The modeling code is the
authority here, not the config's field names: a window its mask applies shows as keys with weight 0, one it only
stores does not.

Windows. For query i, the keys j ≤ i with weight > 0 must be those the layer's record gives: every one where
``window`` is None, the last ``window`` keys i − w < j ≤ i (the key itself included) for a sliding layer, and the
keys of its own chunk (⌊j / w⌋ = ⌊i / w⌋) for a "chunked_attention" layer. That is transformers' convention
(``masking_utils.sliding_window_overlay``: ``kv_idx > q_idx - sliding_window``; ``chunked_overlay``: equal
``idx // chunk_size``), and the one :class:`posenc_core.LayerPosition` documents. No key after the query may be seen.

Temperatures. A query temperature τ(p) multiplies the logits of row p, so it is the one thing in a layer that
changes when the positions move and nothing else does (RoPE's scores depend only on the distance; a bias on the
distance too). The model runs a second time on a cache of :data:`S` earlier tokens, every attention module's input
pinned to what it received the first time (a pre-hook), so the same queries and keys now sit :data:`S` positions
later. Over the keys both runs see, the log-weights of row p less their mean are the logits less theirs, scaled by
τ; their ratio between the runs must be τ(p + S) / τ(p) from the record's :class:`posenc_core.QueryTemperature`, and
1 (to float noise) where the record has none. This reads whatever the family's code does, from ``position_ids`` or
from the cache's length (Llama 4), without a list of who scales. The length a temperature steps at is made tiny
where the config names it (:data:`TEMPERATURE_LENGTHS`), so the step falls within S; Beam's is fixed at 2,048 in code
and its factor changes by ~1e-3 over S, still 100 times the noise.

A family transformers cannot build at its defaults is in ``lm_families.UNBUILT``, one model_layers refuses in
``lm_families.REFUSED`` (not built here); one that cannot run tiny is in :data:`UNRUN` with the reason, one that runs
but not on a cache in :data:`UNCACHED`, one too big to build tiny in :data:`TOO_BIG`, and one whose layers attend
more than a window can say in :data:`NOT_COMPARED`; a family a new release adds fails here until it runs or is named.
The file builds and runs ~175 tiny models twice: 146 s measured on the shared two-core machine at a load of 1 (2.6 GB
at most), 20 minutes at a load of 5.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import transformers
from lm_families import REFUSED, UNBUILT, class_prefix, decoder_layers, language_model_classes, module_kind
from transformers.models.auto import configuration_auto

import posenc_core as pc

pytestmark = pytest.mark.slow

W = 3  # every window and chunk, in keys
L = 12  # tokens of the run: four windows
S = 16  # earlier tokens in the cache of the second run
VOCAB = 1024
RTOL = 1e-4  # a temperature's ratio over S, against float32 noise (measured below 1e-5)
TOKENS = torch.randint(3, 900, (1, S + L), generator=torch.Generator().manual_seed(0))  # (1, S + L)
ENCODER_TOKENS = TOKENS[:, :5]  # an encoder-decoder's source: 5 tokens, so its cross-attention is not (L, L)

#: The config fields that give an attention window or chunk (set to W where a family has one).
WINDOW_FIELDS = (
    "sliding_window",
    "attention_chunk_size",
    "window_size",
    "attention_window_size",
    "sliding_window_size",
    "local_attention",
)
#: Integer config fields named like a window or chunk that are not one of the decoder's attention, and why.
NOT_A_WINDOW = {
    "chunk_size_feed_forward": "feed-forward chunking: a memory saving, the same output",
    "max_window_layers": "Qwen2's count of layers before the sliding ones (read with layer_types)",
    "sliding_window_pattern": "the layer pattern, not the window (read with layer_types)",
    "_sliding_window_pattern": "the layer pattern, not the window",
    "prefix_dense_sliding_window_pattern": "Cohere2-MoE's dense-layer pattern, not a window",
    "chunk_size": "Mamba-2's scan chunk: a recurrent layer's blocking, not attention",
    "mamba_chunk_size": "Mamba-2's scan chunk: a recurrent layer's blocking, not attention",
    "keep_window_size": "Doge keeps the keys its gate scores highest (content, not distance)",
    "attention_window": "LED's local window: its encoder's only",
    "local_attention_window_len": "BLT's local encoder and decoder (refused by model_layers)",
    "audio_chunk_size": "an audio encoder's input chunking",
    "speech_encoder_chunk_size": "a speech encoder's chunking",
    "speech_encoder_left_chunk_num": "a speech encoder's chunking",
    "acoustic_tokenizer_chunk_size": "an audio tokenizer's chunking",
    "local_attn_chunk_length": "Reformer's local attention (not built)",
    "lsh_attn_chunk_length": "Reformer's LSH attention (not built)",
    "chunk_size_lm_head": "Reformer's output chunking (not built)",
    "max_inference_chunksize": "xLSTM's recurrent chunking",
    "left_chunk": "Phi-4-multimodal's audio encoder's left context",
    "n_window": "Qwen3-ASR's audio encoder's window",
    "n_window_infer": "Qwen3-ASR's audio encoder's window at inference",
}
#: The length a query temperature steps at, made tiny so its step falls within S (field → value).
TEMPERATURE_LENGTHS = {"floor_scale": 4, "log_scaling_n_floor": 4}

_HEADS = ("num_attention_heads", "n_head", "num_heads", "n_heads", "decoder_attention_heads", "attention_heads")
_ENCODER_HEADS = ("encoder_attention_heads",)
_KV_HEADS = ("num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num")
_HIDDEN = ("hidden_size", "d_model", "n_embd", "dim", "embed_dim", "emb_dim", "word_embed_proj_dim")
_WIDTHS = re.compile(r"intermediate|ffn|^d_ff$|^n_inner$|attention_hidden_size$|per_layer_input$")
_EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts", "num_routed_experts")
#: Other sizes, capped (MLA's ranks, routing, state-space and linear-attention heads); head sizes are kept.
_CAPS = {
    "kv_lora_rank": 16,
    "q_lora_rank": 16,
    "o_lora_rank": 16,
    "num_experts_per_tok": 2,
    "moe_topk": 2,
    "top_k": 2,
    "n_shared_experts": 1,
    "n_group": 1,
    "topk_group": 1,
    "state_size": 8,
    "mamba_d_state": 8,
    "ssm_state_size": 8,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 2,
    "linear_key_head_dim": 16,
    "linear_value_head_dim": 16,
}

#: Families that build at their defaults but that this generic shrinking cannot run tiny, and why.
UNRUN = {
    "bailing_hybrid": "its linear-attention heads come out of size 0",
    "bamba": "its Mamba head dimensions must match the intermediate size",
    "codegen": "it splits its heads over 4 shards (mp_num): two heads do not split",
    "deepseek_v2": "its MoE gate's top-k is None at its defaults",
    "dots3_note": "num_attention_heads is per layer (per_layer_config)",
    "dots3_note_text": "num_attention_heads is per layer (per_layer_config)",
    "ernie4_5_moe": "its router's top-k exceeds the tiny expert count",
    "gemma4": "head_dim is per layer (per_layer_config): rebuilding the config refuses a global one",
    "gemma4_text": "head_dim is per layer (per_layer_config): rebuilding the config refuses a global one",
    "gemma4_unified": "head_dim is per layer (per_layer_config): rebuilding the config refuses a global one",
    "gemma4_unified_text": "head_dim is per layer (per_layer_config): rebuilding the config refuses a global one",
    "granitemoehybrid": "its Mamba head dimensions must match the intermediate size",
    "kimi_linear": "its router's top-k exceeds the tiny expert count",
    "mamba2": "hidden_size · expand must equal its Mamba heads · head size",
    "mimo_v2_flash": "its attention-sink heads come out of size 0",
    "nemo_speechlm": "its audio head must match the audio encoder's size",
    "voxtral_realtime": "its forward needs audio input",
    "xlstm": "its recurrent cell keeps a width of its own",
    "xmod": "its forward needs a language adapter set",
    "zamba": "its Mamba widths are not hidden_size's",
    "zamba2": "its Mamba widths are not hidden_size's",
}

#: Families not built here, and why (their decoder is checked under its own model_type).
TOO_BIG = {
    "vibevoice_asr": "its acoustic and semantic tokenizers are not made tiny by these fields: 13 GB and 2 minutes; "
    "its decoder is Qwen2's",
}

#: Families that run but not on a cache, so their temperature is not measured, and why.
UNCACHED = {
    "openai-gpt": "OpenAIGPTLMHeadModel keeps no cache",
    "xlm": "XLMWithLMHeadModel returns no cache",
    "recurrent_gemma": "RecurrentGemmaForCausalLM returns no cache",
    "mamba": "no attention layer (and MambaForCausalLM returns no past_key_values)",
    "falcon_mamba": "no attention layer (and it returns no past_key_values)",
    "rwkv": "no attention layer (its state does not resume at the tiny size)",
    "blenderbot": "its decoder's cache does not resume from a second call without the encoder's outputs",
    "switch_transformers": "SwitchTransformersStack refuses use_cache at its defaults",
}

#: Families whose temperature this run cannot measure, and why (test_model_layers.py checks their record).
TEMPERATURE_NOT_MEASURED = {
    "inkling_text": "a short convolution mixes each key with the tokens before it, so the cached run's keys differ",
    "inkling2_text": "a short convolution mixes each key with the tokens before it, so the cached run's keys differ",
    "zaya": "a convolution mixes each query and key with the tokens before it, so the cached run's differ",
}

#: Families whose LM head model attends both ways at its defaults, and why (their keys before the query are checked).
NOT_CAUSAL = {"xlm": "XLMConfig.causal is False at its defaults: XLMWithLMHeadModel is a masked LM"}

#: Families whose layers see more than a window over the tokens themselves: model_layers' reading, and why it holds.
NOT_COMPARED = {
    "deepseek_v4": "its compressed layers attend a sliding window of tokens and compressed blocks of the whole past: "
    "model_layers reads them as the whole context (None), the blocks are absent at 12 tokens",
}


def _head_dim(fields: dict) -> int | None:
    for name in ("head_dim", "d_kv", "attention_head_dim"):
        if isinstance(fields.get(name), int):
            return fields[name]
    hidden = next((fields[k] for k in _HIDDEN if isinstance(fields.get(k), int)), None)
    heads = next((fields[k] for k in _HEADS if isinstance(fields.get(k), int)), None)
    return hidden // heads if hidden and heads else None


def _tiny_fields(fields: dict, *, decoder_only: bool) -> dict:
    r"""The overrides that make one config tiny: the head size kept, two heads, every width a few units, the
    windows W, the vocabulary :data:`VOCAB` (token ids beyond it moved inside)."""
    head = _head_dim(fields)
    out = {}
    for name, value in fields.items():
        if isinstance(value, list) and value and all(isinstance(v, int) for v in value) and _WIDTHS.search(name):
            out[name] = [32] * len(value)  # Gemma 3n: an MLP width per layer
        if isinstance(value, bool) or not isinstance(value, int):
            continue
        if name in _HEADS or name in _ENCODER_HEADS:
            out[name] = 2
        elif name in _KV_HEADS:
            out[name] = 2  # as many as the query heads (MLA and DiffLlama need them)
        elif name in _HIDDEN:
            out[name] = 2 * head if head else 64
        elif _WIDTHS.search(name):
            out[name] = 32
        elif name in _EXPERTS:
            out[name] = 4
        elif name in _CAPS:
            out[name] = min(value, _CAPS[name])
        elif name in WINDOW_FIELDS and value > 0:
            out[name] = W
        elif name in TEMPERATURE_LENGTHS:
            out[name] = TEMPERATURE_LENGTHS[name]
        elif "vocab_size" in name:
            out[name] = VOCAB
        elif name.endswith("token_id") and value >= VOCAB:
            out[name] = VOCAB - 1 - sum(map(ord, name)) % 16
    rope = fields.get("rope_parameters")
    if isinstance(rope, dict) and rope.get("llama_4_scaling_beta") is not None:
        out["rope_parameters"] = {**rope, "original_max_position_embeddings": 4}  # Mistral 3's temperature length
    if decoder_only and "is_decoder" in fields:
        out["is_decoder"] = True  # a BERT-style stack runs as a causal LM only as a decoder
    return out


def _tiny(config, *, decoder_only: bool):
    r"""``config`` rebuilt by its own class with :func:`_tiny_fields` (so what the class derives is derived again),
    every sub-config (a vision tower, an encoder) made tiny the same way."""
    fields = config.to_dict()
    out = _tiny_fields(fields, decoder_only=decoder_only)
    for name, value in fields.items():
        sub = getattr(config, name, None)
        if isinstance(value, dict) and hasattr(sub, "to_dict") and "model_type" in value:
            out[name] = _tiny(sub, decoder_only=decoder_only).to_dict()
    return type(config)(**{**fields, **out})


def _build(model_type: str, class_name: str):
    config = configuration_auto.CONFIG_MAPPING[model_type]()
    cls = getattr(transformers, class_name)
    errors = []
    for given in (config, config.get_text_config()):
        try:
            small = _tiny(given, decoder_only=not given.is_encoder_decoder)
            small._attn_implementation = "eager"
            torch.manual_seed(0)
            return small, cls(small).eval()
        except Exception as exc:  # named in UNBUILT / UNRUN
            errors.append(f"{type(exc).__name__}: {exc}")
    raise RuntimeError(" | ".join(errors))


class _Probe:
    r"""Hooks on every self-attention module of each decoder layer: keep the (…, L, keys) attention weights it
    returns, and record (first run) or pin (second run) the hidden states it is given."""

    def __init__(self, model: torch.nn.Module):
        prefix = class_prefix(model)
        self.weights: dict[int, torch.Tensor] = {}
        self.inputs: dict[str, torch.Tensor] = {}
        self.pin = False
        self.handles = []
        for index, layer in enumerate(decoder_layers(model)[1]):
            for name, module in layer.named_modules():
                if module_kind(name, module, prefix) == "self_attention":
                    key = f"{index}.{name}"
                    self.handles.append(module.register_forward_pre_hook(self._input(key), with_kwargs=True))
                    self.handles.append(module.register_forward_hook(self._output(index)))

    def _input(self, key: str):
        def hook(module, args, kwargs):
            given = [(i, a) for i, a in enumerate(args) if _of_the_run(a)]
            given += [(k, a) for k, a in kwargs.items() if _of_the_run(a)]
            if not given:
                return None  # the prefill of the second run, or a module given no hidden states
            if not self.pin:
                self.inputs[key] = {where: a.detach().clone() for where, a in given}
                return None
            kept = self.inputs.get(key, {})
            args = tuple(kept.get(i, a) for i, a in enumerate(args))
            return args, {k: kept.get(k, a) for k, a in kwargs.items()}

        return hook

    def _output(self, index: int):
        def hook(module, args, output):
            for item in output if isinstance(output, tuple | list) else (output,):
                weights = isinstance(item, torch.Tensor) and item.is_floating_point() and item.dim() == 4
                if weights and item.shape[-2] == L and item.shape[-1] in (L, S + L) and _probabilities(item):
                    self.weights[index] = item.detach().double()[..., -L:]  # (B, H, L, L): the last L keys
                    return

        return hook

    def run(self, model: torch.nn.Module, *, cached: bool) -> dict[int, torch.Tensor]:
        self.weights = {}
        source = {"input_ids": ENCODER_TOKENS} if model.config.is_encoder_decoder else {}
        name = "decoder_input_ids" if source else "input_ids"
        with torch.no_grad():
            if not cached:
                model(**source, **{name: TOKENS[:, S:]}, output_attentions=True, use_cache=False)
                return self.weights
            out = model(**source, **{name: TOKENS[:, :S]}, use_cache=True)
            self.weights = {}
            self.pin = True
            model(**source, **{name: TOKENS[:, S:]}, past_key_values=out.past_key_values, output_attentions=True)
        return self.weights


def _of_the_run(value: object) -> bool:
    r"""Hidden states of the L tokens of the run (an attention module's query, key or value input: CTRL takes three)."""
    hidden = isinstance(value, torch.Tensor) and value.is_floating_point() and value.dim() == 3
    return hidden and L in value.shape[:2]  # (B, L, D), or FSMT's (L, B, D)


def _probabilities(weights: torch.Tensor) -> bool:
    r"""Whether a tensor a module returns is attention weights (rows of probabilities that sum to at most 1: a sink
    takes some), not a bias of the same shape (T5's position_bias)."""
    return bool(weights.min() >= 0 and weights.sum(-1).max() <= 1 + 1e-4)


def _logit_ratio(first: torch.Tensor, second: torch.Tensor) -> np.ndarray:
    r"""Per row p, the spread of the second run's logits over the first's (NaN where fewer than 3 keys are seen
    in both): log-weights less their mean over the keys both runs see are logits less theirs, times τ(p)."""
    seen = (first > 1e-20) & (second > 1e-20)  # (B, H, L, L): no weight near float32's underflow
    ratios = []
    for weights in (first, second):
        logs = torch.where(seen, weights.clamp_min(1e-300).log(), 0.0)
        count = seen.sum(-1, keepdim=True).clamp_min(1)
        centred = torch.where(seen, logs - logs.sum(-1, keepdim=True) / count, 0.0)
        ratios.append(centred.square().sum(-1).sum((0, 1)).sqrt())  # (L,)
    out = (ratios[1] / ratios[0]).numpy()
    out[(seen.sum(-1) < 3).any((0, 1)).numpy()] = np.nan  # two keys give one difference: too noisy
    return out


@dataclass(frozen=True)
class Ran:
    model_type: str
    config_json: dict
    attended: dict[int, np.ndarray]  # layer → (L, L) bool: query i saw key j
    ratios: dict[int, np.ndarray]  # layer → (L,) logit spread of the cached run over the first


def _families() -> tuple[list[Ran], dict[str, str], dict[str, str]]:
    ran, failed, uncached = [], {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        transformers.logging.set_verbosity_error()
        for model_type, class_name in sorted(language_model_classes().items()):
            if model_type in TOO_BIG or model_type in REFUSED:
                continue  # REFUSED: nothing to compare (BLT's towers would not be made tiny either)
            try:
                config, model = _build(model_type, class_name)
                probe = _Probe(model)
                first = probe.run(model, cached=False)
            except Exception as exc:  # named in UNBUILT / UNRUN
                failed[model_type] = f"{type(exc).__name__}: {exc}"
                continue
            try:
                second = probe.run(model, cached=True)
            except Exception as exc:  # named in UNCACHED
                second, uncached[model_type] = {}, f"{type(exc).__name__}: {exc}"
            attended = {i: (w > 0).any(0).any(0).numpy() for i, w in first.items()}
            ratios = {i: _logit_ratio(first[i], second[i]) for i in first if i in second}
            ran.append(Ran(model_type, json.loads(config.to_json_string()), attended, ratios))
    return ran, failed, uncached


RAN, FAILED, UNCACHED_NOW = _families()


def test_every_family_runs_tiny_or_is_named():
    assert len(RAN) >= 170
    assert set(TOO_BIG) <= set(language_model_classes())
    assert sorted(FAILED) == sorted({**UNBUILT, **UNRUN}), {k: v[:200] for k, v in FAILED.items()}
    assert sorted(UNCACHED_NOW) == sorted(UNCACHED), UNCACHED_NOW
    assert set(REFUSED) <= set(language_model_classes())


def test_every_field_named_like_a_window_is_set_or_named_not_one():
    for case in RAN:
        stack = [case.config_json]
        while stack:
            fields = stack.pop()
            stack.extend(v for v in fields.values() if isinstance(v, dict))
            for name, value in fields.items():
                if re.search(r"window|chunk", name) and isinstance(value, int) and not isinstance(value, bool):
                    assert name in WINDOW_FIELDS or name in NOT_A_WINDOW, (case.model_type, name)


def _allowed(layer: pc.LayerPosition) -> np.ndarray:
    r"""(L, L) bool: the keys j ≤ i the record says query i sees."""
    i, j = np.arange(L)[:, None], np.arange(L)[None, :]
    causal = j <= i
    if layer.window is None:
        return causal
    if layer.attention_type == "chunked_attention":
        return causal & (i // layer.window == j // layer.window)
    return causal & (i - j < layer.window)


@pytest.mark.parametrize("case", RAN, ids=lambda case: case.model_type)
def test_each_layer_attends_the_window_model_layers_gives(case: Ran):
    layers = pc.model_layers(case.config_json)
    skipped = NOT_COMPARED.get(case.model_type)
    for layer in layers:
        if layer.index not in case.attended:
            attends = pc.BLOCK_KINDS[layer.block].attends and skipped is None
            assert not attends, f"layer {layer.index} attends, but no weights were seen"
            continue
        seen = case.attended[layer.index]
        assert case.model_type in NOT_CAUSAL or not np.triu(seen, 1).any(), f"layer {layer.index} sees a later key"
        seen = np.tril(seen)
        if skipped is None or layer.window is not None:
            back = [int(i - np.flatnonzero(seen[i]).min() + 1) for i in range(L)]
            assert np.array_equal(seen, _allowed(layer)), (layer.index, layer.attention_type, layer.window, back)


@pytest.mark.parametrize("case", RAN, ids=lambda case: case.model_type)
def test_each_layer_scales_its_queries_by_the_temperature_model_layers_gives(case: Ran):
    layers = pc.model_layers(case.config_json)
    if case.model_type in TEMPERATURE_NOT_MEASURED:
        pytest.skip(TEMPERATURE_NOT_MEASURED[case.model_type])
    for layer in layers:
        if layer.index not in case.ratios:
            continue
        measured = case.ratios[layer.index]
        expected = np.ones(L)
        if layer.temperature is not None:
            p = np.arange(L)
            expected = layer.temperature.at(p + S) / layer.temperature.at(p)
        rows = ~np.isnan(measured)
        assert rows.sum() >= 3, f"layer {layer.index}: {rows.sum()} rows measured"
        np.testing.assert_allclose(measured[rows], expected[rows], rtol=RTOL, err_msg=f"layer {layer.index}")
