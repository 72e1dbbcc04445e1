r"""From a model's ``config.json`` to the RoPE frequencies it runs with.

:func:`rope_frequencies_from_config` reads the handful of fields that decide RoPE — under every name the common
model families use for them — and calls :func:`~posenc_core.rope_scaling.rope_frequencies`, so the result is what
transformers would compute for that checkpoint. Every other key of a config (vocab_size, num_hidden_layers, …) is
ignored; inside ``rope_scaling`` / ``rope_parameters`` an unknown key is an error, since it means a setting
this library would silently not apply.

Field                      also read from (families)
=========================  =============================================================================
rope_theta                 rope_parameters["rope_theta"] (transformers ≥ 5), rotary_emb_base (GPT-NeoX)
head_dim                   qk_rope_head_dim (DeepSeek-V2/V3 rotate only this part), hidden_size // num_attention_heads
                           (n_embd // n_head in GPT-J)
max_position_embeddings    n_positions (GPT-J)
partial_rotary_factor      rope_parameters[...], rotary_pct (GPT-NeoX), rotary_dim / head_dim (GPT-J)
rope_scaling               rope_parameters (transformers ≥ 5; may be nested per layer type, e.g. Gemma 3)
original_max_position_…    top level (Phi-3) wins over the value inside rope_scaling, as in transformers

:func:`config_training_length` reads the pre-training length a config records and :func:`config_scaling` the
(rope_type, factor s) it asks for, with transformers' rule for a missing factor (:func:`~.formulas.implied_factor`).
:func:`parse_config_text` (:mod:`.config_text`, re-exported here) turns pasted text into that dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from ..errors import PosEncError, as_choice, as_float, as_int
from .config_text import MAX_CONFIG_CHARS, MAX_CONFIG_DEPTH, json_kind, parse_config_text
from .families import family_convention
from .formulas import implied_factor
from .registry import ROPE_REGISTRY, ROPE_TYPES, RopeFrequencies, rope_frequencies

__all__ = [
    "MAX_CONFIG_CHARS",
    "MAX_CONFIG_DEPTH",
    "TEMPERATURE_KEYS",
    "ConfigScaling",
    "LayerRope",
    "config_scaling",
    "config_training_length",
    "decoder_config",
    "head_size",
    "json_kind",
    "layer_rope",
    "parse_config_text",
    "rope_entries",
    "rope_frequencies_from_config",
    "split_layer_types",
    "with_layer_overrides",
]


_DEFAULT_THETA = 10000.0  # RoFormer's base, which transformers assumes when a config gives none
#: The types that read original_max_position_embeddings, so a top-level value is passed on to them.
SCALED_TYPES = tuple(name for name, entry in ROPE_REGISTRY.items() if entry.reads_original)
# GPT-2-style names (GPT-J: n_embd, n_head, n_positions) next to the Llama-style ones.
# embed_dim before hidden_size: Qwen2-VL's vision config has both, and its attention is embed_dim wide.
_HIDDEN = ("embed_dim", "hidden_size", "n_embd", "d_model")
_HEADS = ("num_attention_heads", "n_head", "n_heads", "num_heads", "decoder_num_attention_heads")
_MAX_POSITIONS = ("max_position_embeddings", "n_positions")


def rope_frequencies_from_config(
    config: Mapping[str, object], *, seq_len: int | None = None, layer_type: str | None = None
) -> RopeFrequencies:
    r"""``(inv_freq, attention_factor)`` for the model described by ``config`` (a parsed ``config.json``).

    ``seq_len`` matters for "dynamic" and "longrope". ``layer_type`` picks one entry of a per-layer
    ``rope_parameters`` dict (e.g. "sliding_attention"); :func:`~.layers.model_layers` reads every layer at once.
    A vision-language config is read through its ``text_config``. ``llama_4_scaling_beta`` (a query temperature,
    not a frequency) is left to :func:`~.layers.model_layers`.
    """
    rope = layer_rope(config, layer_type=layer_type)
    return rope_frequencies(
        rope.head_dim,
        base=rope.base,
        rope_scaling=rope.scaling or None,
        max_position_embeddings=rope.max_position_embeddings,
        seq_len=seq_len,
        partial_rotary_factor=rope.partial_rotary_factor,
    )


class LayerRope(NamedTuple):
    """The arguments of :func:`rope_frequencies` a config gives one kind of layer, read under every family's names."""

    head_dim: int
    base: float
    partial_rotary_factor: float
    scaling: dict[str, object]  # rope_scaling without rope_theta / partial_rotary_factor / temperature keys
    max_position_embeddings: int | None
    temperature: dict[str, object]  # keys that scale queries, not frequencies (llama_4_scaling_beta)


