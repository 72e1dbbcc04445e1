r"""A model's ``config.json`` read as a whole model, layer by layer: which layers rotate, with which RoPE, over which
window, and which scale their queries with a length-dependent temperature.

The models of 2025–26 no longer have one RoPE. Gemma 3 alternates five sliding-window layers (base 10⁴) with one
global layer (base 10⁶, linear ×8); Llama 4 drops RoPE from every fourth layer, which sees the whole context and
multiplies its queries by a temperature that grows with the position, while its other layers rotate and attend
within 8,192-token chunks; SmolLM3 drops RoPE from every fourth layer; Mistral 3 multiplies every query by a
temperature. :func:`model_layers` returns one :class:`LayerPosition` per decoder layer, read as transformers builds
the model, under the names its families use:

=======================================  ======================================================================
config field                             read as
=======================================  ======================================================================
num_hidden_layers (n_layer, num_layers)  the number of layers (one record each); absent: one layer
layer_types                              each layer's attention kind, as the config names it (linear_attention,
                                         mamba, conv, moe: no attention, no rotation)
sliding_window_pattern                   without layer_types: every k-th layer global, the others sliding
sliding_window (use_sliding_window)      the window of "sliding_attention" layers (all layers when no
                                         layer_types and use_sliding_window is not false)
attention_chunk_size                     the chunk of "chunked_attention" layers (Llama 4)
no_rope_layers, no_rope_layer_interval   1 = the layer rotates, 0 = NoPE (Llama 4, SmolLM3); the interval
                                         k makes every k-th layer NoPE when the list is absent or empty
layer_rope_theta                         each layer's base; 0 = NoPE (Granite SWA)
rope_parameters[<layer type>]            per-layer-type RoPE (Gemma 3: sliding_attention / full_attention);
                                         null = NoPE for that type (Beam)
rope_local_base_freq                     Gemma 3's older flat form: the sliding layers' base
per_layer_config                         one layer's own fields (Gemma 4's global layers: a 512-dim head)
position_embedding_type                  not rope / rotary: no layer rotates
attn_temperature_tuning, floor_scale,    Llama 4's query temperature on its NoPE layers
attn_scale
log_scaling_n_floor, log_scaling_alpha   Inkling's query temperature on its layers without a window
rope_parameters["llama_4_scaling_beta"]  Mistral 3's query temperature on every layer
mrope_section (mrope_interleaved)        which of the (t, h, w) position ids each pair reads (M-RoPE)
text_config                              a vision-language model's decoder (when the top level has no head)
model_type                               what a family decides in code (:mod:`.families`), and what its layers
                                         are and how its attention sees position (:mod:`.layer_kinds`: learned
                                         or sinusoidal tables, T5's bias, ALiBi, hybrid layouts such as
                                         block_types, attn_layer_period, hybrid_override_pattern)
layers_block_type                        layer_types where a family stores them there (Zamba, Nemotron-H)
alibi, position_embedding_type           ALiBi (Falcon), a learned table ("absolute"), else no position
=======================================  ======================================================================

Each record also says what mixes the layer's tokens (``block``) and how its attention sees position (``position``,
``positions``), from the registries of :mod:`.layer_kinds`.

The query temperatures (Llama 4, Mistral 3, Inkling, Beam) are :mod:`.temperature`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

import numpy as np

from ..errors import PosEncError, as_float, as_int
from ..rope.mrope import mrope_pair_axes
from .config import (
    LAYER_COUNT_FIELDS,
    _check_config,
    config_scaling,
    decoder_config,
    layer_rope,
    rope_entries,
    split_layer_types,
    with_layer_overrides,
)
from .families import family_convention
from .layer_kinds import BLOCK_KINDS, LAYER_TYPE_BLOCKS, POSITION_KINDS, family_layout
from .registry import ROPE_REGISTRY, RopeFrequencies, rope_frequencies
from .temperature import QueryTemperature, layer_temperature

__all__ = [
    "MAX_LAYERS",
    "LayerPosition",
    "distinct_layer_types",
    "model_layers",
]

#: The deepest released decoders have ~126 layers (Llama 3.1 405B); 1,024 leaves room and bounds the work.
MAX_LAYERS = 1024
NOPE = "nope"  # layer_type of a layer that does not rotate


@dataclass(frozen=True)
class LayerPosition:
    r"""How one decoder layer handles position.

    ``index``: the layer's 0-based index. ``attention_type``: the layer's kind as the config names it
    ("full_attention", "sliding_attention", "chunked_attention", …). ``layer_type``: the same, except "nope" where
    the layer does not rotate. ``rotates``: whether RoPE is applied. ``rope_type``, ``base``, ``factor`` (the
    scaling's s, 1 without scaling), ``partial_rotary_factor``: its RoPE (None for a NoPE layer). ``head_dim``: the
    query/key head size. ``rotary_dim``: how many of those dimensions turn with a non-zero frequency (0 for NoPE).
    ``window``: how many keys back the layer sees (sliding window or chunk size; None: the whole context).
    ``frequencies``: :class:`RopeFrequencies` as the model applies them (None for NoPE). ``temperature``: a
    length-dependent query factor, or None. ``mrope_section`` (s_t, s_h, s_w) and ``mrope_interleaved``: the layer's
    pairs read three position axes (M-RoPE, :func:`~posenc_core.mrope_pair_axes`); None for one axis.
    ``rope_entry``: the ``rope_parameters`` entry the layer turns with where the config is split by layer type
    (Gemma 3: its attention type; DeepSeek-V4: "main" / "compress"), the ``layer_type`` to give
    :func:`~posenc_core.rope_frequencies_from_config`; None where one RoPE serves every layer.
    ``block``: what mixes the layer's tokens (:data:`~posenc_core.BLOCK_KINDS`: attention, hybrid, cross_attention,
    recurrent, convolution, mlp). ``position``: how its attention sees position (:data:`~posenc_core.POSITION_KINDS`:
    rope, nope, learned_absolute, sinusoidal_absolute, relative_bias, alibi; recurrence or none for a layer without
    attention). ``positions``: what that kind counts (a learned table's rows, T5's buckets), else None.
    """

    index: int
    layer_type: str
    attention_type: str
    rotates: bool
    rope_type: str | None
    base: float | None
    factor: float | None
    partial_rotary_factor: float | None
    head_dim: int
    rotary_dim: int
    window: int | None
    frequencies: RopeFrequencies | None
    temperature: QueryTemperature | None
    mrope_section: tuple[int, int, int] | None = None
    mrope_interleaved: bool = False
    rope_entry: str | None = None
    block: str = "attention"
    position: str = "rope"
    positions: int | None = None

    def same_kind(self, other: LayerPosition) -> bool:
        r"""True when ``other`` handles position exactly like this layer (everything but the index)."""
        return _kind(self) == _kind(other)


def model_layers(config: Mapping[str, object], *, seq_len: int | None = None) -> tuple[LayerPosition, ...]:
    r"""One :class:`LayerPosition` per decoder layer of the model ``config`` describes (a parsed ``config.json``).

    ``seq_len`` is the current length, read by "dynamic" and "longrope" as in
    :func:`~posenc_core.rope_scaling.rope_frequencies_from_config`. The fields read are listed above; one that this
    reader reads but does not model (a family in :mod:`.families`, an odd rotary size, a section that does not cover
    the pairs) is refused with a :class:`PosEncError` that names it. ``tests/core/test_transformers_families.py`` holds
    every rotating layer it returns to the family's transformers rotary embedding.
    """
    _check_config(config)
    config = _with_layout(decoder_config(config, layered=True))
    count = _layer_count(config)
    attention = _attention_types(config, count)
    rotates = _rotating_layers(config, attention)
    thetas = _layer_thetas(config, count)
    cache: dict[tuple[str, bool, str], LayerPosition] = {}
    layers = []
    for index in range(count):
        own = _with_theta(with_layer_overrides(config, index=index), thetas[index])  # per_layer_config, base
        overrides = {k: v for k, v in own.items() if k not in config or config[k] is not v}
        key = (attention[index], rotates[index], repr(sorted(overrides.items())))
        if key not in cache:
            cache[key] = _layer(own, attention[index], rotates[index], seq_len)
        layers.append(replace(cache[key], index=index))
    return tuple(layers)


def distinct_layer_types(layers: object) -> tuple[LayerPosition, ...]:
    r"""The first record of each distinct kind of layer in ``layers`` (the output of :func:`model_layers`), in order
    of first appearance: Gemma 3 → (sliding, full); Llama 4 → (chunked RoPE, NoPE)."""
    if not isinstance(layers, tuple | list):
        raise PosEncError(f"layers must be the records model_layers returns, got {type(layers).__name__}")
    first: dict[tuple, LayerPosition] = {}  # keeps the order of first appearance
    for layer in layers:
        if not isinstance(layer, LayerPosition):
            raise PosEncError(f"layers must hold LayerPosition records, got {type(layer).__name__}")
        first.setdefault(_kind(layer), layer)
    return tuple(first.values())


# --- reading the config ----------------------------------------------------------------------------------------------


def _with_layout(config: Mapping[str, object]) -> Mapping[str, object]:
    r"""``config`` with what its family's config class derives written out (:mod:`.layer_kinds`): ``layer_types``
    from a hybrid layout (RecurrentGemma's ``block_types``, Jamba's period, Bamba's indices …), read from
    ``layers_block_type`` where the family stores them there (Zamba, Nemotron-H), and the attention window."""
    layout = family_layout(config)
    out = dict(config)
    if out.get("layer_types") is None and isinstance(out.get("layers_block_type"), list):
        out["layer_types"] = out["layers_block_type"]
    if layout is None:
        return out
    if layout.layout is not None and out.get("layer_types") is None:
        out["layer_types"] = layout.layout(out, _layer_count(out))
    if layout.window is not None and out.get(layout.window) is not None:
        out["sliding_window"] = out[layout.window]
    if layout.window_unused:
        out["sliding_window"] = None  # stored, never masked with: every layer sees the whole context
    return out


def _layer_count(config: Mapping[str, object]) -> int:
    layout = family_layout(config)
    for name in (*(layout.layer_count if layout is not None else ()), *LAYER_COUNT_FIELDS):
        if config.get(name) is not None:
            return as_int(name, config[name], lo=1, hi=MAX_LAYERS)
    types = config.get("layer_types")
    if isinstance(types, list) and types:
        return as_int("len(layer_types)", len(types), lo=1, hi=MAX_LAYERS)
    return 1  # a config without a layer count describes one kind of layer


def _attention_types(config: Mapping[str, object], count: int) -> list[str]:
    r"""Each layer's attention kind: ``layer_types`` as given, else sliding (a sliding window in use) or full."""
    types = config.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or not all(isinstance(item, str) for item in types):
            raise PosEncError(f"layer_types must be a list of strings (one per layer), got {types!s:.60}")
        if len(types) != count:
            raise PosEncError(f"layer_types has {len(types)} entries but the model has {count} layers; one a layer")
        return list(types)
    convention = family_convention(config)
    chunked = config.get("attention_chunk_size") is not None or (
        convention is not None and convention.chunked_rope_layers
    )
    if chunked:  # Llama4TextConfig: chunked where the layer rotates, full where it is NoPE
        flags = _rotating_layers(config, ["chunked_attention"] * count)
        return ["chunked_attention" if turns else "full_attention" for turns in flags]
    pattern = config.get("sliding_window_pattern")
    if pattern is None and convention is not None:
        pattern = convention.sliding_window_pattern
    if pattern is not None:  # every k-th layer global (transformers: bool((i + 1) % k) slides)
        pattern = as_int("sliding_window_pattern", pattern, lo=1, hi=MAX_LAYERS)
        return ["sliding_attention" if (index + 1) % pattern else "full_attention" for index in range(count)]
    sliding = config.get("sliding_window") is not None and config.get("use_sliding_window") is not False
    return ["sliding_attention" if sliding else "full_attention"] * count


#: Layer types without attention (recurrent, convolution, MoE-only blocks: transformers' ALLOWED_ATTN_LAYER_TYPES,
#: and the legacy "mamba"); they keep their name as layer_type and never rotate.
NO_ATTENTION = frozenset(name for name, block in LAYER_TYPE_BLOCKS.items() if not BLOCK_KINDS[block].attends)


def _rotating_layers(config: Mapping[str, object], attention: list[str]) -> list[bool]:
    r"""Whether each layer rotates. NoPE where ``no_rope_layers[i]`` is 0 (else every ``no_rope_layer_interval``-th
    layer: transformers' ``int((i + 1) % k != 0)``), where ``layer_rope_theta[i]`` is 0, where ``rope_parameters``
    gives the layer's type null (Beam's global layers), where ``position_embedding_type`` is not rope or ``alibi`` is
    true, where the layer has no attention, and where the family's own code says so (:mod:`.families`)."""
    count = len(attention)
    flags = config.get("no_rope_layers")
    if flags is not None and not isinstance(flags, list):
        raise PosEncError(f"no_rope_layers must be a list of 0/1, one per layer ({count}), got {flags!s:.60}")
    if flags:  # [] means "derive from the interval", as in transformers
        if len(flags) != count:
            raise PosEncError(f"no_rope_layers must be a list of 0/1, one per layer ({count}), got {flags!s:.60}")
        rotates = [as_int(f"no_rope_layers[{i}]", flag, lo=0, hi=1) == 1 for i, flag in enumerate(flags)]
    elif _nope_interval(config) is not None:
        interval = _nope_interval(config)
        rotates = [(index + 1) % interval != 0 for index in range(count)]
    else:
        rotates = [True] * count
    thetas = _layer_thetas(config, count)
    kind = config.get("position_embedding_type")
    # position_embedding_type other than rope (Granite hybrids, ESM), or ALiBi instead (Falcon's `alibi`)
    nope_model = (isinstance(kind, str) and kind not in ("rope", "rotary")) or config.get("alibi") is True
    layout = family_layout(config)
    nope_model = nope_model or (layout is not None and (layout.position is not None or layout.attention_nope))
    entries = rope_entries(config)
    convention = family_convention(config)
    for index, attention_type in enumerate(attention):
        entry = convention.rope_entries.get(attention_type, attention_type) if convention else attention_type
        rotates[index] = (
            rotates[index]
            and thetas[index] != 0.0
            and not nope_model
            and attention_type not in NO_ATTENTION
            and not (entry in entries and entries[entry] is None)
            and (convention is None or convention.rotates is None or convention.rotates(config, index, attention_type))
        )
    return rotates


def _nope_interval(config: Mapping[str, object]) -> int | None:
    r"""``no_rope_layer_interval``, or the one the family's config class assumes (Llama 4, SmolLM3: 4)."""
    value = config.get("no_rope_layer_interval")
    if value is None:
        convention = family_convention(config)
        value = convention.no_rope_layer_interval if convention is not None else None
    return None if value is None else as_int("no_rope_layer_interval", value, lo=1, hi=MAX_LAYERS)


def _layer_thetas(config: Mapping[str, object], count: int) -> list[float | None]:
    r"""``layer_rope_theta`` (Granite SWA, Muse: each layer's base, 0 for NoPE), or None for every layer."""
    thetas = config.get("layer_rope_theta")
    if thetas is None:
        return [None] * count
    if not isinstance(thetas, list) or len(thetas) != count:
        raise PosEncError(f"layer_rope_theta must be a list of bases, one per layer ({count}), got {thetas!s:.60}")
    return [as_float(f"layer_rope_theta[{i}]", theta, ge=0.0) for i, theta in enumerate(thetas)]


def _with_theta(config: Mapping[str, object], theta: float | None) -> Mapping[str, object]:
    r"""``config`` with its base replaced by the layer's own ``layer_rope_theta`` (Granite SWA builds one rotary
    embedding per distinct base)."""
    convention = family_convention(config)
    if not theta or (convention is not None and convention.theta_marks_nope_only):  # None, or 0 (NoPE)
        return config
    out = dict(config)
    out["rope_theta"] = theta
    for key in ("rope_scaling", "rope_parameters"):
        if isinstance(out.get(key), Mapping) and "rope_theta" in out[key]:
            out[key] = {**out[key], "rope_theta": theta}
    return out


def _window(config: Mapping[str, object], attention_type: str) -> int | None:
    name = {"sliding_attention": "sliding_window", "chunked_attention": "attention_chunk_size"}.get(attention_type)
    layout = family_layout(config)
    if layout is not None and attention_type in layout.sliding:
        name = "sliding_window"
    if name is None or config.get(name) is None:
        return None
    return as_int(name, config[name], lo=1, hi=2**40)


def _layer(config: Mapping[str, object], attention_type: str, rotates: bool, seq_len: int | None) -> LayerPosition:
    convention = family_convention(config)
    entry = convention.rope_entries.get(attention_type, attention_type) if convention else attention_type
    layer_type = entry if split_layer_types(config) else None
    if layer_type is not None and layer_type not in split_layer_types(config):
        if rotates:
            raise PosEncError(
                f"rope_parameters gives no RoPE for the {attention_type!r} layers "
                f"(it has {', '.join(split_layer_types(config))})"
            )
        layer_type = split_layer_types(config)[0]  # a NoPE layer reads only the head size and temperature
    window = _window(config, attention_type)
    if not rotates:
        return _still_layer(config, attention_type, layer_type, window)
    rope = layer_rope(config, layer_type=layer_type)
    temperature = layer_temperature(config, rope.temperature, rotates=rotates, sliding=window is not None)
    freqs = rope_frequencies(
        rope.head_dim,
        base=rope.base,
        rope_scaling=rope.scaling or None,
        max_position_embeddings=rope.max_position_embeddings,
        seq_len=seq_len,
        partial_rotary_factor=rope.partial_rotary_factor,
    )
    scaling = config_scaling(config, layer_type=layer_type)
    section, interleaved = _mrope(config, rope.scaling, freqs)
    return LayerPosition(
        index=0,
        layer_type=attention_type,
        attention_type=attention_type,
        rotates=True,
        rope_type=scaling.rope_type,
        base=rope.base,
        factor=scaling.factor,
        partial_rotary_factor=rope.partial_rotary_factor,
        head_dim=rope.head_dim,
        rotary_dim=2 * ROPE_REGISTRY[scaling.rope_type].axes * int(np.count_nonzero(freqs.inv_freq)),
        window=window,
        frequencies=freqs,
        temperature=temperature,
        mrope_section=section,
        mrope_interleaved=interleaved,
        rope_entry=layer_type,
        block=_block(config, attention_type),
    )


def _still_layer(
    config: Mapping[str, object], attention_type: str, layer_type: str | None, window: int | None
) -> LayerPosition:
    r"""A layer that does not rotate: what mixes its tokens, how its attention sees position instead (a family's
    scheme from :mod:`.layer_kinds`, ALiBi, a learned table, or nothing), its head size and query temperature."""
    block = _block(config, attention_type)
    attends = BLOCK_KINDS[block].attends
    convention = family_convention(config)
    position = _position_kind(config) if attends else ("none" if block == "mlp" else "recurrence")
    if block == "cross_attention":
        position = "nope"  # Mllama: the keys are image tokens; the layer applies no position of its own
    head, temperature = _head_size(config), None
    if head is None or attends:
        try:
            rope = layer_rope(config, layer_type=layer_type)
        except PosEncError as exc:
            if exc.code != "no_head_dim" or (attends and head is None):
                raise
            rope = None  # a recurrent / MLP layer of a model without attention heads (Mamba, RWKV)
        if rope is not None:
            head = rope.head_dim if head is None else head
            nope = convention.nope_temperature if convention is not None else None
            temperature = layer_temperature(
                config, rope.temperature, rotates=False, sliding=window is not None, nope_temperature=nope
            )
    kind = attention_type if attention_type in NO_ATTENTION else NOPE
    return LayerPosition(
        0,
        kind,
        attention_type,
        False,
        None,
        None,
        None,
        None,
        head or 0,
        0,
        window,
        None,
        temperature,
        block=block,
        position=position,
        positions=_position_count(config, position),
    )


def _block(config: Mapping[str, object], attention_type: str) -> str:
    r"""What a layer of type ``attention_type`` builds (:data:`LAYER_TYPE_BLOCKS`, or its family's own names)."""
    layout = family_layout(config)
    if layout is not None and attention_type in layout.blocks:
        return layout.blocks[attention_type]
    return LAYER_TYPE_BLOCKS.get(attention_type, "attention")


def _position_kind(config: Mapping[str, object]) -> str:
    r"""How the attention of a layer that does not rotate sees position: its family's scheme (:mod:`.layer_kinds`),
    ALiBi (Falcon's ``alibi``), a learned table (``position_embedding_type`` "absolute"), else nothing (NoPE)."""
    layout = family_layout(config)
    if layout is not None and layout.position is not None:
        return layout.position
    if config.get("alibi") is True:
        return "alibi"
    if config.get("position_embedding_type") == "absolute":
        return "learned_absolute"
    return "nope"


def _position_count(config: Mapping[str, object], position: str) -> int | None:
    r"""What ``position`` counts (:data:`POSITION_KINDS`): the learned or sinusoidal table's rows, T5's buckets."""
    if POSITION_KINDS[position].counted is None:
        return None
    layout = family_layout(config)
    names = layout.counts if layout is not None and layout.counts else ("max_position_embeddings", "n_positions")
    for name in names:
        if config.get(name) is not None:
            return as_int(name, config[name], lo=1, hi=2**40)
    return layout.default_count if layout is not None else None


def _head_size(config: Mapping[str, object]) -> int | None:
    r"""The head size under a family's own fields (:mod:`.layer_kinds`: T5's d_kv, BART's d_model / decoder heads)."""
    layout = family_layout(config)
    if layout is None or not layout.head:
        return None
    if len(layout.head) == 1:
        return as_int(layout.head[0], config.get(layout.head[0]), lo=1) if config.get(layout.head[0]) else None
    hidden, heads = (config.get(name) for name in layout.head)
    if hidden is None or heads is None:
        return None
    return as_int(layout.head[0], hidden, lo=1) // as_int(layout.head[1], heads, lo=1)


def _mrope(
    config: Mapping[str, object], params: Mapping[str, object], freqs: RopeFrequencies
) -> tuple[tuple[int, int, int] | None, bool]:
    r"""(mrope_section, interleaved): from ``rope_parameters``, else the family's own (:mod:`.families`: Qwen3-VL
    turns with M-RoPE even when its config names no section); checked to cover every pair."""
    convention = family_convention(config)
    default = convention.mrope if convention is not None else None
    section = params.get("mrope_section", default[0] if default else None)
    if section is None:
        return None, False
    interleaved = params.get("mrope_interleaved", default[1] if default else False)
    mrope_pair_axes(section, interleaved=interleaved, pairs=freqs.inv_freq.shape[0])  # refuses a bad section
    return tuple(int(count) for count in section), bool(interleaved)


#: Every field of a :class:`LayerPosition` but its index: what :meth:`LayerPosition.same_kind` compares.
_KIND_FIELDS = tuple(item.name for item in fields(LayerPosition)[1:])


def _kind(layer: LayerPosition) -> tuple:
    r"""``layer`` without its index, as a hashable tuple (frequencies by their bytes)."""
    values = (getattr(layer, name) for name in _KIND_FIELDS)
    return tuple((v.inv_freq.tobytes(), v.attention_factor) if isinstance(v, RopeFrequencies) else v for v in values)
