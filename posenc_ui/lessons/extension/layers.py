r"""Page 7 (context extension): a model read layer by layer, for every preset and for a pasted ``config.json``.

:func:`posenc_core.model_layers` gives one record per decoder layer (whether it rotates, its base, window, rotary
dimensions, scaling, query temperature); the strip draws them one cell a layer (page 9's strip of a preset, page 7's
of a pasted config), and the wavelength chart each kind of layer that rotates. The kinds of layer a model has are the
options of the page's layer selectors, so the other figures show the kind the reader picks. Recipes and words only:
:mod:`.view` puts them into the page's view.
"""

from __future__ import annotations

import copy
import functools
import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    BLOCK_KINDS,
    POSITION_KINDS,
    ROPE_REGISTRY,
    LayerPosition,
    PosEncError,
    config_training_length,
    distinct_layer_types,
    model_layers,
    parse_config_text,
    rope_wavelengths,
)
from posenc_core.rope_scaling.config import layer_rope, split_layer_types

from ...i18n import t
from ...lesson import PageRefusal, Values, uses
from ...memo import memo
from ...presets import load_presets
from ...state import FollowingChoiceParam
from . import figures_layers as figs

# --- reading a model ---------------------------------------------------------------------------------------------


@memo
def preset_layers(model: str) -> tuple[LayerPosition, ...]:
    r"""Every decoder layer of preset ``model``, as the core reads its config."""
    return model_layers(load_presets()[model].config())


@memo
def pasted_layers(text: str) -> tuple[LayerPosition, ...]:
    r"""Every decoder layer of a pasted ``config.json`` (refused with the core's reason when it cannot be read)."""
    return model_layers(parse_config_text(text))


def rotating_kinds(layers: Sequence[LayerPosition]) -> tuple[str, ...]:
    r"""The names of the kinds of layer that rotate, in order of first appearance."""
    names: list[str] = []
    for kind in distinct_layer_types(layers):
        if kind.rotates and kind.layer_type not in names:
            names.append(kind.layer_type)
    return tuple(names)


def ordinary(kind: LayerPosition) -> bool:
    r"""Whether ``kind`` turns every pair of its rotary dimensions along one axis, as the lesson's methods assume
    (not proportional RoPE, whose type decides which pairs turn, nor axial RoPE, which turns them over two axes)."""
    entry = ROPE_REGISTRY.get(kind.rope_type)
    return kind.rotates and (entry is None or (not entry.full_head and entry.axes == 1))


def lesson_kinds(layers: Sequence[LayerPosition]) -> tuple[str, ...]:
    r"""The kinds of layer the lesson's figures and the pasted figure can draw (a selector's options)."""
    kinds = {kind.layer_type: kind for kind in reversed(distinct_layer_types(layers)) if kind.rotates}
    return tuple(name for name in rotating_kinds(layers) if ordinary(kinds[name]))


@functools.cache  # one entry a preset (a fixed, small set): no class's traffic pushes it out
def _preset_lesson_kinds(model: str) -> tuple[str, ...]:
    return lesson_kinds(preset_layers(model))


def _options_of_model(state: Mapping[str, Any]) -> tuple[str, ...]:
    try:
        return _preset_lesson_kinds(state["model"])
    except (PosEncError, KeyError):
        return ()


@memo
def _pasted_lesson_kinds(text: str) -> tuple[str, ...]:
    return lesson_kinds(pasted_layers(text))


def _options_of_config(state: Mapping[str, Any]) -> tuple[str, ...]:
    try:
        return _pasted_lesson_kinds(state["config"])
    except (PosEncError, KeyError):
        return ()


#: The kind of layer the lesson's figures show (of the chosen preset), and the pasted figure's (of the pasted config).
PARAMS = (
    FollowingChoiceParam("layer", "full_attention", options_of=_options_of_model, follows=("model",)),
    FollowingChoiceParam("pasted_layer", "full_attention", options_of=_options_of_config, follows=("config",)),
)


def chosen_kind(layers: Sequence[LayerPosition], name: str, *, lesson: bool = True) -> str:
    r"""The kind of layer ``name`` if the model has it (among :func:`lesson_kinds`, or among every kind that rotates
    with ``lesson=False``), else the first such kind; a model with none is refused with the page's reason."""
    kinds = lesson_kinds(layers) if lesson else rotating_kinds(layers)
    if not kinds:
        first = next((layer for layer in layers if layer.rotates), None)
        if first is None:
            raise PageRefusal("extension.no_layer_rotates")
        raise PageRefusal("extension.layer_not_in_lesson", layer=first.layer_type, type=first.rope_type)
    return name if name in kinds else kinds[0]