#: rope_parameters keys that set a query temperature rather than frequencies (Mistral 3); read by model_layers.
TEMPERATURE_KEYS = ("llama_4_scaling_beta",)


def layer_rope(config: Mapping[str, object], *, layer_type: str | None = None, index: int | None = None) -> LayerRope:
    r"""What ``config`` says about the RoPE of layers of kind ``layer_type`` (None: a config not split by layer
    type), as :class:`LayerRope`; the one place the family-specific field names are read. ``index`` picks one layer's
    ``per_layer_config`` overrides (Gemma 4's global layers have a head of their own); without it, the overrides
    every layer of ``layer_type`` shares."""
    _check_config(config)
    config = with_layer_overrides(decoder_config(config), layer_type=layer_type, index=index)
    scaling = _rope_dict(config, layer_type)
    temperature = {key: scaling.pop(key) for key in TEMPERATURE_KEYS if key in scaling}
    stray = scaling.pop("max_position_embeddings", None)  # Ministral 3 repeats it inside rope_parameters
    if stray is not None and config.get("max_position_embeddings") is None:
        config = {**config, "max_position_embeddings": stray}
    head_dim, partial = _rotary_dims(config, scaling)
    theta = scaling.pop("rope_theta", None)
    for key in ("rope_theta", "rotary_emb_base"):
        if theta is None and config.get(key) is not None:
            theta = config[key]
    base = as_float("rope_theta", _DEFAULT_THETA if theta is None else theta, gt=1.0)
    max_pos = _first(config, _MAX_POSITIONS)
    if max_pos is not None:
        max_pos = as_int("max_position_embeddings", max_pos, lo=1, hi=2**40)
    rope_type = scaling.get("rope_type", scaling.get("type"))
    if rope_type is not None and not isinstance(rope_type, str):  # before any `in`: an array there is ambiguous
        as_choice("rope_scaling['rope_type']", rope_type, ROPE_TYPES)
    if rope_type in SCALED_TYPES and config.get("original_max_position_embeddings") is not None:
        scaling["original_max_position_embeddings"] = config["original_max_position_embeddings"]
    if temperature and rope_type in SCALED_TYPES:
        temperature.setdefault("original_max_position_embeddings", scaling.get("original_max_position_embeddings"))
    elif temperature:
        temperature["original_max_position_embeddings"] = scaling.pop("original_max_position_embeddings", None)
    return LayerRope(head_dim, base, partial, scaling, max_pos, temperature)


def with_layer_overrides(
    config: Mapping[str, object], *, layer_type: str | None = None, index: int | None = None
) -> Mapping[str, object]:
    r"""``config`` with the ``per_layer_config`` overrides of layer ``index`` (keys are layer indices, "05"), or of
    every layer of ``layer_type`` when they all agree (transformers' heterogeneous configs, Gemma 4)."""
    overrides = config.get("per_layer_config")
    if overrides is None:
        overrides = _global_head_overrides(config)
    if overrides is None or (isinstance(overrides, Mapping) and not overrides):
        return config
    if not isinstance(overrides, Mapping):
        raise PosEncError(f"per_layer_config must be a dict of layer index → fields, got {type(overrides).__name__}")
    by_index: dict[int, Mapping[str, object]] = {}
    for key, value in overrides.items():
        if not isinstance(value, Mapping) or not str(key).isdigit():
            raise PosEncError(f"per_layer_config[{key!r:.20}] must map a layer index to a dict of fields")
        by_index[int(key)] = value
    if index is not None:  # one layer: its own fields, and no overrides left to apply again
        return {**{k: v for k, v in config.items() if k != "per_layer_config"}, **by_index.get(index, {})}
    types = config.get("layer_types")
    if layer_type is None or not isinstance(types, list):
        return config
    chosen = [by_index.get(i, {}) for i, kind in enumerate(types) if kind == layer_type]
    shared: dict[str, object] = {}
    for key in {key for item in chosen for key in item}:
        values = [item.get(key, config.get(key)) for item in chosen]
        if all(_same(value, values[0]) for value in values):
            shared[key] = values[0]
        elif key not in _NOT_ROPE:
            raise PosEncError(
                f"per_layer_config gives the {layer_type!r} layers different {key!r}; read the model layer by layer"
            )
    return {**config, **shared}


def _global_head_overrides(config: Mapping[str, object]) -> dict[str, object] | None:
    r"""Gemma 4's checkpoint form of per_layer_config: ``global_head_dim`` is the head of its full_attention layers
    (Gemma4TextConfig.__post_init__ moves it there; 512 when the config gives none)."""
    convention = family_convention(config)
    size = config.get("global_head_dim", convention.global_head_dim if convention is not None else None)
    types = config.get("layer_types")
    if size is None or not isinstance(types, list):
        return None
    return {str(i): {"head_dim": size} for i, kind in enumerate(types) if kind == "full_attention"}


