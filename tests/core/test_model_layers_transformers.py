r"""Every decoder layer of every language-model family in the pinned transformers, as transformers builds it, against
:func:`posenc_core.model_layers` on the same config.json.

The cases are found here, not listed: every ``model_type`` of transformers' causal-LM and sequence-to-sequence
mappings, its config class at its defaults (which mirror a released checkpoint), the model built from it on the meta
device (any size, no memory, no weights), serialised as ``save_pretrained`` writes config.json. From the built model,
never from the config's field names, the test reads:

* the decoder's layers (the longest ``ModuleList`` of layers, an encoder-decoder's decoder's), and per layer what
  mixes its tokens: self-attention, a recurrent / state-space / linear-attention mixer, a short convolution, both
  (Zamba's hybrid layers), cross-attention only (Mllama's image layers), or nothing (an MLP-only block), by the
  classes of the modules transformers put in it;
* how the model's attention sees position: a rotary embedding (a ``…Rotary…`` module, or rotary code in its
  modeling module), a learned position table (an ``nn.Embedding`` under a position name: its rows, less the offset
  some keep), a sinusoidal one, T5's ``relative_attention_bias``, ALiBi (its modeling code builds an alibi tensor),
  or none of these (NoPE).

:func:`posenc_core.model_layers` must give every layer the same block, and every attending layer the same position
kind (and count) — or refuse with a sentence, for the families listed in :data:`REFUSED` with the reason. Which RoPE
layers rotate, with which frequencies, is ``test_transformers_families.py``'s part. A family transformers cannot
build at its defaults is in :data:`UNBUILT` with the reason, so a family a new release adds fails here until it is
read or named. The whole file builds ~200 models on the meta device: 2–5 minutes on the shared two-core machine
(measured 175–290 s), nearly all of it transformers building the models.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import re
import warnings
from dataclasses import dataclass

import pytest
import torch
import transformers
from lm_families import REFUSED, TOWER, UNBUILT, class_prefix, decoder_layers, language_model_classes, module_kind
from transformers.models.auto import configuration_auto

import posenc_core as pc

pytestmark = pytest.mark.slow

#: A call that rotates q (GPT-J and CodeGen build no rotary module); a definition alone rotates nothing (Jamba).
_ROTATES = re.compile(r"(?<!def )(apply_rotary\w*|rotate_every_two)\(\s*(q|query|sinusoidal_pos)")
_POSITION_TABLE = re.compile(r"(^|\.)(wpe|embed_positions|position_embeddings|positions_embed|pos_embed)$")


@dataclass(frozen=True)
class Built:
    model_type: str
    config_json: dict
    blocks: tuple[str, ...]  # per decoder layer, from its modules
    position: str  # of the model's attention
    positions: int | None


def _block(layer: torch.nn.Module, prefix: str) -> str:
    r"""What mixes a layer's tokens, by the classes (and names) of the modules transformers put in it; ``prefix`` is
    the family's class prefix, left out before matching (RecurrentGemma's attention is not recurrent, Kimi-Linear's
    full attention is not linear), except where the prefix names the recurrence (RWKV's "self-attention" and xLSTM's
    layer are its recurrent mixers)."""
    kinds = {module_kind(name, module, prefix) for name, module in layer.named_modules()}
    selfish, cross = "self_attention" in kinds, "cross_attention" in kinds
    recurrent, conv = "recurrent" in kinds, "convolution" in kinds
    if selfish and recurrent:
        return "hybrid"
    if selfish:
        return "attention"
    if cross:
        return "cross_attention"
    if recurrent:
        return "recurrent"
    if conv:
        return "convolution"
    return "mlp"


def _position(model: torch.nn.Module, config, source: str, stack: str, whole: str) -> tuple[str, int | None]:
    r"""How the decoder's attention sees position, from the model's modules outside its towers (and outside its
    encoder, unless the decoder's stack is named so: a decoder-only BERT), the code of its layers (``source``: does
    their attention rotate) and of its whole modeling module (``whole``: a sinusoidal table or an ALiBi tensor the
    model builds once for every layer)."""
    names = {
        name: module
        for name, module in model.named_modules()
        if not TOWER.search(name) and ("encoder" in stack or "encoder" not in name)
    }
    if any("RelativeLogits" in type(m).__name__ for m in names.values()):  # Inkling: a bias each token computes
        return "data_dependent", getattr(config, "rel_extent", None)
    if any("Rotary" in type(m).__name__ for m in names.values()) or _ROTATES.search(source):
        return "rope", None
    for name, module in names.items():
        if name.endswith("relative_attention_bias") and isinstance(module, torch.nn.Embedding):
            return "relative_bias", module.num_embeddings
    for name, module in names.items():
        if _POSITION_TABLE.search(name) and not re.search(r"encoder\.|vision|image", name):
            kind = type(module).__name__
            rows = getattr(module, "num_embeddings", None) or getattr(module, "num_positions", None)
            if rows is not None:
                rows -= getattr(module, "offset", 0)
            if "Sinusoidal" in kind:
                return "sinusoidal_absolute", getattr(config, "max_position_embeddings", rows)
            if isinstance(module, torch.nn.Embedding):
                return "learned_absolute", rows
    if re.search(r"pos_encoding|positional_encoding\(", whole):
        return "sinusoidal_absolute", getattr(config, "n_positions", None)
    if "alibi" in whole and getattr(config, "alibi", True) is not False:
        return "alibi", None
    return "nope", None


def _layer_source(layers: list[torch.nn.Module]) -> str:
    r"""The code the decoder's layers run: the source of every class of module inside them (its attention's
    forward is where RoPE is applied, or ALiBi added), not the whole modeling module (SeamlessM4T's also holds a
    rotary speech encoder)."""
    classes = {type(module) for layer in layers for module in layer.modules()}
    parts = []
    for cls in sorted(classes, key=lambda c: c.__qualname__):
        if cls.__module__.startswith("transformers.models."):
            with contextlib.suppress(OSError, TypeError):
                parts.append(inspect.getsource(cls))
    return "\n".join(parts)


def _build(model_type: str, class_name: str):
    config = configuration_auto.CONFIG_MAPPING[model_type]()
    cls = getattr(transformers, class_name)
    tries = [config]
    text = config.get_text_config() if hasattr(config, "get_text_config") else None
    if text is not None and text is not config:
        tries.append(text)
    error = None
    for given in tries:
        try:
            with torch.device("meta"):
                model = cls(given)
        except Exception as exc:  # transformers' own failures are listed in UNBUILT
            error = exc
            continue
        return config, given, model
    raise RuntimeError(f"{type(error).__name__}: {error}")


def _families() -> tuple[list[Built], dict[str, str]]:
    mapping = language_model_classes()
    built, failed = [], {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        transformers.logging.set_verbosity_error()
        for model_type in sorted(mapping):
            try:
                config, given, model = _build(model_type, mapping[model_type])
            except Exception as exc:  # listed in UNBUILT
                failed[model_type] = str(exc)
                continue
            prefix = class_prefix(model)
            try:
                stack, layers = decoder_layers(model)
            except LookupError as exc:
                failed[model_type] = str(exc)
                continue
            blocks = tuple(_block(layer, prefix) for layer in layers)
            source = _layer_source(layers)
            whole = inspect.getsource(inspect.getmodule(type(model)))
            position, positions = _position(model, given, source, stack, whole)
            built.append(Built(model_type, json.loads(config.to_json_string()), blocks, position, positions))
    return built, failed


BUILT, FAILED = _families()


def test_every_family_is_built_or_named():
    assert len(BUILT) >= 180
    assert sorted(FAILED) == sorted(UNBUILT)
    assert set(REFUSED) <= {case.model_type for case in BUILT}


#: RoPE families whose default config builds no layer that rotates, and why (model_layers must agree).
NO_LAYER_ROTATES = {
    "bamba": "attn_layer_indices is None at its defaults: every layer is Mamba-2",
    "zamba2": "use_mem_rope is False at its defaults: the shared attention applies no RoPE",
}


@pytest.mark.parametrize("case", BUILT, ids=lambda case: case.model_type)
def test_model_layers_reads_each_layer_as_transformers_builds_it(case: Built):
    if case.model_type in REFUSED:
        with pytest.raises(pc.PosEncError):
            pc.model_layers(case.config_json)
        return
    layers = pc.model_layers(case.config_json)
    assert [layer.block for layer in layers] == list(case.blocks)
    for layer in layers:
        if not pc.BLOCK_KINDS[layer.block].attends:
            assert (
                layer.position == ("none" if layer.block == "mlp" else "recurrence") or layer.block == "cross_attention"
            )
        elif case.position == "rope":
            assert layer.position in ("rope", "nope")  # which layers rotate: test_transformers_families.py
        else:
            assert (layer.position, layer.positions) == (case.position, case.positions)
    if case.position == "rope":
        assert any(layer.rotates for layer in layers) == (case.model_type not in NO_LAYER_ROTATES)
    else:
        assert not any(layer.rotates for layer in layers)