def layer_config(config: Mapping[str, Any], layers: Sequence[LayerPosition], name: str) -> dict[str, Any]:
    r"""A config of one kind of layer only (the kind called ``name``, else the first the lesson can draw): the fields
    that decide its RoPE as :func:`posenc_core.layer_rope` reads them, so every one-RoPE recipe of the page draws it."""
    chosen = chosen_kind(layers, name)
    kind = next(layer for layer in layers if layer.rotates and layer.layer_type == chosen)
    split = kind.attention_type if kind.attention_type in split_layer_types(config) else None
    rope = layer_rope(config, layer_type=split)
    flat: dict[str, Any] = {
        "head_dim": rope.head_dim,
        "rope_theta": rope.base,
        "partial_rotary_factor": rope.partial_rotary_factor,
    }
    length = config_training_length(config)  # the whole config's L (Phi-3 keeps it at the top level)
    if rope.max_position_embeddings is not None:
        flat["max_position_embeddings"] = rope.max_position_embeddings
    elif length is not None:
        flat["max_position_embeddings"] = length
    if length is not None and length != flat.get("max_position_embeddings"):
        flat["original_max_position_embeddings"] = length
    if rope.scaling:
        flat["rope_scaling"] = dict(rope.scaling)
    return flat


def model_config(model: str, layer: str) -> dict[str, Any]:
    r"""Preset ``model``'s config for its layers of kind ``layer`` (:func:`layer_config`; a fresh dict)."""
    return copy.deepcopy(_model_config(model, layer))


@functools.cache  # one entry a preset and kind of layer (a fixed, small set)
def _model_config(model: str, layer: str) -> dict[str, Any]:
    # read once per (model, layer): most of the page's recipes start from it, and a move misses several of them
    return layer_config(load_presets()[model].config(), preset_layers(model), layer)


# --- words ---------------------------------------------------------------------------------------------------------

#: The page that teaches each encoding family a layer's position kind names (:data:`posenc_core.POSITION_KINDS`'s
#: ``family``), by the lesson's id; a kind whose family has no page of its own links nowhere.
TEACHING_PAGES = {"sinusoidal": "sinusoidal", "learned": "learned", "t5": "relative", "alibi": "alibi"}


def teaching_link(position: str, lang: str) -> str:
    r"""A link to the page that teaches position kind ``position`` ("see <a …>Learned absolute</a>"), or ""."""
    page_id = TEACHING_PAGES.get(POSITION_KINDS[position].family or "")
    if page_id is None:
        return ""
    page = importlib.import_module(f"posenc_ui.lessons.{page_id}.view").PAGE  # the views import this module's page
    href = f"{page.url_path}?lang={lang}"
    title = t(page.title_key, lang)
    return t("extension.layer_see", lang, link=f'<a href="{href}" target="_self">{title}</a>', number=page.number)


def _still_words(kind: LayerPosition, count: int, window: str, extra: str, lang: str) -> str:
    r"""A layer that does not rotate, in one line: what mixes its tokens, or how its attention sees position instead
    (with the count of its table or buckets, and a link to the page that teaches it)."""
    if not BLOCK_KINDS[kind.block].attends:
        return t(f"extension.layer_block.{kind.block}", lang, count=count)
    positions = f"{kind.positions:,}" if kind.positions is not None else ""
    words = t(f"extension.layer_position.{kind.position}", lang, count=count, positions=positions)
    if BLOCK_KINDS[kind.block].recurrent:  # attention beside a recurrent mixer (the layer attends: see above)
        words += t("extension.layer_beside_recurrent", lang)
    link = teaching_link(kind.position, lang)
    return f"{words} · {window}{extra}" + (f" · {link}" if link else "")


def _count(layers: Sequence[LayerPosition], kind: LayerPosition) -> int:
    return sum(layer.same_kind(kind) for layer in layers)