#: per_layer_config fields that do not change a layer's frequencies (NeoMME's windows differ between its sliding
#: layers), so layers of one type may differ in them.
_NOT_ROPE = frozenset({"sliding_window", "attention_chunk_size", "num_key_value_heads", "intermediate_size"})


def decoder_config(config: Mapping[str, object], *, layered: bool = False) -> Mapping[str, object]:
    r"""The part of ``config`` that describes the text decoder: ``text_config`` when the top level gives no head
    size of its own (a vision-language model's config.json) or, read ``layered`` as a whole model
    (:func:`~.layers.model_layers`), no layer count either (Music Flamingo's top level holds its audio encoder's
    RoPE, which its own rotary embedding reads), else an encoder-decoder's ``decoder`` when the top level gives no
    head (T5Gemma), else ``config`` itself."""
    own = any(config.get(name) is not None for name in _HEAD_NAMES) or (
        _first(config, _HIDDEN) is not None and _first(config, _HEADS) is not None
    )
    counted = any(
        config.get(name) is not None for name in (*LAYER_COUNT_FIELDS, "decoder_layers", "num_decoder_layers")
    )
    text, decoder = config.get("text_config"), config.get("decoder")
    if isinstance(text, Mapping) and not (own and (counted or not layered)):
        return text
    if isinstance(decoder, Mapping) and not own:
        return decoder
    return config


#: The fields that count a decoder's layers, first found wins (:func:`~.layers.model_layers`; an encoder-decoder's
#: decoder_layers / num_decoder_layers are its family's, :mod:`.layer_kinds`).
LAYER_COUNT_FIELDS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers")


class ConfigScaling(NamedTuple):
    """The scaling a config asks for: its rope_type and extension factor s (1 without scaling)."""

    rope_type: str
    factor: float


def config_training_length(config: Mapping[str, object]) -> int | None:
    r"""The pre-training context L a config records: ``original_max_position_embeddings`` (top level, which wins, or
    inside ``rope_scaling`` / ``rope_parameters``), else ``max_position_embeddings`` (``n_positions``); None if none.

    The length YaRN, Llama 3 and LongRoPE read as the original one (transformers falls back to
    max_position_embeddings the same way).
    """
    _check_config(config)
    config = decoder_config(config)
    value = config.get("original_max_position_embeddings")
    for key in ("rope_scaling", "rope_parameters"):
        scaling = config.get(key)
        if value is None and isinstance(scaling, Mapping):
            value = scaling.get("original_max_position_embeddings")
    if value is None:
        value = _first(config, _MAX_POSITIONS)
    return None if value is None else as_int("original_max_position_embeddings", value, lo=1, hi=2**40)


def config_scaling(config: Mapping[str, object], *, layer_type: str | None = None) -> ConfigScaling:
    r"""(rope_type, s) a config asks for: ("default", 1.0) without scaling. A missing ``factor`` is
    :func:`~.formulas.implied_factor`'s max_position_embeddings / original length, as transformers reads YaRN and
    LongRoPE configs (Phi-3: 131072 / 4096 = 32)."""
    _check_config(config)
    config = decoder_config(config)
    scaling = _rope_dict(config, layer_type)
    rope_type = str(scaling.get("rope_type", scaling.get("type", "default")))
    factor, max_pos = scaling.get("factor"), _first(config, _MAX_POSITIONS)
    if factor is None and max_pos is None:
        return ConfigScaling(rope_type, 1.0)  # nothing to imply a factor from
    original = config_training_length(config) or 1  # None only with a factor given, which needs no length
    return ConfigScaling(
        rope_type, implied_factor(factor, max_position_embeddings=max_pos, original_max_position_embeddings=original)
    )


def rope_entries(config: Mapping[str, object]) -> dict[str, object]:
    r"""``rope_scaling`` and ``rope_parameters`` merged (older configs have the first, transformers ≥ 5 writes the
    second; both may be present if they agree), still nested per layer type where the config nests them."""
    found = {key: config.get(key) for key in ("rope_scaling", "rope_parameters") if config.get(key) is not None}
    for key, value in found.items():
        if not isinstance(value, Mapping):
            raise PosEncError(f"config[{key!r}] must be a dict or null, got {type(value).__name__}")
    scaling: dict[str, object] = {}
    for value in found.values():  # rope_scaling (older configs), then rope_parameters (transformers ≥ 5)
        for key, item in value.items():
            if key in scaling and not _same(scaling[key], item):
                raise PosEncError(f"rope_scaling and rope_parameters disagree on {key!r}; keep one of them")
            scaling[key] = item
    local = config.get("rope_local_base_freq")
    if local is not None and not any(isinstance(item, Mapping) for item in scaling.values()):
        # Gemma 3's older config.json: the flat RoPE is the global layers', the sliding ones turn plainly at the local
        # base (Gemma3TextConfig.__post_init__ builds the same two entries)
        return {"full_attention": scaling, "sliding_attention": {"rope_type": "default", "rope_theta": local}}
    return scaling


def split_layer_types(config: Mapping[str, object]) -> tuple[str, ...]:
    r"""The layer types ``rope_parameters`` gives a RoPE each (Gemma 3: sliding_attention, full_attention); () when
    one RoPE serves every layer."""
    return tuple(key for key, value in rope_entries(decoder_config(config)).items() if isinstance(value, Mapping))


def _rope_dict(config: Mapping[str, object], layer_type: str | None) -> dict[str, object]:
    """The scaling dict of ``layer_type``'s layers, unnested (a copy)."""
    scaling = rope_entries(config)
    nested = [key for key, value in scaling.items() if isinstance(value, Mapping)]
    if nested:
        if layer_type is None or layer_type not in nested:
            kinds = ", ".join(nested)
            raise PosEncError(
                f"this config gives each kind of layer its own RoPE ({kinds}); read it layer by layer "
                f"(model_layers) or name the kind of layer to read (layer_type = one of {kinds})",
                code="rope_per_layer_type",
                kinds=kinds,
            )
        scaling = dict(scaling[layer_type])
    elif layer_type is not None:
        raise PosEncError(f"layer_type={layer_type!r} given, but rope_parameters is not split by layer type")
    return scaling


def _first(config: Mapping[str, object], names: tuple[str, ...]) -> object:
    """The value of the first of ``names`` present (and not null) in ``config``."""
    return next((config[name] for name in names if config.get(name) is not None), None)


def _same(a: object, b: object) -> bool:
    """Equality that also holds for lists and arrays (``==`` on arrays is elementwise)."""
    try:
        return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
    except (TypeError, ValueError):
        return a is b


#: Where the families put the query/key head size, in the order read. DeepSeek-V2/V3 rotate only qk_rope_head_dim
#: (their config classes set head_dim to it); Zamba2 attends over attention_head_dim; JetMoE names it kv_channels.
_HEAD_NAMES = ("qk_rope_head_dim", "head_dim", "attention_head_dim", "kv_channels")


def head_size(config: Mapping[str, object], *, partial: bool = False) -> int:
    r"""The size of the head RoPE acts on, under the names the families use (or a family's own formula,
    :mod:`.families`). With ``partial`` (the config gives a partial_rotary_factor), ``head_dim`` comes first: a
    config with both qk_rope_head_dim and a factor (DeepSeek-V4, dots3) rotates head_dim × factor in transformers."""
    convention = family_convention(config)
    if convention is not None and convention.head_size is not None:
        return convention.head_size(config)
    names = ("head_dim", *_HEAD_NAMES) if partial else _HEAD_NAMES
    for name in names:
        if config.get(name) is not None:
            return as_int(name, config[name], lo=2)
    if _first(config, _HIDDEN) is not None and _first(config, _HEADS) is not None:
        hidden = as_int("hidden_size", _first(config, _HIDDEN), lo=2)
        heads = as_int("num_attention_heads", _first(config, _HEADS), lo=1)
        return hidden // heads
    raise PosEncError(
        "config needs head_dim, or hidden_size and num_attention_heads, to know the head size", code="no_head_dim"
    )


def _rotary_dims(config: Mapping[str, object], scaling: dict[str, object]) -> tuple[int, float]:
    """(head_dim, partial_rotary_factor) under the names the common families use."""
    partial = scaling.pop("partial_rotary_factor", None)
    if partial is None:
        partial = config.get("partial_rotary_factor", config.get("rotary_pct"))
    head_dim = head_size(config, partial=partial is not None)
    convention = family_convention(config)
    if partial is None and config.get("rotary_dim") is not None and "rotary_dim" not in (convention or _NONE).ignored:
        partial = as_int("rotary_dim", config["rotary_dim"], lo=2, hi=head_dim) / head_dim
    return head_dim, as_float("partial_rotary_factor", 1.0 if partial is None else partial, gt=0.0, le=1.0)


class _NoConvention(NamedTuple):
    ignored: tuple[str, ...] = ()


_NONE = _NoConvention()


def _check_config(config: object) -> None:
    r"""Refuse anything but a dict parsed from ``config.json`` (every reader here starts with it)."""
    if not isinstance(config, Mapping):
        kind = json_kind(config)
        raise PosEncError(
            f"config must be a dict parsed from config.json (a JSON object), got {kind}",
            code="config_not_object",
            kind=kind,
        )