def kind_words(kind: LayerPosition, count: int, lang: str, *, missing: Sequence[str] = ()) -> str:
    r"""A kind of layer in one line: what it is, how many layers, base, rotary dimensions, scaling, window.

    ``missing``: the fields the preset lacks (its ``missing``). Where its scaling is among them (Phi-3-mini-128k's
    LongRoPE factors), the line says the layer is drawn unscaled for that reason, not "no scaling". A "default" layer's
    ``factor`` (the ratio of the context lengths, which transformers derives) stretches nothing, so it is not shown."""
    window = (
        t("extension.layer_window", lang, window=f"{kind.window:,}")
        if kind.window is not None
        else t("extension.layer_whole", lang)
    )
    extra = (
        t("extension.layer_temperature", lang, source=kind.temperature.source) if kind.temperature is not None else ""
    )
    if getattr(kind, "mrope_section", None):  # a vision-language model's pairs split among time, height, width
        layout = t("extension.mrope_interleaved" if kind.mrope_interleaved else "extension.mrope_contiguous", lang)
        section = " / ".join(str(n) for n in kind.mrope_section)
        extra += t("extension.layer_mrope", lang, section=section, layout=layout)
    if not kind.rotates:
        return _still_words(kind, count, window, extra, lang)
    if "rope_scaling" in missing or "rope_parameters" in missing:
        scaling = t("extension.layer_scaling_missing", lang, fields=", ".join(missing))
    elif (kind.factor or 1.0) != 1.0 and kind.rope_type != "default":
        scaling = t("extension.layer_scaling", lang, type=kind.rope_type, factor=f"{kind.factor:g}")
    elif kind.rope_type == "default":
        scaling = t("extension.layer_plain", lang)
    else:  # a type that is no stretch at s = 1 (proportional): named, with no factor
        scaling = t("extension.layer_type_only", lang, type=kind.rope_type)
    return t(
        "extension.layer_rope",
        lang,
        type=kind.layer_type,
        count=count,
        base=f"{kind.base:,.0f}" if float(kind.base).is_integer() else f"{kind.base:,.6g}",  # 1,000,000, not 1e+06
        rotary=kind.rotary_dim,
        head=kind.head_dim,
        scaling=scaling,
        window=window,
        extra=extra,
    )


def strip_figure(layers: Sequence[LayerPosition], name: str, lang: str, *, missing: Sequence[str] = ()) -> go.Figure:
    r"""The strip of a model's decoder layers, one cell each, coloured and named by kind (page 9's presets, page 7's
    pasted config); ``missing``: the preset's missing fields, named in the legend where they are its scaling."""
    kinds = distinct_layer_types(layers)
    index = np.array([next(k for k, kind in enumerate(kinds) if layer.same_kind(kind)) for layer in layers])
    names = [kind_words(kind, _count(layers, kind), lang, missing=missing) for kind in kinds]
    hover = [
        t("extension.layer_hover", lang, index=layer.index, kind=names[k].replace(" · ", "<br>"))
        for layer, k in zip(layers, index, strict=True)
    ]
    rotating = sum(layer.rotates for layer in layers)
    title = t("extension.fig_layers", lang, model=name, layers=len(layers), rotating=rotating)
    return figs.layer_strip(index, names, [_look(kind) for kind in kinds], hover, title=title, lang=lang)


def _look(kind: LayerPosition) -> figs.CellLook:
    r"""How the strip draws a kind of layer: RoPE at full height in the next RoPE colour; attention that sees
    position otherwise at half height in its encoding family's colour; a layer without attention lower still."""
    if kind.rotates:
        return figs.CellLook("rope", None)
    if BLOCK_KINDS[kind.block].attends:
        return figs.CellLook("attention", POSITION_KINDS[kind.position].family)
    return figs.CellLook(kind.block, None)


def _wavelengths(layers: Sequence[LayerPosition], length: int | None, name: str, lang: str) -> go.Figure:
    kinds = [kind for kind in distinct_layer_types(layers) if kind.rotates]
    if not kinds:
        raise PageRefusal("extension.no_layer_rotates")
    colours = figs.kind_colours([_look(kind) for kind in distinct_layer_types(layers)])
    curves, names, kind_colours = [], [], []
    for kind, colour in zip(distinct_layer_types(layers), colours, strict=True):
        if not kind.rotates:
            continue
        inv_freq = kind.frequencies.inv_freq
        turning = inv_freq > 0  # a pair with θ = 0 (proportional RoPE's tail) never turns: no wavelength
        curves.append(np.where(turning, rope_wavelengths(np.where(turning, inv_freq, 1.0)), np.nan))
        names.append(kind_words(kind, _count(layers, kind), lang).split(" · ")[0])
        kind_colours.append(colour)
    title = t("extension.fig_layer_wavelengths", lang, model=name)
    return figs.layer_wavelengths(curves, names, kind_colours, length=length or 1, title=title, lang=lang)


# --- recipes -------------------------------------------------------------------------------------------------------


@uses("model")
def layer_wavelengths_figure(v: Values, lang: str) -> go.Figure:
    config = load_presets()[v["model"]].config()
    name = t(f"extension.model.{v['model']}", lang)
    return _wavelengths(preset_layers(v["model"]), config_training_length(config), name, lang)


@uses("config")
def pasted_layers_figure(v: Values, lang: str) -> go.Figure:
    return strip_figure(pasted_layers(v["config"]), t("extension.pasted_model", lang), lang)


FIGURES = {
    "layer_wavelengths": layer_wavelengths_figure,
    "pasted_layers": pasted_layers_figure,
}
STATIC = {
    "layer_wavelengths": "one model's kinds of layer: its only input is the model picked",
    "pasted_layers": "its one input is a pasted config, not a slider",
}
